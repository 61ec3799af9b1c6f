//! A team's channels: where its incidents are announced (a Matrix room, a Slack-format or Teams
//! webhook, a signed webhook), with each one's state and a test. Owners add and remove them.

use crate::api::channels::{
    list_channels, CreateChannel, DeleteChannel, TestChannel, VerifyChannel,
};
use crate::api::load;
use crate::components::form::{clear_on_success, failed, ActionDone, ActionError, Confirm, Fold};
use crate::components::hydration::use_hydrated;
use crate::components::loaded::{Failed, Loading};
use crate::components::secret::ShownOnce;
use crate::components::text::when;
use klaxon_domain::alerting::Severity;
use klaxon_domain::channel::{Channel, ChannelEvent, ChannelKind, ChannelState, NewChannelAnswer};
use leptos::prelude::*;

#[component]
pub fn Channels(
    team_id: Signal<i64>,
    is_owner: Signal<bool>,
    /// What the install can announce on (`TeamView::channel_kinds`).
    kinds: Signal<Vec<ChannelKind>>,
) -> impl IntoView {
    let create = ServerAction::<CreateChannel>::new();
    let delete = ServerAction::<DeleteChannel>::new();
    let test = ServerAction::<TestChannel>::new();
    let verify = ServerAction::<VerifyChannel>::new();
    let team_changes = crate::components::live::use_team_changes();
    let list = load(
        move || {
            (
                team_id.get(),
                create.version().get()
                    + delete.version().get()
                    + test.version().get()
                    + verify.version().get()
                    + team_changes(),
            )
        },
        |(team, _)| list_channels(team),
    );
    let hydrated = use_hydrated();
    let created = move || create.value().get().and_then(Result::ok);

    let sent = clear_on_success(create);
    view! {
        <section class="card" aria-labelledby="channels-title">
            <h2 id="channels-title">"Channels"</h2>
            <p class="hint">"Where this team's incidents are announced for everyone watching: a chat room or a webhook. Pages to the person on call go out as before."</p>
            {move || created().map(|new| view! { <NewSecret new /> })}
            <Fold key="new-channel" class="inner" hidden=move || !is_owner.get() open=move || failed(create)>
                <summary>"Add a channel"</summary>
                <ActionForm action=create node_ref=sent attr:class="stack">
                    <input type="hidden" name="team_id" value=move || team_id.get() />
                    <label for="channel-name">"Channel name"</label>
                    <input id="channel-name" name="name" type="text" required placeholder="#ops-alerts" />
                    <label for="channel-kind">"Posts to"</label>
                    <select id="channel-kind" name="kind">
                        {move || kinds
                            .get()
                            .into_iter()
                            .map(|k| view! { <option value=k.as_str()>{k.label()}</option> })
                            .collect_view()}
                    </select>
                    <label for="channel-target">"Webhook URL, room or channel id"</label>
                    <input id="channel-target" name="target" type="text" required autocomplete="off"
                        placeholder="https://hooks.slack.com/services/… or !room:example.org"
                        aria-describedby="channel-target-hint" />
                    <p id="channel-target-hint" class="hint">
                        "A webhook URL is a secret: it is kept, never shown again. For Matrix, give the room's id or alias: a moderator of the room then proves it with the code shown here. For Telegram, the chat's id (-100…); for Discord, the channel's id. For Slack or Mattermost with Klaxon's app or bot, the channel's id: its messages then change as the incident does."
                    </p>
                    <fieldset class="targets">
                        <legend>"Announce"</legend>
                        {ChannelEvent::ALL
                            .iter()
                            .map(|e| view! {
                                <label class="check target">
                                    <input type="checkbox" name=format!("hear_{}", e.as_str()) value="on" checked />
                                    {e.label()}
                                </label>
                            })
                            .collect_view()}
                    </fieldset>
                    <fieldset class="targets">
                        <legend>"Only these severities (none ticked: all)"</legend>
                        {Severity::ALL
                            .iter()
                            .map(|s| view! {
                                <label class="check target">
                                    <input type="checkbox" name=format!("only_{}", s.as_str()) value="on" />
                                    {s.as_str()}
                                </label>
                            })
                            .collect_view()}
                    </fieldset>
                    <p class="hint" hidden=move || hydrated.get()>
                        "Adding a channel needs the page to finish loading."
                    </p>
                    <ActionError action=create />
                    // A signed webhook's secret is shown only in this page's memory, so adding
                    // waits for the page to be interactive.
                    <button type="submit" class="primary" disabled=move || !hydrated.get() || create.pending().get()>
                        "Add channel"
                    </button>
                </ActionForm>
            </Fold>
            <Transition fallback=Loading>
                {move || Suspend::new(async move {
                    match list.await {
                        Ok(items) if items.is_empty() => view! { <p class="empty">"No channels yet."</p> }.into_any(),
                        Ok(items) => view! {
                            <ul class="list channels">
                                {items
                                    .into_iter()
                                    .map(|c| view! { <ChannelRow channel=c is_owner delete test verify /> })
                                    .collect_view()}
                            </ul>
                        }
                        .into_any(),
                        Err(e) => view! { <Failed error=e retry=move |_| list.refetch() /> }.into_any(),
                    }
                })}
            </Transition>
            <ActionError action=verify />
            <ActionDone action=verify text="Proven: the room hears this team from now on." />
            <ActionError action=test />
            <ActionDone action=test text="Sent: the test message is in the channel." />
            <ActionError action=delete />
            <ActionDone action=delete text="Removed: that channel hears nothing more." />
        </section>
    }
    .into_any()
}

/// A signed webhook's secret, once, with how to check it.
#[component]
fn NewSecret(new: NewChannelAnswer) -> impl IntoView {
    new.signing_secret.map(|secret| {
        view! {
            <ShownOnce id="new-signing-secret" label=format!("Signing secret of “{}”", new.channel.name) value=secret>
                <p class="hint">
                    "Each post carries Klaxon-Signature: t=…,v1=…, the hex HMAC-SHA256 of \"t.body\" with this secret. Refuse a post whose t is more than 5 minutes from your clock."
                </p>
            </ShownOnce>
        }
    })
}

#[component]
fn ChannelRow(
    channel: Channel,
    is_owner: Signal<bool>,
    delete: ServerAction<DeleteChannel>,
    test: ServerAction<TestChannel>,
    verify: ServerAction<VerifyChannel>,
) -> impl IntoView {
    let c = channel;
    let unproven = c.state == ChannelState::Unproven;
    let (chip, chip_text) = match c.state {
        ChannelState::New => ("status-quiet", "not used yet"),
        ChannelState::Ok => ("status-active", "working"),
        ChannelState::Failing => ("status-failing", "failing"),
        ChannelState::Unproven => ("status-failing", "not proven"),
    };
    let hears = if c.events.len() == ChannelEvent::ALL.len() {
        "every event".to_string()
    } else {
        c.events
            .iter()
            .map(|e| e.label().to_lowercase())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let severities = if c.severities.is_empty() {
        String::new()
    } else {
        format!(
            " · {} only",
            c.severities
                .iter()
                .map(|s| s.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        )
    };
    let last = c
        .last_sent_at
        .map(|t| format!(" · last post {}", when(t)))
        .unwrap_or_default();
    let failing = c.last_error.clone().map(|e| {
        let since = c.failing_since.map(|t| format!(" (failing since {})", when(t))).unwrap_or_default();
        view! { <p class="error" role="status">{format!("{e}{since}. Posts are retried; {} waiting.", c.waiting)}</p> }
    });
    let delete_text = format!("Yes, remove {}", c.name);
    view! {
        <li class="channel">
            <div class="row">
                <span class="row-main">
                    <strong>{c.name.clone()}</strong>
                    <span class="meta">{format!("{} · {}", c.kind.as_str(), c.target)}</span>
                    <span class="meta">{format!("Hears {hears}{severities}{last}")}</span>
                </span>
                <span class=format!("chip {chip}")>{chip_text}</span>
            </div>
            {failing}
            {c.proof_code.clone().map(|code| view! { <Proof code team_id=c.team_id id=c.id name=c.name.clone() is_owner verify /> })}
            <div class="row-tools" hidden=move || !is_owner.get()>
                <ActionForm action=test attr:hidden=unproven>
                    <input type="hidden" name="team_id" value=c.team_id />
                    <input type="hidden" name="id" value=c.id />
                    <button type="submit" class="secondary" disabled=move || test.pending().get()>
                        {format!("Send a test to {}", c.name)}
                    </button>
                </ActionForm>
                <Confirm key=format!("remove-channel-{}", c.id) summary="Remove…">
                    <ActionForm action=delete attr:class="stack">
                        <input type="hidden" name="team_id" value=c.team_id />
                        <input type="hidden" name="id" value=c.id />
                        <p class="hint">"Messages not yet sent are dropped."</p>
                        <button type="submit" class="danger wide">{delete_text}</button>
                    </ActionForm>
                </Confirm>
            </div>
        </li>
    }
    .into_any()
}

/// How an unproven Matrix room is proven, and the check.
#[component]
fn Proof(
    code: String,
    team_id: i64,
    id: i64,
    name: String,
    is_owner: Signal<bool>,
    verify: ServerAction<VerifyChannel>,
) -> impl IntoView {
    view! {
        <div class="proof">
            <p class="hint">
                "Hears nothing yet. A moderator or administrator of the room posts this code in it (invite Klaxon's bot first if the room is private):"
            </p>
            <p><code class="proof-code">{code}</code></p>
            <ActionForm action=verify attr:hidden=move || !is_owner.get()>
                <input type="hidden" name="team_id" value=team_id />
                <input type="hidden" name="id" value=id />
                <button type="submit" class="primary" disabled=move || verify.pending().get()>
                    {format!("Check the room of {name}")}
                </button>
            </ActionForm>
        </div>
    }
}
