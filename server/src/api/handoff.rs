//! A team's hand-off notices.

use crate::error::ApiResult;
use crate::extract::{Body, Caller, Path};
use crate::AppState;
use axum::extract::State;
use axum::Json;
use klaxon_domain::handoff::HandoffSettings;

/// Whether the team's hand-off notices are on and when they go (any member).
#[utoipa::path(get, path = "/api/teams/{team_id}/handoff", tag = "schedule",
    responses((status = 200, body = HandoffSettings)))]
pub async fn get(
    State(s): State<AppState>,
    Caller(a): Caller,
    Path(team_id): Path<i64>,
) -> ApiResult<Json<HandoffSettings>> {
    Ok(Json(s.core.handoff_settings(&a, team_id).await?))
}

/// Turns the team's hand-off notices on or off and sets their time (team owner). At `at` (UTC)
/// tomorrow's on-call person gets "You are on call tomorrow for <team>", and when a day ends
/// its outgoing person is told; both only when the holder changes, through the page outbox,
/// never with Acknowledge. Turning them on does not send today's if its time has passed.
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
