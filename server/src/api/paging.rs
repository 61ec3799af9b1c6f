//! Paging: the team's escalation ladder, push acknowledge tokens and the test page.

use crate::error::ApiResult;
use crate::extract::{Body, Caller, Path};
use crate::AppState;
use axum::extract::State;
use axum::Json;
use klaxon_domain::paging::{AckOutcome, EscalationPolicy};
use klaxon_domain::ErrorBody;
use serde::Serialize;

/// The team's escalation ladder (`levels: []` when it has none). Members may read it.
#[utoipa::path(get, path = "/api/teams/{team_id}/escalation", tag = "paging", responses((status = 200, body = EscalationPolicy)))]
pub async fn get_policy(
    State(s): State<AppState>,
    Caller(a): Caller,
    Path(team_id): Path<i64>,
) -> ApiResult<Json<EscalationPolicy>> {
    Ok(Json(s.core.escalation_policy(&a, team_id).await?))
}

/// Replaces the whole ladder (owner). A level none of whose targets can be paged is refused.
#[utoipa::path(put, path = "/api/teams/{team_id}/escalation", tag = "paging", request_body = EscalationPolicy,
    responses((status = 200, body = EscalationPolicy), (status = 400, body = ErrorBody), (status = 403, body = ErrorBody)))]
pub async fn put_policy(
    State(s): State<AppState>,
    Caller(a): Caller,
    Path(team_id): Path<i64>,
    Body(b): Body<EscalationPolicy>,
) -> ApiResult<Json<EscalationPolicy>> {
    Ok(Json(s.core.set_escalation_policy(&a, team_id, &b).await?))
}

/// The Acknowledge button of a page. No credential: the token in the path is one, valid
/// for one incident (or, on a summary push, the incidents of its bundle), one user and one day,
/// once.
#[utoipa::path(post, path = "/api/notify/ack/{token}", tag = "paging", security(()),
    responses((status = 200, body = AckOutcome),
              (status = 404, body = ErrorBody, description = "unknown or expired token, or its user was disabled"),
              (status = 409, body = ErrorBody, description = "used already: says who acknowledged, or that the incident is resolved; for a summary, that every incident of it was already owned")))]
pub async fn acknowledge(
    State(s): State<AppState>,
    Path(token): Path<String>,
) -> ApiResult<Json<AckOutcome>> {
    Ok(Json(s.core.acknowledge_with_token(&token).await?))
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct TestPageSent {
    ok: bool,
}

/// Publishes one test page to the caller's topic, directly; the push service's error comes
/// back as a 502.
#[utoipa::path(post, path = "/api/me/notify/test", tag = "paging",
    responses((status = 200, body = TestPageSent), (status = 409, body = ErrorBody, description = "no push topic set, or no push service configured"),
        (status = 429, body = ErrorBody, description = "too many test messages by this person or to this topic (20 and 5 in 15 minutes)"), (status = 502, body = ErrorBody)))]
pub async fn test_page(
    State(s): State<AppState>,
    Caller(a): Caller,
) -> ApiResult<Json<TestPageSent>> {
    s.core.send_test_page(&a).await?;
    Ok(Json(TestPageSent { ok: true }))
}
