//! Health and version.

use crate::error::ApiResult;
use crate::AppState;
use axum::extract::{MatchedPath, Request, State};
use axum::http::{header, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::Json;
use klaxon_core::health::Health;
use klaxon_core::Error;
use klaxon_domain::ErrorBody;
use serde::Serialize;
use std::time::Instant;

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

#[utoipa::path(get, path = "/api/version", security(()), tag = "operations", responses((status = 200, body = VersionInfo)))]
pub async fn version() -> Json<VersionInfo> {
    Json(VERSION)
}

/// How long `/healthz` waits on the database. Kubernetes probes give up after 1 s by default and
/// retry; an answer that waited on the pool's 10 s acquire timeout would never reach them.
const HEALTH_WITHIN: std::time::Duration = std::time::Duration::from_secs(2);

/// `GET /healthz`, no credential: 200 `ok`, or 200 `degraded` with reasons when paging is
/// stuck (a page overdue, a loop stalled); 503 `unavailable` in the error shape when the
/// database does not answer within 2 s.
#[utoipa::path(get, path = "/healthz", security(()), tag = "operations", responses(
    (status = 200, body = Health, description = "`ok`, or `degraded` with the reasons"),
    (status = 503, body = ErrorBody, description = "The database does not answer; the body also has `status: unavailable`")))]
pub async fn healthz(State(state): State<AppState>) -> Response {
    let check = async {
        state.core.db.ping().await?;
        state.core.health().await
    };
    let checked = match tokio::time::timeout(HEALTH_WITHIN, check).await {
        Ok(checked) => checked,
        Err(_) => Err(Error::Unavailable(
            "the database did not answer within 2 s".into(),
        )),
    };
    match checked {
        Ok(health) => Json(health).into_response(),
        Err(e) => {
            let body = Error::Unavailable(e.to_string()).body();
            let mut json = serde_json::to_value(&body).unwrap_or_default();
            json["status"] = "unavailable".into();
            (StatusCode::SERVICE_UNAVAILABLE, Json(json)).into_response()
        }
    }
}

/// `GET /metrics`: Prometheus text exposition, no credential.
#[utoipa::path(get, path = "/metrics", security(()), tag = "operations", responses(
    (status = 200, body = String, content_type = "application/openmetrics-text"),
    (status = 503, body = ErrorBody, description = "The database does not answer")))]
pub async fn metrics(State(state): State<AppState>) -> ApiResult<Response> {
    let text = state.core.metrics_text().await?;
    Ok((
        [(
            header::CONTENT_TYPE,
            "application/openmetrics-text; version=1.0.0; charset=utf-8",
        )],
        text,
    )
        .into_response())
}

/// Counts every answered request by method, route template and status. A method outside
/// HTTP's standard set is refused here, before routing, and counted as `other`, so no client
/// can grow the label set.
pub async fn record_request(State(state): State<AppState>, req: Request, next: Next) -> Response {
    let started = Instant::now();
    let Some(method) = standard_method(req.method()) else {
        let res = crate::unknown_method();
        state.core.metrics.request(
            "other",
            "unmatched",
            res.status().as_u16(),
            started.elapsed(),
        );
        return res;
    };
    let route = req
        .extensions()
        .get::<MatchedPath>()
        .map_or("unmatched", |p| p.as_str())
        .to_string();
    let res = next.run(req).await;
    state
        .core
        .metrics
        .request(method, &route, res.status().as_u16(), started.elapsed());
    res
}

/// The method's name when it is one of HTTP's standard methods.
fn standard_method(method: &axum::http::Method) -> Option<&'static str> {
    [
        "GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "CONNECT", "TRACE",
    ]
    .into_iter()
    .find(|m| *m == method.as_str())
}
