//! PagerDuty's Events API v2, for senders configured for PagerDuty: the routing key in the body
//! is a `pagerduty` integration's key, and the answers are PagerDuty's own shapes
//! (<https://developer.pagerduty.com/docs/events-api-v2/overview/>), so a sender moves to
//! Klaxon by its URL and its key alone. Reading the event is `klaxon_core::sources::pagerduty`.

use crate::error::ApiError;
use crate::AppState;
use axum::extract::{Request, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use klaxon_core::intake::{Destination, Route};
use klaxon_core::sources::pagerduty::{read_change, read_event, MAX_EVENT};
use klaxon_core::Error;
use klaxon_domain::ErrorBody;
use serde::Serialize;

/// PagerDuty's answer to an accepted event.
#[derive(Serialize, utoipa::ToSchema)]
pub struct Accepted {
    /// `success`.
    status: &'static str,
    /// `Event processed`.
    message: &'static str,
    /// The alert's key: the one sent, or the one made for a trigger sent without one.
    dedup_key: String,
}

/// PagerDuty's answer to an event it refuses; nothing changed.
#[derive(Serialize, utoipa::ToSchema)]
pub struct Invalid {
    /// `invalid event`.
    status: &'static str,
    /// `Event object is invalid`.
    message: &'static str,
    /// Each fault of the event.
    errors: Vec<String>,
}

fn invalid(errors: Vec<String>) -> Response {
    let body = Invalid {
        status: "invalid event",
        message: "Event object is invalid",
        errors,
    };
    (StatusCode::BAD_REQUEST, Json(body)).into_response()
}

/// The `pagerduty` integration whose key is `routing_key`, or PagerDuty's answer when it is none.
async fn destination(s: &AppState, routing_key: &str) -> Result<Destination, Response> {
    let to = match s.core.intake_destination(Route::Key(routing_key)).await {
        Ok(to) => to,
        Err(Error::Unauthorized) => {
            return Err(invalid(vec![
                "'routing_key' is not the key of a Klaxon integration".into(),
            ]))
        }
        Err(e) => return Err(ApiError(e).into_response()),
    };
    if to.kind() != "pagerduty" {
        return Err(invalid(vec![format!(
            "'routing_key' is the key of an integration of kind {}: create one of kind pagerduty",
            to.kind()
        )]));
    }
    Ok(to)
}

/// Enqueues one alert event (trigger, acknowledge or resolve) for the `pagerduty` integration
/// whose key is its `routing_key`. An acknowledge or resolve naming no firing alert is accepted
/// and changes nothing, as PagerDuty drops it.
#[utoipa::path(post, path = "/v2/enqueue", security(()), tag = "intake",
    request_body(content = Object, description = "a PagerDuty Events API v2 alert event: `routing_key`, `event_action` (trigger, acknowledge, resolve), `dedup_key` (at most 255 characters; required to acknowledge or resolve), and to trigger `payload` with `summary` (at most 1024 characters), `source` and `severity` (critical, error, warning, info); at most 512 KB"),
    responses((status = 202, body = Accepted),
              (status = 400, body = Invalid, description = "not an event, a field missing or out of its bounds, or a `routing_key` that is not a `pagerduty` integration's key"),
              (status = 413, body = ErrorBody, description = "the event is over 512 KB"),
              (status = 429, body = ErrorBody, description = "the key sent more than `KLAXON_INTAKE_RATE` events this minute (default 120, PagerDuty's own per-key limit); `Retry-After` says when to try again"),
              (status = 503, body = ErrorBody, description = "the database is not answering; the sender retries")))]
pub async fn enqueue(State(s): State<AppState>, request: Request) -> Response {
    let Ok(body) = axum::body::to_bytes(request.into_body(), MAX_EVENT).await else {
        return ApiError(Error::PayloadTooLarge).into_response();
    };
    let (routing_key, event) = match read_event(&body, s.core.now()) {
        Ok(read) => read,
        Err(errors) => return invalid(errors),
    };
    let to = match destination(&s, &routing_key).await {
        Ok(to) => to,
        Err(answer) => return answer,
    };
    let dedup_key = event.key.clone();
    match s.core.apply_event(to, event).await {
        Ok(_) => {
            let body = Accepted {
                status: "success",
                message: "Event processed",
                dedup_key,
            };
            (StatusCode::ACCEPTED, Json(body)).into_response()
        }
        Err(e) => ApiError(e).into_response(),
    }
}

/// `/v2/enqueue` under Klaxon's own API path, for a proxy that passes only `/api`.
#[utoipa::path(post, path = "/api/pagerduty/v2/enqueue", security(()), tag = "intake",
    request_body(content = Object, description = "as `/v2/enqueue`"),
    responses((status = 202, body = Accepted),
              (status = 400, body = Invalid, description = "as `/v2/enqueue`"),
              (status = 413, body = ErrorBody), (status = 429, body = ErrorBody, description = "as `/v2/enqueue`"),
              (status = 503, body = ErrorBody)))]
pub async fn enqueue_under_api(state: State<AppState>, request: Request) -> Response {
    enqueue(state, request).await
}

/// PagerDuty's answer to an accepted change event.
#[derive(Serialize, utoipa::ToSchema)]
pub struct ChangeAccepted {
    /// `success`.
    status: &'static str,
    /// `Change event processed`.
    message: &'static str,
}

/// Records a change event (a deploy, a configuration applied) for the team of the `pagerduty`
/// integration whose key is its `routing_key`: never paged, shown with the incidents that begin
/// within two hours after it, and listed on the team (`GET /api/teams/{team_id}/changes`).
#[utoipa::path(post, path = "/v2/change/enqueue", security(()), tag = "intake",
    request_body(content = Object, description = "a PagerDuty change event: `routing_key`, `payload` with `summary` (required, at most 1024 characters), `timestamp`, `source` and `custom_details` (at most 16 KB as JSON), and `links`; at most 512 KB"),
    responses((status = 202, body = ChangeAccepted),
              (status = 400, body = Invalid, description = "not a change event, a field missing or out of its bounds, or a `routing_key` that is not a `pagerduty` integration's key"),
              (status = 413, body = ErrorBody, description = "the event is over 512 KB"),
              (status = 429, body = ErrorBody, description = "the key sent more than `KLAXON_INTAKE_RATE` events this minute; `Retry-After` says when to try again"),
              (status = 503, body = ErrorBody, description = "the database is not answering; the sender retries")))]
pub async fn change_enqueue(State(s): State<AppState>, request: Request) -> Response {
    let Ok(body) = axum::body::to_bytes(request.into_body(), MAX_EVENT).await else {
        return ApiError(Error::PayloadTooLarge).into_response();
    };
    let (routing_key, change) = match read_change(&body, s.core.now()) {
        Ok(read) => read,
        Err(errors) => return invalid(errors),
    };
    let to = match destination(&s, &routing_key).await {
        Ok(to) => to,
        Err(answer) => return answer,
    };
    match s.core.record_change(&to, change).await {
        Ok(()) => {
            let body = ChangeAccepted {
                status: "success",
                message: "Change event processed",
            };
            (StatusCode::ACCEPTED, Json(body)).into_response()
        }
        Err(e) => ApiError(e).into_response(),
    }
}

/// `/v2/change/enqueue` under Klaxon's own API path.
#[utoipa::path(post, path = "/api/pagerduty/v2/change/enqueue", security(()), tag = "intake",
    request_body(content = Object, description = "as `/v2/change/enqueue`"),
    responses((status = 202, body = ChangeAccepted),
              (status = 400, body = Invalid, description = "as `/v2/change/enqueue`"),
              (status = 413, body = ErrorBody), (status = 429, body = ErrorBody), (status = 503, body = ErrorBody)))]
pub async fn change_enqueue_under_api(state: State<AppState>, request: Request) -> Response {
    change_enqueue(state, request).await
}
