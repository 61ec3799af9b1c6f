//! A team's maintenance windows: incidents open, nothing pages until the window ends.

use crate::error::ApiResult;
use crate::extract::{Body, Caller, Path};
use crate::AppState;
use axum::extract::State;
use axum::http::StatusCode;
use axum::Json;
use klaxon_domain::ids::{MaintenanceId, TeamId};
use klaxon_domain::maintenance::{Maintenance, NewMaintenance};
use klaxon_domain::ErrorBody;

/// The team's current and coming windows, soonest first (member).
#[utoipa::path(get, path = "/api/teams/{team_id}/maintenance", tag = "teams",
    responses((status = 200, body = Vec<Maintenance>)))]
pub async fn list(
    State(s): State<AppState>,
    Caller(a): Caller,
    Path(team_id): Path<i64>,
) -> ApiResult<Json<Vec<Maintenance>>> {
    Ok(Json(s.core.list_maintenance(&a, team_id).await?))
}

/// Plans a window (owner): from `starts_at` (default now, at most a year ahead) for 5 minutes
/// to 24 hours, given as `ends_at` or `duration`. While it is on, the team's incidents open
/// but every page waits, on the incident's timeline, for the window's end. 409 when it
/// overlaps another window of the team.
#[utoipa::path(post, path = "/api/teams/{team_id}/maintenance", tag = "teams", request_body = NewMaintenance,
    responses((status = 201, body = Maintenance), (status = 409, body = ErrorBody)))]
pub async fn create(
    State(s): State<AppState>,
    Caller(a): Caller,
    Path(team_id): Path<i64>,
    Body(b): Body<NewMaintenance>,
) -> ApiResult<(StatusCode, Json<Maintenance>)> {
    Ok((
        StatusCode::CREATED,
        Json(s.core.create_maintenance(&a, team_id, &b).await?),
    ))
}

/// Ends a window now (owner), releasing what it held; a window not yet started is removed.
#[utoipa::path(delete, path = "/api/teams/{team_id}/maintenance/{id}", tag = "teams",
    responses((status = 204)))]
pub async fn end(
    State(s): State<AppState>,
    Caller(a): Caller,
    Path((team_id, id)): Path<(i64, i64)>,
) -> ApiResult<StatusCode> {
    s.core
        .end_maintenance(&a, TeamId(team_id), MaintenanceId(id))
        .await?;
    Ok(StatusCode::NO_CONTENT)
}
