//! Leases: the loops that run on one replica at a time (the sweeper) hold a row each, taken and
//! renewed by whichever replica gets it, lapsing on their own when it dies; and handing back a
//! stopping replica's leases and outbox claims at once.

use crate::{Core, Result};

/// A lease not renewed for this long (seconds) passes to another replica.
pub const LEASE_TTL: i64 = 8;
/// How often every replica takes or renews the leases, sweeping or not: the holder keeps its
/// lease through a long sweep, and a survivor takes a dead holder's within `LEASE_TTL` + 1 +
/// this (11 s).
pub const LEASE_RENEW: std::time::Duration = std::time::Duration::from_secs(2);
/// The loops that run on one replica at a time.
pub const LEASES: [&str; 1] = ["sweeper"];

/// A loop's lease row: who holds it and until when.
#[derive(Debug, Clone, Default, sqlx::FromRow)]
pub struct Lease {
    pub name: String,
    pub holder: String,
    pub expires_at: i64,
}

/// Seconds since a lease was last taken or renewed; `None` when it never was.
pub fn lease_age(expires_at: i64, now: i64) -> Option<i64> {
    (expires_at > 0).then(|| now - (expires_at - LEASE_TTL))
}

impl Core {
    /// Takes or renews the named loop's lease for `holder`; true when this replica holds it.
    /// A lease not renewed expires on its own, so a dead replica is replaced within `ttl`.
    pub async fn take_lease(&self, name: &str, holder: &str, ttl: i64) -> Result<bool> {
        let now = self.now();
        let done = sqlx::query("UPDATE leases SET holder = $1, expires_at = $2 WHERE name = $3 AND (holder = $1 OR expires_at < $4)")
            .bind(holder)
            .bind(now + ttl)
            .bind(name)
            .bind(now)
            .execute(&self.db.pool)
            .await?;
        Ok(done.rows_affected() == 1)
    }

    /// Every loop's lease, in one read (the metrics and the health check share it).
    pub async fn leases(&self) -> Result<Vec<Lease>> {
        Ok(
            sqlx::query_as("SELECT name, holder, expires_at FROM leases ORDER BY name")
                .fetch_all(&self.db.pool)
                .await?,
        )
    }

    /// Gives up `holder`'s leases and its claims on unsent pages, so another replica takes
    /// over at once instead of after they expire (a rolling update, a stop).
    pub async fn release(&self, holder: &str) -> Result<()> {
        sqlx::query("UPDATE leases SET expires_at = 0 WHERE holder = $1")
            .bind(holder)
            .execute(&self.db.pool)
            .await?;
        sqlx::query(
            "UPDATE pages SET claimed_by = NULL, claimed_until = NULL WHERE claimed_by = $1 AND state = 'pending'",
        )
        .bind(holder)
        .execute(&self.db.pool)
        .await?;
        sqlx::query(
            "UPDATE channel_posts SET claimed_by = NULL, claimed_until = NULL WHERE claimed_by = $1 AND state = 'pending'",
        )
        .bind(holder)
        .execute(&self.db.pool)
        .await?;
        Ok(())
    }
}
