//! Klaxon's device flow, for `klaxon login` and other terminals (RFC 8628 names).

use crate::error::ApiResult;
use crate::extract::{Body, Caller, Request};
use crate::AppState;
use axum::extract::State;
use axum::http::{header, StatusCode};
use axum::response::{AppendHeaders, IntoResponse};
use axum::Json;
use klaxon_domain::device::{DeviceSession, DeviceStart};
use klaxon_domain::ErrorBody;
use serde::Deserialize;

/// Starts a device sign-in (no credential): show `user_code` and `verification_uri_complete`
/// to the person, then poll the token endpoint every `interval` seconds.
#[utoipa::path(post, path = "/api/oidc/device", security(()), tag = "device",
    responses((status = 200, body = DeviceStart), (status = 429, body = ErrorBody, description = "more than 30 started from this address in 15 minutes (`Retry-After`)")))]
pub async fn start(State(s): State<AppState>, request: Request) -> ApiResult<Json<DeviceStart>> {
    Ok(Json(s.core.start_device(&request.presented()).await?))
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct TokenRequest {
    /// The `device_code` from the start (64 characters).
    #[schema(min_length = 64, max_length = 64)]
    device_code: String,
}

/// Polls a device sign-in (no credential). Once approved, answers the session once (also as
/// the `klaxon_session` cookie).
#[utoipa::path(post, path = "/api/oidc/device/token", security(()), tag = "device", request_body = TokenRequest,
    responses((status = 200, body = DeviceSession),
              (status = 400, body = ErrorBody, description = "`authorization_pending`, `slow_down` (polled faster than the interval), `expired_token` (expired, used or unknown) or `access_denied`"),
              (status = 429, body = ErrorBody, description = "more than 30 unknown device codes from this address in 15 minutes (`Retry-After`)")))]
pub async fn token(
    State(s): State<AppState>,
    request: Request,
    Body(b): Body<TokenRequest>,
) -> ApiResult<impl IntoResponse> {
    let started = s
        .core
        .poll_device(&request.presented(), &b.device_code)
        .await?;
    let cookie = s.core.session_cookie(&started);
    Ok((
        AppendHeaders([(header::SET_COOKIE, cookie)]),
        Json(DeviceSession {
            user: started.user,
            session_token: started.token,
        }),
    ))
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ApproveRequest {
    /// The code the terminal shows, `XXXX-XXXX` (case, spaces and the dash do not matter).
    #[schema(min_length = 8, max_length = 16)]
    user_code: String,
    /// True to let the terminal in as the caller, false to refuse it.
    approve: bool,
}

/// Approves or denies a device sign-in as the caller: browser sessions of people only.
#[utoipa::path(post, path = "/api/oidc/device/approve", tag = "device", request_body = ApproveRequest,
    responses((status = 204), (status = 400, body = ErrorBody, description = "no pending sign-in has this code"),
              (status = 401, body = ErrorBody), (status = 403, body = ErrorBody, description = "an API key, or a service account"),
              (status = 429, body = ErrorBody, description = "too many wrong codes or failed sign-ins for this user")))]
pub async fn approve(
    State(s): State<AppState>,
    Caller(a): Caller,
    Body(b): Body<ApproveRequest>,
) -> ApiResult<StatusCode> {
    s.core.approve_device(&a, &b.user_code, b.approve).await?;
    Ok(StatusCode::NO_CONTENT)
}
