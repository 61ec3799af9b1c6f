//! Heartbeat URLs of dead man's switches fed by pings (`klaxon_core::deadman::pings`), in
//! healthchecks.io's shape so that a cron line needs only `curl -fsS …`: the URL alone is a
//! heartbeat, `/start` a run begun, `/fail` a run that failed (its body says how). `GET` and
//! `POST` alike; the key in the path is the credential.

use crate::error::ApiError;
use crate::extract::Path;
use crate::AppState;
use axum::extract::{Request, State};
use axum::response::{IntoResponse, Response};
use klaxon_core::deadman::Ping;
use klaxon_core::Error;
use klaxon_domain::ErrorBody;

/// A failure's body is read up to this; its first 1000 characters are kept.
const MAX_FAILURE_BODY: usize = 100 * 1024;

async fn ping(s: &AppState, key: &str, ping: Ping) -> Response {
    match s.core.ping(key, ping).await {
        Ok(()) => "OK".into_response(),
        Err(e) => ApiError(e).into_response(),
    }
}

/// A heartbeat: the job ran well. The switch is healthy again, and an incident it opened
/// resolves at the sweeper's next pass.
#[utoipa::path(method(get, post), path = "/api/heartbeat/{key}", security(()), tag = "deadman",
    params(("key" = String, Path, description = "the heartbeat URL's key, answered once when its switch was made")),
    responses((status = 200, body = String, content_type = "text/plain", description = "`OK`"),
              (status = 404, body = ErrorBody, description = "no switch has this key"),
              (status = 429, body = ErrorBody, description = "the URL was pinged more than `KLAXON_INTAKE_RATE` times this minute (default 120); `Retry-After` says when to try again"),
              (status = 503, body = ErrorBody)))]
pub async fn success(State(s): State<AppState>, Path(key): Path<String>) -> Response {
    ping(&s, &key, Ping::Success).await
}

/// A run began: shown on the switch until it pings success or failure. Not a heartbeat.
#[utoipa::path(method(get, post), path = "/api/heartbeat/{key}/start", security(()), tag = "deadman",
    params(("key" = String, Path, description = "the heartbeat URL's key")),
    responses((status = 200, body = String, content_type = "text/plain", description = "`OK`"),
              (status = 404, body = ErrorBody, description = "no switch has this key"),
              (status = 429, body = ErrorBody, description = "over the URL's rate; `Retry-After` says when to try again"),
              (status = 503, body = ErrorBody)))]
pub async fn start(State(s): State<AppState>, Path(key): Path<String>) -> Response {
    ping(&s, &key, Ping::Start).await
}

/// A run failed: the switch is dead at once, so the sweeper opens its incident (paged as any)
/// with what the body says; the next heartbeat makes it healthy again.
#[utoipa::path(method(get, post), path = "/api/heartbeat/{key}/fail", security(()), tag = "deadman",
    params(("key" = String, Path, description = "the heartbeat URL's key")),
    request_body(content = String, content_type = "text/plain", description = "optional: what went wrong (a log's tail); the first 1000 characters are kept; at most 100 KB"),
    responses((status = 200, body = String, content_type = "text/plain", description = "`OK`"),
              (status = 404, body = ErrorBody, description = "no switch has this key"),
              (status = 413, body = ErrorBody, description = "the body is over 100 KB"),
              (status = 429, body = ErrorBody, description = "over the URL's rate; `Retry-After` says when to try again"),
              (status = 503, body = ErrorBody)))]
pub async fn fail(
    State(s): State<AppState>,
    Path(key): Path<String>,
    request: Request,
) -> Response {
    let Ok(body) = axum::body::to_bytes(request.into_body(), MAX_FAILURE_BODY).await else {
        return ApiError(Error::PayloadTooLarge).into_response();
    };
    ping(
        &s,
        &key,
        Ping::Fail(String::from_utf8_lossy(&body).into_owned()),
    )
    .await
}
