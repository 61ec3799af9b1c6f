//! Bootstrap, sign-in and the signed-in user.

use crate::error::ApiResult;
use crate::extract::{Body, Caller, Request};
use crate::AppState;
use axum::extract::State;
use axum::http::{header, StatusCode};
use axum::response::{AppendHeaders, IntoResponse};
use axum::Json;
use klaxon_domain::account::{AuthConfig, Bootstrapped, Me, User};
use klaxon_domain::text::Username;
use klaxon_domain::ErrorBody;
use serde::{Deserialize, Serialize};

#[utoipa::path(get, path = "/api/auth/config", security(()), tag = "auth", responses((status = 200, body = AuthConfig)))]
pub async fn auth_config(State(s): State<AppState>) -> ApiResult<Json<AuthConfig>> {
    Ok(Json(s.core.auth_config().await?))
}

#[derive(Deserialize, utoipa::ToSchema)]
pub struct BootstrapRequest {
    username: Username,
    /// At least 8 characters, at most 1024 bytes.
    #[schema(min_length = 8, max_length = 1024)]
    password: Option<String>,
}

/// Creates the first user, an administrator, and returns an API key shown once.
#[utoipa::path(post, path = "/api/bootstrap", security(()), tag = "auth", request_body = BootstrapRequest,
    responses((status = 201, body = Bootstrapped), (status = 409, body = ErrorBody, description = "a user already exists"),
              (status = 503, body = ErrorBody, description = "the database is unavailable, or too many passwords are being hashed at once (`Retry-After`)")))]
pub async fn bootstrap(
    State(s): State<AppState>,
    Body(req): Body<BootstrapRequest>,
) -> ApiResult<(StatusCode, Json<Bootstrapped>)> {
    let done = s
        .core
        .bootstrap(&req.username, req.password.as_deref())
        .await?;
    Ok((StatusCode::CREATED, Json(done)))
}

#[derive(Deserialize, utoipa::ToSchema)]
pub struct LoginRequest {
    username: String,
    password: String,
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct LoginResponse {
    user: User,
}

/// Password sign-in; sets the `klaxon_session` cookie.
#[utoipa::path(post, path = "/api/auth/login", security(()), tag = "auth", request_body = LoginRequest,
    responses((status = 200, body = LoginResponse), (status = 401, body = ErrorBody),
              (status = 429, body = ErrorBody, description = "too many failures for this username or address"),
              (status = 403, body = ErrorBody, description = "password sign-in is turned off, or a browser's sign-in came from another site"),
              (status = 503, body = ErrorBody, description = "the database is unavailable, or too many passwords are being checked at once (`Retry-After`)")))]
pub async fn login(
    State(s): State<AppState>,
    request: Request,
    Body(req): Body<LoginRequest>,
) -> ApiResult<impl IntoResponse> {
    let started = s
        .core
        .login(&request.presented(), &req.username, &req.password)
        .await?;
    let cookie = s.core.session_cookie(&started);
    Ok((
        AppendHeaders([(header::SET_COOKIE, cookie)]),
        Json(LoginResponse { user: started.user }),
    ))
}

/// Ends the current session, clears the cookie and tells the browser to drop what it cached
/// (`Clear-Site-Data: "cache"`).
#[utoipa::path(post, path = "/api/auth/logout", tag = "auth", responses((status = 204, description = "signed out; `Clear-Site-Data: \"cache\"`")))]
pub async fn logout(
    State(s): State<AppState>,
    Caller(actor): Caller,
) -> ApiResult<impl IntoResponse> {
    s.core.logout(&actor).await?;
    Ok((
        StatusCode::NO_CONTENT,
        AppendHeaders([
            (header::SET_COOKIE, s.core.clear_session_cookie()),
            (
                header::HeaderName::from_static("clear-site-data"),
                klaxon_core::credentials::CLEAR_ON_SIGN_OUT.to_string(),
            ),
        ]),
    ))
}

/// The signed-in user, their teams and onboarding state (human accounts only).
#[utoipa::path(get, path = "/api/me", tag = "auth", responses((status = 200, body = Me), (status = 403, body = ErrorBody)))]
pub async fn me(State(s): State<AppState>, Caller(actor): Caller) -> ApiResult<Json<Me>> {
    Ok(Json(s.core.me(&actor).await?))
}

#[utoipa::path(post, path = "/api/me/onboarding/dismiss", tag = "auth", responses((status = 204)))]
pub async fn dismiss_onboarding(
    State(s): State<AppState>,
    Caller(actor): Caller,
) -> ApiResult<StatusCode> {
    s.core.dismiss_onboarding(&actor).await?;
    Ok(StatusCode::NO_CONTENT)
}
