//! Invite links and sign-up.

use crate::error::ApiResult;
use crate::extract::{Body, Caller, Path, Query, Request};
use crate::AppState;
use axum::extract::State;
use axum::http::{header, StatusCode};
use axum::response::{AppendHeaders, IntoResponse};
use axum::Json;
use klaxon_domain::account::{MyTeam, User};
use klaxon_domain::ids::{InviteId, TeamId};
use klaxon_domain::invite::{Invite, NewInvite, SignupCheck};
use klaxon_domain::team::Role;
use klaxon_domain::text::Username;
use klaxon_domain::ErrorBody;
use serde::{Deserialize, Serialize};

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct InviteRequest {
    /// The role the link grants: `member` (default) or `owner`.
    role: Option<Role>,
    /// How many people may sign up with the link (default 1).
    #[schema(minimum = 1, maximum = 100)]
    max_uses: Option<i64>,
}

/// Creates an invite link into the team (team owner, administrator, or the team's service
/// account). It expires after 7 days; the token and URL are in this answer only.
#[utoipa::path(post, path = "/api/teams/{team_id}/invites", tag = "invites", request_body = InviteRequest,
    responses((status = 201, body = NewInvite),
              (status = 400, body = ErrorBody, description = "max_uses outside 1..100, or an unknown role"),
              (status = 401, body = ErrorBody), (status = 403, body = ErrorBody, description = "not an owner of the team"),
              (status = 404, body = ErrorBody, description = "no such team among the caller's")))]
pub async fn create(
    State(s): State<AppState>,
    Caller(a): Caller,
    Path(team_id): Path<i64>,
    Body(b): Body<InviteRequest>,
) -> ApiResult<(StatusCode, Json<NewInvite>)> {
    let invite = s
        .core
        .create_invite(&a, team_id, b.role, b.max_uses)
        .await?;
    Ok((StatusCode::CREATED, Json(invite)))
}

/// The team's invite links, newest first, with their state (never their tokens).
#[utoipa::path(get, path = "/api/teams/{team_id}/invites", tag = "invites",
    responses((status = 200, body = Vec<Invite>), (status = 401, body = ErrorBody),
              (status = 403, body = ErrorBody, description = "not an owner of the team"), (status = 404, body = ErrorBody)))]
pub async fn list(
    State(s): State<AppState>,
    Caller(a): Caller,
    Path(team_id): Path<i64>,
) -> ApiResult<Json<Vec<Invite>>> {
    Ok(Json(s.core.list_invites(&a, team_id).await?))
}

/// Revokes an invite link.
#[utoipa::path(delete, path = "/api/teams/{team_id}/invites/{invite_id}", tag = "invites",
    responses((status = 204), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody, description = "not an owner of the team"),
              (status = 404, body = ErrorBody, description = "no such link in this team"),
              (status = 409, body = ErrorBody, description = "already revoked")))]
pub async fn revoke(
    State(s): State<AppState>,
    Caller(a): Caller,
    Path((team_id, invite_id)): Path<(i64, i64)>,
) -> ApiResult<StatusCode> {
    s.core
        .revoke_invite(&a, TeamId(team_id), InviteId(invite_id))
        .await?;
    Ok(StatusCode::NO_CONTENT)
}

#[derive(Deserialize, utoipa::IntoParams)]
pub struct SignupQuery {
    /// The token of an invite link.
    invite: Option<String>,
}

/// What the sign-up page may offer (no credential). An expired, revoked, used-up or unknown
/// link gets exactly the answer of no link.
#[utoipa::path(get, path = "/api/signup", security(()), tag = "invites", params(SignupQuery), responses((status = 200, body = SignupCheck)))]
pub async fn check(
    State(s): State<AppState>,
    Query(q): Query<SignupQuery>,
) -> ApiResult<Json<SignupCheck>> {
    Ok(Json(s.core.signup_check(q.invite.as_deref()).await?))
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SignupRequest {
    username: Username,
    /// At least 8 characters, at most 1024 bytes.
    #[schema(min_length = 8, max_length = 1024)]
    password: String,
    /// An invite link's token; without one, sign-up works only when the install is open.
    invite: Option<String>,
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct SignupResponse {
    user: User,
}

/// Creates an account and signs it in (sets the `klaxon_session` cookie). With a usable link
/// the account joins the link's team with its role; without one, only an open install takes it,
/// into no team.
#[utoipa::path(post, path = "/api/signup", security(()), tag = "invites", request_body = SignupRequest,
    responses((status = 201, body = SignupResponse),
              (status = 400, body = ErrorBody, description = "a bad username or password (`invalid`), or an expired, revoked, used-up or unknown link (`invite_unusable`, one answer for all)"),
              (status = 403, body = ErrorBody, description = "no link while sign-up is invite-only, password sign-in turned off, or a browser's sign-up from another site"),
              (status = 409, body = ErrorBody, description = "the username is taken (the link's use is not counted)"),
              (status = 429, body = ErrorBody, description = "too many sign-ups from this address (`Retry-After`); every attempt counts before it is checked"),
              (status = 503, body = ErrorBody, description = "the database is unavailable, or too many passwords are being hashed at once (`Retry-After`)")))]
pub async fn signup(
    State(s): State<AppState>,
    request: Request,
    Body(b): Body<SignupRequest>,
) -> ApiResult<impl IntoResponse> {
    let started = s
        .core
        .signup(
            &request.presented(),
            &b.username,
            &b.password,
            b.invite.as_deref(),
        )
        .await?;
    let cookie = s.core.session_cookie(&started);
    Ok((
        StatusCode::CREATED,
        AppendHeaders([(header::SET_COOKIE, cookie)]),
        Json(SignupResponse { user: started.user }),
    ))
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct JoinRequest {
    /// The token of an invite link.
    #[schema(max_length = 256)]
    invite: String,
}

/// Joins the link's team with its role as the signed-in person, using one of its uses (for
/// someone who already has an account; sign-up does the same for a new one).
#[utoipa::path(post, path = "/api/invites/join", tag = "invites", request_body = JoinRequest,
    responses((status = 201, body = MyTeam),
              (status = 400, body = ErrorBody, description = "an expired, revoked, used-up or unknown link (`invite_unusable`, one answer for all)"),
              (status = 401, body = ErrorBody), (status = 403, body = ErrorBody, description = "a service account, which cannot be a member"),
              (status = 409, body = ErrorBody, description = "already a member of the team (the link's use is not counted)")))]
pub async fn join(
    State(s): State<AppState>,
    Caller(a): Caller,
    Body(b): Body<JoinRequest>,
) -> ApiResult<(StatusCode, Json<MyTeam>)> {
    Ok((
        StatusCode::CREATED,
        Json(s.core.join_by_invite(&a, &b.invite).await?),
    ))
}
