//! Matrix: a team's channel is a room the bot was proven in (`proof`); a person's Matrix account
//! gets its pages, codes and tests in the direct room the bot opened with it (opened the first
//! time and kept on the method's row; the person is invited again if they left it, so no page
//! lands in a room nobody reads). Messages carry plain text and HTML; alert text mentions nobody
//! and links nowhere (`text::quiet`).

pub mod client;
pub mod proof;
pub mod talk;

pub use client::{Matrix, MatrixAuth, MatrixConfig};
pub use proof::{ProofFailure, PROOF_MESSAGES, PROOF_POWER};

use super::announcement::{Announcement, Body, Item, SUMMARY_LISTS};
use super::message::{Message, Words};
use super::posts::{keep_first, to_update, PostKind};
use super::{Failure, Form, Info, Owner, Profile, Road, Sent, To};
use crate::Core;
use klaxon_domain::alerting::IncidentState;
use klaxon_domain::text::{escape_html, quiet};
use std::sync::Arc;

static INFO: Info = Info {
    name: "matrix",
    label: "Matrix",
    personal: Some(Profile {
        listed_as: "Matrix",
        code_from: "Code from Klaxon's Matrix chat",
        in_chat: false,
        form: Some(Form {
            name: "Matrix",
            field: "Matrix account",
            input: "text",
            placeholder: "@you:example.org",
            hint: "Klaxon's bot invites you to a direct chat and sends a code there; accept the \
                   invitation and enter the code above.",
            button: "Add Matrix account",
            folded: None,
        }),
    }),
    channel: true,
    needs_code: true,
    shared_service: true,
    signed: false,
    per_minute: None,
};

/// The road; `None` without `KLAXON_MATRIX_HOMESERVER`.
pub struct MatrixRoad(pub Option<Arc<Matrix>>);

#[async_trait::async_trait]
impl Road for MatrixRoad {
    fn info(&self) -> &'static Info {
        &INFO
    }

    fn unconfigured(&self) -> Option<String> {
        self.0
            .is_none()
            .then(|| "no Matrix homeserver is configured (KLAXON_MATRIX_HOMESERVER)".into())
    }

    fn edits(&self, _: &str) -> bool {
        true
    }

    async fn send(&self, core: &Core, to: &To, message: &Message<'_>) -> Sent {
        let Some(bot) = &self.0 else {
            return Err(Failure::outage(self.unconfigured().unwrap_or_default()));
        };
        if let Message::Update(a) = message {
            for (first, now) in to_update(core, PLATFORM, a, &to.target, false).await {
                for (n, post) in first.iter().enumerate() {
                    let txn = format!("{}-edit-{}-{n}", to.delivery, post.incident_id);
                    edit_to(bot, &to.target, &post.message_id, &now, &txn).await;
                }
            }
            return Ok(());
        }
        if let Message::Announcement(a) = message {
            // A channel posts to the room it was proven in, never to what an alias names now.
            if to.target.is_empty() {
                return Err(Failure::outage("the Matrix room is not proven"));
            }
            let content = client::text_content(&plain_of(a), &render(a));
            let event_id = bot.post_event(&to.target, &content, &to.delivery).await?;
            // A summary's incidents that were announced alone before have their messages edited.
            if let Body::Summary(_) = &a.body {
                return self.send(core, to, &Message::Update(a)).await;
            }
            if let (Body::One(item), Some(event_id)) = (&a.body, event_id) {
                keep_current(core, bot, a, item, &to.target, &event_id, &to.delivery).await;
            }
            return Ok(());
        }
        let public_url = &core.config.public_url;
        let Some(words) = Words::of(message, public_url, "Pages reach you here.") else {
            return Err(Failure::not_carried("Matrix"));
        };
        let room = direct_room(core, bot, to).await?;
        let txn = format!("klaxon-{}", to.delivery);
        let content = client::text_content(&plain(&words), &html(&words));
        let event_id = bot.post_event(&room, &content, &txn).await?;
        if let (Message::Page(page), Some(event_id)) = (message, event_id) {
            if let Some(incident) = page.incident_id {
                let kept = core
                    .remember_post(PLATFORM, &room, &event_id, incident, PostKind::Message)
                    .await;
                if let Err(e) = kept {
                    tracing::warn!(error = %e, "a Matrix page's event was not kept");
                }
            }
        }
        Ok(())
    }
}

/// Keeps the incident's first message in the room current (`posts::keep_first`): each edit
/// has a transaction id of its own, so a retry is one edit.
async fn keep_current(
    core: &Core,
    bot: &Matrix,
    a: &Announcement,
    item: &Item,
    room: &str,
    event_id: &str,
    delivery: &str,
) {
    let Some((first, now)) = keep_first(core, PLATFORM, a, item, room, event_id, false).await
    else {
        return;
    };
    for (n, post) in first.iter().enumerate() {
        let txn = format!("{delivery}-edit-{n}");
        edit_to(bot, room, &post.message_id, &now, &txn).await;
    }
}

/// Edits the bot's announcement `event_id` into `now`; a failure is logged.
pub async fn edit_to(bot: &Matrix, room: &str, event_id: &str, now: &Announcement, txn: &str) {
    if let Err(f) = bot
        .edit(room, event_id, &plain_of(now), &render(now), txn)
        .await
    {
        tracing::warn!(why = %f.reason, "a Matrix announcement was not edited");
    }
}

/// The platform's name in `chat_posts`.
pub const PLATFORM: &str = "matrix";

/// What a person may answer to an open incident's message.
pub const ANSWERS: &str = "Reply ack, resolve, snooze or take (or react ✅ to acknowledge).";

/// An announcement's plain text, with what may be answered while its incident is open.
fn plain_of(a: &Announcement) -> String {
    match answerable(a) {
        true => format!("{}\n{ANSWERS}", a.plain()),
        false => a.plain(),
    }
}

/// Whether the announcement is of one incident still open.
fn answerable(a: &Announcement) -> bool {
    matches!(&a.body, Body::One(item) if item.incident.state != IncidentState::Resolved)
}

/// The person's direct room: the kept one while they can read it, else a new one, kept.
async fn direct_room(core: &Core, bot: &Matrix, to: &To) -> Result<String, Failure> {
    debug_assert_eq!(to.owner, Owner::Person);
    if let Some(room) = &to.room {
        if bot.keeps_reader(room, &to.target).await {
            return Ok(room.clone());
        }
    }
    let room = bot.direct_room(&to.target).await?;
    if let Some(method_id) = to.method_id {
        sqlx::query("UPDATE contact_methods SET room = $1 WHERE id = $2")
            .bind(&room)
            .bind(method_id)
            .execute(&core.db.pool)
            .await
            .map_err(|e| Failure::outage(format!("the direct room could not be kept: {e}")))?;
    }
    Ok(room)
}

/// A person's message as plain text, its links written out.
fn plain(w: &Words) -> String {
    let mut text = format!("{}\n\n{}", quiet(&w.title), quiet(&w.text));
    if let Some(code) = &w.code {
        text.push_str(&format!("\n\nCode: {code}"));
    }
    if let Some(ack) = &w.ack_page {
        text.push_str(&format!("\n\nAcknowledge: {ack}"));
    }
    if let Some(url) = &w.link {
        text.push_str(&format!("\nOpen: {url}"));
    }
    text
}

fn html(w: &Words) -> String {
    let esc = escape_html;
    let mut html = format!("<p><strong>{}</strong></p>", esc(&quiet(&w.title)));
    for para in quiet(&w.text).split("\n\n") {
        html.push_str(&format!("<p>{}</p>", esc(para).replace('\n', "<br>")));
    }
    if let Some(code) = &w.code {
        html.push_str(&format!("<p>Code: <code>{}</code></p>", esc(code)));
    }
    let mut links = Vec::new();
    if let Some(ack) = &w.ack_page {
        links.push(format!("<a href=\"{}\">Acknowledge</a>", esc(ack)));
    }
    if let Some(url) = &w.link {
        links.push(format!("<a href=\"{}\">Open in Klaxon</a>", esc(url)));
    }
    if !links.is_empty() {
        html.push_str(&format!("<p>{}</p>", links.join(" · ")));
    }
    html
}

/// Matrix's `formatted_body` (`org.matrix.custom.html`).
pub(super) fn render(a: &Announcement) -> String {
    let link = |url: &str, label: &str| {
        format!(
            "<a href=\"{}\">{}</a>",
            escape_html(url),
            escape_html(label)
        )
    };
    match &a.body {
        Body::One(item) => {
            let mut links = Vec::new();
            if let Some(ack) = item.acknowledge_url(&a.public_url) {
                links.push(link(&ack, "Acknowledge"));
            }
            links.push(link(&item.url(&a.public_url), "Open incident"));
            let answers = match answerable(a) {
                true => format!("<p><em>{}</em></p>", escape_html(ANSWERS)),
                false => String::new(),
            };
            format!(
                "<p><strong>{}</strong><br>{}</p><p>{}</p>{answers}",
                escape_html(&item.headline()),
                escape_html(&item.detail(&a.team)),
                links.join(" · ")
            )
        }
        Body::Summary(items) => {
            let mut html = format!("<p><strong>{}</strong></p><ul>", escape_html(&a.summary_headline(items)));
            for item in items.iter().take(SUMMARY_LISTS) {
                html.push_str(&format!("<li>{}</li>", link(&item.url(&a.public_url), &item.headline())));
            }
            html.push_str("</ul>");
            if items.len() > SUMMARY_LISTS {
                html.push_str(&format!("<p>…and {} more</p>", items.len() - SUMMARY_LISTS));
            }
            html.push_str(&format!("<p>{}</p>", link(&a.board(), "All open incidents")));
            html
        }
        Body::Test => format!(
            "<p><strong>Test from Klaxon</strong>: team {}'s incidents will be announced here.</p><p>{}</p>",
            escape_html(&a.team),
            link(&a.board(), "Open Klaxon")
        ),
    }
}
