//! A team's hand-off notices.

use crate::error::ApiResult;
use crate::extract::{Body, Caller, Path};
use crate::AppState;
use axum::extract::State;
use axum::Json;
use klaxon_domain::handoff::HandoffSettings;

/// Whether the team's hand-off notices are on, and when they go: the team's hand-off time in
/// its zone (any member).
#[utoipa::path(get, path = "/api/teams/{team_id}/handoff", tag = "schedule",
    responses((status = 200, body = HandoffSettings)))]
pub async fn get(
    State(s): State<AppState>,
    Caller(a): Caller,
    Path(team_id): Path<i64>,
) -> ApiResult<Json<HandoffSettings>> {
    Ok(Json(s.core.handoff_settings(&a, team_id).await?))
}

/// Turns the team's hand-off notices on or off (team owner). At each hand-off of the team's
/// on-call day (its hand-off time in its zone) the incoming person gets "You are on call for
/// <team> now, until …" and the outgoing one is told who has it; a cover's start and end tell
/// its two people. Only when the holder changes, through the page outbox, never with
/// Acknowledge, and never more than an hour late. `at` is the team's hand-off time: a PUT may
/// leave it out, and one naming another time is a 400 (set it with `PUT …/on-call-day`).
#[utoipa::path(put, path = "/api/teams/{team_id}/handoff", tag = "schedule", request_body = HandoffSettings,
    responses((status = 200, body = HandoffSettings)))]
pub async fn put(
    State(s): State<AppState>,
    Caller(a): Caller,
    Path(team_id): Path<i64>,
    Body(b): Body<HandoffSettings>,
) -> ApiResult<Json<HandoffSettings>> {
    Ok(Json(s.core.set_handoff(&a, team_id, b).await?))
}
