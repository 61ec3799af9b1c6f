//! `POST /api/me/notify/test`: a page straight to the caller's topic, not through the outbox,
//! so what the push service says reaches the caller.

use super::ntfy::Message;
use crate::authz::require_human;
use crate::{Actor, Core, Error, Result};

impl Core {
    pub async fn send_test_page(&self, actor: &Actor) -> Result<()> {
        require_human(actor)?;
        let (topic,): (Option<String>,) =
            sqlx::query_as("SELECT push_topic FROM users WHERE id = $1")
                .bind(actor.user_id)
                .fetch_one(&self.db.pool)
                .await?;
        let topic = topic.ok_or_else(|| {
            Error::Conflict("push_topic: set your ntfy topic before sending a test page".into())
        })?;
        self.reserve_test(actor.user_id, &format!("ntfy:{topic}"))
            .await?;
        self.publish_test_page(topic).await?;
        self.mark_test_page(actor.user_id).await
    }

    /// Remembers that a test page reached one of the person's roads (the first-steps card).
    pub(crate) async fn mark_test_page(&self, user_id: i64) -> Result<()> {
        sqlx::query("UPDATE users SET test_page_at = $1 WHERE id = $2")
            .bind(self.now())
            .bind(user_id)
            .execute(&self.db.pool)
            .await?;
        Ok(())
    }

    /// Publishes the test page to `topic`; ntfy's refusal is the error.
    pub(crate) async fn publish_test_page(&self, topic: String) -> Result<()> {
        let ntfy = self.ntfy.as_ref().ok_or_else(|| {
            Error::Conflict("no push service is configured (KLAXON_NTFY_URL)".into())
        })?;
        let message = Message {
            topic,
            title: "Klaxon test page".into(),
            message: "Pages reach this phone. Keep the ntfy app allowed to make sound at night."
                .into(),
            tags: vec!["bell".into()],
            priority: 4,
            click: Some(format!("{}/me", self.config.public_url)),
            actions: Vec::new(),
        };
        ntfy.publish(&message)
            .await
            .map_err(|e| Error::PushFailed(e.reason))
    }
}
