//! Posting one announcement to a channel by its road (`crate::roads`), which renders it, calls
//! the service through the outbound policy, and names the channel in a failure by its kind and
//! origin (never its URL, a secret, nor anything the other side wrote).

use crate::roads::announcement::Announcement;
use crate::roads::{Failure, Message, Owner, Sent, To};
use crate::{Core, Error, Result};
use klaxon_domain::channel::ChannelKind;

/// What a message is posted with: the channel's kind, target and secret, and its team.
pub(super) struct Target {
    pub id: i64,
    pub kind: ChannelKind,
    pub target: String,
    pub secret: Option<String>,
    pub team_id: i64,
    pub team: String,
}

impl Core {
    /// The channel's target as the announcer posts to it.
    pub(super) async fn channel_target_of(&self, id: i64) -> Result<Target> {
        // A Matrix channel posts to the room it was proven in, never to what an alias names now;
        // an unproven one to no room at all.
        let row: (i64, String, String, Option<String>, i64, String) = sqlx::query_as(
            "SELECT c.id, c.kind, CASE WHEN c.kind = 'matrix' THEN COALESCE(c.room_id, '') \
             ELSE c.target END, c.signing_secret, c.team_id, t.name FROM channels c \
             JOIN teams t ON t.id = c.team_id WHERE c.id = $1",
        )
        .bind(id)
        .fetch_optional(&self.db.pool)
        .await?
        .ok_or(Error::NotFound)?;
        Ok(Target {
            id: row.0,
            kind: ChannelKind::try_from(row.1)?,
            target: row.2,
            secret: row.3,
            team_id: row.4,
            team: row.5,
        })
    }

    /// Posts one announcement. `delivery` is the same on every retry of it: the Matrix
    /// transaction id (the homeserver keeps one event per id, so a retry after a lost answer
    /// posts once) and the webhook's `Klaxon-Delivery`. With `update`, the channel's messages of
    /// the announcement's incidents are edited instead (`Message::Update`).
    pub(super) async fn post_to(
        &self,
        to: &Target,
        message: &Announcement,
        delivery: &str,
        update: bool,
    ) -> Sent {
        let Some(road) = self.roads.get(to.kind.as_str()) else {
            return Err(Failure::permanent(format!(
                "{} is not a road",
                to.kind.as_str()
            )));
        };
        let to = To {
            target: to.target.clone(),
            secret: to.secret.clone(),
            keys: None,
            room: None,
            method_id: None,
            provider: None,
            owner: Owner::Team,
            name: to.team.clone(),
            delivery: delivery.to_string(),
        };
        let message = match update {
            true => Message::Update(message),
            false => Message::Announcement(message),
        };
        road.send(self, &to, &message).await
    }
}
