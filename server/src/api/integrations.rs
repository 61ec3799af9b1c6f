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
use klaxon_domain::mapping::{TemplatePreview, TemplateTrial, WebhookTemplates};
use klaxon_domain::routing::{RulesChange, RulesTrial, SimulatedAlert};
use klaxon_domain::text::Label;
use klaxon_domain::ErrorBody;
use serde::Deserialize;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list, create))
        .routes(routes!(update, revoke))
        .routes(routes!(volume))
        .routes(routes!(try_templates))
        .routes(routes!(set_rules))
        .routes(routes!(simulate_rules))
}

#[derive(Deserialize, utoipa::ToSchema)]
pub struct IntegrationRequest {
    name: Label,
    /// What posts to it; `alertmanager` when absent. Fixed at creation.
    kind: Option<IntegrationKind>,
    /// A generic webhook's templates (kind `webhook`; a starter set reading `title`,
    /// `severity`, `status`, `url`, … when absent); refused for the other kinds.
    templates: Option<WebhookTemplates>,
}

/// Creates an integration (team owner). The key and webhook URL are in this answer only.
#[utoipa::path(post, path = "/api/teams/{team_id}/integrations", tag = "integrations", request_body = IntegrationRequest,
    responses((status = 201, body = NewIntegration),
              (status = 400, body = ErrorBody, description = "a malformed name; templates for a kind other than `webhook`; a template that does not compile or is over its bounds (the message names it: `templates.title: …`)"),
              (status = 403, body = ErrorBody)))]
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
                .create_integration(
                    &a,
                    team_id,
                    &b.name,
                    b.kind.unwrap_or_default(),
                    b.templates,
                )
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
              (status = 400, body = ErrorBody, description = "a malformed field, an `alertmanager_url` whose address the outbound policy refuses (link-local and metadata always; loopback and private networks unless `KLAXON_OUTBOUND_ALLOW` allows them), templates for an integration not of kind `webhook`, or a template that does not compile or is over its bounds")))]
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

/// What a sample body would become with a generic webhook's templates, before they are saved
/// ("try it"). Nothing is stored. Open to anyone signed in.
#[utoipa::path(post, path = "/api/webhook-templates/try", tag = "integrations", request_body = TemplateTrial,
    responses((status = 200, body = TemplatePreview),
              (status = 400, body = ErrorBody, description = "the sample is not JSON or over 64 KB (`sample: …`), or a template does not compile, is over its bounds (2000 characters each, 20 labels), fails on this sample or renders no title (`templates.title: …`); a template's work is bounded, so one that loops too long fails here")))]
pub async fn try_templates(
    State(s): State<AppState>,
    Caller(a): Caller,
    Body(b): Body<TemplateTrial>,
) -> ApiResult<Json<TemplatePreview>> {
    Ok(Json(s.core.try_templates(&a, &b)?))
}

/// Replaces an integration's routing rules, in order: the first whose matchers hold an alert's
/// labels sends it to another team, sets its severity or labels, or drops it. The team's owner
/// (routing to teams they are in), or an instance-scoped service account such as `klaxon apply`'s
/// (to any team). An empty list removes them.
#[utoipa::path(put, path = "/api/teams/{team_id}/integrations/{integration_id}/rules", tag = "integrations", request_body = RulesChange,
    responses((status = 200, body = Integration),
              (status = 400, body = ErrorBody, description = "more than 50 rules; matchers that do not parse (`rules[1].matchers: …`); a rule that drops and does something else; more than 20 labels, `alertname`, a bad label name or a value over 256 characters; a team that does not exist or that the caller is not in (`rules[0].team: …`)"),
              (status = 403, body = ErrorBody, description = "not the team's owner"),
              (status = 404, body = ErrorBody)))]
pub async fn set_rules(
    State(s): State<AppState>,
    Caller(a): Caller,
    Path((team_id, id)): Path<(i64, i64)>,
    Body(b): Body<RulesChange>,
) -> ApiResult<Json<Integration>> {
    Ok(Json(
        s.core
            .set_integration_rules(&a, TeamId(team_id), IntegrationId(id), b.rules)
            .await?,
    ))
}

/// What a sample request would do under the given rules (the stored ones when absent), alert
/// by alert: the rule that matched, the team, the labels after it, or that it is dropped.
/// Nothing is stored. Any team member.
#[utoipa::path(post, path = "/api/teams/{team_id}/integrations/{integration_id}/rules/simulate", tag = "integrations", request_body = RulesTrial,
    responses((status = 200, body = Vec<SimulatedAlert>),
              (status = 400, body = ErrorBody, description = "the sample is over 64 KB or not a request of the integration's kind (`sample: …`), or a rule is refused as when saving"),
              (status = 404, body = ErrorBody)))]
pub async fn simulate_rules(
    State(s): State<AppState>,
    Caller(a): Caller,
    Path((team_id, id)): Path<(i64, i64)>,
    Body(b): Body<RulesTrial>,
) -> ApiResult<Json<Vec<SimulatedAlert>>> {
    Ok(Json(
        s.core
            .simulate_rules(&a, TeamId(team_id), IntegrationId(id), b)
            .await?,
    ))
}
