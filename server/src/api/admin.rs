//! Administrator listings and settings.

use crate::error::ApiResult;
use crate::extract::{Body, Caller};
use crate::AppState;
use axum::extract::State;
use axum::Json;
use klaxon_core::settings::AdminSettings;
use klaxon_domain::account::User;
use klaxon_domain::team::TeamSummary;
use klaxon_domain::ErrorBody;
use std::collections::BTreeMap;

#[utoipa::path(get, path = "/api/admin/users", tag = "admin", responses((status = 200, body = Vec<User>), (status = 403, body = ErrorBody)))]
pub async fn users(State(s): State<AppState>, Caller(a): Caller) -> ApiResult<Json<Vec<User>>> {
    Ok(Json(s.core.admin_list_users(&a).await?))
}

#[utoipa::path(get, path = "/api/admin/teams", tag = "admin", responses((status = 200, body = Vec<TeamSummary>), (status = 403, body = ErrorBody)))]
pub async fn teams(
    State(s): State<AppState>,
    Caller(a): Caller,
) -> ApiResult<Json<Vec<TeamSummary>>> {
    Ok(Json(s.core.admin_list_teams(&a).await?))
}

#[utoipa::path(get, path = "/api/admin/settings", tag = "admin", responses((status = 200, body = AdminSettings)))]
pub async fn get_settings(
    State(s): State<AppState>,
    Caller(a): Caller,
) -> ApiResult<Json<AdminSettings>> {
    Ok(Json(s.core.admin_settings(&a).await?))
}

/// Updates some settings. Every value is validated first; one bad value changes nothing.
#[utoipa::path(put, path = "/api/admin/settings", tag = "admin",
    request_body(content = Object, description = "settings to change, e.g. {\"stale_after\": \"2h\"}"),
    responses((status = 200, body = AdminSettings), (status = 400, body = ErrorBody)))]
pub async fn put_settings(
    State(s): State<AppState>,
    Caller(a): Caller,
    Body(update): Body<BTreeMap<String, serde_json::Value>>,
) -> ApiResult<Json<AdminSettings>> {
    Ok(Json(s.core.update_settings(&a, &update).await?))
}
