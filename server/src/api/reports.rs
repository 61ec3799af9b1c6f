//! What a team's record teaches (`klaxon_core::reports`): on-call health and alert noise over a
//! range.

use super::exports::time;
use crate::error::ApiResult;
use crate::extract::{Caller, Path, Query};
use crate::AppState;
use axum::extract::State;
use axum::Json;
use klaxon_core::reports::ReportQuery;
use klaxon_domain::health::OncallHealth;
use klaxon_domain::noise::AlertNoise;
use serde::Deserialize;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

/// The reports, with the exports and reviews beside them.
pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(health))
        .routes(routes!(noise))
        .merge(super::exports::routes())
        .merge(super::reviews::routes())
}

#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct HealthParams {
    /// RFC 3339 time, inclusive; four weeks before `to` when absent.
    #[param(format = DateTime)]
    from: Option<String>,
    /// RFC 3339 time, exclusive; up to now when absent. At most 366 days after `from`.
    #[param(format = DateTime)]
    to: Option<String>,
    /// One person's figures only: the username of a member of the team (400 for anyone else).
    person: Option<String>,
}

/// The team's on-call health over the range (members of the team): hours on call, pages by
/// road, pages in each person's night (22:00–07:00 on their own clock), acknowledgements,
/// resolutions, escalations past them, time to acknowledge (median and 90th percentile) and
/// fairness. 400 for a range over 366 days or backwards, a bad time, or a `person` who is not
/// a member.
#[utoipa::path(get, path = "/api/teams/{team_id}/reports/health", tag = "reports",
    params(("team_id" = i64, Path), HealthParams),
    responses((status = 200, description = "The report", body = OncallHealth)))]
pub async fn health(
    State(s): State<AppState>,
    Caller(a): Caller,
    Path(team_id): Path<i64>,
    Query(p): Query<HealthParams>,
) -> ApiResult<Json<OncallHealth>> {
    let q = ReportQuery {
        from: time("from", &p.from)?,
        to: time("to", &p.to)?,
        person: p.person,
    };
    Ok(Json(s.core.oncall_health(&a, team_id, q).await?))
}

#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct RangeParams {
    /// RFC 3339 time, inclusive; four weeks before `to` when absent.
    #[param(format = DateTime)]
    from: Option<String>,
    /// RFC 3339 time, exclusive; up to now when absent. At most 366 days after `from`.
    #[param(format = DateTime)]
    to: Option<String>,
}

/// The team's alert noise over the range (members of the team): per alert name and integration,
/// the incidents it opened and their pages, how many resolved themselves within five minutes with
/// nobody acting, reopened within an hour, or paged and were never acknowledged, and the action
/// that would quiet it, noisiest first (at most 50 rows). 400 for a range over 366 days or
/// backwards, or a bad time.
#[utoipa::path(get, path = "/api/teams/{team_id}/reports/noise", tag = "reports",
    params(("team_id" = i64, Path), RangeParams),
    responses((status = 200, description = "The report", body = AlertNoise)))]
pub async fn noise(
    State(s): State<AppState>,
    Caller(a): Caller,
    Path(team_id): Path<i64>,
    Query(p): Query<RangeParams>,
) -> ApiResult<Json<AlertNoise>> {
    let q = ReportQuery {
        from: time("from", &p.from)?,
        to: time("to", &p.to)?,
        person: None,
    };
    Ok(Json(s.core.alert_noise(&a, team_id, q).await?))
}
