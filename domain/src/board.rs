//! The incident list's filters (whose incidents, which severity, which state), read from the
//! page's query string, and the rule that applies them to the open incidents.

use crate::alerting::{IncidentState, Severity};
use crate::incident::Incident;
use crate::Timestamp;
use serde::{Deserialize, Serialize};

/// Whose incidents the list shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BoardScope {
    /// Assigned to the caller.
    Mine,
    /// Of the caller's teams (the default).
    #[default]
    Teams,
    /// Of every team: for administrators, who may see teams they are not in; for anyone else
    /// the same as `Teams`.
    All,
}

crate::words!(BoardScope, "incident list scope" {
    Mine => "mine",
    Teams => "teams",
    All => "all",
});

impl BoardScope {
    pub fn label(self) -> &'static str {
        match self {
            BoardScope::Mine => "Mine",
            BoardScope::Teams => "My teams",
            BoardScope::All => "All teams",
        }
    }
}

/// Which of the open incidents the list shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BoardState {
    #[default]
    Open,
    Triggered,
    Acknowledged,
}

crate::words!(BoardState, "incident list state" {
    Open => "open",
    Triggered => "triggered",
    Acknowledged => "acknowledged",
});

/// The list's filters. On the page they are the query string (`?show=mine&severity=critical&
/// state=triggered`), so a filtered list is a link and works before the wasm arrives.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct BoardFilter {
    pub scope: BoardScope,
    /// `None`: every severity.
    pub severity: Option<Severity>,
    pub state: BoardState,
}

/// From this many rows on, the list draws one line per incident so a storm fits the screen.
pub const COMPACT_FROM: usize = 8;

impl BoardFilter {
    /// From the query string's words; a word the page does not know is the default, so an old
    /// or mistyped link still shows the list.
    pub fn from_query(show: Option<&str>, severity: Option<&str>, state: Option<&str>) -> Self {
        BoardFilter {
            scope: show.and_then(BoardScope::parse).unwrap_or_default(),
            severity: severity.and_then(Severity::parse),
            state: state.and_then(BoardState::parse).unwrap_or_default(),
        }
    }

    /// True when it shows something other than every open incident of the caller's teams.
    pub fn narrows(&self) -> bool {
        *self != BoardFilter::default()
    }

    /// Whether the list shows `incident`, for the caller `me`. The scope's teams are chosen
    /// by the reader; this checks the rest.
    pub fn shows(&self, incident: &Incident, me: i64) -> bool {
        let scope = self.scope != BoardScope::Mine || incident.assignee_id == Some(me);
        let severity = self.severity.is_none_or(|s| incident.severity == s);
        let state = match self.state {
            BoardState::Open => incident.state.is_open(),
            BoardState::Triggered => incident.state == IncidentState::Triggered,
            BoardState::Acknowledged => incident.state == IncidentState::Acknowledged,
        };
        scope && severity && state
    }

    /// The query string of this filter with one part changed, for the page's links; the
    /// defaults are left out so the plain list stays `/`.
    pub fn query(&self) -> String {
        let mut parts = Vec::new();
        if self.scope != BoardScope::default() {
            parts.push(format!("show={}", self.scope.as_str()));
        }
        if let Some(s) = self.severity {
            parts.push(format!("severity={}", s.as_str()));
        }
        if self.state != BoardState::default() {
            parts.push(format!("state={}", self.state.as_str()));
        }
        if parts.is_empty() {
            "/".into()
        } else {
            format!("/?{}", parts.join("&"))
        }
    }

    /// In words, for the list's heading when it is narrowed: "critical, triggered, mine".
    pub fn describe(&self) -> String {
        let mut words = Vec::new();
        if let Some(s) = self.severity {
            words.push(s.as_str().to_string());
        }
        if self.state != BoardState::Open {
            words.push(self.state.as_str().to_string());
        }
        words.push(match self.scope {
            BoardScope::Mine => "assigned to you".into(),
            BoardScope::Teams => "of your teams".into(),
            BoardScope::All => "of every team".into(),
        });
        words.join(", ")
    }
}

/// The incident list as the home page shows it, read in one core call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IncidentBoard {
    /// The server's clock when the list was read: ages are measured from it.
    pub now: Timestamp,
    pub me: i64,
    pub teams: Vec<crate::account::MyTeam>,
    /// The display name of each team the lists may name (every team when the list shows all).
    pub team_names: Vec<(i64, String)>,
    /// What the list was asked to show.
    pub filter: BoardFilter,
    /// The caller may choose every team's incidents (an administrator).
    pub may_see_all: bool,
    /// Open incidents assigned to the caller, whatever the filter: the tab's title counts them.
    pub for_me: usize,
    /// Open incidents in the scope before severity and state narrowed them.
    pub open_in_scope: usize,
    /// The open incidents the filter shows: triggered first, then acknowledged; the most
    /// severe and then the newest first in each.
    pub open: Vec<Incident>,
    /// The most recently resolved, newest first.
    pub resolved: Vec<Incident>,
    /// The caller's teams in maintenance now, with the window's end.
    pub maintenance: Vec<(i64, Timestamp)>,
    /// The incidents of the summary push the list was opened from (`/?bundle={id}`), newest
    /// first; `None` without one.
    pub bundle: Option<Vec<Incident>>,
    /// The caller's teams with a coming date nobody holds.
    pub gaps: Vec<crate::schedule::CoverageGap>,
}

/// Where each title stops repeating the rows beside it: the byte offset of the first word that
/// differs from both its neighbours' titles (0 when nothing is shared). A storm's rows
/// ("StormDiskPressure: disk almost full on node-17") then show the part that tells them apart
/// when the shared start is cut short on a phone.
pub fn differing_starts(titles: &[&str]) -> Vec<usize> {
    let shared = |a: &str, b: &str| {
        if a == b {
            // Nothing tells them apart: the whole title.
            return 0;
        }
        let common = a
            .char_indices()
            .zip(b.chars())
            .find(|((_, x), y)| x != y)
            .map_or(a.len().min(b.len()), |((i, _), _)| i);
        // Back to the start of the word the difference is in.
        a[..common]
            .rfind(|c: char| c.is_whitespace() || c == ':' || c == '/' || c == ',')
            .map_or(0, |i| i + 1)
    };
    (0..titles.len())
        .map(|i| {
            let before = i.checked_sub(1).map_or(0, |j| shared(titles[i], titles[j]));
            let after = titles.get(i + 1).map_or(0, |next| shared(titles[i], next));
            before.max(after)
        })
        .collect()
}

/// How many resolved incidents the home page lists under the open ones.
pub const RECENTLY_RESOLVED: i64 = 10;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Timestamp;

    #[test]
    fn a_storms_titles_start_where_they_differ() {
        let titles = [
            "StormDiskPressure: disk almost full on node-17",
            "StormDiskPressure: disk almost full on node-18",
            "StormDiskPressure: disk almost full on node-2",
            "Checkout latency high",
            "Checkout latency high",
        ];
        let starts = differing_starts(&titles);
        let tails: Vec<&str> = titles.iter().zip(&starts).map(|(t, s)| &t[*s..]).collect();
        assert_eq!(
            tails,
            [
                "node-17",
                "node-18",
                "node-2",
                "Checkout latency high",
                "Checkout latency high"
            ],
        );
        assert_eq!(differing_starts(&["é one", "é two"]), [3, 3]);
        assert_eq!(differing_starts(&["alone"]), [0]);
        assert!(differing_starts(&[]).is_empty());
    }

    fn incident(
        id: i64,
        state: IncidentState,
        severity: Severity,
        assignee: Option<i64>,
    ) -> Incident {
        Incident {
            id,
            team_id: 1,
            title: format!("#{id}"),
            state,
            severity,
            group_key: String::new(),
            signature: String::new(),
            assignee_id: assignee,
            assignee: None,
            paged: None,
            acknowledged_by: None,
            acknowledged_at: None,
            snoozed_until: None,
            resolved_at: None,
            archived: false,
            created_at: Timestamp(0),
        }
    }

    #[test]
    fn unknown_words_are_the_defaults() {
        let f = BoardFilter::from_query(Some("everyone"), Some("urgent"), Some("closed"));
        assert_eq!(f, BoardFilter::default());
        assert!(!f.narrows());
        let f = BoardFilter::from_query(Some("mine"), Some("critical"), Some("triggered"));
        assert_eq!(
            f,
            BoardFilter {
                scope: BoardScope::Mine,
                severity: Some(Severity::Critical),
                state: BoardState::Triggered
            }
        );
        assert_eq!(f.query(), "/?show=mine&severity=critical&state=triggered");
        assert_eq!(BoardFilter::default().query(), "/");
    }

    #[test]
    fn each_part_narrows_what_is_shown() {
        use IncidentState::*;
        use Severity::*;
        let list = [
            incident(1, Triggered, Critical, Some(7)),
            incident(2, Triggered, Warning, None),
            incident(3, Acknowledged, Critical, Some(8)),
            incident(4, Resolved, Critical, Some(7)),
        ];
        let shown = |f: BoardFilter| -> Vec<i64> {
            list.iter()
                .filter(|i| f.shows(i, 7))
                .map(|i| i.id)
                .collect()
        };
        assert_eq!(shown(BoardFilter::default()), [1, 2, 3]);
        let mine = BoardFilter {
            scope: BoardScope::Mine,
            ..Default::default()
        };
        assert_eq!(shown(mine), [1]);
        let critical = BoardFilter {
            severity: Some(Critical),
            ..Default::default()
        };
        assert_eq!(shown(critical), [1, 3]);
        let acked = BoardFilter {
            state: BoardState::Acknowledged,
            ..Default::default()
        };
        assert_eq!(shown(acked), [3]);
        let triggered = BoardFilter {
            state: BoardState::Triggered,
            severity: Some(Warning),
            ..Default::default()
        };
        assert_eq!(shown(triggered), [2]);
        assert_eq!(triggered.describe(), "warning, triggered, of your teams");
    }
}
