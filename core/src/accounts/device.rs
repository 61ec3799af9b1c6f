//! Klaxon's device flow: `klaxon login` asks for a code, a person approves it from a browser
//! signed in by any means, and the terminal's next poll gets a session of its own. The approved
//! session keeps the approving session's ceiling, so a single sign-on session cannot be
//! stretched through a terminal.

use super::StartedSession;
use crate::credentials::Presented;
use crate::secrets::{hash_token, looks_like_token, new_token};
use crate::throttle::Attempt;
use crate::{Actor, Core, Error, Result};
use klaxon_domain::device::{
    normalize_user_code, DeviceStart, DeviceState, DEVICE_TTL, POLL_INTERVAL, USER_CODE_ALPHABET,
};
use klaxon_domain::ErrorCode;
use rand::Rng;

/// A fresh `XXXX-XXXX` code (31 symbols, about 40 bits).
fn new_user_code() -> String {
    let mut rng = rand::thread_rng();
    let mut pick = || USER_CODE_ALPHABET[rng.gen_range(0..USER_CODE_ALPHABET.len())] as char;
    let first: String = (0..4).map(|_| pick()).collect();
    let second: String = (0..4).map(|_| pick()).collect();
    format!("{first}-{second}")
}

fn poll_error(code: ErrorCode, message: &str) -> Error {
    Error::Device {
        code,
        message: message.into(),
    }
}

#[derive(sqlx::FromRow)]
struct DeviceRow {
    id: i64,
    #[sqlx(try_from = "String")]
    state: DeviceState,
    user_id: Option<i64>,
    session_ceiling: Option<i64>,
    last_polled_at: Option<i64>,
    expires_at: i64,
}

impl Core {
    /// Starts a device sign-in (no credential), at most `DEVICE_STARTS_PER_ADDRESS` per
    /// address in the window.
    pub async fn start_device(&self, request: &Presented<'_>) -> Result<DeviceStart> {
        let address = self.client_address(request);
        self.reserve(Attempt::DeviceStart, &address).await?;
        let now = self.now();
        sqlx::query("DELETE FROM device_codes WHERE expires_at < $1")
            .bind(now - DEVICE_TTL)
            .execute(&self.db.pool)
            .await?;
        let device_code = new_token();
        // A collision with a live code is astronomically rare; the unique index refuses it.
        let user_code = new_user_code();
        sqlx::query(
            "INSERT INTO device_codes (device_code_hash, user_code_hash, created_at, expires_at) VALUES ($1, $2, $3, $4)",
        )
        .bind(hash_token(&device_code))
        .bind(hash_token(&user_code))
        .bind(now)
        .bind(now + DEVICE_TTL)
        .execute(&self.db.pool)
        .await?;
        let verification_uri = format!("{}/device", self.config.public_url);
        Ok(DeviceStart {
            verification_uri_complete: format!("{verification_uri}?code={user_code}"),
            verification_uri,
            device_code,
            user_code,
            expires_in: DEVICE_TTL,
            interval: POLL_INTERVAL,
        })
    }

    /// A terminal's poll: `authorization_pending`, `slow_down`, `expired_token` or
    /// `access_denied` as errors, or — once, after approval — a session. Codes that do not
    /// exist are counted per address (`UNKNOWN_DEVICE_CODES_PER_ADDRESS`), so they cannot be
    /// guessed at speed.
    pub async fn poll_device(
        &self,
        request: &Presented<'_>,
        device_code: &str,
    ) -> Result<StartedSession> {
        let expired = || poll_error(ErrorCode::ExpiredToken, "the code expired; start again");
        let address = self.client_address(request);
        // Reserved before the lookup and given back when the code exists.
        let guess = self.reserve(Attempt::UnknownDeviceCode, &address).await?;
        let found: Option<DeviceRow> = if looks_like_token(device_code) {
            sqlx::query_as(
            "SELECT id, state, user_id, session_ceiling, last_polled_at, expires_at FROM device_codes WHERE device_code_hash = $1",
        )
            .bind(hash_token(device_code))
            .fetch_optional(&self.db.pool)
            .await?
        } else {
            None
        };
        let Some(row) = found else {
            return Err(expired());
        };
        self.give_back(&guess).await?;
        let now = self.now();
        if row.expires_at <= now || row.state == DeviceState::Redeemed {
            return Err(expired());
        }
        // Each poll moves the mark, so a client that keeps polling too fast keeps waiting.
        let polled = sqlx::query(
            "UPDATE device_codes SET last_polled_at = $1 WHERE id = $2 AND (last_polled_at IS NULL OR last_polled_at <= $3)",
        )
        .bind(now)
        .bind(row.id)
        .bind(now - POLL_INTERVAL)
        .execute(&self.db.pool)
        .await?;
        if polled.rows_affected() == 0 && row.last_polled_at.is_some() {
            sqlx::query("UPDATE device_codes SET last_polled_at = $1 WHERE id = $2")
                .bind(now)
                .bind(row.id)
                .execute(&self.db.pool)
                .await?;
            return Err(poll_error(
                ErrorCode::SlowDown,
                &format!("poll at most every {POLL_INTERVAL} seconds"),
            ));
        }
        match (row.state, row.user_id) {
            (DeviceState::Pending, _) => Err(poll_error(
                ErrorCode::AuthorizationPending,
                "waiting for the code to be approved in a browser",
            )),
            (DeviceState::Denied, _) => {
                Err(poll_error(ErrorCode::AccessDenied, "the code was denied"))
            }
            (DeviceState::Approved, Some(user_id)) => {
                // Redeemed once: a second poll racing this one finds it redeemed.
                let redeemed = sqlx::query(
                    "UPDATE device_codes SET state = 'redeemed' WHERE id = $1 AND state = 'approved'",
                )
                .bind(row.id)
                .execute(&self.db.pool)
                .await?;
                if redeemed.rows_affected() == 0 {
                    return Err(expired());
                }
                let user = self.user_by_id(user_id).await?;
                if user.disabled {
                    return Err(poll_error(
                        ErrorCode::AccessDenied,
                        "the account is disabled",
                    ));
                }
                self.start_session(user_id, row.session_ceiling).await
            }
            _ => Err(expired()),
        }
    }

    /// Approves or denies a pending code, from a browser session only (a key cannot hand its
    /// rights to a terminal). A code that is unknown, expired or already used is refused; wrong
    /// guesses count as failed sign-ins of the caller, so codes cannot be tried at speed.
    pub async fn approve_device(
        &self,
        actor: &Actor,
        user_code: &str,
        approve: bool,
    ) -> Result<()> {
        crate::authz::require_human(actor)?;
        let Some(session) = actor.session_id() else {
            return Err(Error::forbidden(
                "only a signed-in browser may approve a device; an API key may not",
            ));
        };
        let attempt = self
            .reserve_password_check(&actor.username, &actor.address)
            .await?;
        let now = self.now();
        let decision = if approve {
            DeviceState::Approved
        } else {
            DeviceState::Denied
        };
        let found = match normalize_user_code(user_code) {
            Some(code) => {
                let (ceiling,): (Option<i64>,) =
                    sqlx::query_as("SELECT max_expires_at FROM sessions WHERE id = $1")
                        .bind(session)
                        .fetch_one(&self.db.pool)
                        .await?;
                sqlx::query(
                    "UPDATE device_codes SET state = $1, user_id = $2, session_ceiling = $3 \
                     WHERE user_code_hash = $4 AND state = 'pending' AND expires_at > $5",
                )
                .bind(decision.as_str())
                .bind(actor.user_id)
                .bind(ceiling)
                .bind(hash_token(&code))
                .bind(now)
                .execute(&self.db.pool)
                .await?
                .rows_affected()
                    == 1
            }
            None => false,
        };
        if !found {
            return Err(Error::Invalid(
                "user_code: no pending sign-in has this code; check it, or start again in the terminal"
                    .into(),
            ));
        }
        self.password_check_passed(&attempt).await?;
        Ok(())
    }
}
