//! A post-incident review: what happened to a resolved incident (its timeline, who was paged by
//! which road and when, time to acknowledge and to resolve, notes and what fixed it), incidents
//! like it, and the follow-up items the team keeps with it until they are done. Written out as
//! Markdown for a wiki or a ticket.

use crate::incident_page::{IncidentDetail, SimilarIncident};
use crate::Timestamp;
use serde::{Deserialize, Serialize};
use std::fmt::Write;

/// A follow-up item's text is at most this long.
pub const MAX_FOLLOW_UP: usize = 500;
/// Items one incident keeps at most.
pub const MAX_FOLLOW_UPS: i64 = 50;

/// Something to do so it does not happen again, kept with the incident.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct FollowUp {
    pub id: i64,
    pub incident_id: i64,
    /// The incident's title, for the team page's list.
    pub incident_title: String,
    pub text: String,
    /// Who will do it (a member of the team), if anyone was named.
    pub owner_id: Option<i64>,
    pub owner: Option<String>,
    pub done_at: Option<Timestamp>,
    pub created_at: Timestamp,
}

/// `POST /api/incidents/{id}/follow-ups`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct NewFollowUp {
    /// What to do, 1 to 500 characters.
    pub text: String,
    /// A member of the incident's team.
    #[serde(default)]
    pub owner_id: Option<i64>,
}

impl NewFollowUp {
    /// The text trimmed and within bounds.
    pub fn checked_text(&self) -> Result<String, String> {
        let text = self.text.trim();
        if text.is_empty() {
            return Err("text: say what is to be done".into());
        }
        if text.chars().count() > MAX_FOLLOW_UP {
            return Err(format!("text: at most {MAX_FOLLOW_UP} characters"));
        }
        Ok(text.to_string())
    }
}

/// `PATCH /api/follow-ups/{id}`: done or not.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct FollowUpDone {
    pub done: bool,
}

/// `GET /api/incidents/{id}/review`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Review {
    pub team_name: String,
    pub detail: IncidentDetail,
    pub seconds_to_acknowledge: Option<i64>,
    pub seconds_to_resolve: Option<i64>,
    /// Resolved incidents like it, newest first, with what fixed them.
    pub similar: Vec<SimilarIncident>,
    pub follow_ups: Vec<FollowUp>,
}

/// `1 h 4 min`, `3 min 20 s`, `45 s`: to the second under an hour, as a review records it (the
/// app's spans round to the minute).
pub fn exact_span(seconds: i64) -> String {
    let (h, m, s) = (seconds / 3600, seconds % 3600 / 60, seconds % 60);
    match (h, m) {
        (0, 0) => format!("{s} s"),
        (0, _) if s > 0 => format!("{m} min {s} s"),
        (0, _) => format!("{m} min"),
        _ => format!("{h} h {m} min"),
    }
}

fn when(t: Timestamp) -> String {
    t.to_rfc3339()
}

/// Table cells keep to one line and never close the cell early.
fn cell(text: &str) -> String {
    text.replace('|', "\\|").replace(['\n', '\r'], " ")
}

impl Review {
    /// The review as Markdown (CommonMark with GitHub's tables).
    pub fn markdown(&self) -> String {
        let d = &self.detail;
        let i = &d.incident;
        let mut md = String::new();
        let _ = writeln!(md, "# Incident #{}: {}\n", i.id, cell(&i.title));
        let _ = writeln!(md, "- Team: {}", cell(&self.team_name));
        let _ = writeln!(md, "- Severity: {}", i.severity.as_str());
        let _ = writeln!(md, "- Opened: {}", when(i.created_at));
        match (&i.acknowledged_at, self.seconds_to_acknowledge) {
            (Some(at), Some(s)) => {
                let by = i.acknowledged_by.as_deref().unwrap_or("its sender");
                let _ = writeln!(
                    md,
                    "- Acknowledged: {} by {by}, after {}",
                    when(*at),
                    exact_span(s)
                );
            }
            _ => {
                let _ = writeln!(md, "- Acknowledged: never");
            }
        }
        if let (Some(at), Some(s)) = (&i.resolved_at, self.seconds_to_resolve) {
            let _ = writeln!(md, "- Resolved: {}, after {}", when(*at), exact_span(s));
        }
        if let Some(fix) = d.notes.iter().rev().find(|n| n.resolution) {
            let _ = writeln!(md, "\n## What fixed it\n\n{}", fix.text.trim());
        }
        let _ = writeln!(md, "\n## Who was paged\n");
        if d.pages.is_empty() {
            let _ = writeln!(md, "Nobody was paged.");
        } else {
            let _ = writeln!(md, "| queued | person | road | kind | status | sent |");
            let _ = writeln!(md, "|---|---|---|---|---|---|");
            for p in &d.pages {
                let who = p.recipient.as_deref().or(p.topic.as_deref()).unwrap_or("");
                let sent = p.sent_at.map(when).unwrap_or_default();
                let _ = writeln!(
                    md,
                    "| {} | {} | {} | {} | {} | {sent} |",
                    when(p.created_at),
                    cell(who),
                    p.road.as_str(),
                    p.kind.as_str(),
                    p.status.as_str(),
                );
            }
        }
        let _ = writeln!(md, "\n## Timeline\n");
        for t in &d.timeline {
            let actor = t
                .actor
                .as_deref()
                .map(|a| format!(" ({a})"))
                .unwrap_or_default();
            let _ = writeln!(
                md,
                "- {} **{}**{actor}: {}",
                when(t.at),
                t.kind.as_str(),
                cell(&t.text)
            );
        }
        let notes: Vec<_> = d.notes.iter().filter(|n| !n.resolution).collect();
        if !notes.is_empty() {
            let _ = writeln!(md, "\n## Notes\n");
            for n in notes {
                let by = n.author.as_deref().unwrap_or("someone");
                let _ = writeln!(md, "- {} {by}: {}", when(n.created_at), cell(&n.text));
            }
        }
        if !self.similar.is_empty() {
            let _ = writeln!(md, "\n## Similar incidents\n");
            for s in &self.similar {
                let fix = s.notes.iter().rev().find(|n| n.resolution);
                let fix = fix.map(|n| format!(": fixed by “{}”", cell(&n.text)));
                let _ = writeln!(
                    md,
                    "- #{} {} ({}){}",
                    s.incident.id,
                    cell(&s.incident.title),
                    when(s.incident.created_at),
                    fix.unwrap_or_default()
                );
            }
        }
        let _ = writeln!(md, "\n## Follow-up items\n");
        if self.follow_ups.is_empty() {
            let _ = writeln!(md, "None yet.");
        }
        for f in &self.follow_ups {
            let mark = if f.done_at.is_some() { "x" } else { " " };
            let owner = f
                .owner
                .as_deref()
                .map(|o| format!(" ({o})"))
                .unwrap_or_default();
            let _ = writeln!(md, "- [{mark}] {}{owner}", cell(&f.text));
        }
        md
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans_read_as_a_person_says_them() {
        assert_eq!(exact_span(45), "45 s");
        assert_eq!(exact_span(200), "3 min 20 s");
        assert_eq!(exact_span(180), "3 min");
        assert_eq!(exact_span(3840), "1 h 4 min");
    }

    #[test]
    fn a_follow_up_needs_words_and_not_too_many() {
        let f = |t: &str| NewFollowUp {
            text: t.into(),
            owner_id: None,
        };
        assert_eq!(
            f("  add a disk alert  ").checked_text().unwrap(),
            "add a disk alert"
        );
        assert!(f("   ").checked_text().unwrap_err().starts_with("text:"));
        assert!(f(&"é".repeat(501)).checked_text().is_err());
        assert!(f(&"é".repeat(500)).checked_text().is_ok());
    }

    #[test]
    fn a_cell_stays_in_its_cell() {
        assert_eq!(cell("a | b\nc"), "a \\| b c");
    }
}
