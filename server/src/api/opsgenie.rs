//! Opsgenie's Alert API, for senders configured for Opsgenie: `Authorization: GenieKey <key>`
//! carries an `opsgenie` integration's key, and the answers are Opsgenie's own shapes
//! (<https://docs.opsgenie.com/docs/response>), so a sender moves to Klaxon by its API URL and
//! its key alone. Opsgenie answers 202 before it processes a request; Klaxon has processed it
//! when it answers. Reading a create is `klaxon_core::sources::opsgenie`.

use crate::error::ApiError;
use crate::extract::Path;
use crate::AppState;
use axum::extract::{Query, Request, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use klaxon_core::intake::{Destination, Route};
use klaxon_core::sources::opsgenie::{
    identifier_type, read_create, request_id, Refused, MAX_REQUEST,
};
use klaxon_core::sources::{Action, Event};
use klaxon_core::Error;
use klaxon_domain::ErrorBody;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::time::Instant;

/// Opsgenie's answer to a request it takes.
#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Accepted {
    /// `Request will be processed`.
    result: &'static str,
    /// Seconds the request took.
    took: f64,
    request_id: String,
}

/// Opsgenie's answer to a request it refuses; nothing changed.
#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Refusal {
    message: String,
    /// By field, what is wrong with it (422 only).
    #[serde(skip_serializing_if = "Option::is_none")]
    errors: Option<BTreeMap<String, String>>,
    took: f64,
    request_id: String,
}

/// A request as it goes: its id and when it began.
struct Taken {
    id: String,
    began: Instant,
}

impl Taken {
    fn new() -> Taken {
        Taken {
            id: request_id(),
            began: Instant::now(),
        }
    }

    fn took(&self) -> f64 {
        (self.began.elapsed().as_secs_f64() * 1000.0).round() / 1000.0
    }

    fn accepted(self) -> Response {
        let body = Accepted {
            result: "Request will be processed",
            took: self.took(),
            request_id: self.id,
        };
        (StatusCode::ACCEPTED, Json(body)).into_response()
    }

    fn refused(&self, status: StatusCode, message: &str) -> Response {
        self.answer(status, message.to_string(), None)
    }

    fn answer(
        &self,
        status: StatusCode,
        message: String,
        errors: Option<BTreeMap<String, String>>,
    ) -> Response {
        let body = Refusal {
            message,
            errors,
            took: self.took(),
            request_id: self.id.clone(),
        };
        (status, Json(body)).into_response()
    }

    fn invalid(&self, refused: Refused) -> Response {
        match refused {
            Refused::NotJson(e) => self.refused(StatusCode::BAD_REQUEST, &e),
            Refused::Invalid(errors) => self.answer(
                StatusCode::UNPROCESSABLE_ENTITY,
                "Request body is not processable. Please check the errors.".into(),
                Some(errors),
            ),
        }
    }
}

/// The key a request carries: `Authorization: GenieKey <key>`, or Opsgenie's older `apiKey`
/// query parameter.
fn genie_key(headers: &HeaderMap, query: &Named) -> Option<String> {
    let from_header = headers
        .get(axum::http::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split_once(' '))
        .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("GenieKey"))
        .map(|(_, key)| key.trim().to_string());
    from_header
        .or_else(|| query.api_key.clone())
        .filter(|k| !k.is_empty())
}

/// The `opsgenie` integration the request's key is for, or Opsgenie's answer when it is none.
async fn destination(
    s: &AppState,
    req: &Taken,
    headers: &HeaderMap,
    query: &Named,
) -> Result<Destination, Response> {
    let Some(key) = genie_key(headers, query) else {
        return Err(req.refused(
            StatusCode::UNAUTHORIZED,
            "Could not authenticate: send the integration's key as 'Authorization: GenieKey <key>'",
        ));
    };
    let to = match s.core.intake_destination(Route::Key(&key)).await {
        Ok(to) => to,
        Err(Error::Unauthorized) => {
            return Err(req.refused(
                StatusCode::UNAUTHORIZED,
                "Could not authenticate: the key is not a Klaxon integration's key",
            ))
        }
        Err(e @ Error::RateLimited { .. }) => {
            // Opsgenie's shape, with the wait in `Retry-After` as Klaxon's own 429s have it.
            let mut answer = req.refused(StatusCode::TOO_MANY_REQUESTS, &e.to_string());
            if let Some(wait) = e.retry_after() {
                answer
                    .headers_mut()
                    .insert(axum::http::header::RETRY_AFTER, wait.into());
            }
            return Err(answer);
        }
        Err(e) => return Err(ApiError(e).into_response()),
    };
    if to.kind() != "opsgenie" {
        return Err(req.refused(
            StatusCode::FORBIDDEN,
            &format!(
                "The key is an integration of kind {}: create one of kind opsgenie",
                to.kind()
            ),
        ));
    }
    Ok(to)
}

/// How a close or an acknowledgement names its alert, and the old form of the key.
#[derive(Deserialize, utoipa::IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct Named {
    /// `id` (the default) or `alias`: Klaxon's id of an Opsgenie alert is its alias, or for
    /// one created without an alias the create's `requestId`. `tiny` is refused (422).
    identifier_type: Option<String>,
    /// The integration's key, when the `Authorization` header does not carry it.
    api_key: Option<String>,
}

/// Creates an alert (an alert of the same `alias` still open is refreshed) for the `opsgenie`
/// integration whose key the request carries.
#[utoipa::path(post, path = "/v2/alerts", security(()), tag = "intake",
    params(("Authorization" = String, Header, description = "`GenieKey <key>`: an `opsgenie` integration's key")),
    request_body(content = Object, description = "an Opsgenie Alert API create: `message` (required; cut to 130 characters), `alias` (at most 512 characters; the de-duplication key), `description`, `priority` (P1–P5, default P3), `tags`, `details` (labels; with the rest within 128 entries and 16 KB), `entity`, `source`, `note`; `responders` and `visibleTo` are not used; at most 512 KB"),
    responses((status = 202, body = Accepted),
              (status = 400, body = Refusal, description = "the body is not JSON"),
              (status = 401, body = Refusal, description = "no key, or not a Klaxon integration's key"),
              (status = 403, body = Refusal, description = "the key is an integration of another kind"),
              (status = 413, body = ErrorBody, description = "the body is over 512 KB"),
              (status = 429, body = Refusal, description = "the key sent more than `KLAXON_INTAKE_RATE` requests this minute (default 120); `Retry-After` says when to try again"),
              (status = 422, body = Refusal, description = "no message, a priority other than P1–P5, an alias over 512 characters, or details over Klaxon's bounds"),
              (status = 503, body = ErrorBody, description = "the database is not answering; the sender retries")))]
pub async fn create(
    State(s): State<AppState>,
    Query(named): Query<Named>,
    headers: HeaderMap,
    request: Request,
) -> Response {
    let req = Taken::new();
    let to = match destination(&s, &req, &headers, &named).await {
        Ok(to) => to,
        Err(answer) => return answer,
    };
    let Ok(body) = axum::body::to_bytes(request.into_body(), MAX_REQUEST).await else {
        return ApiError(Error::PayloadTooLarge).into_response();
    };
    match read_create(&body, s.core.now(), &req.id) {
        Ok(event) => apply(&s, req, to, event).await,
        Err(refused) => req.invalid(refused),
    }
}

async fn apply(s: &AppState, req: Taken, to: Destination, event: Event) -> Response {
    match s.core.apply_event(to, event).await {
        Ok(_) => req.accepted(),
        Err(e) => ApiError(e).into_response(),
    }
}

/// `action` on the alert `identifier` names.
async fn act(
    s: AppState,
    identifier: String,
    named: Named,
    headers: HeaderMap,
    action: Action,
) -> Response {
    let req = Taken::new();
    let to = match destination(&s, &req, &headers, &named).await {
        Ok(to) => to,
        Err(answer) => return answer,
    };
    if let Err(refused) = identifier_type(named.identifier_type.as_deref()) {
        return req.invalid(refused);
    }
    apply(&s, req, to, Event::about(identifier, action)).await
}

/// Closes the alert: it resolves (its incident resolves when it was the last firing). An
/// alert not open is accepted and left alone. The body (`user`, `source`, `note`) is not used.
#[utoipa::path(post, path = "/v2/alerts/{identifier}/close", security(()), tag = "intake",
    params(("identifier" = String, Path, description = "the alert's id or alias"), Named,
           ("Authorization" = String, Header, description = "`GenieKey <key>`")),
    responses((status = 202, body = Accepted),
              (status = 401, body = Refusal, description = "no key, or not a Klaxon integration's key"),
              (status = 403, body = Refusal, description = "the key is an integration of another kind"),
              (status = 422, body = Refusal, description = "an `identifierType` other than id or alias"),
              (status = 429, body = Refusal, description = "over the key's rate; `Retry-After` says when to try again"),
              (status = 503, body = ErrorBody)))]
pub async fn close(
    State(s): State<AppState>,
    Path(identifier): Path<String>,
    Query(named): Query<Named>,
    headers: HeaderMap,
) -> Response {
    act(s, identifier, named, headers, Action::Resolve).await
}

/// Acknowledges the open alert's incident, by its sender (no person); else nothing happens.
#[utoipa::path(post, path = "/v2/alerts/{identifier}/acknowledge", security(()), tag = "intake",
    params(("identifier" = String, Path, description = "the alert's id or alias"), Named,
           ("Authorization" = String, Header, description = "`GenieKey <key>`")),
    responses((status = 202, body = Accepted),
              (status = 401, body = Refusal, description = "no key, or not a Klaxon integration's key"),
              (status = 403, body = Refusal, description = "the key is an integration of another kind"),
              (status = 422, body = Refusal, description = "an `identifierType` other than id or alias"),
              (status = 429, body = Refusal, description = "over the key's rate; `Retry-After` says when to try again"),
              (status = 503, body = ErrorBody)))]
pub async fn acknowledge(
    State(s): State<AppState>,
    Path(identifier): Path<String>,
    Query(named): Query<Named>,
    headers: HeaderMap,
) -> Response {
    act(s, identifier, named, headers, Action::Acknowledge).await
}

/// `/v2/alerts` under Klaxon's own API path, for a proxy that passes only `/api`.
#[utoipa::path(post, path = "/api/opsgenie/v2/alerts", security(()), tag = "intake",
    params(("Authorization" = String, Header, description = "`GenieKey <key>`")),
    request_body(content = Object, description = "as `/v2/alerts`"),
    responses((status = 202, body = Accepted), (status = 400, body = Refusal),
              (status = 401, body = Refusal), (status = 403, body = Refusal),
              (status = 413, body = ErrorBody), (status = 422, body = Refusal, description = "as `/v2/alerts`"),
              (status = 429, body = Refusal, description = "over the key's rate; `Retry-After` says when to try again"),
              (status = 503, body = ErrorBody)))]
pub async fn create_under_api(
    state: State<AppState>,
    named: Query<Named>,
    headers: HeaderMap,
    request: Request,
) -> Response {
    create(state, named, headers, request).await
}

/// `/v2/alerts/{identifier}/close` under Klaxon's own API path.
#[utoipa::path(post, path = "/api/opsgenie/v2/alerts/{identifier}/close", security(()), tag = "intake",
    params(("identifier" = String, Path, description = "the alert's id or alias"), Named,
           ("Authorization" = String, Header, description = "`GenieKey <key>`")),
    responses((status = 202, body = Accepted), (status = 401, body = Refusal),
              (status = 403, body = Refusal), (status = 422, body = Refusal, description = "as `/v2/alerts/{identifier}/close`"),
              (status = 429, body = Refusal, description = "over the key's rate; `Retry-After` says when to try again"),
              (status = 503, body = ErrorBody)))]
pub async fn close_under_api(
    state: State<AppState>,
    identifier: Path<String>,
    named: Query<Named>,
    headers: HeaderMap,
) -> Response {
    close(state, identifier, named, headers).await
}

/// `/v2/alerts/{identifier}/acknowledge` under Klaxon's own API path.
#[utoipa::path(post, path = "/api/opsgenie/v2/alerts/{identifier}/acknowledge", security(()), tag = "intake",
    params(("identifier" = String, Path, description = "the alert's id or alias"), Named,
           ("Authorization" = String, Header, description = "`GenieKey <key>`")),
    responses((status = 202, body = Accepted), (status = 401, body = Refusal),
              (status = 403, body = Refusal), (status = 422, body = Refusal, description = "as `/v2/alerts/{identifier}/acknowledge`"),
              (status = 429, body = Refusal, description = "over the key's rate; `Retry-After` says when to try again"),
              (status = 503, body = ErrorBody)))]
pub async fn acknowledge_under_api(
    state: State<AppState>,
    identifier: Path<String>,
    named: Query<Named>,
    headers: HeaderMap,
) -> Response {
    acknowledge(state, identifier, named, headers).await
}
