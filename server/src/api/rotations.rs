//! A team's rotations: defined by an owner, applied to a range of the per-date schedule.

use crate::error::ApiResult;
use crate::extract::{Body, Caller, Path};
use crate::AppState;
use axum::extract::State;
use axum::http::StatusCode;
use axum::Json;
use klaxon_domain::ids::{RotationId, TeamId};
use klaxon_domain::rotation::{AppliedRotation, ApplyRotation, NewRotation, Rotation};
use klaxon_domain::ErrorBody;

/// The team's rotations (member).
#[utoipa::path(get, path = "/api/teams/{team_id}/rotations", tag = "schedule",
    responses((status = 200, body = Vec<Rotation>)))]
pub async fn list(
    State(s): State<AppState>,
    Caller(a): Caller,
    Path(team_id): Path<i64>,
) -> ApiResult<Json<Vec<Rotation>>> {
    Ok(Json(s.core.list_rotations(&a, team_id).await?))
}

/// Defines a rotation of team members (owner); names are unique in the team (409).
#[utoipa::path(post, path = "/api/teams/{team_id}/rotations", tag = "schedule", request_body = NewRotation,
    responses((status = 201, body = Rotation), (status = 409, body = ErrorBody)))]
pub async fn create(
    State(s): State<AppState>,
    Caller(a): Caller,
    Path(team_id): Path<i64>,
    Body(b): Body<NewRotation>,
) -> ApiResult<(StatusCode, Json<Rotation>)> {
    Ok((
        StatusCode::CREATED,
        Json(s.core.create_rotation(&a, team_id, &b).await?),
    ))
}

/// Removes a rotation (owner); the dates it filled stay, as if given by hand.
#[utoipa::path(delete, path = "/api/teams/{team_id}/rotations/{rotation_id}", tag = "schedule",
    responses((status = 204)))]
pub async fn delete(
    State(s): State<AppState>,
    Caller(a): Caller,
    Path((team_id, id)): Path<(i64, i64)>,
) -> ApiResult<StatusCode> {
    s.core
        .delete_rotation(&a, TeamId(team_id), RotationId(id))
        .await?;
    Ok(StatusCode::NO_CONTENT)
}

/// Fills the range (at most 365 dates) with the rotation's turns (owner). Without `replace`, any
/// taken date answers 409 and nothing is stored; with it, this rotation's own earlier dates
/// are overwritten and other taken dates are kept and listed in `skipped`. `dry_run` stores
/// nothing.
#[utoipa::path(post, path = "/api/teams/{team_id}/rotations/{rotation_id}/apply", tag = "schedule", request_body = ApplyRotation,
    responses((status = 200, body = AppliedRotation), (status = 409, body = ErrorBody)))]
pub async fn apply(
    State(s): State<AppState>,
    Caller(a): Caller,
    Path((team_id, id)): Path<(i64, i64)>,
    Body(b): Body<ApplyRotation>,
) -> ApiResult<Json<AppliedRotation>> {
    Ok(Json(
        s.core
            .apply_rotation(&a, TeamId(team_id), RotationId(id), &b)
            .await?,
    ))
}
