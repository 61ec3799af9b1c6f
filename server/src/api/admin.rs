//! Administrator listings and settings.

use crate::error::ApiResult;
use crate::extract::{Body, Caller};
use crate::AppState;
use axum::extract::State;
use axum::Json;
use klaxon_core::settings::AdminSettings;
use klaxon_domain::account::User;
use klaxon_domain::settings::{SignupMode, DURATION_SETTINGS, SIGNUP_MODE};
use klaxon_domain::team::TeamSummary;
use klaxon_domain::Duration;
use klaxon_domain::ErrorBody;
use std::collections::BTreeMap;
use utoipa::openapi::schema::{AdditionalProperties, ObjectBuilder, Schema};
use utoipa::openapi::RefOr;

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

/// `PUT /api/admin/settings` body: some of the settings by name, and nothing else. Each
/// duration's bounds are in the `GET` answer.
pub struct SettingsUpdate;

impl utoipa::PartialSchema for SettingsUpdate {
    fn schema() -> RefOr<Schema> {
        let object = ObjectBuilder::new()
            .property(SIGNUP_MODE, SignupMode::schema())
            .additional_properties(Some(AdditionalProperties::FreeForm(false)));
        DURATION_SETTINGS
            .iter()
            .fold(object, |object, (key, _, _)| {
                object.property(*key, Duration::schema())
            })
            .into()
    }
}

impl utoipa::ToSchema for SettingsUpdate {}

/// Updates some settings. Every value is validated first; one bad value changes nothing.
#[utoipa::path(put, path = "/api/admin/settings", tag = "admin",
    request_body(content = inline(SettingsUpdate), description = "settings to change, e.g. {\"stale_after\": \"2h\"}"),
    responses((status = 200, body = AdminSettings), (status = 400, body = ErrorBody)))]
pub async fn put_settings(
    State(s): State<AppState>,
    Caller(a): Caller,
    Body(update): Body<BTreeMap<String, serde_json::Value>>,
) -> ApiResult<Json<AdminSettings>> {
    Ok(Json(s.core.update_settings(&a, &update).await?))
}
