//! Alertmanager silences made from an incident.

use crate::error::ApiResult;
use crate::extract::{Body, Caller, Path};
use crate::AppState;
use axum::extract::State;
use axum::http::StatusCode;
use axum::Json;
use klaxon_domain::silence::{Silence, SilencePreview};
use klaxon_domain::{Duration, ErrorBody};
use serde::Deserialize;

/// What a silence made now would match (the labels all the incident's firing alerts share,
/// always with `alertname`), whether one can be made, and the one in force.
#[utoipa::path(get, path = "/api/incidents/{id}/silence", tag = "incidents",
    responses((status = 200, body = SilencePreview)))]
pub async fn preview(
    State(s): State<AppState>,
    Caller(a): Caller,
    Path(id): Path<i64>,
) -> ApiResult<Json<SilencePreview>> {
    Ok(Json(s.core.silence_preview(&a, id).await?))
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SilenceRequest {
    /// How long, e.g. `2h` (5m to 30d).
    duration: Duration,
}

/// Silences the incident's alerts in the Alertmanager its integration names (any member of the
/// team). A silence in force is replaced. 400 when the integration names no Alertmanager or the
/// alerts share no `alertname`; 502 `upstream_failed` with Alertmanager's reason when it is
/// unreachable or refuses, and then nothing is recorded.
#[utoipa::path(post, path = "/api/incidents/{id}/silence", tag = "incidents", request_body = SilenceRequest,
    responses((status = 200, body = Silence),
              (status = 502, body = ErrorBody, description = "`upstream_failed`: Alertmanager refused the connection, timed out, answered with an error status (named, its body never shown), answered more than 64 KiB, or its address is one the outbound policy refuses")))]
pub async fn create(
    State(s): State<AppState>,
    Caller(a): Caller,
    Path(id): Path<i64>,
    Body(b): Body<SilenceRequest>,
) -> ApiResult<Json<Silence>> {
    Ok(Json(s.core.silence_incident(&a, id, b.duration).await?))
}

/// Expires the incident's silence now (`DELETE /api/v2/silence/{id}` on Alertmanager). 409 when
/// none is in force; 502 when Alertmanager is unreachable or refuses, and then it stays.
#[utoipa::path(delete, path = "/api/incidents/{id}/silence", tag = "incidents",
    responses((status = 204), (status = 409, body = ErrorBody),
              (status = 502, body = ErrorBody, description = "`upstream_failed`: as for making a silence")))]
pub async fn expire(
    State(s): State<AppState>,
    Caller(a): Caller,
    Path(id): Path<i64>,
) -> ApiResult<StatusCode> {
    s.core.expire_silence(&a, id).await?;
    Ok(StatusCode::NO_CONTENT)
}
