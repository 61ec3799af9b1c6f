//! A team's reported changes (PagerDuty change events).

use crate::error::ApiResult;
use crate::extract::{Caller, Path};
use crate::AppState;
use axum::extract::State;
use axum::Json;
use klaxon_domain::change::Change;

/// The team's reported changes of the last 90 days, newest first, at most 200 (member).
#[utoipa::path(get, path = "/api/teams/{team_id}/changes", tag = "teams",
    responses((status = 200, body = Vec<Change>)))]
pub async fn list(
    State(s): State<AppState>,
    Caller(a): Caller,
    Path(team_id): Path<i64>,
) -> ApiResult<Json<Vec<Change>>> {
    Ok(Json(s.core.team_changes(&a, team_id).await?))
}
