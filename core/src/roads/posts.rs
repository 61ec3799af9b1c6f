//! Messages a chat road posted about an incident (`chat_posts`): an answer to one of them (a
//! reply, a reaction, a message in its thread) acts on that incident (`chat`), and an
//! announcement is edited in place as the incident moves.

use super::announcement::{state_event, Announcement, Body, Item};
use crate::{Core, Result};

/// How long a post is remembered: answers to older messages are not read as answers.
pub const KEPT_SECONDS: i64 = 30 * 86_400;

/// What a post was.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PostKind {
    /// An incident's first message in a team channel: edited in place as the incident moves.
    Announcement,
    /// Any other (a later event's announcement, a person's page): answers to it act, and it
    /// stays as it was sent.
    Message,
}

impl PostKind {
    fn word(self) -> &'static str {
        match self {
            PostKind::Announcement => "announcement",
            PostKind::Message => "message",
        }
    }
}

/// A post by its id on its platform.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Post {
    pub place: String,
    pub message_id: String,
    pub incident_id: i64,
    pub announcement: bool,
}

impl Core {
    /// Remembers a post; a retry's same message is remembered once.
    pub(crate) async fn remember_post(
        &self,
        platform: &str,
        place: &str,
        message_id: &str,
        incident_id: i64,
        kind: PostKind,
    ) -> Result<()> {
        sqlx::query(
            "INSERT INTO chat_posts (platform, place, message_id, incident_id, kind, created_at) \
             VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (platform, message_id) DO NOTHING",
        )
        .bind(platform)
        .bind(place)
        .bind(message_id)
        .bind(incident_id)
        .bind(kind.word())
        .bind(self.now())
        .execute(&self.db.pool)
        .await?;
        Ok(())
    }

    /// The post `message_id` on `platform`, when Klaxon made it.
    pub(crate) async fn post(&self, platform: &str, message_id: &str) -> Result<Option<Post>> {
        let row: Option<(String, String, i64, String)> = sqlx::query_as(
            "SELECT place, message_id, incident_id, kind FROM chat_posts \
             WHERE platform = $1 AND message_id = $2",
        )
        .bind(platform)
        .bind(message_id)
        .fetch_optional(&self.db.pool)
        .await?;
        Ok(row.map(|(place, message_id, incident_id, kind)| Post {
            place,
            message_id,
            incident_id,
            announcement: kind == PostKind::Announcement.word(),
        }))
    }

    /// An incident's announcements on `platform`, in `place` or everywhere, oldest first.
    pub(crate) async fn announcements_of(
        &self,
        platform: &str,
        incident_id: i64,
        place: Option<&str>,
    ) -> Result<Vec<Post>> {
        let rows: Vec<(String, String)> = sqlx::query_as(
            "SELECT place, message_id FROM chat_posts \
             WHERE platform = $1 AND incident_id = $2 AND kind = $3 AND ($4 IS NULL OR place = $4) \
             ORDER BY id",
        )
        .bind(platform)
        .bind(incident_id)
        .bind(PostKind::Announcement.word())
        .bind(place)
        .fetch_all(&self.db.pool)
        .await?;
        Ok(rows
            .into_iter()
            .map(|(place, message_id)| Post {
                place,
                message_id,
                incident_id,
                announcement: true,
            })
            .collect())
    }

    /// Forgets posts past `KEPT_SECONDS` (the sweeper).
    pub(crate) async fn forget_old_posts(&self, now: i64) -> Result<u64> {
        let done = sqlx::query("DELETE FROM chat_posts WHERE created_at < $1")
            .bind(now - KEPT_SECONDS)
            .execute(&self.db.pool)
            .await?;
        Ok(done.rows_affected())
    }
}

/// After a road posted message `key` in `place` for an event of one incident: remembers it (the
/// incident's first message there is its announcement, any later one a message kept as sent)
/// and answers the announcements to edit with what they should show now, naming who acted only
/// when this event is what brought the incident to its state. `None` when the posts could not
/// be read or kept (logged: the message itself went out).
pub(super) async fn keep_first(
    core: &Core,
    platform: &str,
    a: &Announcement,
    item: &Item,
    place: &str,
    key: &str,
    interactive: bool,
) -> Option<(Vec<Post>, Announcement)> {
    let incident = item.incident.id;
    let kept = async {
        let first = core
            .announcements_of(platform, incident, Some(place))
            .await?;
        let kind = match first.is_empty() {
            true => PostKind::Announcement,
            false => PostKind::Message,
        };
        core.remember_post(platform, place, key, incident, kind)
            .await?;
        Ok::<_, crate::Error>(first)
    };
    let first = match kept.await {
        Ok(first) => first,
        Err(e) => {
            tracing::warn!(error = %e, platform, "an announcement's message was not kept");
            return None;
        }
    };
    Some((first, now(a, item, interactive)))
}

/// What an incident's announcement shows now, naming who acted only when `item`'s event is what
/// brought the incident to its state.
fn now(a: &Announcement, item: &Item, interactive: bool) -> Announcement {
    let by = (state_event(&item.incident) == item.event)
        .then(|| item.actor.clone())
        .flatten();
    Announcement::current(&item.incident, &a.team, &a.public_url, by, interactive)
}

/// For `Message::Update`: each incident's announcements in `place`, with what they should show
/// now (an incident with none there is left out). At most `UPDATES_AT_ONCE` incidents, the
/// latest: a storm's edits beyond them would only hold the channel behind a rate limit.
pub(super) async fn to_update(
    core: &Core,
    platform: &str,
    a: &Announcement,
    place: &str,
    interactive: bool,
) -> Vec<(Vec<Post>, Announcement)> {
    let items: Vec<&Item> = match &a.body {
        Body::One(item) => vec![&**item],
        Body::Summary(items) => items.iter().collect(),
        Body::Test => Vec::new(),
    };
    let mut latest: Vec<&Item> = Vec::new();
    for item in items.into_iter().rev() {
        if latest.len() < UPDATES_AT_ONCE
            && !latest.iter().any(|i| i.incident.id == item.incident.id)
        {
            latest.push(item);
        }
    }
    let mut edits = Vec::new();
    for item in latest.into_iter().rev() {
        match core
            .announcements_of(platform, item.incident.id, Some(place))
            .await
        {
            Ok(first) if first.is_empty() => {}
            Ok(first) => edits.push((first, now(a, item, interactive))),
            Err(e) => tracing::warn!(error = %e, platform, "announcements were not read"),
        }
    }
    edits
}

/// Incidents whose messages one update edits at most.
pub const UPDATES_AT_ONCE: usize = 20;
