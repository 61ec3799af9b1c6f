//! The profile's chat accounts: a one-time code that links a Slack, Mattermost, Discord or
//! Telegram account (typed there as `/klaxon link <code>`, or `/link <code>` to the Telegram
//! bot), after which its buttons on announcements act as this person; a Telegram link made in a
//! private chat with the bot also pages the person there. The accounts linked, each with Unlink.

use crate::api::chat::{list_chat_links, NewChatLinkCode, UnlinkChat};
use crate::api::load;
use crate::components::form::ActionError;
use crate::components::hydration::use_hydrated;
use crate::components::loaded::WhenLoaded;
use crate::components::text::when;
use klaxon_domain::chat::{ChatLink, LinkCode};
use leptos::prelude::*;

#[component]
pub fn ChatAccounts() -> impl IntoView {
    let code = ServerAction::<NewChatLinkCode>::new();
    let unlink = ServerAction::<UnlinkChat>::new();
    let links = load(
        move || (code.version().get(), unlink.version().get()),
        |_| list_chat_links(),
    );
    let hydrated = use_hydrated();
    let made = move || code.value().get().and_then(Result::ok);
    view! {
        <section class="card" aria-labelledby="chat-title">
            <h2 id="chat-title">"Chat accounts"</h2>
            <p class="hint">
                "Link your Slack, Mattermost, Discord or Telegram account once, and the buttons on Klaxon's messages there (Acknowledge, Resolve, Snooze 1 h, Take it) act as you. Linked in a private chat with Klaxon's Telegram bot, that chat can page you too."
            </p>
            {move || made().map(|c| view! { <Code c /> })}
            <ActionError action=code />
            <button type="button" class="secondary" disabled=move || !hydrated.get() || code.pending().get()
                on:click=move |_| { code.dispatch(NewChatLinkCode {}); }>
                "Get a link code"
            </button>
            <WhenLoaded resource=links let:list>
                {if list.is_empty() {
                    view! { <p class="empty">"No chat account linked."</p> }.into_any()
                } else {
                    view! { <Links list unlink /> }.into_any()
                }}
            </WhenLoaded>
            <ActionError action=unlink />
        </section>
    }
    .into_any()
}

/// A code just made: what to type in chat, and until when.
#[component]
fn Code(c: LinkCode) -> impl IntoView {
    view! {
        <div class="preview" role="status" aria-label="Your link code">
            <p>"In Slack, Mattermost or Discord, type:"</p>
            <pre class="command">{format!("/klaxon link {}", c.code)}</pre>
            <p>"To Klaxon's Telegram bot, send:"</p>
            <pre class="command">{format!("/link {}", c.code)}</pre>
            <p class="hint">{format!("It works once, until {}.", when(c.expires_at))}</p>
        </div>
    }
    .into_any()
}

#[component]
fn Links(list: Vec<ChatLink>, unlink: ServerAction<UnlinkChat>) -> impl IntoView {
    view! {
        <ul class="list chat-links">
            {list
                .into_iter()
                .map(|l| {
                    let label = format!("Unlink {}", l.shown);
                    view! {
                        <li class="row">
                            <div class="row-main">
                                <strong>{l.shown.clone()}</strong>
                                <span class="meta">{format!("{} · linked {}", platform(&l.platform), when(l.created_at))}</span>
                            </div>
                            <ActionForm action=unlink>
                                <input type="hidden" name="link_id" value=l.id />
                                <button type="submit" class="danger" aria-label=label>"Unlink"</button>
                            </ActionForm>
                        </li>
                    }
                })
                .collect_view()}
        </ul>
    }
    .into_any()
}

fn platform(word: &str) -> &str {
    match word {
        "slack" => "Slack",
        "mattermost" => "Mattermost",
        "discord" => "Discord",
        "telegram" => "Telegram",
        other => other,
    }
}
