//! Alert noise: which alerts open the most incidents and pages for a team, and which of those
//! incidents asked nothing of anyone — resolved by their sender within five minutes with nobody
//! acting (flapping), opened again within an hour of the last one's resolution, or paged and never
//! acknowledged. Each row carries the one action most likely to quiet it.

use crate::Timestamp;
use serde::{Deserialize, Serialize};

/// An incident its sender resolved this soon, with nobody acting, flapped.
pub const FLAPPING_WITHIN: i64 = 5 * 60;
/// An incident opened this soon after the same alert's last incident was resolved reopened it.
pub const REOPENED_WITHIN: i64 = 3600;
/// Rows a report lists at most (the noisiest).
pub const MAX_ROWS: usize = 50;

/// The incidents one alert signature opened through one integration in the range, counted by
/// the database (a year of a busy team is 100 000 incidents): how many, their pages, and how many
/// flapped (resolved by their sender within `FLAPPING_WITHIN` with nobody acting), reopened
/// (within `REOPENED_WITHIN` of the same signature's last resolution) or were paged and never
/// acknowledged.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Counted {
    pub signature: String,
    pub integration_id: Option<i64>,
    pub incidents: u64,
    /// Pages that asked someone to act and were sent.
    pub pages: u64,
    pub flapping: u64,
    pub reopened: u64,
    pub unacknowledged: u64,
    /// The latest of them.
    pub latest: i64,
}

/// The alert name of a signature (`alertname{label="value",…}`).
pub fn alertname(signature: &str) -> &str {
    signature.split('{').next().unwrap_or(signature)
}

/// What would quiet an alert.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub enum Quieting {
    /// It flaps: wait longer before firing (Prometheus `for:`) or raise the threshold, at its
    /// source graph.
    Source,
    /// It pages and nobody acknowledges: send it at a lower severity with a routing rule.
    Route,
    /// Otherwise: silence it while it is fixed.
    Silence,
}

/// One alert's noise over the range.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct NoiseRow {
    pub alertname: String,
    pub integration_id: Option<i64>,
    /// The integration's name (none for a dead man's switch, or one since deleted).
    pub integration: Option<String>,
    /// Incidents it opened, and the pages they sent.
    pub incidents: u64,
    pub pages: u64,
    /// Resolved by their sender within five minutes with nobody acting.
    pub flapping: u64,
    /// Opened within an hour of the same alert's incident being resolved.
    pub reopened: u64,
    /// Paged and never acknowledged.
    pub unacknowledged: u64,
    /// Its latest incident in the range.
    pub latest_incident: i64,
    /// The action most likely to quiet it, and where to take it.
    pub quieting: Quieting,
    pub action: String,
    pub action_url: String,
}

/// A team's alert noise over a range, noisiest first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct AlertNoise {
    pub team_id: i64,
    pub from: Timestamp,
    pub to: Timestamp,
    /// Incidents opened in the range, and how many of them flapped.
    pub incidents: u64,
    pub flapping: u64,
    pub rows: Vec<NoiseRow>,
}

/// Counts per alert name and integration (a name's signatures together), noisiest first
/// (incidents, then pages), at most `MAX_ROWS`; `quieting` is chosen from the counts.
pub fn tally(counted: &[Counted]) -> Vec<NoiseRow> {
    let mut by: std::collections::BTreeMap<(&str, Option<i64>), NoiseRow> = Default::default();
    for c in counted {
        let name = alertname(&c.signature);
        let row = by
            .entry((name, c.integration_id))
            .or_insert_with(|| NoiseRow {
                alertname: name.to_string(),
                integration_id: c.integration_id,
                integration: None,
                incidents: 0,
                pages: 0,
                flapping: 0,
                reopened: 0,
                unacknowledged: 0,
                latest_incident: c.latest,
                quieting: Quieting::Silence,
                action: String::new(),
                action_url: String::new(),
            });
        row.incidents += c.incidents;
        row.latest_incident = row.latest_incident.max(c.latest);
        row.pages += c.pages;
        row.flapping += c.flapping;
        row.reopened += c.reopened;
        row.unacknowledged += c.unacknowledged;
    }
    let mut rows: Vec<NoiseRow> = by.into_values().collect();
    for row in &mut rows {
        row.quieting = quieting(row);
    }
    rows.sort_by(|a, b| {
        (b.incidents, b.pages)
            .cmp(&(a.incidents, a.pages))
            .then_with(|| a.alertname.cmp(&b.alertname))
    });
    rows.truncate(MAX_ROWS);
    rows
}

/// Flapping or reopening in half its incidents or more: its source; paging unanswered in half
/// or more: a routing rule (only an integration has rules); otherwise a silence.
fn quieting(row: &NoiseRow) -> Quieting {
    let half = |n: u64| n * 2 >= row.incidents && n > 0;
    if half(row.flapping) || half(row.reopened) {
        Quieting::Source
    } else if half(row.unacknowledged) && row.integration_id.is_some() {
        Quieting::Route
    } else {
        Quieting::Silence
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counted(signature: &str, integration: i64, incidents: u64) -> Counted {
        Counted {
            signature: signature.into(),
            integration_id: Some(integration),
            incidents,
            pages: incidents,
            latest: 1,
            ..Counted::default()
        }
    }

    #[test]
    fn a_flapping_alert_is_sent_to_its_source_and_an_unanswered_one_to_a_rule() {
        let flap = Counted {
            flapping: 3,
            unacknowledged: 3,
            latest: 9,
            ..counted("DiskPressure{host=\"a\"}", 1, 3)
        };
        let unanswered = Counted {
            unacknowledged: 2,
            ..counted("CertExpiry{}", 1, 2)
        };
        // One name's signatures are one row; its latest incident is the latest of them.
        let fine = counted("HighErrorRate{path=\"/a\"}", 1, 1);
        let other_path = Counted {
            latest: 4,
            ..counted("HighErrorRate{path=\"/b\"}", 1, 1)
        };
        // The same alert through another integration is another row.
        let elsewhere = counted("HighErrorRate{}", 2, 1);
        let rows = tally(&[flap, unanswered, fine, other_path, elsewhere]);
        let names: Vec<(&str, Option<i64>, u64)> = rows
            .iter()
            .map(|r| (r.alertname.as_str(), r.integration_id, r.incidents))
            .collect();
        assert_eq!(
            names,
            vec![
                ("DiskPressure", Some(1), 3),
                ("CertExpiry", Some(1), 2),
                ("HighErrorRate", Some(1), 2),
                ("HighErrorRate", Some(2), 1),
            ]
        );
        assert_eq!((rows[0].flapping, rows[0].latest_incident), (3, 9));
        assert_eq!(rows[0].quieting, Quieting::Source);
        assert_eq!((rows[1].flapping, rows[1].unacknowledged), (0, 2));
        assert_eq!(rows[1].quieting, Quieting::Route);
        assert_eq!((rows[2].pages, rows[2].latest_incident), (2, 4));
        assert_eq!(rows[2].quieting, Quieting::Silence);
    }

    #[test]
    fn half_reopened_goes_to_the_source_and_less_than_half_unanswered_is_silenced() {
        let reopened = Counted {
            reopened: 2,
            ..counted("Flaky{}", 1, 4)
        };
        let mostly_answered = Counted {
            unacknowledged: 1,
            ..counted("Slow{}", 1, 3)
        };
        let rows = tally(&[reopened, mostly_answered]);
        assert_eq!(rows[0].quieting, Quieting::Source);
        assert_eq!(rows[1].quieting, Quieting::Silence);
    }

    #[test]
    fn a_deadman_incident_without_integration_is_silenced_not_routed() {
        let c = Counted {
            integration_id: None,
            unacknowledged: 1,
            ..counted("DeadMansSwitch", 0, 1)
        };
        assert_eq!(tally(&[c])[0].quieting, Quieting::Silence);
        assert_eq!(alertname("DeadMansSwitch"), "DeadMansSwitch");
    }
}
