//! Matrix: the bot reads what is said in its rooms (`roads::matrix::talk`, long-polled) and acts
//! on what is for Klaxon: a command (`!ack 42`, `!resolve 42 rolled back`, `!snooze 42`,
//! `!take 42`, `!help`), an answer to one of its messages (a reply or a message in its thread:
//! `ack`, `resolve rolled back`), or a ✅ reaction to one, which acknowledges. Only a team
//! channel's room or a person's direct room is listened to. The sender acts as the person whose
//! verified Matrix contact method they are (the code the bot sent them proved it), with that
//! person's rights; the bot answers in the message's thread, and the incident's announcements
//! are edited to show it as it is now.
//!
//! Where the stream was last read is stored (`chat_cursors`) and moved on by a conditional
//! update before the batch is acted on: replicas that read the same batch act on it once.

use crate::actor::{Actor, Via};
use crate::roads::announcement::Announcement;
use crate::roads::matrix::talk::Heard;
use crate::roads::matrix::{Matrix, ProofFailure, PLATFORM};
use crate::roads::posts::Post;
use crate::secrets::hash_token;
use crate::{Core, Error, Result};
use klaxon_domain::account::AccountKind;
use klaxon_domain::chat::{reaction_acknowledges, read_said, ChatAct, Said};
use serde_json::Value;
use std::sync::Arc;
use std::time::Duration;

/// What the bot says to `!help`.
pub const HELP: &str = "Klaxon acts on incidents as you: !ack 42, !resolve 42 what fixed it, !snooze 42 (an hour), !take 42. Or reply to Klaxon's message with ack, resolve, snooze or take, or react ✅ to acknowledge.";
/// What an unknown sender is told.
pub const UNKNOWN: &str = "Klaxon does not know this Matrix account: add it under Contact methods in your Klaxon profile (the bot sends you a code), and what you type here acts as you.";

impl Core {
    /// Reads what was said in the bot's rooms since the last read (waiting at most `wait` for
    /// something to be said) and acts on what is for Klaxon; answers how many messages were.
    /// The first read only marks where reading starts. Nothing without a Matrix bot.
    pub async fn matrix_listen(&self, wait: Duration) -> Result<usize> {
        let Some(bot) = self.roads.matrix_bot().cloned() else {
            return Ok(0);
        };
        let since: Option<(String,)> =
            sqlx::query_as("SELECT cursor FROM chat_cursors WHERE platform = $1")
                .bind(PLATFORM)
                .fetch_optional(&self.db.pool)
                .await?;
        let since = since.map(|(c,)| c);
        let batch = bot
            .sync(since.as_deref(), wait)
            .await
            .map_err(|f| Error::Upstream(f.reason))?;
        let claimed = match &since {
            None => sqlx::query(
                "INSERT INTO chat_cursors (platform, cursor) VALUES ($1, $2) \
                 ON CONFLICT (platform) DO NOTHING",
            )
            .bind(PLATFORM)
            .bind(&batch.next)
            .execute(&self.db.pool)
            .await?
            .rows_affected(),
            Some(old) => sqlx::query(
                "UPDATE chat_cursors SET cursor = $1 WHERE platform = $2 AND cursor = $3",
            )
            .bind(&batch.next)
            .bind(PLATFORM)
            .bind(old)
            .execute(&self.db.pool)
            .await?
            .rows_affected(),
        };
        if claimed == 0 || batch.events.is_empty() {
            return Ok(0);
        }
        let me = match bot.user_id().await {
            Ok(me) => me,
            Err(ProofFailure::NotYet(why) | ProofFailure::Unreachable(why)) => {
                return Err(Error::Upstream(why))
            }
        };
        let mut acted = 0;
        for heard in &batch.events {
            if heard.event["sender"].as_str() == Some(me.as_str()) {
                continue;
            }
            match self.heard_in_matrix(&bot, heard).await {
                Ok(true) => acted += 1,
                Ok(false) => {}
                Err(e) => tracing::warn!(error = %e, "a Matrix message was not acted on"),
            }
        }
        Ok(acted)
    }

    /// Acts on one event when it is for Klaxon, and answers it in its thread.
    async fn heard_in_matrix(&self, bot: &Arc<Matrix>, heard: &Heard) -> Result<bool> {
        let e = &heard.event;
        let (Some(sender), Some(event_id)) = (e["sender"].as_str(), e["event_id"].as_str()) else {
            return Ok(false);
        };
        if !self.listens_in(&heard.room).await? {
            return Ok(false);
        }
        let Some(asked) = self.asked(e, event_id).await? else {
            return Ok(false);
        };
        let said = match asked.said {
            Said::Nothing => return Ok(false),
            Said::Help => HELP.to_string(),
            Said::Act {
                act,
                incident,
                note,
            } => match incident.or(asked.about.as_ref().map(|p| p.incident_id)) {
                None => "Which incident? Name it (!ack 42), or reply to Klaxon's message.".into(),
                Some(id) => self.act_in_matrix(bot, sender, id, act, note).await?,
            },
        };
        let txn = format!("klaxon-answer-{}", &hash_token(event_id)[..16]);
        if let Err(f) = bot
            .answer(&heard.room, &asked.root, &asked.reply_to, &said, &txn)
            .await
        {
            tracing::warn!(why = %f.reason, "a Matrix answer was not posted");
        }
        Ok(true)
    }

    /// Does `act` as the person `sender` is, and edits the incident's announcements when it
    /// changed; answers the sentence for the sender.
    async fn act_in_matrix(
        &self,
        bot: &Arc<Matrix>,
        sender: &str,
        id: i64,
        act: ChatAct,
        note: Option<String>,
    ) -> Result<String> {
        let Some(actor) = self.matrix_person(sender).await? else {
            return Ok(UNKNOWN.into());
        };
        let outcome = self.act_as(&actor, id, act, note.as_deref()).await?;
        if let (Some(_), Some(incident)) = (&outcome.by, &outcome.incident) {
            self.edit_matrix_announcements(bot, incident, outcome.by.clone())
                .await;
        }
        Ok(format!("#{id}: {}", outcome.said))
    }

    /// Edits every announcement of the incident in Matrix to show it as it is now.
    async fn edit_matrix_announcements(
        &self,
        bot: &Matrix,
        incident: &klaxon_domain::incident::Incident,
        by: Option<String>,
    ) {
        let posts = match self.announcements_of(PLATFORM, incident.id, None).await {
            Ok(p) => p,
            Err(e) => return tracing::warn!(error = %e, "Matrix announcements not read"),
        };
        if posts.is_empty() {
            return;
        }
        let team = self.team_name_of(incident).await.unwrap_or_default();
        let now = Announcement::current(incident, &team, &self.config.public_url, by, false);
        let stamp = format!(
            "{}-{}-{:08x}",
            incident.id,
            self.now(),
            rand::random::<u32>()
        );
        for (n, post) in posts.iter().enumerate() {
            let txn = format!("klaxon-edit-{stamp}-{n}");
            crate::roads::matrix::edit_to(bot, &post.place, &post.message_id, &now, &txn).await;
        }
    }

    /// What an event asks, and where its answer goes; `None` for what Klaxon never reads
    /// (another kind of event, a notice, an edit, a reaction that is no check mark).
    async fn asked(&self, e: &Value, event_id: &str) -> Result<Option<Asked>> {
        let rel = &e["content"]["m.relates_to"];
        match e["type"].as_str() {
            Some("m.reaction") => {
                let (Some(key), Some(on)) = (rel["key"].as_str(), rel["event_id"].as_str()) else {
                    return Ok(None);
                };
                if rel["rel_type"] != "m.annotation" || !reaction_acknowledges(key) {
                    return Ok(None);
                }
                let Some(post) = self.post(PLATFORM, on).await? else {
                    return Ok(None);
                };
                Ok(Some(Asked {
                    said: Said::Act {
                        act: ChatAct::Acknowledge,
                        incident: None,
                        note: None,
                    },
                    root: post.message_id.clone(),
                    reply_to: post.message_id.clone(),
                    about: Some(post),
                }))
            }
            Some("m.room.message") => {
                let content = &e["content"];
                if content["msgtype"] != "m.text" || rel["rel_type"] == "m.replace" {
                    return Ok(None);
                }
                let thread = (rel["rel_type"] == "m.thread")
                    .then(|| rel["event_id"].as_str())
                    .flatten();
                let replied = rel["m.in_reply_to"]["event_id"].as_str();
                let mut about = None;
                for answered in [replied, thread].into_iter().flatten() {
                    if let Some(post) = self.post(PLATFORM, answered).await? {
                        about = Some(post);
                        break;
                    }
                }
                let body = content["body"].as_str().unwrap_or_default();
                let root = thread
                    .or(about.as_ref().map(|p| p.message_id.as_str()))
                    .unwrap_or(event_id)
                    .to_string();
                Ok(Some(Asked {
                    said: read_said(body, about.is_some()),
                    root,
                    reply_to: event_id.to_string(),
                    about,
                }))
            }
            _ => Ok(None),
        }
    }

    /// Whether `room` is one the bot listens in: a Matrix channel's proven room, or a person's
    /// direct room.
    async fn listens_in(&self, room: &str) -> Result<bool> {
        let known: Option<(i64,)> = sqlx::query_as(
            "SELECT id FROM channels WHERE kind = 'matrix' AND room_id = $1 \
             UNION SELECT id FROM contact_methods WHERE kind = 'matrix' AND room = $1",
        )
        .bind(room)
        .fetch_optional(&self.db.pool)
        .await?;
        Ok(known.is_some())
    }

    /// The enabled person whose verified Matrix contact method `sender` is; nobody when none is,
    /// or when several people verified it.
    async fn matrix_person(&self, sender: &str) -> Result<Option<Actor>> {
        let rows: Vec<(i64, i64, String, i64)> = sqlx::query_as(
            "SELECT c.id, u.id, u.username, u.is_admin FROM contact_methods c \
             JOIN users u ON u.id = c.user_id \
             WHERE c.kind = 'matrix' AND c.target = $1 AND c.verified_at IS NOT NULL \
             AND u.disabled = 0 AND u.kind = $2",
        )
        .bind(sender)
        .bind(AccountKind::Human.as_str())
        .fetch_all(&self.db.pool)
        .await?;
        let [(method, user_id, username, is_admin)] = rows.as_slice() else {
            return Ok(None);
        };
        Ok(Some(Actor {
            user_id: *user_id,
            username: username.clone(),
            is_admin: *is_admin != 0,
            kind: AccountKind::Human,
            team_scope: None,
            via: Via::Chat(*method),
            address: String::new(),
        }))
    }
}

/// What one event asks: the words read, the Klaxon message it answers (if any), the thread its
/// answer goes in and the event that answer replies to.
struct Asked {
    said: Said,
    about: Option<Post>,
    root: String,
    reply_to: String,
}
