//! The one error type of every operation, mapped once to the API's error body.

use klaxon_domain::{ErrorBody, ErrorCode};

pub type Result<T, E = Error> = std::result::Result<T, E>;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{0}")]
    Invalid(String),
    #[error("authentication required")]
    Unauthorized,
    #[error("{0}")]
    Forbidden(String),
    #[error("not found")]
    NotFound,
    #[error("{0}")]
    Conflict(String),
    /// A device flow poll's answer other than a session (RFC 8628 names).
    #[error("{message}")]
    Device { code: ErrorCode, message: String },
    /// One answer for every link that cannot be used, so links cannot be probed.
    #[error("this invite link cannot be used: it may have expired, been revoked or been used up; ask for a new one")]
    InviteUnusable,
    /// A single sign-on refused; the sign-in page shows the sentence.
    #[error("{}", .0.sentence())]
    Sso(klaxon_domain::sso::SsoRefusal),
    #[error("the request body is too large")]
    PayloadTooLarge,
    #[error("{message}")]
    RateLimited { retry_after: i64, message: String },
    #[error("{0}")]
    PushFailed(String),
    /// A service Klaxon calls for the caller (Alertmanager) failed; the reason is shown.
    #[error("{0}")]
    Upstream(String),
    /// Too much work of one kind is in flight (password hashing); come back shortly.
    #[error("{message}")]
    Overloaded { retry_after: i64, message: String },
    /// The detail is logged, never shown to the caller.
    #[error("the database is not answering")]
    Unavailable(String),
    /// A transaction lost a race (deadlock, serialization failure, SQLite busy): safe to retry.
    #[error("the database is busy; try again")]
    Busy,
    /// The detail is logged, never shown to the caller.
    #[error("internal error")]
    Internal(String),
}

/// A form field's raw text parsed into its domain type (`klaxon_domain::text`); a refusal
/// names the field. JSON bodies are parsed as they are read and never need this.
pub fn field<T>(name: &str, parsed: std::result::Result<T, String>) -> Result<T> {
    parsed.map_err(|e| Error::Invalid(format!("{name} {e}")))
}

impl Error {
    pub fn code(&self) -> ErrorCode {
        match self {
            Error::Invalid(_) => ErrorCode::Invalid,
            Error::Unauthorized => ErrorCode::Unauthorized,
            Error::Forbidden(_) => ErrorCode::Forbidden,
            Error::NotFound => ErrorCode::NotFound,
            Error::Conflict(_) => ErrorCode::Conflict,
            Error::InviteUnusable => ErrorCode::InviteUnusable,
            Error::Device { code, .. } => *code,
            Error::Sso(_) => ErrorCode::Forbidden,
            Error::PayloadTooLarge => ErrorCode::PayloadTooLarge,
            Error::RateLimited { .. } => ErrorCode::RateLimited,
            Error::PushFailed(_) => ErrorCode::PushFailed,
            Error::Upstream(_) => ErrorCode::UpstreamFailed,
            Error::Unavailable(_) | Error::Busy | Error::Overloaded { .. } => {
                ErrorCode::Unavailable
            }
            Error::Internal(_) => ErrorCode::Internal,
        }
    }

    pub fn body(&self) -> ErrorBody {
        ErrorBody {
            error: self.code(),
            message: self.to_string(),
        }
    }

    /// Logs what the caller is not shown, once, where the error leaves the service (the REST
    /// handlers and the server functions both call this).
    pub fn report(&self) {
        match self {
            Error::Internal(detail) => tracing::error!(%detail, "internal error"),
            Error::Unavailable(detail) => tracing::warn!(%detail, "database unavailable"),
            _ => {}
        }
    }

    /// Seconds a refused caller should wait (`Retry-After`), for the refusals that say so.
    pub fn retry_after(&self) -> Option<i64> {
        match self {
            Error::RateLimited { retry_after, .. } | Error::Overloaded { retry_after, .. } => {
                Some(*retry_after)
            }
            _ => None,
        }
    }

    pub fn forbidden(msg: &str) -> Error {
        Error::Forbidden(msg.to_string())
    }

    /// Maps a unique-constraint violation to a 409 with `msg`; other errors as usual.
    pub fn unique(msg: impl Into<String>) -> impl FnOnce(sqlx::Error) -> Error {
        let msg = msg.into();
        move |e| match &e {
            sqlx::Error::Database(d) if d.is_unique_violation() => Error::Conflict(msg),
            _ => Error::from(e),
        }
    }
}

impl From<sqlx::Error> for Error {
    fn from(e: sqlx::Error) -> Self {
        match e {
            sqlx::Error::RowNotFound => Error::NotFound,
            // PostgreSQL deadlock / serialization failure; SQLite busy or locked.
            sqlx::Error::Database(ref d)
                if matches!(
                    d.code().as_deref(),
                    Some("40P01" | "40001" | "5" | "6" | "517")
                ) =>
            {
                Error::Busy
            }
            sqlx::Error::PoolTimedOut | sqlx::Error::Io(_) | sqlx::Error::PoolClosed => {
                Error::Unavailable(e.to_string())
            }
            // PostgreSQL going away: connection exceptions (class 08), shut down or restarting
            // (57P01-57P03), out of connections. A 503 tells Alertmanager to send again.
            sqlx::Error::Database(ref d)
                if d.code().is_some_and(|c| {
                    c.starts_with("08")
                        || matches!(c.as_ref(), "57P01" | "57P02" | "57P03" | "53300")
                }) =>
            {
                Error::Unavailable(e.to_string())
            }
            // Logged once, by `report`, where the error leaves the service.
            other => Error::Internal(format!("database: {other}")),
        }
    }
}

/// A stored word no variant names: the row is corrupt, which is never the caller's fault.
impl From<klaxon_domain::words::UnknownWord> for Error {
    fn from(e: klaxon_domain::words::UnknownWord) -> Self {
        Error::Internal(format!("database: {e}"))
    }
}

impl From<sqlx::migrate::MigrateError> for Error {
    fn from(e: sqlx::migrate::MigrateError) -> Self {
        Error::Internal(format!("migration failed: {e}"))
    }
}
