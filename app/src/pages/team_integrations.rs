//! A team's integrations: where Alertmanager sends alerts. Owners add, rename and revoke them.

use crate::api::integrations::{
    integration_volumes, list_integrations, CreateIntegration, RenameIntegration,
    RevokeIntegration, SetAlertmanager,
};
use crate::api::load;
use crate::components::charts::Sparkline;
use crate::components::clipboard::CopyButton;
use crate::components::form::{failed, ActionDone, ActionError, Confirm, Fold};
use crate::components::hydration::use_hydrated;
use crate::components::loaded::{Failed, Loading};
use crate::components::secret::ShownOnce;
use crate::components::text::when;
use crate::pages::team_rules::{RuleDrafts, RulesEditor};
use crate::pages::team_templates::{TemplateDrafts, TemplatesEditor};
use klaxon_domain::incident::{
    HourVolume, Integration, IntegrationKind, IntegrationStatus, NewIntegration,
};
use leptos::prelude::*;

#[component]
pub fn Integrations(team_id: Signal<i64>, is_owner: Signal<bool>) -> impl IntoView {
    let create = ServerAction::<CreateIntegration>::new();
    let rename = ServerAction::<RenameIntegration>::new();
    let revoke = ServerAction::<RevokeIntegration>::new();
    let alertmanager = ServerAction::<SetAlertmanager>::new();
    let drafts = TemplateDrafts::default();
    let rule_drafts = RuleDrafts::default();
    let team_changes = crate::components::live::use_team_changes();
    let list = load(
        move || {
            (
                team_id.get(),
                create.version().get()
                    + rename.version().get()
                    + revoke.version().get()
                    + alertmanager.version().get()
                    + team_changes(),
            )
        },
        |(team, _)| list_integrations(team),
    );
    // Read beside the list, not per row: a resource made inside another's view would not be the
    // same one on the server and in the browser, and hydration would fail.
    let volumes = load(
        move || {
            (
                team_id.get(),
                create.version().get() + revoke.version().get() + team_changes(),
            )
        },
        |(team, _)| integration_volumes(team),
    );
    let hydrated = use_hydrated();
    let created = move || create.value().get().and_then(Result::ok);

    view! {
        <section class="card" aria-labelledby="integrations-title">
            <h2 id="integrations-title">"Integrations"</h2>
            <p class="hint">"Each integration is a webhook URL that Alertmanager or Grafana posts this team's alerts to, a key for any sender set up for PagerDuty or Opsgenie, or a URL any JSON can be posted to, read by templates."</p>
            <p class="hint">
                "A cron job or a backup that cannot send alerts pings a heartbeat URL instead: add one under "
                <a href="#deadman-title">"Dead man's switches"</a>"."
            </p>
            {move || created().map(|new| view! { <NewWebhook new /> })}
            <Fold key="new-integration" class="inner" hidden=move || !is_owner.get() open=move || failed(create)>
                <summary>"Add an integration"</summary>
                <ActionForm action=create attr:class="stack">
                    <input type="hidden" name="team_id" value=move || team_id.get() />
                    <label for="integration-name">"Integration name"</label>
                    <input id="integration-name" name="name" type="text" required placeholder="prod-alertmanager" />
                    <label for="integration-kind">"Sent by"</label>
                    <select id="integration-kind" name="kind">
                        {IntegrationKind::ALL
                            .iter()
                            .map(|k| view! { <option value=k.as_str()>{k.label()}</option> })
                            .collect_view()}
                    </select>
                    <p class="hint" hidden=move || hydrated.get()>
                        "Adding an integration needs the page to finish loading."
                    </p>
                    <ActionError action=create />
                    // The URL is shown only in this page's memory; a plain form post would
                    // reload the page and lose it, so adding waits for the page to be interactive.
                    <button type="submit" class="primary" disabled=move || !hydrated.get() || create.pending().get()>
                        "Create integration"
                    </button>
                </ActionForm>
            </Fold>
            <Transition fallback=Loading>
                {move || Suspend::new(async move {
                    let volumes = volumes.await.unwrap_or_default();
                    match list.await {
                        Ok(items) if items.is_empty() => view! { <p class="empty">"No integrations yet."</p> }.into_any(),
                        Ok(items) => view! {
                            <ul class="list integrations">
                                {items
                                    .into_iter()
                                    .map(|i| {
                                        let hours = volumes.iter().find(|(id, _)| *id == i.id).map(|(_, h)| h.clone());
                                        view! { <IntegrationRow integration=i hours is_owner rename revoke alertmanager drafts rule_drafts /> }
                                    })
                                    .collect_view()}
                            </ul>
                        }
                        .into_any(),
                        Err(e) => view! { <Failed error=e retry=move |_| list.refetch() /> }.into_any(),
                    }
                })}
            </Transition>
            <ActionError action=rename />
            <ActionError action=revoke />
            <ActionError action=alertmanager />
            <ActionDone action=alertmanager text="Saved: incidents from that integration can be silenced in Alertmanager." />
            <ActionDone action=revoke text="Revoked: that URL no longer accepts alerts." />
        </section>
    }
    .into_any()
}

/// The new webhook URL (or, for a PagerDuty- or Opsgenie-compatible sender, its key), once, with
/// how to use it.
#[component]
fn NewWebhook(new: NewIntegration) -> impl IntoView {
    let snippet = format!(
        "receivers:\n  - name: klaxon\n    webhook_configs:\n      - url: {}\n        send_resolved: true",
        new.webhook_url,
    );
    let name = &new.integration.name;
    let (label, value) = match new.integration.kind {
        IntegrationKind::PagerDuty => (format!("Routing key of “{name}”"), new.key.clone()),
        IntegrationKind::Opsgenie => (format!("API key of “{name}”"), new.key.clone()),
        _ => (format!("Webhook URL of “{name}”"), new.webhook_url.clone()),
    };
    let how = match new.integration.kind {
        IntegrationKind::Alertmanager => view! {
            <p class="hint">
                "Put it in Alertmanager's configuration as the url of a receiver's webhook_configs, then route alerts to that receiver:"
            </p>
            <pre class="command" id="alertmanager-snippet">{snippet.clone()}</pre>
            <CopyButton text=snippet label="Copy the Alertmanager snippet" />
        }
        .into_any(),
        IntegrationKind::Grafana => view! {
            <p class="hint">
                "In Grafana, add a contact point of type Webhook with this URL and method POST, then route alerts to it with a notification policy."
            </p>
        }
        .into_any(),
        IntegrationKind::Webhook => view! {
            <p class="hint">
                "Have the sender POST its JSON to this URL. Starter templates read title, severity, status and url; fit them to your sender under the integration's Templates, trying them on a body it sends."
            </p>
        }
        .into_any(),
        IntegrationKind::PagerDuty => {
            let base = new
                .webhook_url
                .split("/api/alertmanager/webhook/")
                .next()
                .unwrap_or_default();
            let url = format!("{base}/v2/enqueue");
            let snippet = format!(
                "receivers:\n  - name: klaxon\n    pagerduty_configs:\n      - url: {url}\n        routing_key: {}",
                new.key,
            );
            view! {
                <p class="hint">
                    "Any sender set up for PagerDuty's Events API v2 pages here: give it this key as its integration (routing) key and "
                    <code>{url}</code>
                    " as its Events API URL. In Alertmanager:"
                </p>
                <pre class="command" id="pagerduty-snippet">{snippet.clone()}</pre>
                <CopyButton text=snippet label="Copy the Alertmanager snippet" />
            }
            .into_any()
        }
        IntegrationKind::Opsgenie => {
            let base = new
                .webhook_url
                .split("/api/alertmanager/webhook/")
                .next()
                .unwrap_or_default();
            let snippet = format!(
                "receivers:\n  - name: klaxon\n    opsgenie_configs:\n      - api_url: {base}/\n        api_key: {}",
                new.key,
            );
            view! {
                <p class="hint">
                    "Any sender set up for Opsgenie's Alert API pages here: give it this key as its API key and "
                    <code>{format!("{base}/")}</code>
                    " as its API URL (Grafana's Opsgenie contact point: "
                    <code>{format!("{base}/v2/alerts")}</code>
                    "). In Alertmanager:"
                </p>
                <pre class="command" id="opsgenie-snippet">{snippet.clone()}</pre>
                <CopyButton text=snippet label="Copy the Alertmanager snippet" />
            }
            .into_any()
        }
    };
    view! {
        <ShownOnce id="new-webhook-url" label=label value=value>
            {how}
        </ShownOnce>
    }
    .into_any()
}

#[component]
fn IntegrationRow(
    integration: Integration,
    /// The last day's alerts per hour; `None` if they could not be read.
    hours: Option<Vec<HourVolume>>,
    is_owner: Signal<bool>,
    rename: ServerAction<RenameIntegration>,
    revoke: ServerAction<RevokeIntegration>,
    alertmanager: ServerAction<SetAlertmanager>,
    drafts: TemplateDrafts,
    rule_drafts: RuleDrafts,
) -> impl IntoView {
    let i = integration;
    let rules = {
        let integration = i.clone();
        view! { <RulesEditor integration drafts=rule_drafts /> }.into_any()
    };
    let editor = (i.kind == IntegrationKind::Webhook).then(|| {
        let integration = i.clone();
        view! {
            <details class="inner">
                <summary>"Templates"</summary>
                <TemplatesEditor integration drafts />
            </details>
        }
        .into_any()
    });
    let am_field = format!("am-url-{}", i.id);
    let am_signin = if i.alertmanager_auth_set {
        "Sign-in is stored (never shown). Fill one below to replace it."
    } else {
        "Optional: how Klaxon signs in to it."
    };
    let status = match i.status {
        IntegrationStatus::Active => ("active", "active"),
        IntegrationStatus::Quiet => ("quiet", "quiet"),
        IntegrationStatus::NeverUsed => ("never", "never used"),
    };
    let last = i
        .last_alert_at
        .map(|t| format!("last alert {}", when(t)))
        .unwrap_or_else(|| "no alerts yet".to_string());
    let count = match i.alerts_24h {
        1 => "1 alert in 24 h".to_string(),
        n => format!("{n} alerts in 24 h"),
    };
    let field = format!("rename-{}", i.id);
    let (change_text, revoke_text) = (
        format!("Change {}", i.name),
        format!("Yes, revoke {}", i.name),
    );
    view! {
        <li class="integration">
            <div class="row">
                <span class="row-main">
                    <strong>{i.name.clone()}</strong>
                    <span class="meta">{format!("{} · {last} · {count}", i.kind.label())}</span>
                </span>
                <span class=format!("chip status-{}", status.0)>{status.1}</span>
            </div>
            {hours.map(|hours| view! { <div class="volume"><Sparkline hours /></div> })}
            <details class="row-tools" hidden=move || !is_owner.get()>
                <summary>{change_text}</summary>
                <ActionForm action=rename attr:class="stack">
                    <input type="hidden" name="team_id" value=i.team_id />
                    <input type="hidden" name="id" value=i.id />
                    <label for=field.clone()>"New name"</label>
                    <div class="with-button">
                        <input id=field name="name" type="text" required value=i.name.clone() />
                        <button type="submit" class="secondary">"Rename"</button>
                    </div>
                </ActionForm>
                {editor}
                {rules}
                <details class="inner" hidden=i.kind == IntegrationKind::Webhook>
                    <summary>"Alertmanager for silences"</summary>
                    <ActionForm action=alertmanager attr:class="stack">
                        <input type="hidden" name="team_id" value=i.team_id />
                        <input type="hidden" name="id" value=i.id />
                        <label for=am_field.clone()>"Alertmanager URL"</label>
                        <input id=am_field.clone() name="url" type="url" placeholder="http://alertmanager:9093"
                            value=i.alertmanager_url.clone().unwrap_or_default() aria-describedby=format!("{am_field}-hint") />
                        <p id=format!("{am_field}-hint") class="hint">
                            "Lets responders silence an incident's alerts from its page. Leave empty to turn it off."
                        </p>
                        <p class="hint">{am_signin}</p>
                        <label for=format!("{am_field}-user")>"Username (basic auth)"</label>
                        <input id=format!("{am_field}-user") name="username" type="text" autocomplete="off" />
                        <label for=format!("{am_field}-password")>"Password"</label>
                        <input id=format!("{am_field}-password") name="password" type="password" autocomplete="new-password" />
                        <label for=format!("{am_field}-token")>"Or a bearer token"</label>
                        <input id=format!("{am_field}-token") name="token" type="password" autocomplete="off" />
                        <label class="check" hidden=!i.alertmanager_auth_set>
                            <input type="checkbox" name="forget" value="true" />
                            "Forget the stored sign-in"
                        </label>
                        <button type="submit" class="secondary" disabled=move || alertmanager.pending().get()>"Save"</button>
                    </ActionForm>
                </details>
                <Confirm key=format!("revoke-integration-{}", i.id) summary="Revoke…">
                    <ActionForm action=revoke attr:class="stack">
                        <input type="hidden" name="team_id" value=i.team_id />
                        <input type="hidden" name="id" value=i.id />
                        <p class="hint">"Revoking is immediate: Alertmanager posting to this URL gets 401 until you give it a new one."</p>
                        <button type="submit" class="danger wide">{revoke_text}</button>
                    </ActionForm>
                </Confirm>
            </details>
        </li>
    }
    .into_any()
}
