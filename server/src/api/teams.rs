//! Teams and members.

use crate::error::ApiResult;
use crate::extract::{Body, Caller, Path, Query};
use crate::AppState;
use axum::extract::State;
use axum::http::StatusCode;
use axum::Json;
use klaxon_domain::ids::{TeamId, UserId};
use klaxon_domain::team::{Member, OidcMapping, Role, Team};
use klaxon_domain::text::{LabelOrBlank, TeamName};
use klaxon_domain::ErrorBody;
use serde::Deserialize;

#[derive(Deserialize, utoipa::IntoParams)]
pub struct TeamQuery {
    /// Look a team up by its name.
    name: Option<String>,
}

/// The caller's teams.
#[utoipa::path(get, path = "/api/teams", tag = "teams", params(TeamQuery), responses((status = 200, body = Vec<Team>)))]
pub async fn list_teams(
    State(s): State<AppState>,
    Caller(a): Caller,
    Query(q): Query<TeamQuery>,
) -> ApiResult<Json<Vec<Team>>> {
    Ok(Json(s.core.list_teams(&a, q.name.as_deref()).await?))
}

#[derive(Deserialize, utoipa::ToSchema)]
pub struct NewTeam {
    name: TeamName,
    /// The name when left out or blank.
    display_name: Option<LabelOrBlank>,
}

/// Creates a team; a human creator becomes its owner.
#[utoipa::path(post, path = "/api/teams", tag = "teams", request_body = NewTeam,
    responses((status = 201, body = Team), (status = 409, body = ErrorBody, description = "name taken")))]
pub async fn create_team(
    State(s): State<AppState>,
    Caller(a): Caller,
    Body(b): Body<NewTeam>,
) -> ApiResult<(StatusCode, Json<Team>)> {
    Ok((
        StatusCode::CREATED,
        Json(
            s.core
                .create_team(&a, &b.name, b.display_name.and_then(|d| d.label()).as_ref())
                .await?,
        ),
    ))
}

/// Replaces the team's single sign-on group mapping (owner): members of `member_groups` join
/// the team, members of `owner_groups` own it, at their next single sign-on.
#[utoipa::path(put, path = "/api/teams/{team_id}/oidc", tag = "teams", request_body = OidcMapping,
    responses((status = 200, body = Team),
              (status = 400, body = ErrorBody, description = "more than 50 groups per role, or a group empty, over 256 characters or with control characters"),
              (status = 401, body = ErrorBody), (status = 403, body = ErrorBody, description = "not an owner of the team"),
              (status = 404, body = ErrorBody)))]
pub async fn set_oidc_mapping(
    State(s): State<AppState>,
    Caller(a): Caller,
    Path(team_id): Path<i64>,
    Body(b): Body<OidcMapping>,
) -> ApiResult<Json<Team>> {
    Ok(Json(s.core.set_oidc_mapping(&a, team_id, &b).await?))
}

#[utoipa::path(get, path = "/api/teams/{team_id}", tag = "teams", responses((status = 200, body = Team), (status = 404, body = ErrorBody)))]
pub async fn get_team(
    State(s): State<AppState>,
    Caller(a): Caller,
    Path(team_id): Path<i64>,
) -> ApiResult<Json<Team>> {
    Ok(Json(s.core.get_team(&a, team_id).await?))
}

/// A team's new display name (`Rename` is an integration's).
#[derive(Deserialize, utoipa::ToSchema)]
#[schema(as = TeamRename)]
pub struct Rename {
    /// Blank shows the team by its name.
    display_name: LabelOrBlank,
}

#[utoipa::path(put, path = "/api/teams/{team_id}", tag = "teams", request_body = Rename, responses((status = 200, body = Team)))]
pub async fn rename_team(
    State(s): State<AppState>,
    Caller(a): Caller,
    Path(team_id): Path<i64>,
    Body(b): Body<Rename>,
) -> ApiResult<Json<Team>> {
    Ok(Json(
        s.core
            .rename_team(&a, team_id, b.display_name.label().as_ref())
            .await?,
    ))
}

#[utoipa::path(delete, path = "/api/teams/{team_id}", tag = "teams", responses((status = 204)))]
pub async fn delete_team(
    State(s): State<AppState>,
    Caller(a): Caller,
    Path(team_id): Path<i64>,
) -> ApiResult<StatusCode> {
    s.core.delete_team(&a, team_id).await?;
    Ok(StatusCode::NO_CONTENT)
}

#[utoipa::path(get, path = "/api/teams/{team_id}/members", tag = "teams", responses((status = 200, body = Vec<Member>)))]
pub async fn list_members(
    State(s): State<AppState>,
    Caller(a): Caller,
    Path(team_id): Path<i64>,
) -> ApiResult<Json<Vec<Member>>> {
    Ok(Json(s.core.list_members(&a, team_id).await?))
}

#[derive(Deserialize, utoipa::ToSchema)]
pub struct NewMember {
    user_id: i64,
    /// `member` (default) or `owner`.
    role: Option<Role>,
}

#[utoipa::path(post, path = "/api/teams/{team_id}/members", tag = "teams", request_body = NewMember,
    responses((status = 201, body = Member), (status = 400, body = ErrorBody, description = "no such user, or a service account (which cannot be a member)"),
              (status = 409, body = ErrorBody, description = "already a member")))]
pub async fn add_member(
    State(s): State<AppState>,
    Caller(a): Caller,
    Path(team_id): Path<i64>,
    Body(b): Body<NewMember>,
) -> ApiResult<(StatusCode, Json<Member>)> {
    let m = s
        .core
        .add_member(
            &a,
            TeamId(team_id),
            UserId(b.user_id),
            b.role.unwrap_or(Role::Member),
        )
        .await?;
    Ok((StatusCode::CREATED, Json(m)))
}

#[derive(Deserialize, utoipa::ToSchema)]
pub struct RoleChange {
    role: Role,
}

/// Changes a member's role; the last owner cannot be demoted (409).
#[utoipa::path(put, path = "/api/teams/{team_id}/members/{user_id}", tag = "teams", request_body = RoleChange,
    responses((status = 200, body = Member), (status = 409, body = ErrorBody)))]
pub async fn set_member_role(
    State(s): State<AppState>,
    Caller(a): Caller,
    Path((team_id, user_id)): Path<(i64, i64)>,
    Body(b): Body<RoleChange>,
) -> ApiResult<Json<Member>> {
    Ok(Json(
        s.core
            .set_member_role(&a, TeamId(team_id), UserId(user_id), b.role)
            .await?,
    ))
}

/// Removes a member (owner), or leaves the team (self); the last owner stays (409).
#[utoipa::path(delete, path = "/api/teams/{team_id}/members/{user_id}", tag = "teams", responses((status = 204), (status = 409, body = ErrorBody)))]
pub async fn remove_member(
    State(s): State<AppState>,
    Caller(a): Caller,
    Path((team_id, user_id)): Path<(i64, i64)>,
) -> ApiResult<StatusCode> {
    s.core
        .remove_member(&a, TeamId(team_id), UserId(user_id))
        .await?;
    Ok(StatusCode::NO_CONTENT)
}
