//! The on-call schedule.

use crate::error::ApiResult;
use crate::extract::{Body, Caller, OptionalBody, Path, Query};
use crate::AppState;
use axum::extract::State;
use axum::http::{header, StatusCode};
use axum::response::IntoResponse;
use axum::Json;
use klaxon_core::schedule::CurrentHolder;
use klaxon_domain::calendar::Day;
use klaxon_domain::ids::{TeamId, UserId};
use klaxon_domain::rotation::{OpenDate, ScheduleChange, TakeDate};
use klaxon_domain::schedule::ScheduleEntry;
use klaxon_domain::ErrorBody;
use serde::Deserialize;

#[derive(Deserialize, utoipa::ToSchema)]
pub struct ShiftRequest {
    user_id: i64,
    /// UTC dates: 1 to 366 of them.
    #[schema(min_items = 1, max_items = 366)]
    dates: Vec<Day>,
}

/// A date in the path.
fn day(raw: &str) -> klaxon_core::Result<Day> {
    klaxon_core::field("date", Day::parse(raw))
}

/// Gives a member the shifts on the dates, all or nothing (409 if any date is taken).
#[utoipa::path(post, path = "/api/teams/{team_id}/schedule", tag = "schedule", request_body = ShiftRequest,
    responses((status = 201, body = Vec<ScheduleEntry>), (status = 403, body = ErrorBody, description = "a member giving dates to someone else (an owner's action)"),
              (status = 409, body = ErrorBody)))]
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
                .create_shifts(&a, TeamId(team_id), UserId(b.user_id), &b.dates)
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

#[utoipa::path(delete, path = "/api/teams/{team_id}/schedule/{date}", tag = "schedule",
    params(("date" = String, Path, format = Date)),
    responses((status = 204), (status = 403, body = ErrorBody, description = "a member removing someone else's date (an owner's action)"), (status = 404, body = ErrorBody)))]
pub async fn delete(
    State(s): State<AppState>,
    Caller(a): Caller,
    Path((team_id, date)): Path<(i64, String)>,
) -> ApiResult<StatusCode> {
    s.core.delete_shift(&a, team_id, day(&date)?).await?;
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

/// A team's schedule as an iCalendar feed through a person's calendar link (made on the team's
/// page, shown once): calendar apps subscribe by URL and cannot send a key. The link stops
/// working when it is replaced or stopped, or its person leaves the team or is disabled.
#[utoipa::path(get, path = "/api/calendar/{token}/schedule.ics", tag = "schedule", security(()),
    params(("token" = String, Path, description = "the link's secret: 64 letters and digits", min_length = 64, max_length = 64, pattern = "^[A-Za-z0-9]{64}$")),
    responses((status = 200, content_type = "text/calendar", body = String),
              (status = 404, body = ErrorBody, description = "unknown, replaced or stopped link, or its person left the team or was disabled")))]
pub async fn feed(
    State(s): State<AppState>,
    Path(token): Path<String>,
) -> ApiResult<impl IntoResponse> {
    let body = s.core.calendar_feed_ics(&token).await?;
    Ok((
        [(header::CONTENT_TYPE, "text/calendar; charset=utf-8")],
        body,
    ))
}

/// Offers a date to the team (its holder, or an owner); offering it again changes nothing.
/// 403 for anyone else; only today and later dates.
#[utoipa::path(post, path = "/api/teams/{team_id}/schedule/{date}/offer", tag = "schedule",
    params(("date" = String, Path, format = Date)),
    responses((status = 200, body = ScheduleEntry), (status = 409, body = ErrorBody, description = "the date changed hands meanwhile")))]
pub async fn offer(
    State(s): State<AppState>,
    Caller(a): Caller,
    Path((team_id, date)): Path<(i64, String)>,
) -> ApiResult<Json<ScheduleEntry>> {
    Ok(Json(
        s.core.offer_date(&a, team_id, day(&date)?, true).await?,
    ))
}

/// Withdraws an offer (its holder, or an owner).
#[utoipa::path(delete, path = "/api/teams/{team_id}/schedule/{date}/offer", tag = "schedule",
    params(("date" = String, Path, format = Date)),
    responses((status = 200, body = ScheduleEntry), (status = 409, body = ErrorBody, description = "the date changed hands meanwhile")))]
pub async fn withdraw(
    State(s): State<AppState>,
    Caller(a): Caller,
    Path((team_id, date)): Path<(i64, String)>,
) -> ApiResult<Json<ScheduleEntry>> {
    Ok(Json(
        s.core.offer_date(&a, team_id, day(&date)?, false).await?,
    ))
}

/// Takes a date: the entry moves to the caller, or (owners only) to `user_id`. A member takes
/// only a date that was offered or whose holder left the team (409 otherwise). The body may be
/// left out.
#[utoipa::path(post, path = "/api/teams/{team_id}/schedule/{date}/take", tag = "schedule",
    params(("date" = String, Path, format = Date)),
    request_body(content = Option<TakeDate>),
    responses((status = 200, body = ScheduleEntry), (status = 409, body = ErrorBody)))]
pub async fn take(
    State(s): State<AppState>,
    Caller(a): Caller,
    Path((team_id, date)): Path<(i64, String)>,
    OptionalBody(b): OptionalBody<TakeDate>,
) -> ApiResult<Json<ScheduleEntry>> {
    Ok(Json(s.core.take_date(&a, team_id, day(&date)?, &b).await?))
}

/// Takes over today now: today's entry moves to the caller (or an owner's `user_id`), and the
/// team's open unacknowledged incidents assigned to the outgoing holder or nobody follow,
/// each with a timeline entry. 409 when they already hold today.
#[utoipa::path(post, path = "/api/teams/{team_id}/schedule/take-over", tag = "schedule",
    request_body(content = Option<TakeDate>),
    responses((status = 200, body = ScheduleEntry), (status = 409, body = ErrorBody)))]
pub async fn take_over(
    State(s): State<AppState>,
    Caller(a): Caller,
    Path(team_id): Path<i64>,
    OptionalBody(b): OptionalBody<TakeDate>,
) -> ApiResult<Json<ScheduleEntry>> {
    Ok(Json(s.core.take_over(&a, team_id, &b).await?))
}

/// Dates from today on that any member may take: offered, or held by someone who left the team.
#[utoipa::path(get, path = "/api/teams/{team_id}/schedule/open", tag = "schedule",
    responses((status = 200, body = Vec<OpenDate>)))]
pub async fn open(
    State(s): State<AppState>,
    Caller(a): Caller,
    Path(team_id): Path<i64>,
) -> ApiResult<Json<Vec<OpenDate>>> {
    Ok(Json(s.core.open_dates(&a, team_id).await?))
}

#[derive(Deserialize, utoipa::IntoParams)]
pub struct ChangesQuery {
    /// How many, newest first: 1 to 200 (default 50).
    #[param(minimum = 1, maximum = 200)]
    limit: Option<i64>,
}

/// The schedule's change log, newest first: offers, takes, take-overs, rotation applications.
#[utoipa::path(get, path = "/api/teams/{team_id}/schedule/changes", tag = "schedule", params(ChangesQuery),
    responses((status = 200, body = Vec<ScheduleChange>)))]
pub async fn changes(
    State(s): State<AppState>,
    Caller(a): Caller,
    Path(team_id): Path<i64>,
    Query(q): Query<ChangesQuery>,
) -> ApiResult<Json<Vec<ScheduleChange>>> {
    Ok(Json(
        s.core
            .schedule_changes(&a, TeamId(team_id), q.limit.unwrap_or(50))
            .await?,
    ))
}
