//! Webhook intake: an integration's key names the team and the source its sender speaks.

use crate::error::{ApiError, ApiResult};
use crate::extract::Path;
use crate::AppState;
use axum::body::Bytes;
use axum::extract::{FromRequest, Request, State};
use axum::http::{header, HeaderValue};
use axum::response::{IntoResponse, Response};
use axum::Json;
use klaxon_core::intake::{IntakeOutcome, Route};
use klaxon_core::Error;
use klaxon_domain::ErrorBody;

/// Webhook bodies may be large (a group of many alerts); everything else keeps the small limit.
pub const WEBHOOK_BODY_LIMIT: usize = 5 * 1024 * 1024;

/// The body, read only once the route is known to be good (an unknown key is refused without
/// reading it), within the intake router's body limit. Its format is the integration's source's
/// (`klaxon_core::sources`), read whatever its content type: Alertmanager sends
/// `application/json`, curl users often do not.
async fn read(request: Request) -> Result<Bytes, ApiError> {
    Bytes::from_request(request, &()).await.map_err(|r| {
        ApiError(if r.status() == axum::http::StatusCode::PAYLOAD_TOO_LARGE {
            Error::PayloadTooLarge
        } else {
            Error::Invalid(r.body_text())
        })
    })
}

/// Receives a webhook for the integration whose key ends the path, in the format of the
/// integration's kind (its source). Idempotent.
#[utoipa::path(post, path = "/api/alertmanager/webhook/{key}", security(()), tag = "intake",
    request_body(content = Object, description = "the integration's source's payload: Alertmanager's webhook (version 4) for `alertmanager`, Grafana's webhook contact point for `grafana`"),
    responses((status = 200, body = IntakeOutcome), (status = 401, body = ErrorBody, description = "unknown or revoked key"),
              (status = 400, body = ErrorBody, description = "not a payload of the integration's source, more than 10000 alerts, or its group fields are over their bounds"),
              (status = 413, body = ErrorBody),
              (status = 429, body = ErrorBody, description = "the key sent more than `KLAXON_INTAKE_RATE` requests this minute (default 120, ten minutes' worth at once); `Retry-After` says when to try again (Alertmanager retries)"),
              (status = 503, body = ErrorBody, description = "the database is not answering; Alertmanager retries")))]
pub async fn webhook(
    State(s): State<AppState>,
    Path(key): Path<String>,
    request: Request,
) -> ApiResult<Json<IntakeOutcome>> {
    let to = s.core.intake_destination(Route::Key(&key)).await?;
    Ok(Json(s.core.receive(to, &read(request).await?).await?))
}

/// Deprecated key-less intake, kept for one release for upgrades: routes to the oldest team.
/// Off (404) unless the administrator sets `KLAXON_LEGACY_WEBHOOK=true`.
#[utoipa::path(post, path = "/api/alertmanager/webhook", security(()), tag = "intake",
    request_body(content = Object, description = "Alertmanager webhook payload (version 4)"),
    responses((status = 200, body = IntakeOutcome, description = "with a `Deprecation: true` header"),
              (status = 404, body = ErrorBody, description = "the key-less webhook is off (`KLAXON_LEGACY_WEBHOOK` is not `true`)"),
              (status = 400, body = ErrorBody, description = "not a webhook payload, or its group fields are over their bounds"),
              (status = 409, body = ErrorBody, description = "no team exists to receive alerts"),
              (status = 413, body = ErrorBody), (status = 503, body = ErrorBody)))]
pub async fn legacy_webhook(State(s): State<AppState>, request: Request) -> Response {
    let result: ApiResult<IntakeOutcome> = async {
        let to = s.core.intake_destination(Route::Legacy).await?;
        Ok(s.core.receive(to, &read(request).await?).await?)
    }
    .await;
    let mut res = match result {
        Ok(outcome) => Json(outcome).into_response(),
        // Said plainly, for whoever upgrades with an Alertmanager still posting here.
        Err(ApiError(Error::NotFound)) => (
            axum::http::StatusCode::NOT_FOUND,
            Json(ErrorBody {
                error: klaxon_domain::ErrorCode::NotFound,
                message: "the key-less webhook is off: post to an integration's webhook URL \
                          (or set KLAXON_LEGACY_WEBHOOK=true while you move)"
                    .into(),
            }),
        )
            .into_response(),
        Err(e) => e.into_response(),
    };
    res.headers_mut()
        .insert("deprecation", HeaderValue::from_static("true"));
    res.headers_mut().insert(
        header::WARNING,
        HeaderValue::from_static("299 - \"use /api/alertmanager/webhook/{key}\""),
    );
    res
}
