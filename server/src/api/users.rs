//! Users, their passwords, push topics and API keys.

use crate::error::ApiResult;
use crate::extract::{Body, Caller, Path, Query};
use crate::AppState;
use axum::extract::State;
use axum::http::StatusCode;
use axum::Json;
use klaxon_core::accounts::NewUser;
use klaxon_domain::account::{ApiKeyInfo, NewApiKey, User};
use klaxon_domain::ids::{KeyId, UserId};
use klaxon_domain::text::{Label, Topic};
use klaxon_domain::ErrorBody;
use serde::Deserialize;

#[derive(Deserialize, utoipa::IntoParams)]
pub struct UserQuery {
    /// Exact username to look up.
    username: Option<String>,
}

/// The roster: every user, open to any authenticated caller. `push_topic` appears only on the
/// caller's own entry (on every entry for an administrator).
/// The roster as the caller may see it: administrators and instance-scoped service accounts see
/// every account; anyone else sees themselves and the people and service accounts of their
/// teams, and finds any person (never another team's service account) by exact `username`.
#[utoipa::path(get, path = "/api/users", tag = "users", params(UserQuery), responses((status = 200, body = Vec<User>)))]
pub async fn list_users(
    State(s): State<AppState>,
    Caller(a): Caller,
    Query(q): Query<UserQuery>,
) -> ApiResult<Json<Vec<User>>> {
    Ok(Json(s.core.list_users(&a, q.username.as_deref()).await?))
}

/// Creates a user (administrator, human only).
#[utoipa::path(post, path = "/api/users", tag = "users", request_body = NewUser,
    responses((status = 201, body = User), (status = 409, body = ErrorBody, description = "username taken"),
              (status = 503, body = ErrorBody, description = "the database is unavailable, or too many passwords are being hashed at once (`Retry-After`)")))]
pub async fn create_user(
    State(s): State<AppState>,
    Caller(a): Caller,
    Body(new): Body<NewUser>,
) -> ApiResult<(StatusCode, Json<User>)> {
    Ok((
        StatusCode::CREATED,
        Json(s.core.create_user(&a, new).await?),
    ))
}

/// One account, when the roster shows it to the caller without a name to look for; else 404.
#[utoipa::path(get, path = "/api/users/{id}", tag = "users", responses((status = 200, body = User), (status = 404, body = ErrorBody, description = "no such account, or one the caller's roster does not show")))]
pub async fn get_user(
    State(s): State<AppState>,
    Caller(a): Caller,
    Path(id): Path<i64>,
) -> ApiResult<Json<User>> {
    Ok(Json(s.core.get_user(&a, id).await?))
}

/// Deletes a user (administrator, human only); never oneself or the last administrator (409).
#[utoipa::path(delete, path = "/api/users/{id}", tag = "users", responses((status = 204), (status = 409, body = ErrorBody)))]
pub async fn delete_user(
    State(s): State<AppState>,
    Caller(a): Caller,
    Path(id): Path<i64>,
) -> ApiResult<StatusCode> {
    s.core.delete_user(&a, id).await?;
    Ok(StatusCode::NO_CONTENT)
}

#[derive(Deserialize, utoipa::ToSchema)]
pub struct PasswordChange {
    /// At least 8 characters, at most 1024 bytes.
    #[schema(min_length = 8, max_length = 1024)]
    password: String,
    /// Required when changing one's own password.
    current_password: Option<String>,
}

/// Sets a password (self or administrator). Ends the user's other sessions. A wrong
/// `current_password` counts as a failed sign-in of the user.
#[utoipa::path(put, path = "/api/users/{id}/password", tag = "users", request_body = PasswordChange,
    responses((status = 204), (status = 400, body = ErrorBody, description = "password too short or long, current_password missing or wrong"),
              (status = 401, body = ErrorBody), (status = 403, body = ErrorBody, description = "neither the user nor an administrator, or a service account on either side"),
              (status = 404, body = ErrorBody), (status = 429, body = ErrorBody, description = "too many failed sign-ins or current-password guesses for this username or address"),
              (status = 503, body = ErrorBody, description = "the database is unavailable, or too many passwords are being hashed at once (`Retry-After`)")))]
pub async fn change_password(
    State(s): State<AppState>,
    Caller(a): Caller,
    Path(id): Path<i64>,
    Body(b): Body<PasswordChange>,
) -> ApiResult<StatusCode> {
    s.core
        .change_password(&a, id, &b.password, b.current_password.as_deref())
        .await?;
    Ok(StatusCode::NO_CONTENT)
}

#[derive(Deserialize, utoipa::ToSchema)]
pub struct PushTopic {
    /// Empty clears it.
    push_topic: Topic,
}

#[utoipa::path(put, path = "/api/users/{id}/push-topic", tag = "users", request_body = PushTopic,
    responses((status = 200, body = User), (status = 403, body = ErrorBody, description = "neither the person nor an administrator, or a service account on either side")))]
pub async fn set_push_topic(
    State(s): State<AppState>,
    Caller(a): Caller,
    Path(id): Path<i64>,
    Body(b): Body<PushTopic>,
) -> ApiResult<Json<User>> {
    Ok(Json(s.core.set_push_topic(&a, id, &b.push_topic).await?))
}

#[derive(Deserialize, utoipa::ToSchema)]
pub struct Disabled {
    disabled: bool,
}

/// Disables or re-enables a user (administrator). Disabling ends every session at once.
#[utoipa::path(put, path = "/api/users/{id}/disabled", tag = "users", request_body = Disabled, responses((status = 200, body = User), (status = 409, body = ErrorBody)))]
pub async fn set_disabled(
    State(s): State<AppState>,
    Caller(a): Caller,
    Path(id): Path<i64>,
    Body(b): Body<Disabled>,
) -> ApiResult<Json<User>> {
    Ok(Json(s.core.set_disabled(&a, id, b.disabled).await?))
}

#[derive(Deserialize, utoipa::ToSchema)]
pub struct Admin {
    is_admin: bool,
}

/// Grants or revokes the administrator flag (administrator, human only).
#[utoipa::path(put, path = "/api/users/{id}/admin", tag = "users", request_body = Admin, responses((status = 200, body = User), (status = 409, body = ErrorBody)))]
pub async fn set_admin(
    State(s): State<AppState>,
    Caller(a): Caller,
    Path(id): Path<i64>,
    Body(b): Body<Admin>,
) -> ApiResult<Json<User>> {
    Ok(Json(s.core.set_admin(&a, id, b.is_admin).await?))
}

#[utoipa::path(get, path = "/api/users/{id}/api-keys", tag = "users",
    responses((status = 200, body = Vec<ApiKeyInfo>), (status = 403, body = ErrorBody, description = "neither the person nor an administrator, or a service account on either side (its keys are under `/api/service-accounts`)")))]
pub async fn list_api_keys(
    State(s): State<AppState>,
    Caller(a): Caller,
    Path(id): Path<i64>,
) -> ApiResult<Json<Vec<ApiKeyInfo>>> {
    Ok(Json(s.core.list_api_keys(&a, id).await?))
}

#[derive(Deserialize, utoipa::ToSchema)]
pub struct KeyName {
    name: Label,
}

/// Mints an API key (self or administrator); the raw key is in this answer only.
#[utoipa::path(post, path = "/api/users/{id}/api-keys", tag = "users", request_body = KeyName,
    responses((status = 201, body = NewApiKey), (status = 403, body = ErrorBody, description = "neither the person nor an administrator, or a service account on either side (its keys are under `/api/service-accounts`)")))]
pub async fn create_api_key(
    State(s): State<AppState>,
    Caller(a): Caller,
    Path(id): Path<i64>,
    Body(b): Body<KeyName>,
) -> ApiResult<(StatusCode, Json<NewApiKey>)> {
    Ok((
        StatusCode::CREATED,
        Json(s.core.create_api_key(&a, id, &b.name).await?),
    ))
}

#[utoipa::path(delete, path = "/api/users/{id}/api-keys/{key_id}", tag = "users",
    responses((status = 204), (status = 403, body = ErrorBody, description = "neither the person nor an administrator, or a service account on either side"), (status = 404, body = ErrorBody)))]
pub async fn delete_api_key(
    State(s): State<AppState>,
    Caller(a): Caller,
    Path((id, key_id)): Path<(i64, i64)>,
) -> ApiResult<StatusCode> {
    s.core.delete_api_key(&a, UserId(id), KeyId(key_id)).await?;
    Ok(StatusCode::NO_CONTENT)
}
