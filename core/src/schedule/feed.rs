//! Calendar feed links: a person's link to one team's schedule as an iCalendar feed, for
//! calendar apps, which subscribe by URL and cannot send a bearer key. The link's secret is
//! stored only as its hash and shown once; making a new one replaces the old.

use crate::authz::require_human;
use crate::secrets::{hash_token, new_token};
use crate::{Actor, Core, Error, Result};
use klaxon_domain::schedule::{CalendarFeed, NewCalendarFeed};
use klaxon_domain::Timestamp;

impl Core {
    /// The caller's feed link of the team, if they made one (never its secret).
    pub async fn calendar_feed(&self, actor: &Actor, team_id: i64) -> Result<Option<CalendarFeed>> {
        require_human(actor)?;
        self.team_access(actor, team_id).await?;
        let row: Option<(i64,)> = sqlx::query_as(
            "SELECT created_at FROM calendar_feeds WHERE user_id = $1 AND team_id = $2",
        )
        .bind(actor.user_id)
        .bind(team_id)
        .fetch_optional(&self.db.pool)
        .await?;
        Ok(row.map(|(at,)| CalendarFeed {
            created_at: Timestamp(at),
        }))
    }

    /// A new feed link for the caller and the team, replacing theirs: the URL, once.
    pub async fn make_calendar_feed(&self, actor: &Actor, team_id: i64) -> Result<NewCalendarFeed> {
        require_human(actor)?;
        self.team_access(actor, team_id).await?;
        let token = new_token();
        let now = self.now();
        let mut tx = self.db.begin().await?;
        sqlx::query("DELETE FROM calendar_feeds WHERE user_id = $1 AND team_id = $2")
            .bind(actor.user_id)
            .bind(team_id)
            .execute(&mut *tx)
            .await?;
        sqlx::query(
            "INSERT INTO calendar_feeds (user_id, team_id, token_hash, created_at) VALUES ($1, $2, $3, $4)",
        )
        .bind(actor.user_id)
        .bind(team_id)
        .bind(hash_token(&token))
        .bind(now)
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(NewCalendarFeed {
            url: format!(
                "{}/api/calendar/{token}/schedule.ics",
                self.config.public_url
            ),
            created_at: Timestamp(now),
        })
    }

    /// Stops the caller's feed link of the team; stopping none changes nothing.
    pub async fn stop_calendar_feed(&self, actor: &Actor, team_id: i64) -> Result<()> {
        require_human(actor)?;
        self.team_access(actor, team_id).await?;
        sqlx::query("DELETE FROM calendar_feeds WHERE user_id = $1 AND team_id = $2")
            .bind(actor.user_id)
            .bind(team_id)
            .execute(&self.db.pool)
            .await?;
        Ok(())
    }

    /// `GET /api/calendar/{token}/schedule.ics`: the team's feed, read as the link's person, so
    /// a link stops working when they leave the team or are disabled.
    pub async fn calendar_feed_ics(&self, token: &str) -> Result<String> {
        let (actor, team_id) = self.authenticate_calendar_feed(token).await?;
        self.schedule_ics(&actor, team_id)
            .await
            .map_err(|e| match e {
                Error::Forbidden(_) => Error::NotFound,
                other => other,
            })
    }
}
