//! The on-call schedule.

use crate::error::ApiResult;
use crate::extract::{Body, Caller, Path, Query};
use crate::AppState;
use axum::extract::State;
use axum::http::{header, StatusCode};
use axum::response::IntoResponse;
use axum::Json;
use klaxon_core::schedule::CurrentHolder;
use klaxon_domain::incident::ScheduleEntry;
use klaxon_domain::ErrorBody;
use serde::Deserialize;

#[derive(Deserialize, utoipa::ToSchema)]
pub struct ShiftRequest {
    user_id: i64,
    /// UTC dates, `YYYY-MM-DD`: 1 to 366 of them.
    #[schema(min_items = 1, max_items = 366, value_type = Vec<String>, format = Date)]
    dates: Vec<String>,
}

/// Gives a member the shifts on the dates, all or nothing (409 if any date is taken).
#[utoipa::path(post, path = "/api/teams/{team_id}/schedule", tag = "schedule", request_body = ShiftRequest,
    responses((status = 201, body = Vec<ScheduleEntry>), (status = 409, body = ErrorBody)))]
pub async fn create(
    State(s): State<AppState>,
    Caller(a): Caller,
    Path(team_id): Path<i64>,
    Body(b): Body<ShiftRequest>,
) -> ApiResult<(StatusCode, Json<Vec<ScheduleEntry>>)> {
    Ok((
        StatusCode::CREATED,
        Json(
            s.core
                .create_shifts(&a, team_id, b.user_id, &b.dates)
                .await?,
        ),
    ))
}

#[derive(Deserialize, utoipa::IntoParams)]
pub struct Range {
    /// First date, inclusive (`YYYY-MM-DD`).
    #[param(format = Date)]
    from: Option<String>,
    /// Last date, inclusive (`YYYY-MM-DD`).
    #[param(format = Date)]
    to: Option<String>,
}

#[utoipa::path(get, path = "/api/teams/{team_id}/schedule", tag = "schedule", params(Range), responses((status = 200, body = Vec<ScheduleEntry>)))]
pub async fn list(
    State(s): State<AppState>,
    Caller(a): Caller,
    Path(team_id): Path<i64>,
    Query(r): Query<Range>,
) -> ApiResult<Json<Vec<ScheduleEntry>>> {
    Ok(Json(
        s.core
            .list_shifts(&a, team_id, r.from.as_deref(), r.to.as_deref())
            .await?,
    ))
}

#[utoipa::path(delete, path = "/api/teams/{team_id}/schedule/{date}", tag = "schedule", responses((status = 204), (status = 404, body = ErrorBody)))]
pub async fn delete(
    State(s): State<AppState>,
    Caller(a): Caller,
    Path((team_id, date)): Path<(i64, String)>,
) -> ApiResult<StatusCode> {
    s.core.delete_shift(&a, team_id, &date).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// Today's holder of each of the caller's teams that has one.
#[utoipa::path(get, path = "/api/schedule/current", tag = "schedule", responses((status = 200, body = Vec<CurrentHolder>)))]
pub async fn current(
    State(s): State<AppState>,
    Caller(a): Caller,
) -> ApiResult<Json<Vec<CurrentHolder>>> {
    Ok(Json(s.core.current_holders(&a).await?))
}

/// The team's schedule as an iCalendar feed (subscribe with an API key as bearer token).
#[utoipa::path(get, path = "/api/teams/{team_id}/schedule.ics", tag = "schedule", responses((status = 200, content_type = "text/calendar", body = String)))]
pub async fn ics(
    State(s): State<AppState>,
    Caller(a): Caller,
    Path(team_id): Path<i64>,
) -> ApiResult<impl IntoResponse> {
    let body = s.core.schedule_ics(&a, team_id).await?;
    Ok((
        [(header::CONTENT_TYPE, "text/calendar; charset=utf-8")],
        body,
    ))
}
