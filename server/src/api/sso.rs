//! The single sign-on browser flow. Both routes answer a browser with a redirect: on to the
//! provider or back to `next`, or to the sign-in page with `sso_error` naming the sentence to
//! show. Only an install without single sign-on answers in the error shape (404).

use crate::error::ApiResult;
use crate::extract::{Query, Request};
use crate::AppState;
use axum::extract::State;
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{AppendHeaders, IntoResponse, Response};
use klaxon_app::paths::after_sign_in;
use klaxon_core::sso::{SsoCallback, STATE_COOKIE};
use klaxon_core::Error;
use klaxon_domain::sso::SsoRefusal;
use klaxon_domain::ErrorBody;
use serde::Deserialize;

#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct LoginQuery {
    /// Where to go once signed in: a path on this site (anything else goes to `/`).
    #[param(max_length = 2048)]
    next: Option<String>,
}

/// Starts a single sign-on: redirects to the provider (authorization code with PKCE, `state`
/// and `nonce`) and sets the short-lived `klaxon_oidc` cookie the callback checks.
#[utoipa::path(get, path = "/api/oidc/login", security(()), tag = "auth", params(LoginQuery),
    responses((status = 302, description = "to the provider; or to `/login?sso_error=unavailable|too_many` when the provider cannot be reached or this address started more than 100 in 15 minutes"),
              (status = 404, body = ErrorBody, description = "single sign-on is not configured")))]
pub async fn login(
    State(s): State<AppState>,
    request: Request,
    Query(q): Query<LoginQuery>,
) -> ApiResult<Response> {
    let next = after_sign_in(q.next.as_deref().filter(|n| n.len() <= 2048));
    match s.core.sso_start(&request.presented(), &next).await {
        Ok(started) => Ok((
            StatusCode::FOUND,
            AppendHeaders([
                (header::LOCATION, started.authorize_url),
                (
                    header::SET_COOKIE,
                    s.core.sso_state_cookie(Some(&started.state)),
                ),
            ]),
        )
            .into_response()),
        Err(Error::NotFound) => Err(Error::NotFound.into()),
        Err(e) => Ok(back_to_sign_in(refusal(e), &next, None)),
    }
}

/// Where the provider sends the browser back. Completes the sign-in (one use of the `state`,
/// which must match the browser's cookie; the ID token's signature, issuer, audience, nonce
/// and expiry verified), sets the session cookie, whose `Max-Age` is the single sign-on
/// ceiling, and redirects to `next`.
#[utoipa::path(get, path = "/api/oidc/callback", security(()), tag = "auth", params(SsoCallback),
    responses((status = 302, description = "to `next` with the `klaxon_session` cookie; or to `/login?sso_error=not_allowed|disabled|no_email|cancelled|unavailable|failed` with nothing created"),
              (status = 404, body = ErrorBody, description = "single sign-on is not configured")))]
pub async fn callback(
    State(s): State<AppState>,
    headers: HeaderMap,
    Query(q): Query<SsoCallback>,
) -> ApiResult<Response> {
    let cookie_state = headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|c| c.trim().split_once('='))
        .find(|(name, _)| *name == STATE_COOKIE)
        .map(|(_, v)| v.to_string());
    let clear_state = s.core.sso_state_cookie(None);
    match s.core.sso_finish(cookie_state.as_deref(), &q).await {
        Ok(done) => Ok((
            StatusCode::FOUND,
            AppendHeaders([
                (header::LOCATION, after_sign_in(Some(&done.next))),
                (header::SET_COOKIE, s.core.session_cookie(&done.session)),
                (header::SET_COOKIE, clear_state),
            ]),
        )
            .into_response()),
        Err(Error::NotFound) => Err(Error::NotFound.into()),
        Err(e) => Ok(back_to_sign_in(refusal(e), "/", Some(clear_state))),
    }
}

/// The sentence a failure shows; what the person cannot act on is logged.
fn refusal(e: Error) -> SsoRefusal {
    match e {
        Error::Sso(why) => why,
        Error::RateLimited { .. } => SsoRefusal::TooMany,
        Error::Unavailable(_) | Error::Busy => {
            e.report();
            SsoRefusal::Unavailable
        }
        other => {
            other.report();
            tracing::warn!(error = %other, "single sign-on failed");
            SsoRefusal::Failed
        }
    }
}

fn back_to_sign_in(why: SsoRefusal, next: &str, cookie: Option<String>) -> Response {
    let mut location = format!("/login?sso_error={}", why.as_str());
    if next != "/" {
        let back = klaxon_app::paths::sign_in_url(next);
        location.push('&');
        location.push_str(back.trim_start_matches("/login?"));
    }
    let mut res = (StatusCode::FOUND, [(header::LOCATION, location)]).into_response();
    if let Some(c) = cookie.and_then(|c| c.parse().ok()) {
        res.headers_mut().append(header::SET_COOKIE, c);
    }
    res
}
