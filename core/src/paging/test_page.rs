//! `POST /api/me/notify/test` and every other message that is sent now rather than through the
//! outbox (a contact method's test and code): what the road's service answers reaches the caller.

use crate::authz::require_human;
use crate::roads::{Message, Owner, To};
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
        let to = To {
            target: topic,
            secret: None,
            keys: None,
            room: None,
            method_id: None,
            provider: None,
            owner: Owner::Person,
            name: actor.username.clone(),
            delivery: format!("test-{}", self.now()),
        };
        self.send_now("ntfy", &to, &Message::Test).await?;
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

    /// Sends `message` by the road named `road` now: a road this install does not offer is 409,
    /// a failure 502 with its sentence (a target found gone says so: `Failure::gone`).
    pub(crate) async fn send_now(
        &self,
        road: &str,
        to: &To,
        message: &Message<'_>,
    ) -> std::result::Result<(), SendNowError> {
        let road = self
            .roads
            .usable(road)
            .map_err(|why| SendNowError::Refused(Error::Conflict(why)))?;
        road.send(self, to, message).await.map_err(|f| {
            if f.gone {
                SendNowError::Gone(f.sentence())
            } else {
                SendNowError::Refused(Error::PushFailed(f.sentence()))
            }
        })
    }
}

/// Why `send_now` did not send.
pub(crate) enum SendNowError {
    Refused(Error),
    /// The target is gone (a dropped subscription): the caller forgets it, then answers 502.
    Gone(String),
}

impl From<SendNowError> for Error {
    fn from(e: SendNowError) -> Error {
        match e {
            SendNowError::Refused(e) => e,
            SendNowError::Gone(why) => Error::PushFailed(why),
        }
    }
}
