//! Incidents and alerts: reads and the actions people take.

use crate::error::ApiResult;
use crate::extract::{Body, Caller, Path, Query};
use crate::AppState;
use axum::extract::State;
use axum::Json;
use klaxon_core::incidents::reads::{AlertFilter, IncidentFilter};
use klaxon_domain::ids::{IncidentId, NoteId, UserId};
use klaxon_domain::incident::{Alert, Incident, IncidentStats, WeeklyStats};
use klaxon_domain::incident_page::{IncidentDetail, SimilarIncident};
use klaxon_domain::{Duration, ErrorBody};
use serde::Deserialize;

#[utoipa::path(get, path = "/api/incidents", tag = "incidents", params(IncidentFilter), responses((status = 200, body = Vec<Incident>)))]
pub async fn list(
    State(s): State<AppState>,
    Caller(a): Caller,
    Query(f): Query<IncidentFilter>,
) -> ApiResult<Json<Vec<Incident>>> {
    Ok(Json(s.core.list_incidents(&a, &f).await?))
}

/// One incident with its alerts, notes and timeline; 404 outside the caller's teams.
#[utoipa::path(get, path = "/api/incidents/{id}", tag = "incidents", responses((status = 200, body = IncidentDetail), (status = 404, body = ErrorBody)))]
pub async fn get(
    State(s): State<AppState>,
    Caller(a): Caller,
    Path(id): Path<i64>,
) -> ApiResult<Json<IncidentDetail>> {
    Ok(Json(s.core.incident_detail(&a, id).await?))
}

/// Resolved incidents of the same team and signature that have notes, resolution notes first.
#[utoipa::path(get, path = "/api/incidents/{id}/similar", tag = "incidents", responses((status = 200, body = Vec<SimilarIncident>)))]
pub async fn similar(
    State(s): State<AppState>,
    Caller(a): Caller,
    Path(id): Path<i64>,
) -> ApiResult<Json<Vec<SimilarIncident>>> {
    Ok(Json(s.core.similar_incidents(&a, id).await?))
}

#[utoipa::path(post, path = "/api/incidents/{id}/acknowledge", tag = "incidents", responses((status = 200, body = Incident), (status = 409, body = ErrorBody)))]
pub async fn acknowledge(
    State(s): State<AppState>,
    Caller(a): Caller,
    Path(id): Path<i64>,
) -> ApiResult<Json<Incident>> {
    Ok(Json(s.core.acknowledge(&a, id).await?))
}

#[derive(Deserialize, Default, utoipa::ToSchema)]
pub struct ResolveRequest {
    /// What fixed it; stored as the resolution note.
    resolution: Option<String>,
}

/// Resolves by hand (terminal). The body is optional.
#[utoipa::path(post, path = "/api/incidents/{id}/resolve", tag = "incidents", request_body = Option<ResolveRequest>,
    responses((status = 200, body = Incident), (status = 409, body = ErrorBody)))]
pub async fn resolve(
    State(s): State<AppState>,
    Caller(a): Caller,
    Path(id): Path<i64>,
    body: axum::body::Bytes,
) -> ApiResult<Json<Incident>> {
    // The body is optional: a bare POST resolves without a note.
    let req: ResolveRequest = if body.iter().all(u8::is_ascii_whitespace) {
        ResolveRequest::default()
    } else {
        serde_json::from_slice(&body)
            .map_err(|e| klaxon_core::Error::Invalid(format!("invalid body: {e}")))?
    };
    Ok(Json(
        s.core.resolve(&a, id, req.resolution.as_deref()).await?,
    ))
}

#[derive(Deserialize, utoipa::ToSchema)]
pub struct SnoozeRequest {
    /// How long, e.g. `30m` (1m to 7d).
    duration: Duration,
}

/// Snoozes an open incident; 409 when it is resolved or archived.
#[utoipa::path(post, path = "/api/incidents/{id}/snooze", tag = "incidents", request_body = SnoozeRequest,
    responses((status = 200, body = Incident), (status = 409, description = "The incident is resolved or archived", body = ErrorBody)))]
pub async fn snooze(
    State(s): State<AppState>,
    Caller(a): Caller,
    Path(id): Path<i64>,
    Body(b): Body<SnoozeRequest>,
) -> ApiResult<Json<Incident>> {
    Ok(Json(s.core.snooze(&a, id, b.duration).await?))
}

#[utoipa::path(post, path = "/api/incidents/{id}/unsnooze", tag = "incidents", responses((status = 200, body = Incident)))]
pub async fn unsnooze(
    State(s): State<AppState>,
    Caller(a): Caller,
    Path(id): Path<i64>,
) -> ApiResult<Json<Incident>> {
    Ok(Json(s.core.unsnooze(&a, id).await?))
}

#[derive(Deserialize, utoipa::ToSchema)]
pub struct AssignRequest {
    user_id: i64,
}

/// Assigns to a member of the incident's team.
#[utoipa::path(post, path = "/api/incidents/{id}/assign", tag = "incidents", request_body = AssignRequest, responses((status = 200, body = Incident)))]
pub async fn assign(
    State(s): State<AppState>,
    Caller(a): Caller,
    Path(id): Path<i64>,
    Body(b): Body<AssignRequest>,
) -> ApiResult<Json<Incident>> {
    Ok(Json(
        s.core.assign(&a, IncidentId(id), UserId(b.user_id)).await?,
    ))
}

#[utoipa::path(post, path = "/api/incidents/{id}/archive", tag = "incidents", responses((status = 200, body = Incident)))]
pub async fn archive(
    State(s): State<AppState>,
    Caller(a): Caller,
    Path(id): Path<i64>,
) -> ApiResult<Json<Incident>> {
    Ok(Json(s.core.set_archived(&a, id, true).await?))
}

#[utoipa::path(post, path = "/api/incidents/{id}/unarchive", tag = "incidents", responses((status = 200, body = Incident)))]
pub async fn unarchive(
    State(s): State<AppState>,
    Caller(a): Caller,
    Path(id): Path<i64>,
) -> ApiResult<Json<Incident>> {
    Ok(Json(s.core.set_archived(&a, id, false).await?))
}

#[derive(Deserialize, utoipa::ToSchema)]
pub struct NoteRequest {
    /// 1 to 10 000 characters.
    #[schema(min_length = 1, max_length = 10000)]
    text: String,
    /// Marks this note as what fixed it.
    #[serde(default)]
    resolution: bool,
}

#[utoipa::path(post, path = "/api/incidents/{id}/notes", tag = "incidents", request_body = NoteRequest, responses((status = 201, body = Incident)))]
pub async fn add_note(
    State(s): State<AppState>,
    Caller(a): Caller,
    Path(id): Path<i64>,
    Body(b): Body<NoteRequest>,
) -> ApiResult<(axum::http::StatusCode, Json<Incident>)> {
    Ok((
        axum::http::StatusCode::CREATED,
        Json(s.core.add_note(&a, id, &b.text, b.resolution).await?),
    ))
}

#[derive(Deserialize, utoipa::ToSchema)]
pub struct PinRequest {
    note_id: i64,
}

/// Pins one of the incident's notes as its resolution note.
#[utoipa::path(put, path = "/api/incidents/{id}/resolution-note", tag = "incidents", request_body = PinRequest, responses((status = 200, body = Incident)))]
pub async fn pin_note(
    State(s): State<AppState>,
    Caller(a): Caller,
    Path(id): Path<i64>,
    Body(b): Body<PinRequest>,
) -> ApiResult<Json<Incident>> {
    Ok(Json(
        s.core
            .pin_resolution_note(&a, IncidentId(id), NoteId(b.note_id))
            .await?,
    ))
}

#[derive(Deserialize, utoipa::IntoParams)]
pub struct StatsQuery {
    team_id: Option<i64>,
    /// RFC 3339 time, inclusive.
    #[param(format = DateTime)]
    from: Option<String>,
    /// RFC 3339 time, exclusive.
    #[param(format = DateTime)]
    to: Option<String>,
}

/// Mean time to acknowledge and to resolve; null, not zero, until there is data.
#[utoipa::path(get, path = "/api/stats/incidents", tag = "incidents", params(StatsQuery), responses((status = 200, body = IncidentStats)))]
pub async fn stats(
    State(s): State<AppState>,
    Caller(a): Caller,
    Query(q): Query<StatsQuery>,
) -> ApiResult<Json<IncidentStats>> {
    Ok(Json(
        s.core.incident_stats(&a, q.team_id, q.from, q.to).await?,
    ))
}

#[derive(Deserialize, utoipa::IntoParams)]
pub struct WeeklyQuery {
    team_id: Option<i64>,
    /// How many weeks, the current one last (default 12).
    #[param(minimum = 1, maximum = 104)]
    weeks: Option<i64>,
}

/// Incidents opened per week (Monday 00:00 UTC) with their mean times to acknowledge and to
/// resolve, every week present, oldest first; null means where no incident was acknowledged or
/// resolved.
#[utoipa::path(get, path = "/api/stats/incidents/weekly", tag = "incidents", params(WeeklyQuery), responses((status = 200, body = Vec<WeeklyStats>)))]
pub async fn weekly_stats(
    State(s): State<AppState>,
    Caller(a): Caller,
    Query(q): Query<WeeklyQuery>,
) -> ApiResult<Json<Vec<WeeklyStats>>> {
    Ok(Json(
        s.core.weekly_incident_stats(&a, q.team_id, q.weeks).await?,
    ))
}

/// Alerts of the caller's teams, newest first; archived ones only with `archived=true`.
#[utoipa::path(get, path = "/api/alerts", tag = "alerts", params(AlertFilter), responses((status = 200, body = Vec<Alert>)))]
pub async fn list_alerts(
    State(s): State<AppState>,
    Caller(a): Caller,
    Query(f): Query<AlertFilter>,
) -> ApiResult<Json<Vec<Alert>>> {
    Ok(Json(s.core.list_alerts(&a, &f).await?))
}

#[utoipa::path(get, path = "/api/alerts/{id}", tag = "alerts", responses((status = 200, body = Alert), (status = 404, body = ErrorBody)))]
pub async fn get_alert(
    State(s): State<AppState>,
    Caller(a): Caller,
    Path(id): Path<i64>,
) -> ApiResult<Json<Alert>> {
    Ok(Json(s.core.get_alert(&a, id).await?))
}
