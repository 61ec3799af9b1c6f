//! A team's record over a range as JSON or CSV (`klaxon_core::exports`): its incidents, pages and
//! alerts, a page of rows at a time. CSV cells a sender or a person wrote that a spreadsheet
//! would run as a formula are shown as text (`domain::export::csv_text`).

use crate::error::ApiResult;
use crate::extract::{Caller, Path, Query};
use crate::AppState;
use axum::extract::State;
use axum::http::header;
use axum::response::{IntoResponse, Response};
use axum::Json;
use klaxon_core::exports::ExportQuery;
use klaxon_domain::export::{csv_text, AlertRecord, Export, IncidentRecord, PageRecord};
use klaxon_domain::Timestamp;
use serde::{Deserialize, Serialize};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(incidents))
        .routes(routes!(pages))
        .routes(routes!(alerts))
}

/// The header naming the next page's `after` in a CSV answer (JSON has `next_after`).
pub const NEXT_AFTER: &str = "klaxon-next-after";

#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ExportParams {
    /// RFC 3339 time, inclusive; 30 days before `to` when absent.
    #[param(format = DateTime)]
    from: Option<String>,
    /// RFC 3339 time, exclusive; up to now when absent. At most 366 days after `from`.
    #[param(format = DateTime)]
    to: Option<String>,
    /// The last id of the page before (`next_after`); 0 for the first page.
    #[param(minimum = 0)]
    after: Option<i64>,
    /// Rows per page, 1 to 1000 (500 by default).
    #[param(minimum = 1, maximum = 1000)]
    limit: Option<i64>,
    /// `json` (the default) or `csv` (with a header row; the next page's `after` in the
    /// `Klaxon-Next-After` header).
    #[param(inline)]
    format: Option<Format>,
}

#[derive(Deserialize, Clone, Copy, PartialEq, Eq, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    Json,
    Csv,
}

pub(crate) fn time(name: &str, v: &Option<String>) -> Result<Option<i64>, klaxon_core::Error> {
    v.as_deref()
        .map(|s| {
            Timestamp::parse(s).map(|t| t.0).ok_or_else(|| {
                klaxon_core::Error::Invalid(format!("{name}: must be an RFC 3339 time"))
            })
        })
        .transpose()
}

impl ExportParams {
    fn query(&self) -> Result<ExportQuery, klaxon_core::Error> {
        Ok(ExportQuery {
            from: time("from", &self.from)?,
            to: time("to", &self.to)?,
            after: self.after,
            limit: self.limit,
        })
    }
}

/// The page as JSON, or as CSV of `cells` (each row's text made safe for a spreadsheet).
fn answer<T: Serialize>(page: Export<T>, format: Option<Format>, cells: fn(T) -> T) -> Response {
    if format != Some(Format::Csv) {
        return Json(page).into_response();
    }
    let mut csv = csv::Writer::from_writer(Vec::new());
    let mut failed = false;
    for row in page.rows {
        failed |= csv.serialize(cells(row)).is_err();
    }
    let body = csv.into_inner().unwrap_or_default();
    if failed {
        let why = klaxon_core::Error::Internal("a row could not be written as CSV".into());
        return crate::error::ApiError(why).into_response();
    }
    let mut response = ([(header::CONTENT_TYPE, "text/csv; charset=utf-8")], body).into_response();
    if let Some(next) = page.next_after {
        if let Ok(v) = next.to_string().parse() {
            response.headers_mut().insert(NEXT_AFTER, v);
        }
    }
    response
}

/// Incidents of the team opened in the range, oldest first, a page at a time (members of the
/// team). 400 for a range over 366 days or backwards, a bad time, `after` or `limit`.
#[utoipa::path(get, path = "/api/teams/{team_id}/export/incidents", tag = "reports", params(("team_id" = i64, Path), ExportParams),
    responses((status = 200, description = "A page of incidents", content(
        (Export<IncidentRecord> = "application/json"),
        (String = "text/csv", example = "id,title,severity,state,opened_at,…"),
    ))))]
pub async fn incidents(
    State(s): State<AppState>,
    Caller(a): Caller,
    Path(team_id): Path<i64>,
    Query(p): Query<ExportParams>,
) -> ApiResult<Response> {
    let page = s.core.export_incidents(&a, team_id, p.query()?).await?;
    Ok(answer(page, p.format, |r| IncidentRecord {
        title: csv_text(&r.title),
        ..r
    }))
}

/// Pages queued for the team in the range (its incidents' pages and its hand-off notices),
/// oldest first, a page at a time (members of the team).
#[utoipa::path(get, path = "/api/teams/{team_id}/export/pages", tag = "reports", params(("team_id" = i64, Path), ExportParams),
    responses((status = 200, description = "A page of pages", content(
        (Export<PageRecord> = "application/json"),
        (String = "text/csv", example = "id,incident_id,kind,person,road,state,…"),
    ))))]
pub async fn pages(
    State(s): State<AppState>,
    Caller(a): Caller,
    Path(team_id): Path<i64>,
    Query(p): Query<ExportParams>,
) -> ApiResult<Response> {
    let page = s.core.export_pages(&a, team_id, p.query()?).await?;
    Ok(answer(page, p.format, |r| PageRecord {
        error: r.error.as_deref().map(csv_text),
        ..r
    }))
}

/// Alerts of the team last received in the range, oldest first, a page at a time (members of
/// the team).
#[utoipa::path(get, path = "/api/teams/{team_id}/export/alerts", tag = "reports", params(("team_id" = i64, Path), ExportParams),
    responses((status = 200, description = "A page of alerts", content(
        (Export<AlertRecord> = "application/json"),
        (String = "text/csv", example = "id,incident_id,alertname,fingerprint,status,…"),
    ))))]
pub async fn alerts(
    State(s): State<AppState>,
    Caller(a): Caller,
    Path(team_id): Path<i64>,
    Query(p): Query<ExportParams>,
) -> ApiResult<Response> {
    let page = s.core.export_alerts(&a, team_id, p.query()?).await?;
    Ok(answer(page, p.format, |r| AlertRecord {
        alertname: csv_text(&r.alertname),
        integration: r.integration.as_deref().map(csv_text),
        ..r
    }))
}
