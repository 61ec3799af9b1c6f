//! A team's dead man's switches.

use crate::error::ApiResult;
use crate::extract::{Body, Caller, Path};
use crate::AppState;
use axum::extract::State;
use axum::http::StatusCode;
use axum::Json;
use klaxon_domain::deadman::{DeadmanSwitch, SwitchSpec};
use klaxon_domain::ids::{SwitchId, TeamId};
use klaxon_domain::ErrorBody;

/// The team's switches with their status (member).
#[utoipa::path(get, path = "/api/teams/{team_id}/deadman/switches", tag = "deadman",
    responses((status = 200, body = Vec<DeadmanSwitch>)))]
pub async fn list(
    State(s): State<AppState>,
    Caller(a): Caller,
    Path(team_id): Path<i64>,
) -> ApiResult<Json<Vec<DeadmanSwitch>>> {
    Ok(Json(s.core.list_switches(&a, team_id).await?))
}

/// Creates a switch (owner). The matcher must select on `alertname`.
#[utoipa::path(post, path = "/api/teams/{team_id}/deadman/switches", tag = "deadman", request_body = SwitchSpec,
    responses((status = 201, body = DeadmanSwitch), (status = 400, body = ErrorBody), (status = 409, body = ErrorBody)))]
pub async fn create(
    State(s): State<AppState>,
    Caller(a): Caller,
    Path(team_id): Path<i64>,
    Body(b): Body<SwitchSpec>,
) -> ApiResult<(StatusCode, Json<DeadmanSwitch>)> {
    Ok((
        StatusCode::CREATED,
        Json(s.core.create_switch(&a, team_id, &b).await?),
    ))
}

/// Replaces a switch's settings in place, keeping its id (owner).
#[utoipa::path(put, path = "/api/teams/{team_id}/deadman/switches/{switch_id}", tag = "deadman", request_body = SwitchSpec,
    responses((status = 200, body = DeadmanSwitch), (status = 400, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn update(
    State(s): State<AppState>,
    Caller(a): Caller,
    Path((team_id, id)): Path<(i64, i64)>,
    Body(b): Body<SwitchSpec>,
) -> ApiResult<Json<DeadmanSwitch>> {
    Ok(Json(
        s.core
            .update_switch(&a, TeamId(team_id), SwitchId(id), &b)
            .await?,
    ))
}

/// Removes a switch (owner). An incident it opened stays open.
#[utoipa::path(delete, path = "/api/teams/{team_id}/deadman/switches/{switch_id}", tag = "deadman",
    responses((status = 204), (status = 404, body = ErrorBody)))]
pub async fn remove(
    State(s): State<AppState>,
    Caller(a): Caller,
    Path((team_id, id)): Path<(i64, i64)>,
) -> ApiResult<StatusCode> {
    s.core
        .delete_switch(&a, TeamId(team_id), SwitchId(id))
        .await?;
    Ok(StatusCode::NO_CONTENT)
}
