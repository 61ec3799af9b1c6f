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

/// Per-address attempts with a limit of their own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Attempt {
    /// Sign-ups (`SIGNUPS_PER_ADDRESS`).
    Signup,
    /// Device sign-ins started (`DEVICE_STARTS_PER_ADDRESS`).
    DeviceStart,
    /// Polls with a device code that does not exist (`UNKNOWN_DEVICE_CODES_PER_ADDRESS`).
    UnknownDeviceCode,
    /// Single sign-ons started (`SSO_STARTS_PER_ADDRESS`).
    SsoStart,
}

/// Single sign-ons started per address per `WINDOW`: each leaves a row until it is used or
/// expires, so a script cannot fill the table; an office behind one address still fits.
pub const SSO_STARTS_PER_ADDRESS: i64 = 100;

/// Device sign-ins started per address per `WINDOW`: a person signs in a few terminals a day.
pub const DEVICE_STARTS_PER_ADDRESS: i64 = 30;
/// Polls with unknown device codes per address per `WINDOW`: a client that lost its code stops
/// soon; a guesser stops here.
pub const UNKNOWN_DEVICE_CODES_PER_ADDRESS: i64 = 30;

impl Attempt {
    fn word(self) -> &'static str {
        match self {
            Attempt::Signup => "signup",
            Attempt::DeviceStart => "device_start",
            Attempt::UnknownDeviceCode => "unknown_device_code",
            Attempt::SsoStart => "sso_start",
        }
    }

    /// (table, extra condition, limit, what the refusal calls them).
    fn rule(self) -> (&'static str, String, i64, &'static str) {
        match self {
            Attempt::Signup => (
                "signup_attempts",
                String::new(),
                SIGNUPS_PER_ADDRESS,
                "sign-ups",
            ),
            Attempt::DeviceStart => (
                "address_attempts",
                format!("kind = '{}' AND", self.word()),
                DEVICE_STARTS_PER_ADDRESS,
                "terminal sign-ins",
            ),
            Attempt::UnknownDeviceCode => (
                "address_attempts",
                format!("kind = '{}' AND", self.word()),
                UNKNOWN_DEVICE_CODES_PER_ADDRESS,
                "unknown device codes",
            ),
            Attempt::SsoStart => (
                "address_attempts",
                format!("kind = '{}' AND", self.word()),
                SSO_STARTS_PER_ADDRESS,
                "single sign-ons",
            ),
        }
    }
}

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
        self.limit_address(Attempt::Signup, address).await?;
        self.count_attempt(Attempt::Signup, address).await
    }

    /// Refuses with `RateLimited` while `address` has made `kind`'s limit of attempts in the
    /// window.
    pub(crate) async fn limit_address(&self, kind: Attempt, address: &str) -> Result<()> {
        let now = self.now();
        let since = now - WINDOW;
        let (table, filter, limit, what) = kind.rule();
        // `table` and `filter` are fixed per kind, never input.
        sqlx::query(&format!("DELETE FROM {table} WHERE at <= $1"))
            .bind(since)
            .execute(&self.db.pool)
            .await?;
        let (count, oldest): (i64, Option<i64>) = sqlx::query_as(&format!(
            "SELECT COUNT(*), MIN(at) FROM {table} WHERE {filter} address = $1 AND at > $2"
        ))
        .bind(address)
        .bind(since)
        .fetch_one(&self.db.pool)
        .await?;
        if count >= limit {
            let retry_after = (oldest.unwrap_or(since) + WINDOW - now).max(1);
            return Err(Error::RateLimited {
                retry_after,
                message: format!(
                    "too many {what} from this address; try again in {} minutes",
                    (retry_after + 59) / 60
                ),
            });
        }
        Ok(())
    }

    /// Counts one attempt of `kind` by `address`.
    pub(crate) async fn count_attempt(&self, kind: Attempt, address: &str) -> Result<()> {
        let (table, _, _, _) = kind.rule();
        let sql = match kind {
            Attempt::Signup => format!("INSERT INTO {table} (address, at) VALUES ($1, $2)"),
            _ => format!(
                "INSERT INTO {table} (kind, address, at) VALUES ('{}', $1, $2)",
                kind.word()
            ),
        };
        sqlx::query(&sql)
            .bind(address)
            .bind(self.now())
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
