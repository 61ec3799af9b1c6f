//! Service accounts and their keys.

use crate::error::ApiResult;
use crate::extract::{Body, Caller, Path};
use crate::AppState;
use axum::extract::State;
use axum::http::StatusCode;
use axum::Json;
use klaxon_domain::account::{ApiKeyInfo, NewApiKey, User};
use klaxon_domain::ids::{KeyId, UserId};
use klaxon_domain::text::{Label, Username};
use klaxon_domain::ErrorBody;
use serde::Deserialize;

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ServiceAccountRequest {
    /// The account's name, its username, unique among users.
    name: Username,
}

/// Creates a service account bound to the team: owner-equivalent there, blind elsewhere. Team
/// owners, administrators, the team's own service accounts and instance-scoped ones may.
#[utoipa::path(post, path = "/api/teams/{team_id}/service-accounts", tag = "service accounts", request_body = ServiceAccountRequest,
    responses((status = 201, body = User), (status = 400, body = ErrorBody, description = "a bad name"),
              (status = 401, body = ErrorBody), (status = 403, body = ErrorBody, description = "not an owner of the team"),
              (status = 404, body = ErrorBody), (status = 409, body = ErrorBody, description = "the name is taken")))]
pub async fn create_for_team(
    State(s): State<AppState>,
    Caller(a): Caller,
    Path(team_id): Path<i64>,
    Body(b): Body<ServiceAccountRequest>,
) -> ApiResult<(StatusCode, Json<User>)> {
    let user = s
        .core
        .create_team_service_account(&a, team_id, &b.name)
        .await?;
    Ok((StatusCode::CREATED, Json(user)))
}

/// The team's service accounts.
#[utoipa::path(get, path = "/api/teams/{team_id}/service-accounts", tag = "service accounts",
    responses((status = 200, body = Vec<User>), (status = 401, body = ErrorBody),
              (status = 403, body = ErrorBody, description = "not an owner of the team"), (status = 404, body = ErrorBody)))]
pub async fn list_for_team(
    State(s): State<AppState>,
    Caller(a): Caller,
    Path(team_id): Path<i64>,
) -> ApiResult<Json<Vec<User>>> {
    Ok(Json(s.core.list_team_service_accounts(&a, team_id).await?))
}

/// Creates an instance-scoped service account (administrators, human accounts only): it may
/// create teams and manage every team's service accounts, and nothing of users.
#[utoipa::path(post, path = "/api/service-accounts", tag = "service accounts", request_body = ServiceAccountRequest,
    responses((status = 201, body = User), (status = 400, body = ErrorBody, description = "a bad name"),
              (status = 401, body = ErrorBody), (status = 403, body = ErrorBody, description = "not an administrator, or not a human account"),
              (status = 409, body = ErrorBody, description = "the name is taken")))]
pub async fn create_instance(
    State(s): State<AppState>,
    Caller(a): Caller,
    Body(b): Body<ServiceAccountRequest>,
) -> ApiResult<(StatusCode, Json<User>)> {
    let user = s.core.create_instance_service_account(&a, &b.name).await?;
    Ok((StatusCode::CREATED, Json(user)))
}

#[derive(Deserialize, utoipa::ToSchema, Default)]
#[serde(deny_unknown_fields)]
pub struct ServiceKeyRequest {
    /// A label for the key (default `default`).
    name: Option<Label>,
}

/// Mints a key for a service account; the raw key is in this answer only. A team-scoped
/// account's keys: whoever may manage that team's accounts; an instance-scoped one's:
/// administrators in person.
#[utoipa::path(post, path = "/api/service-accounts/{user_id}/api-keys", tag = "service accounts", request_body = ServiceKeyRequest,
    responses((status = 201, body = NewApiKey), (status = 400, body = ErrorBody, description = "a bad key name"),
              (status = 401, body = ErrorBody), (status = 403, body = ErrorBody, description = "may not manage this account"),
              (status = 404, body = ErrorBody, description = "no such service account")))]
pub async fn create_key(
    State(s): State<AppState>,
    Caller(a): Caller,
    Path(user_id): Path<i64>,
    Body(b): Body<ServiceKeyRequest>,
) -> ApiResult<(StatusCode, Json<NewApiKey>)> {
    let key = s
        .core
        .create_service_key(&a, user_id, b.name.as_ref())
        .await?;
    Ok((StatusCode::CREATED, Json(key)))
}

/// A service account's keys, newest first (never the secrets).
#[utoipa::path(get, path = "/api/service-accounts/{user_id}/api-keys", tag = "service accounts",
    responses((status = 200, body = Vec<ApiKeyInfo>), (status = 401, body = ErrorBody),
              (status = 403, body = ErrorBody, description = "may not manage this account"),
              (status = 404, body = ErrorBody, description = "no such service account")))]
pub async fn list_keys(
    State(s): State<AppState>,
    Caller(a): Caller,
    Path(user_id): Path<i64>,
) -> ApiResult<Json<Vec<ApiKeyInfo>>> {
    Ok(Json(s.core.list_service_keys(&a, user_id).await?))
}

/// Revokes a service account's key.
#[utoipa::path(delete, path = "/api/service-accounts/{user_id}/api-keys/{key_id}", tag = "service accounts",
    responses((status = 204), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody, description = "may not manage this account"),
              (status = 404, body = ErrorBody, description = "no such service account or key")))]
pub async fn delete_key(
    State(s): State<AppState>,
    Caller(a): Caller,
    Path((user_id, key_id)): Path<(i64, i64)>,
) -> ApiResult<StatusCode> {
    s.core
        .delete_service_key(&a, UserId(user_id), KeyId(key_id))
        .await?;
    Ok(StatusCode::NO_CONTENT)
}
