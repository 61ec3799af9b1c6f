//! A reported change (`sources::pagerduty::ChangeEvent`) stored for the destination's team:
//! never paged; `crate::changes` reads them.

use super::Destination;
use crate::sources::pagerduty::ChangeEvent;
use crate::{Core, Result};

impl Core {
    /// Records a change reported to the destination's integration.
    pub async fn record_change(&self, to: &Destination, change: ChangeEvent) -> Result<()> {
        sqlx::query(
            "INSERT INTO changes (team_id, integration_id, at, received_at, summary, source, link, link_text, details) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
        )
        .bind(to.team_id)
        .bind(to.integration_id)
        .bind(change.at)
        .bind(self.now())
        .bind(change.summary)
        .bind(change.source)
        .bind(change.link)
        .bind(change.link_text)
        .bind(change.details)
        .execute(&self.db.pool)
        .await?;
        self.stamp_request(to).await
    }
}
