//! A team's on-call day (zone and hand-off time) and its partial-day covers.

use crate::error::ApiResult;
use crate::extract::{Body, Caller, Path};
use crate::AppState;
use axum::extract::State;
use axum::http::StatusCode;
use axum::Json;
use klaxon_domain::oncall_day::{Cover, NewCover, OncallDay, OncallDayChange};
use klaxon_domain::ErrorBody;

/// The team's on-call day (any member): the schedule entry for date D covers from D's
/// hand-off time to the next date's, in the team's zone; the day in progress and, while a
/// change waits for its first hand-off, when it takes effect.
#[utoipa::path(get, path = "/api/teams/{team_id}/on-call-day", tag = "schedule",
    responses((status = 200, body = OncallDay)))]
pub async fn get_day(
    State(s): State<AppState>,
    Caller(a): Caller,
    Path(team_id): Path<i64>,
) -> ApiResult<Json<OncallDay>> {
    Ok(Json(s.core.oncall_day(&a, team_id).await?))
}

/// Sets the team's zone and hand-off time (owner). Every stored date keeps its holder; the
/// change takes effect from the next hand-off (the day in progress runs to the later of the
/// old and the new one), and hand-off notices move with it. A hand-off time that does not
/// exist on a date (inside a spring-forward gap) is taken at the first instant after it; one
/// that occurs twice, at its first occurrence. With `dry_run`, nothing is stored and the
/// answer shows the effect.
#[utoipa::path(put, path = "/api/teams/{team_id}/on-call-day", tag = "schedule", request_body = OncallDayChange,
    responses((status = 200, body = OncallDay),
              (status = 400, body = ErrorBody, description = "a zone not in the time zone database, or a time that is not HH:MM; nothing is changed")))]
pub async fn put_day(
    State(s): State<AppState>,
    Caller(a): Caller,
    Path(team_id): Path<i64>,
    Body(b): Body<OncallDayChange>,
) -> ApiResult<Json<OncallDay>> {
    Ok(Json(s.core.set_oncall_day(&a, team_id, b).await?))
}

/// The team's covers in force or to come, soonest first (any member).
#[utoipa::path(get, path = "/api/teams/{team_id}/covers", tag = "schedule",
    responses((status = 200, body = Vec<Cover>)))]
pub async fn list(
    State(s): State<AppState>,
    Caller(a): Caller,
    Path(team_id): Path<i64>,
) -> ApiResult<Json<Vec<Cover>>> {
    Ok(Json(s.core.list_covers(&a, team_id).await?))
}

/// A partial-day cover: `user_id` holds the team's pager from `starts_at` to `ends_at` for
/// `covered_user_id` (by default whoever holds it at the start). While it is in force its
/// person is the holder for new incidents, the escalation target "on call" and
/// `GET /api/schedule/current`. Made by the person covering, the person covered or an owner.
#[utoipa::path(post, path = "/api/teams/{team_id}/covers", tag = "schedule", request_body = NewCover,
    responses((status = 201, body = Cover),
              (status = 400, body = ErrorBody, description = "ends before it starts, lasts more than 14 days, starts more than 5 minutes in the past, or names someone who is not a member; nothing is stored"),
              (status = 403, body = ErrorBody, description = "neither of its people nor an owner"),
              (status = 409, body = ErrorBody, description = "it overlaps another cover of the team, or the team has 200 covers to come")))]
pub async fn create(
    State(s): State<AppState>,
    Caller(a): Caller,
    Path(team_id): Path<i64>,
    Body(b): Body<NewCover>,
) -> ApiResult<(StatusCode, Json<Cover>)> {
    Ok((
        StatusCode::CREATED,
        Json(s.core.create_cover(&a, team_id, b).await?),
    ))
}

/// Ends a cover in force now, or removes one to come (its people or an owner); the day's
/// holder has the pager again.
#[utoipa::path(delete, path = "/api/teams/{team_id}/covers/{cover_id}", tag = "schedule",
    responses((status = 204),
              (status = 404, body = ErrorBody, description = "no such cover of the team in force or to come")))]
pub async fn end(
    State(s): State<AppState>,
    Caller(a): Caller,
    Path((team_id, cover_id)): Path<(i64, i64)>,
) -> ApiResult<StatusCode> {
    s.core.end_cover(&a, team_id, cover_id).await?;
    Ok(StatusCode::NO_CONTENT)
}
