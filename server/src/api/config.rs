//! The configuration as a file: `klaxon export` and the team page's "Export as file" read it
//! here (`core::config`); `klaxon apply` writes it through the other endpoints.

use crate::error::ApiResult;
use crate::extract::{Caller, Path, Query};
use crate::AppState;
use axum::extract::State;
use axum::http::header;
use axum::response::{IntoResponse, Response};
use axum::Json;
use klaxon_domain::config::ConfigFile;
use serde::Deserialize;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

/// The export endpoints.
pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(export))
        .routes(routes!(export_team))
}

#[derive(Deserialize, Default, Clone, Copy, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    #[default]
    Json,
    Yaml,
}

#[derive(Deserialize, utoipa::IntoParams)]
pub struct ExportQuery {
    /// `json` (default) or `yaml`, the file as `klaxon apply` reads it, as a download.
    #[param(inline)]
    format: Option<Format>,
}

/// `Date` is the server's clock, which `klaxon diff` and `apply` plan by: a maintenance
/// window or cover of the file that has begun by then is made from now.
fn answer(file: ConfigFile, format: Option<Format>, name: &str, now: i64) -> Response {
    let date = jiff::Timestamp::from_second(now)
        .ok()
        .and_then(|t| {
            jiff::fmt::rfc2822::DateTimePrinter::new()
                .timestamp_to_rfc9110_string(&t)
                .ok()
        })
        .and_then(|d| header::HeaderValue::try_from(d).ok());
    let mut res = match format.unwrap_or_default() {
        Format::Json => Json(file).into_response(),
        Format::Yaml => (
            [
                (
                    header::CONTENT_TYPE,
                    "application/yaml; charset=utf-8".to_string(),
                ),
                (
                    header::CONTENT_DISPOSITION,
                    format!("attachment; filename=\"{name}.yaml\""),
                ),
            ],
            crate::config_file::yaml::write(&file),
        )
            .into_response(),
    };
    if let Some(date) = date {
        res.headers_mut().insert(header::DATE, date);
    }
    res
}

/// Every team's set-up and the install's settings, as the file `klaxon apply` reads (an
/// administrator or an instance-scoped service account). People are named by username; no
/// secret is included (a webhook channel's URL becomes the name of an environment variable).
#[utoipa::path(get, path = "/api/config", tag = "config", params(ExportQuery),
    responses((status = 200, description = "The file: JSON, or YAML with `format=yaml`", content((ConfigFile = "application/json"), (ConfigFile = "application/yaml")),
        headers(("Date" = String, description = "The server's clock (RFC 9110), which a plan measures what has begun by")))))]
pub async fn export(
    State(s): State<AppState>,
    Caller(a): Caller,
    Query(q): Query<ExportQuery>,
) -> ApiResult<Response> {
    let file = s.core.export_config(&a).await?;
    Ok(answer(file, q.format, "klaxon", s.core.now()))
}

/// One team's set-up as a file of its own (any member).
#[utoipa::path(get, path = "/api/teams/{team_id}/config", tag = "config", params(ExportQuery),
    responses((status = 200, description = "The file: JSON, or YAML with `format=yaml`", content((ConfigFile = "application/json"), (ConfigFile = "application/yaml")),
        headers(("Date" = String, description = "The server's clock (RFC 9110), which a plan measures what has begun by")))))]
pub async fn export_team(
    State(s): State<AppState>,
    Caller(a): Caller,
    Path(team_id): Path<i64>,
    Query(q): Query<ExportQuery>,
) -> ApiResult<Response> {
    let file = s.core.export_team_config(&a, team_id).await?;
    let name = file.teams[0].name.clone();
    Ok(answer(file, q.format, &name, s.core.now()))
}
