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
use klaxon_core::intake::Route;
use klaxon_core::sources::pagerduty::{read_event, MAX_EVENT};
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

/// Enqueues one alert event (trigger, acknowledge or resolve) for the `pagerduty` integration
/// whose key is its `routing_key`. An acknowledge or resolve naming no firing alert is accepted
/// and changes nothing, as PagerDuty drops it.
#[utoipa::path(post, path = "/v2/enqueue", security(()), tag = "intake",
    request_body(content = Object, description = "a PagerDuty Events API v2 alert event: `routing_key`, `event_action` (trigger, acknowledge, resolve), `dedup_key` (at most 255 characters; required to acknowledge or resolve), and to trigger `payload` with `summary` (at most 1024 characters), `source` and `severity` (critical, error, warning, info); at most 512 KB"),
    responses((status = 202, body = Accepted),
              (status = 400, body = Invalid, description = "not an event, a field missing or out of its bounds, or a `routing_key` that is not a `pagerduty` integration's key"),
              (status = 413, body = ErrorBody, description = "the event is over 512 KB"),
              (status = 503, body = ErrorBody, description = "the database is not answering; the sender retries")))]
pub async fn enqueue(State(s): State<AppState>, request: Request) -> Response {
    let Ok(body) = axum::body::to_bytes(request.into_body(), MAX_EVENT).await else {
        return ApiError(Error::PayloadTooLarge).into_response();
    };
    let (routing_key, event) = match read_event(&body, s.core.now()) {
        Ok(read) => read,
        Err(errors) => return invalid(errors),
    };
    let to = match s.core.intake_destination(Route::Key(&routing_key)).await {
        Ok(to) => to,
        Err(Error::Unauthorized) => {
            return invalid(vec![
                "'routing_key' is not the key of a Klaxon integration".into()
            ])
        }
        Err(e) => return ApiError(e).into_response(),
    };
    if to.kind() != "pagerduty" {
        return invalid(vec![format!(
            "'routing_key' is the key of an integration of kind {}: create one of kind pagerduty",
            to.kind()
        )]);
    }
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
              (status = 413, body = ErrorBody), (status = 503, body = ErrorBody)))]
pub async fn enqueue_under_api(state: State<AppState>, request: Request) -> Response {
    enqueue(state, request).await
}
