//! What a page says: `[SEVERITY] alertname: summary`, the alert's description, what fixed a
//! similar incident last time, a link to the incident and, where it applies, Acknowledge.

use crate::roads::{Ack, Page, Tone};
use klaxon_domain::alerting::Severity;
use klaxon_domain::paging::PageKind;

/// What the notifier knows about the incident when it sends a page.
pub struct About<'a> {
    pub incident_id: i64,
    pub title: &'a str,
    /// The incident's team, named in a mail's subject.
    pub team: &'a str,
    pub severity: Severity,
    /// The description (or summary) annotation of the incident's first alert.
    pub description: Option<&'a str>,
    /// The latest resolution note of a similar resolved incident: (its id, the note).
    pub last_fix: Option<(i64, &'a str)>,
    /// The page row's detail: "level 2", "unacknowledged for 30m", "snooze ended".
    pub detail: &'a str,
}

/// Builds the page. `ack` is the raw token when the page carries Acknowledge.
pub fn compose(kind: PageKind, public_url: &str, about: &About<'_>, ack: Option<String>) -> Page {
    let mut lines: Vec<String> = Vec::new();
    let (word, tone) = match kind {
        PageKind::AllClear => ("RESOLVED".to_string(), Tone::Resolved),
        _ => (
            about.severity.as_str().to_ascii_uppercase(),
            Tone::Alert(about.severity),
        ),
    };
    match kind {
        PageKind::Opening => {}
        PageKind::Reminder => lines.push(format!(
            "Reminder: still unacknowledged ({}).",
            about.detail
        )),
        PageKind::Escalation => lines.push(format!("Escalated to you ({}).", about.detail)),
        PageKind::Fallback => {
            lines.push("Nobody acknowledged this through every escalation level.".to_string())
        }
        PageKind::AllClear => lines.push("Resolved.".to_string()),
        // Composed by `compose_notice`; kept here so the match stays whole.
        PageKind::Handoff => lines.push(about.detail.to_string()),
    }
    if kind != PageKind::AllClear {
        // Clipped so a long description never pushes the last fix out of ntfy's 4096 bytes.
        if let Some(d) = about.description.filter(|d| !d.trim().is_empty()) {
            lines.push(clip(d.trim(), 2000));
        }
        if let Some((id, fix)) = about.last_fix {
            lines.push(format!("Last time (#{id}): {}", clip(fix.trim(), 1000)));
        }
    }
    if lines.is_empty() {
        lines.push(about.title.to_string());
    }
    Page {
        kind: kind.as_str(),
        title: format!("[{word}] {}", about.title),
        text: lines.join("\n\n"),
        tone,
        subject: format!("[{word}] {}: {}", about.team, about.title),
        link: Some(format!("{public_url}/incidents/{}", about.incident_id)),
        ack: ack.map(|token| Ack { token, all: false }),
        tag: format!("klaxon-incident-{}", about.incident_id),
        incident_id: Some(about.incident_id),
    }
}

/// One incident's line in a summary push.
pub struct Listed<'a> {
    pub kind: PageKind,
    pub severity: Severity,
    pub title: &'a str,
    pub team: &'a str,
}

/// Incidents a summary push names one by one; the rest are counted.
const LISTED: usize = 10;

/// A summary push for pages bundled because their topic was flooded (`bundle`): how many and
/// how bad, the first few titles, a link to the list of exactly these incidents and, where it
/// applies, one Acknowledge-all token for all of them.
pub fn compose_summary(
    public_url: &str,
    bundle_id: i64,
    pages: &[Listed<'_>],
    ack: Option<String>,
) -> Page {
    let n = pages.len();
    let mut teams: Vec<&str> = pages.iter().map(|p| p.team).collect();
    teams.sort_unstable();
    teams.dedup();
    let team = match teams.as_slice() {
        [one] => one.to_string(),
        many => format!("{} teams", many.len()),
    };
    let count =
        |what: &mut dyn FnMut(&Listed<'_>) -> bool| pages.iter().filter(|p| what(p)).count();
    let severities: Vec<String> = [Severity::Critical, Severity::Warning, Severity::Info]
        .into_iter()
        .filter_map(|s| {
            let k = count(&mut |p| p.severity == s && p.kind != PageKind::AllClear);
            (k > 0).then(|| format!("{k} {}", s.as_str()))
        })
        .collect();
    let kinds: Vec<String> = [
        (PageKind::Opening, "new"),
        (PageKind::Escalation, "escalated to you"),
        (PageKind::Reminder, "still unacknowledged"),
        (PageKind::Fallback, "unacknowledged at every level"),
        (PageKind::AllClear, "resolved"),
    ]
    .into_iter()
    .filter_map(|(kind, word)| {
        let k = count(&mut |p| p.kind == kind);
        (k > 0).then(|| format!("{k} {word}"))
    })
    .collect();
    let all_clear = pages.iter().all(|p| p.kind == PageKind::AllClear);
    let all_new = pages.iter().all(|p| p.kind == PageKind::Opening);
    let mut first = if all_new {
        format!("{n} new incidents in {team}")
    } else {
        format!("{n} incidents in {team}: {}", kinds.join(", "))
    };
    if !severities.is_empty() {
        first.push_str(if all_new { ": " } else { "; " });
        first.push_str(&severities.join(", "));
    }
    first.push('.');
    let top = pages
        .iter()
        .filter(|p| p.kind != PageKind::AllClear)
        .map(|p| p.severity)
        .max();
    let (title, tone) = match top {
        Some(s) if !all_clear => (
            format!(
                "[{}] {n} incidents in {team}",
                s.as_str().to_ascii_uppercase()
            ),
            Tone::Alert(s),
        ),
        _ => (
            format!("[RESOLVED] {n} incidents in {team}"),
            Tone::Resolved,
        ),
    };
    let mut lines = vec![first, String::new()];
    let mut listed: Vec<&Listed<'_>> = pages.iter().collect();
    listed.sort_by_key(|p| std::cmp::Reverse(p.severity));
    for p in listed.iter().take(LISTED) {
        let word = match p.kind {
            PageKind::AllClear => "RESOLVED".to_string(),
            _ => p.severity.as_str().to_ascii_uppercase(),
        };
        lines.push(format!("• [{word}] {}", clip(p.title, 200)));
    }
    if n > LISTED {
        lines.push(format!("…and {} more.", n - LISTED));
    }
    Page {
        kind: "summary",
        subject: title.clone(),
        title,
        text: lines.join("\n"),
        tone,
        link: Some(format!("{public_url}/?bundle={bundle_id}")),
        ack: ack.map(|token| Ack { token, all: true }),
        tag: format!("klaxon-summary-{bundle_id}"),
        incident_id: None,
    }
}

/// A hand-off notice: the sentence, a link to the team's rota, never an action.
pub fn compose_notice(public_url: &str, team_id: Option<i64>, text: &str) -> Page {
    Page {
        kind: PageKind::Handoff.as_str(),
        title: "On-call hand-off".to_string(),
        subject: "On-call hand-off".to_string(),
        text: text.to_string(),
        tone: Tone::Notice,
        link: team_id.map(|t| format!("{public_url}/teams/{t}/rota")),
        ack: None,
        tag: "klaxon-notice".to_string(),
        incident_id: None,
    }
}

/// At most `max` bytes of `s`, cut at a character boundary and marked with an ellipsis.
fn clip(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_string();
    }
    let mut cut = max;
    while !s.is_char_boundary(cut) {
        cut -= 1;
    }
    format!("{}…", &s[..cut])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn about<'a>() -> About<'a> {
        About {
            incident_id: 7,
            title: "DiskFull: /var is 95% full",
            team: "storage",
            severity: Severity::Critical,
            description: Some("Disk on db-1 fills within 2h"),
            last_fix: Some((3, "rotated the WAL archive")),
            detail: "",
        }
    }

    #[test]
    fn opening_page_shape() {
        let m = compose(
            PageKind::Opening,
            "https://klaxon.example",
            &about(),
            Some("T".into()),
        );
        assert_eq!(m.title, "[CRITICAL] DiskFull: /var is 95% full");
        assert_eq!(m.tone, Tone::Alert(Severity::Critical));
        assert_eq!(m.subject, "[CRITICAL] storage: DiskFull: /var is 95% full");
        assert_eq!(
            m.link.as_deref(),
            Some("https://klaxon.example/incidents/7")
        );
        assert!(m.text.contains("Disk on db-1 fills within 2h"));
        assert!(m.text.contains("Last time (#3): rotated the WAL archive"));
        assert_eq!(
            m.ack_post("https://klaxon.example").as_deref(),
            Some("https://klaxon.example/api/notify/ack/T")
        );
    }

    #[test]
    fn a_summary_counts_lists_and_links_its_incidents() {
        let titles: Vec<String> = (0..12).map(|i| format!("Alert {i}")).collect();
        let pages: Vec<Listed<'_>> = titles
            .iter()
            .enumerate()
            .map(|(i, t)| Listed {
                kind: PageKind::Opening,
                severity: if i < 9 {
                    Severity::Critical
                } else {
                    Severity::Warning
                },
                title: t,
                team: "payments",
            })
            .collect();
        let m = compose_summary("https://k", 7, &pages, Some("T".into()));
        assert_eq!(m.title, "[CRITICAL] 12 incidents in payments");
        assert!(
            m.text
                .starts_with("12 new incidents in payments: 9 critical, 3 warning.\n"),
            "{}",
            m.text
        );
        assert!(m.text.contains("• [CRITICAL] Alert 0"));
        assert!(m.text.ends_with("…and 2 more."), "{}", m.text);
        assert_eq!(m.link.as_deref(), Some("https://k/?bundle=7"));
        assert!(m.ack.as_ref().is_some_and(|a| a.all && a.token == "T"));
        assert_eq!(m.tone, Tone::Alert(Severity::Critical));

        let mixed = [
            Listed {
                kind: PageKind::Reminder,
                severity: Severity::Warning,
                title: "a",
                team: "payments",
            },
            Listed {
                kind: PageKind::AllClear,
                severity: Severity::Critical,
                title: "b",
                team: "search",
            },
        ];
        let m = compose_summary("https://k", 8, &mixed, None);
        assert_eq!(m.title, "[WARNING] 2 incidents in 2 teams");
        assert!(
            m.text.starts_with(
                "2 incidents in 2 teams: 1 still unacknowledged, 1 resolved; 1 warning."
            ),
            "{}",
            m.text
        );
        assert!(m.ack.is_none());
    }

    #[test]
    fn all_clear_and_fallback_have_no_acknowledge() {
        let m = compose(PageKind::AllClear, "http://k", &about(), None);
        assert!(m.title.starts_with("[RESOLVED]"));
        assert_eq!(m.tone, Tone::Resolved);
        assert!(m.ack.is_none());
        let f = compose(PageKind::Fallback, "http://k", &about(), None);
        assert!(f.ack.is_none());
        assert!(f.text.contains("every escalation level"));
    }
}
