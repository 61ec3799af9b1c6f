//! Integrations of a team.

use crate::error::ApiResult;
use crate::extract::{Body, Caller, Path, Query};
use crate::AppState;
use axum::extract::State;
use axum::http::StatusCode;
use axum::Json;
use klaxon_domain::ids::{IntegrationId, TeamId};
use klaxon_domain::incident::{
    HourVolume, Integration, IntegrationChange, IntegrationKind, NewIntegration,
};
use klaxon_domain::text::Label;
use klaxon_domain::ErrorBody;
use serde::Deserialize;

#[derive(Deserialize, utoipa::ToSchema)]
pub struct IntegrationRequest {
    name: Label,
    /// What posts to it; `alertmanager` when absent. Fixed at creation.
    kind: Option<IntegrationKind>,
}

/// Creates an integration (team owner). The key and webhook URL are in this answer only.
#[utoipa::path(post, path = "/api/teams/{team_id}/integrations", tag = "integrations", request_body = IntegrationRequest,
    responses((status = 201, body = NewIntegration), (status = 403, body = ErrorBody)))]
pub async fn create(
    State(s): State<AppState>,
    Caller(a): Caller,
    Path(team_id): Path<i64>,
    Body(b): Body<IntegrationRequest>,
) -> ApiResult<(StatusCode, Json<NewIntegration>)> {
    Ok((
        StatusCode::CREATED,
        Json(
            s.core
                .create_integration(&a, team_id, &b.name, b.kind.unwrap_or_default())
                .await?,
        ),
    ))
}

#[utoipa::path(get, path = "/api/teams/{team_id}/integrations", tag = "integrations", responses((status = 200, body = Vec<Integration>)))]
pub async fn list(
    State(s): State<AppState>,
    Caller(a): Caller,
    Path(team_id): Path<i64>,
) -> ApiResult<Json<Vec<Integration>>> {
    Ok(Json(s.core.list_integrations(&a, team_id).await?))
}

/// Renames an integration and sets or clears the Alertmanager its alerts come from (team
/// owner). Credentials are stored for silences and never shown back; the key is unchanged.
#[utoipa::path(patch, path = "/api/teams/{team_id}/integrations/{integration_id}", tag = "integrations", request_body = IntegrationChange,
    responses((status = 200, body = Integration),
              (status = 400, body = ErrorBody, description = "a malformed field, or an `alertmanager_url` whose address the outbound policy refuses (link-local and metadata always; loopback and private networks unless `KLAXON_OUTBOUND_ALLOW` allows them)")))]
pub async fn update(
    State(s): State<AppState>,
    Caller(a): Caller,
    Path((team_id, id)): Path<(i64, i64)>,
    Body(b): Body<IntegrationChange>,
) -> ApiResult<Json<Integration>> {
    Ok(Json(
        s.core
            .update_integration(&a, TeamId(team_id), IntegrationId(id), b)
            .await?,
    ))
}

/// Revokes an integration's key (team owner). Its alerts are kept, unattributed.
#[utoipa::path(delete, path = "/api/teams/{team_id}/integrations/{integration_id}", tag = "integrations", responses((status = 204)))]
pub async fn revoke(
    State(s): State<AppState>,
    Caller(a): Caller,
    Path((team_id, id)): Path<(i64, i64)>,
) -> ApiResult<StatusCode> {
    s.core
        .revoke_integration(&a, TeamId(team_id), IntegrationId(id))
        .await?;
    Ok(StatusCode::NO_CONTENT)
}

#[derive(Deserialize, utoipa::IntoParams)]
pub struct VolumeQuery {
    /// How many hours, the current one last (default 24).
    #[param(minimum = 1, maximum = 168)]
    hours: Option<i64>,
}

/// Alerts of one integration that started firing in each hour, every hour present, oldest
/// first: the team page's sparkline.
#[utoipa::path(get, path = "/api/teams/{team_id}/integrations/{integration_id}/volume", tag = "integrations", params(VolumeQuery), responses((status = 200, body = Vec<HourVolume>)))]
pub async fn volume(
    State(s): State<AppState>,
    Caller(a): Caller,
    Path((team_id, id)): Path<(i64, i64)>,
    Query(q): Query<VolumeQuery>,
) -> ApiResult<Json<Vec<HourVolume>>> {
    Ok(Json(
        s.core
            .integration_volume(&a, TeamId(team_id), IntegrationId(id), q.hours)
            .await?,
    ))
}
