//! Messages a chat road posted about an incident (`chat_posts`): an answer to one of them (a
//! reply, a reaction, a message in its thread) acts on that incident (`chat`), and an
//! announcement is edited in place as the incident moves.

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
