//! A generic webhook's templates: how any JSON body becomes an alert. The owner edits them
//! next to a sample body and sees what it would become ("Try it") before saving.

use crate::api::integrations::{SetTemplates, TryTemplates};
use crate::components::drafts::Drafts;
use crate::components::form::{ActionDone, ActionError};
use crate::components::hydration::use_hydrated;
use klaxon_domain::incident::Integration;
use klaxon_domain::mapping::{parse_label_lines, TemplatePreview, TemplateTrial, WebhookTemplates};
use leptos::ev::SubmitEvent;
use leptos::prelude::*;

/// A body like the ones most senders post, to try the templates on until the owner pastes one.
const SAMPLE: &str = r#"{
  "title": "Disk full on db-1",
  "severity": "critical",
  "status": "firing",
  "url": "https://monitoring.example/checks/42"
}"#;

/// One template's field: its label, its hint, and the signal it edits.
#[component]
fn Field(
    id: String,
    label: &'static str,
    hint: &'static str,
    value: RwSignal<String>,
) -> impl IntoView {
    let hint_id = format!("{id}-hint");
    view! {
        <label for=id.clone()>{label}</label>
        <input id=id type="text" class="code" autocomplete="off" spellcheck="false"
            aria-describedby=hint_id.clone()
            prop:value=move || value.get() on:input=move |ev| value.set(event_target_value(&ev)) />
        <p id=hint_id class="hint">{hint}</p>
    }
    .into_any()
}

/// One webhook integration's editor state.
#[derive(Clone, Copy)]
pub struct Draft {
    title: RwSignal<String>,
    severity: RwSignal<String>,
    dedup_key: RwSignal<String>,
    resolved: RwSignal<String>,
    link: RwSignal<String>,
    message: RwSignal<String>,
    labels: RwSignal<String>,
    sample: RwSignal<String>,
    invalid: RwSignal<Option<String>>,
    tried: ServerAction<TryTemplates>,
    save: ServerAction<SetTemplates>,
}

impl Draft {
    fn new(integration: &Integration) -> Draft {
        let t = integration
            .templates
            .clone()
            .unwrap_or_else(WebhookTemplates::starter);
        let text = |v: &Option<String>| RwSignal::new(v.clone().unwrap_or_default());
        Draft {
            title: RwSignal::new(t.title.clone()),
            severity: text(&t.severity),
            dedup_key: text(&t.dedup_key),
            resolved: text(&t.resolved),
            link: text(&t.link),
            message: text(&t.message),
            labels: RwSignal::new(t.label_lines()),
            sample: RwSignal::new(SAMPLE.to_string()),
            invalid: RwSignal::new(None),
            tried: ServerAction::new(),
            save: ServerAction::new(),
        }
    }
}

/// The templates editors' state, kept by the integrations section.
pub type TemplateDrafts = Drafts<Draft>;

#[component]
pub fn TemplatesEditor(integration: Integration, drafts: TemplateDrafts) -> impl IntoView {
    let hydrated = use_hydrated();
    let Draft {
        title,
        severity,
        dedup_key,
        resolved,
        link,
        message,
        labels,
        sample,
        invalid,
        tried,
        save,
    } = drafts.of(integration.id, || Draft::new(&integration));
    let built = move || -> Result<WebhookTemplates, String> {
        let optional = |s: RwSignal<String>| {
            let v = s.get_untracked();
            (!v.trim().is_empty()).then_some(v)
        };
        let t = WebhookTemplates {
            title: title.get_untracked(),
            severity: optional(severity),
            dedup_key: optional(dedup_key),
            resolved: optional(resolved),
            labels: parse_label_lines(&labels.get_untracked())?,
            link: optional(link),
            message: optional(message),
        };
        t.check_bounds()?;
        Ok(t)
    };
    let try_it = move |_| match built() {
        Ok(templates) => {
            invalid.set(None);
            let sample = sample.get_untracked();
            tried.dispatch(TryTemplates {
                trial: TemplateTrial { templates, sample },
            });
        }
        Err(e) => invalid.set(Some(e)),
    };
    let (team_id, id) = (integration.team_id, integration.id);
    let submit = move |ev: SubmitEvent| {
        ev.prevent_default();
        match built() {
            Ok(templates) => {
                invalid.set(None);
                save.dispatch(SetTemplates {
                    team_id,
                    id,
                    templates,
                });
            }
            Err(e) => invalid.set(Some(e)),
        }
    };
    let f = |name: &str| format!("tpl-{id}-{name}");
    view! {
        <form class="stack templates" on:submit=submit>
            <p class="hint">
                "Jinja templates over "<code>"payload"</code>", the JSON body as sent (Grafana OnCall's templates work as they are)."
            </p>
            <Field id=f("title") label="Title" hint="Required: what the page says, e.g. {{ payload.title }}." value=title />
            <Field id=f("severity") label="Severity" hint="critical, warning or info (error and high are critical); warning when empty." value=severity />
            <Field id=f("dedup") label="Dedup key" hint="Bodies with the same key are one alert; the title when empty." value=dedup_key />
            <Field id=f("resolved") label="Resolved when" hint="Renders True when the body says it is over, e.g. {{ payload.status == 'ok' }}." value=resolved />
            <Field id=f("link") label="Link" hint="An http(s) link back to the sender." value=link />
            <Field id=f("message") label="Message" hint="Longer text shown with the alert." value=message />
            <label for=f("labels")>"Labels"</label>
            <textarea id=f("labels") class="code" rows="3" spellcheck="false" placeholder="service: {{ payload.service }}"
                prop:value=move || labels.get() on:input=move |ev| labels.set(event_target_value(&ev))></textarea>
            <p class="hint">"One name: template a line, for matchers and routing."</p>
            <label for=f("sample")>"Sample body"</label>
            <textarea id=f("sample") class="code" rows="6" spellcheck="false"
                prop:value=move || sample.get() on:input=move |ev| sample.set(event_target_value(&ev))></textarea>
            <button type="button" class="secondary" on:click=try_it disabled=move || !hydrated.get() || tried.pending().get()>
                "Try it"
            </button>
            {move || invalid.get().map(|e| view! { <p class="error" role="alert">{e}</p> })}
            <ActionError action=tried />
            {move || tried.value().get().and_then(Result::ok).map(|p| view! { <Preview p /> })}
            <ActionError action=save />
            <ActionDone action=save text="Saved: the next body is read with these templates." />
            <button type="submit" class="primary" disabled=move || !hydrated.get() || save.pending().get()>
                "Save templates"
            </button>
        </form>
    }
    .into_any()
}

/// What the sample would become.
#[component]
fn Preview(p: TemplatePreview) -> impl IntoView {
    let verb = if p.action == "resolves" {
        "Resolves"
    } else {
        "Fires"
    };
    view! {
        <div class="preview" role="status" aria-label="What this body becomes">
            <p><strong>{format!("{verb}: {}", p.title)}</strong></p>
            <dl class="facts">
                <div><dt>"Severity"</dt><dd>{p.severity}</dd></div>
                <div><dt>"Dedup key"</dt><dd><code>{p.dedup_key}</code></dd></div>
                {p.link.map(|l| view! { <div><dt>"Link"</dt><dd>{l}</dd></div> })}
                {p.message.map(|m| view! { <div><dt>"Message"</dt><dd>{m}</dd></div> })}
                <div>
                    <dt>"Labels"</dt>
                    <dd>
                        {p.labels
                            .into_iter()
                            .map(|(k, v)| view! { <code class="label">{format!("{k}={v}")}</code>" " })
                            .collect_view()}
                    </dd>
                </div>
            </dl>
        </div>
    }
    .into_any()
}
