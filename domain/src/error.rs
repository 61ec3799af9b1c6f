//! The one error body of the API: `{"error": "<code>", "message": "<one human sentence>"}`.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub enum ErrorCode {
    Invalid,
    Unauthorized,
    Forbidden,
    NotFound,
    /// The path exists, the method does not (405, with `Allow`).
    MethodNotAllowed,
    Conflict,
    /// Device flow polling (RFC 8628): not approved yet.
    AuthorizationPending,
    /// Device flow polling faster than the interval.
    SlowDown,
    /// Device flow: the code expired or was never issued.
    ExpiredToken,
    /// Device flow: the person denied it.
    AccessDenied,
    /// A sign-up's invite link is expired, revoked, used up or unknown (one answer for all).
    InviteUnusable,
    PayloadTooLarge,
    RateLimited,
    PushFailed,
    /// Alertmanager, called for the caller, was unreachable or refused.
    UpstreamFailed,
    Unavailable,
    Internal,
}

impl ErrorCode {
    pub fn status(self) -> u16 {
        match self {
            ErrorCode::Invalid => 400,
            ErrorCode::Unauthorized => 401,
            ErrorCode::Forbidden => 403,
            ErrorCode::NotFound => 404,
            ErrorCode::MethodNotAllowed => 405,
            ErrorCode::Conflict => 409,
            ErrorCode::InviteUnusable => 400,
            ErrorCode::AuthorizationPending
            | ErrorCode::SlowDown
            | ErrorCode::ExpiredToken
            | ErrorCode::AccessDenied => 400,
            ErrorCode::PayloadTooLarge => 413,
            ErrorCode::RateLimited => 429,
            ErrorCode::PushFailed | ErrorCode::UpstreamFailed => 502,
            ErrorCode::Unavailable => 503,
            ErrorCode::Internal => 500,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ErrorBody {
    pub error: ErrorCode,
    pub message: String,
}
