//! A team's record over a range, for a spreadsheet or another tool: its incidents, the pages
//! they sent and the alerts it received, as JSON or CSV, a page of rows at a time in the order
//! they were stored (`after` is the last id of the page before). A range is at most a year, so
//! one request never reads a team's whole history.

use crate::Timestamp;
use serde::{Deserialize, Serialize};

/// The longest range one export reads.
pub const MAX_RANGE: i64 = 366 * 86_400;
/// The range read when none is given: the last 30 days.
pub const DEFAULT_RANGE: i64 = 30 * 86_400;
/// Rows per answer at most, and when none is asked for.
pub const MAX_LIMIT: i64 = 1000;
pub const DEFAULT_LIMIT: i64 = 500;

/// What an export holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub enum ExportKind {
    /// Incidents opened in the range.
    Incidents,
    /// Pages queued in the range (to people, shared topics and summaries).
    Pages,
    /// Alerts last received in the range (one row per alert, however often it fired).
    Alerts,
}

crate::words!(ExportKind, "export" {
    Incidents => "incidents",
    Pages => "pages",
    Alerts => "alerts",
});

/// The range and page asked for, checked: `[from, to)` in Unix seconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    pub from: i64,
    pub to: i64,
    pub after: i64,
    pub limit: i64,
}

impl Window {
    /// `to` defaults to the end of the current second (what was stored up to now), `from` to 30
    /// days before `to`; the range must be positive and
    /// at most a year; `after` at least 0; `limit` 1 to 1000 (500 by default).
    pub fn check(
        now: i64,
        from: Option<i64>,
        to: Option<i64>,
        after: Option<i64>,
        limit: Option<i64>,
    ) -> Result<Window, String> {
        let to = to.unwrap_or(now + 1);
        let from = from.unwrap_or(to - DEFAULT_RANGE);
        if from >= to {
            return Err("from: must be before to".into());
        }
        if to - from > MAX_RANGE {
            return Err("to: a range is at most 366 days; export a longer one in parts".into());
        }
        let after = after.unwrap_or(0);
        if after < 0 {
            return Err("after: must be 0 or more".into());
        }
        let limit = limit.unwrap_or(DEFAULT_LIMIT);
        if !(1..=MAX_LIMIT).contains(&limit) {
            return Err(format!("limit: must be between 1 and {MAX_LIMIT}"));
        }
        Ok(Window {
            from,
            to,
            after,
            limit,
        })
    }
}

/// One incident as exported.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct IncidentRecord {
    pub id: i64,
    pub title: String,
    /// `info`, `warning` or `critical`.
    pub severity: String,
    /// `triggered`, `acknowledged` or `resolved`, now.
    pub state: String,
    pub opened_at: Timestamp,
    pub acknowledged_at: Option<Timestamp>,
    /// Username; empty when its sender acknowledged it.
    pub acknowledged_by: Option<String>,
    pub resolved_at: Option<Timestamp>,
    /// Seconds from opening to acknowledgement, and to resolution.
    pub seconds_to_acknowledge: Option<i64>,
    pub seconds_to_resolve: Option<i64>,
    /// Alerts it holds.
    pub alerts: i64,
}

/// One page as exported.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct PageRecord {
    pub id: i64,
    pub incident_id: Option<i64>,
    /// `opening`, `reminder`, `escalation`, `fallback`, `all_clear` or `handoff`.
    pub kind: String,
    /// The person paged (username), or none for a shared topic.
    pub person: Option<String>,
    /// The road it went by (`ntfy`, `webpush`, `email`, `sms`, …).
    pub road: String,
    /// `pending`, `sent`, `failed` or `cancelled`.
    pub state: String,
    pub queued_at: Timestamp,
    pub sent_at: Option<Timestamp>,
    pub attempts: i64,
    /// Why its last attempt failed.
    pub error: Option<String>,
}

/// One alert as exported.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct AlertRecord {
    pub id: i64,
    pub incident_id: Option<i64>,
    pub alertname: String,
    pub fingerprint: String,
    /// `firing` or `resolved`.
    pub status: String,
    pub starts_at: Timestamp,
    pub ends_at: Option<Timestamp>,
    pub received_at: Timestamp,
    /// The integration it came through (its name).
    pub integration: Option<String>,
}

/// One page of an export, as JSON: its rows and the `after` of the next page (none when this
/// was the last).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Export<T> {
    pub rows: Vec<T>,
    pub next_after: Option<i64>,
}

/// A CSV cell for text a sender or a person wrote: one starting with `=`, `+`, `-`, `@`, a tab
/// or a carriage return is prefixed with `'`, so a spreadsheet shows it instead of running it
/// as a formula (OWASP's CSV injection advice).
pub fn csv_text(text: &str) -> String {
    match text.chars().next() {
        Some('=' | '+' | '-' | '@' | '\t' | '\r') => format!("'{text}"),
        _ => text.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: i64 = 1_780_000_000;

    #[test]
    fn a_window_defaults_to_the_last_30_days_and_is_at_most_a_year() {
        let w = Window::check(NOW, None, None, None, None).unwrap();
        let end = NOW + 1;
        assert_eq!(
            (w.from, w.to, w.after, w.limit),
            (end - DEFAULT_RANGE, end, 0, 500)
        );
        assert!(Window::check(NOW, Some(end - MAX_RANGE), None, None, None).is_ok());
        let long = Window::check(NOW, Some(end - MAX_RANGE - 1), None, None, None);
        assert!(long.unwrap_err().contains("366 days"));
        assert!(Window::check(NOW, Some(NOW), Some(NOW), None, None).is_err());
        assert!(Window::check(NOW, None, None, Some(-1), None).is_err());
        assert!(Window::check(NOW, None, None, None, Some(0)).is_err());
        assert!(Window::check(NOW, None, None, None, Some(1001)).is_err());
    }

    #[test]
    fn text_a_spreadsheet_would_run_is_shown_as_text() {
        assert_eq!(csv_text("=HYPERLINK(\"x\")"), "'=HYPERLINK(\"x\")");
        assert_eq!(csv_text("-1+2"), "'-1+2");
        assert_eq!(csv_text("@SUM(A1)"), "'@SUM(A1)");
        assert_eq!(csv_text("DiskFull"), "DiskFull");
        assert_eq!(csv_text(""), "");
    }
}
