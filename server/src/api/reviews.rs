//! Post-incident reviews and their follow-up items (`klaxon_core::reports::review`).

use crate::error::ApiResult;
use crate::extract::{Body, Caller, Path, Query};
use crate::AppState;
use axum::extract::State;
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use klaxon_domain::review::{FollowUp, FollowUpDone, NewFollowUp, Review};
use klaxon_domain::ErrorBody;
use serde::Deserialize;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(review))
        .routes(routes!(add_follow_up))
        .routes(routes!(set_follow_up, delete_follow_up))
        .routes(routes!(open_follow_ups))
}

#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ReviewParams {
    /// `json` (the default) or `markdown` (CommonMark with tables, for a wiki or a ticket).
    #[param(inline)]
    format: Option<ReviewFormat>,
}

#[derive(Deserialize, Clone, Copy, PartialEq, Eq, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum ReviewFormat {
    Json,
    Markdown,
}

/// The post-incident review of a resolved incident (members of its team): its record, who was
/// paged by which road and when, time to acknowledge and to resolve, notes and what fixed it,
/// similar incidents and its follow-up items; as JSON or Markdown.
#[utoipa::path(get, path = "/api/incidents/{id}/review", tag = "reports",
    params(("id" = i64, Path), ReviewParams),
    responses((status = 200, description = "The review", content(
        (Review = "application/json"),
        (String = "text/markdown", example = "# Incident #42: Disk full on db-1\n…"),
    )),
    (status = 409, body = ErrorBody, description = "the incident is not resolved yet")))]
pub async fn review(
    State(s): State<AppState>,
    Caller(a): Caller,
    Path(id): Path<i64>,
    Query(p): Query<ReviewParams>,
) -> ApiResult<Response> {
    let review = s.core.incident_review(&a, id).await?;
    Ok(match p.format {
        Some(ReviewFormat::Markdown) => (
            [(header::CONTENT_TYPE, "text/markdown; charset=utf-8")],
            review.markdown(),
        )
            .into_response(),
        _ => Json(review).into_response(),
    })
}

/// Adds a follow-up item to an incident, open or resolved (members of its team); the team page
/// lists it until it is done.
#[utoipa::path(post, path = "/api/incidents/{id}/follow-ups", tag = "reports", request_body = NewFollowUp,
    responses((status = 201, body = FollowUp),
              (status = 400, body = ErrorBody, description = "no text or over 500 characters, or an owner who is not a member of the team; nothing is stored"),
              (status = 409, body = ErrorBody, description = "the incident has 50 follow-up items")))]
pub async fn add_follow_up(
    State(s): State<AppState>,
    Caller(a): Caller,
    Path(id): Path<i64>,
    Body(b): Body<NewFollowUp>,
) -> ApiResult<(StatusCode, Json<FollowUp>)> {
    Ok((
        StatusCode::CREATED,
        Json(s.core.add_follow_up(&a, id, b).await?),
    ))
}

/// Ticks a follow-up item off (`done: true`) or back on (members of its team).
#[utoipa::path(patch, path = "/api/follow-ups/{id}", tag = "reports", request_body = FollowUpDone,
    responses((status = 200, body = FollowUp)))]
pub async fn set_follow_up(
    State(s): State<AppState>,
    Caller(a): Caller,
    Path(id): Path<i64>,
    Body(b): Body<FollowUpDone>,
) -> ApiResult<Json<FollowUp>> {
    Ok(Json(s.core.set_follow_up_done(&a, id, b.done).await?))
}

/// Removes a follow-up item (members of its team).
#[utoipa::path(delete, path = "/api/follow-ups/{id}", tag = "reports", responses((status = 204)))]
pub async fn delete_follow_up(
    State(s): State<AppState>,
    Caller(a): Caller,
    Path(id): Path<i64>,
) -> ApiResult<StatusCode> {
    s.core.delete_follow_up(&a, id).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// The team's follow-up items not done yet, oldest first (members of the team).
#[utoipa::path(get, path = "/api/teams/{team_id}/follow-ups", tag = "reports",
    responses((status = 200, body = Vec<FollowUp>)))]
pub async fn open_follow_ups(
    State(s): State<AppState>,
    Caller(a): Caller,
    Path(team_id): Path<i64>,
) -> ApiResult<Json<Vec<FollowUp>>> {
    Ok(Json(s.core.open_follow_ups(&a, team_id).await?))
}
