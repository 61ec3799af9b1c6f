//! Health and version.

use crate::error::ApiResult;
use crate::AppState;
use axum::extract::State;

use axum::Json;
use klaxon_core::Error;
use serde::Serialize;

#[derive(Serialize, utoipa::ToSchema)]
pub struct VersionInfo {
    pub version: &'static str,
    pub commit: &'static str,
    /// The oldest version that may run beside this one on the same database.
    pub min_replicas_version: &'static str,
}

pub const VERSION: VersionInfo = VersionInfo {
    version: env!("CARGO_PKG_VERSION"),
    commit: env!("KLAXON_COMMIT"),
    min_replicas_version: "0.1.0",
};

#[utoipa::path(get, path = "/api/version", tag = "operations", responses((status = 200, body = VersionInfo)))]
pub async fn version() -> Json<VersionInfo> {
    Json(VERSION)
}

/// `GET /healthz`: 200 when the database answers, 503 otherwise. No credential.
pub async fn healthz(State(state): State<AppState>) -> ApiResult<Json<serde_json::Value>> {
    // Any failure of the round trip is the database not answering, in the one error shape.
    state
        .core
        .db
        .ping()
        .await
        .map_err(|e| Error::Unavailable(e.to_string()))?;
    Ok(Json(serde_json::json!({"status": "ok"})))
}
