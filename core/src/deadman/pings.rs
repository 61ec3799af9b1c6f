//! Heartbeat URLs, for jobs that cannot send alerts (cron, backups): a switch fed by pings
//! hears `…/api/heartbeat/{key}` as a heartbeat, `/start` as a run begun and `/fail` as a run
//! that failed, as healthchecks.io's pings do. The death rule and the watch are the switches'
//! own (`deadman::status`, `watch`): a ping is a heartbeat of the switch's one source, and a
//! failure makes that source dead at once, until the next heartbeat.

use crate::key_rate::Keyed;
use crate::{Core, Error, Result};

/// What is kept of a failure's body: enough for the page to say what broke.
pub const MAX_FAILURE: usize = 1000;

/// What a ping says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ping {
    /// The job ran well: a heartbeat.
    Success,
    /// A run began; shown until it ends.
    Start,
    /// A run failed; the body's text says how.
    Fail(String),
}

impl Core {
    /// Records a ping to the heartbeat URL with `key`. `NotFound` for a key no switch has;
    /// `RateLimited` past the key's rate (`KLAXON_INTAKE_RATE`, as an integration's).
    pub async fn ping(&self, key: &str, ping: Ping) -> Result<()> {
        let found: Option<(i64,)> =
            sqlx::query_as("SELECT id FROM deadman_switches WHERE ping_key_hash = $1")
                .bind(crate::secrets::hash_token(key))
                .fetch_optional(&self.db.pool)
                .await?;
        let (id,) = found.ok_or(Error::NotFound)?;
        self.key_rate.check(Keyed::Switch(id))?;
        let now = self.now();
        let mut tx = self.db.begin().await?;
        match ping {
            Ping::Start => {
                sqlx::query("UPDATE deadman_switches SET ping_started_at = $1 WHERE id = $2")
                    .bind(now)
                    .bind(id)
                    .execute(&mut *tx)
                    .await?;
            }
            Ping::Success => {
                sqlx::query(
                    "INSERT INTO deadman_heartbeats (switch_id, cluster, first_seen_at, last_seen_at) \
                     VALUES ($1, '', $2, $2) ON CONFLICT (switch_id, cluster) DO UPDATE SET \
                     last_seen_at = CASE WHEN deadman_heartbeats.last_seen_at < $2 THEN $2 \
                     ELSE deadman_heartbeats.last_seen_at END, failed_at = NULL, failure = NULL",
                )
                .bind(id)
                .bind(now)
                .execute(&mut *tx)
                .await?;
                self.run_ended(&mut tx, id).await?;
            }
            Ping::Fail(said) => {
                let said: String = said.trim().chars().take(MAX_FAILURE).collect();
                let said = Some(said).filter(|s| !s.is_empty());
                // Never heard before: the failure is its first sign of life, and a death.
                sqlx::query(
                    "INSERT INTO deadman_heartbeats (switch_id, cluster, first_seen_at, last_seen_at, failed_at, failure) \
                     VALUES ($1, '', $2, $2, $2, $3) ON CONFLICT (switch_id, cluster) DO UPDATE SET \
                     failed_at = $2, failure = $3",
                )
                .bind(id)
                .bind(now)
                .bind(said)
                .execute(&mut *tx)
                .await?;
                self.run_ended(&mut tx, id).await?;
            }
        }
        tx.commit().await
    }

    async fn run_ended(&self, tx: &mut crate::db::Tx, id: i64) -> Result<()> {
        sqlx::query("UPDATE deadman_switches SET ping_started_at = NULL WHERE id = $1")
            .bind(id)
            .execute(&mut **tx)
            .await?;
        Ok(())
    }
}
