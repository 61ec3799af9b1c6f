//! Password-login throttling and the sign-up limiter, kept in the database so every replica
//! counts alike. A username with 10 failures in 15 minutes is refused for the rest of that
//! window, even with the right password; an address gets a looser limit of its own. Sign-ups
//! are counted per address in a table of their own, so a burst of them never locks anyone out
//! of signing in.

use crate::{Core, Error, Result};

pub const WINDOW: i64 = 15 * 60;
pub const PER_USERNAME: i64 = 10;
pub const PER_ADDRESS: i64 = 50;
/// Sign-up attempts per address per `WINDOW`: a room of people joining through one office
/// network fits; a script creating accounts (each an argon2 hash) does not.
pub const SIGNUPS_PER_ADDRESS: i64 = 50;

impl Core {
    /// Refuses with `RateLimited` while the username or the address is over its limit.
    pub(crate) async fn check_login_throttle(&self, username: &str, address: &str) -> Result<()> {
        let since = self.now() - WINDOW;
        for (column, value, limit) in [
            ("username", username, PER_USERNAME),
            ("address", address, PER_ADDRESS),
        ] {
            // `column` is one of two fixed names, never input.
            let sql = format!(
                "SELECT COUNT(*), MIN(at) FROM login_failures WHERE {column} = $1 AND at > $2"
            );
            let (count, oldest): (i64, Option<i64>) = sqlx::query_as(&sql)
                .bind(value)
                .bind(since)
                .fetch_one(&self.db.pool)
                .await?;
            if count >= limit {
                let retry_after = (oldest.unwrap_or(since) + WINDOW - self.now()).max(1);
                return Err(Error::RateLimited {
                    retry_after,
                    message: format!(
                        "too many failed sign-ins for this {column}; try again in {} minutes",
                        (retry_after + 59) / 60
                    ),
                });
            }
        }
        Ok(())
    }

    /// Counts a sign-up attempt of `address`, refusing it with `RateLimited` when the address
    /// has made `SIGNUPS_PER_ADDRESS` in the window.
    pub(crate) async fn check_signup_limit(&self, address: &str) -> Result<()> {
        let now = self.now();
        let since = now - WINDOW;
        sqlx::query("DELETE FROM signup_attempts WHERE at <= $1")
            .bind(since)
            .execute(&self.db.pool)
            .await?;
        let (count, oldest): (i64, Option<i64>) = sqlx::query_as(
            "SELECT COUNT(*), MIN(at) FROM signup_attempts WHERE address = $1 AND at > $2",
        )
        .bind(address)
        .bind(since)
        .fetch_one(&self.db.pool)
        .await?;
        if count >= SIGNUPS_PER_ADDRESS {
            let retry_after = (oldest.unwrap_or(since) + WINDOW - now).max(1);
            return Err(Error::RateLimited {
                retry_after,
                message: format!(
                    "too many sign-ups from this address; try again in {} minutes",
                    (retry_after + 59) / 60
                ),
            });
        }
        sqlx::query("INSERT INTO signup_attempts (address, at) VALUES ($1, $2)")
            .bind(address)
            .bind(now)
            .execute(&self.db.pool)
            .await?;
        Ok(())
    }

    pub(crate) async fn record_login_failure(&self, username: &str, address: &str) -> Result<()> {
        let now = self.now();
        sqlx::query("DELETE FROM login_failures WHERE at <= $1")
            .bind(now - WINDOW)
            .execute(&self.db.pool)
            .await?;
        sqlx::query("INSERT INTO login_failures (username, address, at) VALUES ($1, $2, $3)")
            .bind(username)
            .bind(address)
            .bind(now)
            .execute(&self.db.pool)
            .await?;
        Ok(())
    }
}
