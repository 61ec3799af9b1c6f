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

/// One incident opened in the range, as the report weighs it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Opened {
    pub id: i64,
    pub alertname: String,
    pub integration_id: Option<i64>,
    /// Pages that asked someone to act and were sent.
    pub pages: u64,
    pub open_for: Option<i64>,
    pub acknowledged: bool,
    /// Someone acted on it (acknowledged, noted, snoozed, resolved, …).
    pub touched: bool,
    pub reopened: bool,
}

impl Opened {
    pub fn flapped(&self) -> bool {
        !self.touched && self.open_for.is_some_and(|s| s < FLAPPING_WITHIN)
    }
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

/// Counts per alert and integration, noisiest first (incidents, then pages), at most
/// `MAX_ROWS`; `quieting` is chosen from the counts.
pub fn tally(opened: &[Opened]) -> Vec<NoiseRow> {
    let mut by: std::collections::BTreeMap<(String, Option<i64>), NoiseRow> = Default::default();
    for o in opened {
        let row = by
            .entry((o.alertname.clone(), o.integration_id))
            .or_insert_with(|| NoiseRow {
                alertname: o.alertname.clone(),
                integration_id: o.integration_id,
                integration: None,
                incidents: 0,
                pages: 0,
                flapping: 0,
                reopened: 0,
                unacknowledged: 0,
                latest_incident: o.id,
                quieting: Quieting::Silence,
                action: String::new(),
                action_url: String::new(),
            });
        row.incidents += 1;
        row.latest_incident = row.latest_incident.max(o.id);
        row.pages += o.pages;
        row.flapping += u64::from(o.flapped());
        row.reopened += u64::from(o.reopened);
        row.unacknowledged += u64::from(o.pages > 0 && !o.acknowledged);
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

    fn opened(name: &str, integration: i64) -> Opened {
        Opened {
            id: 1,
            alertname: name.into(),
            integration_id: Some(integration),
            pages: 1,
            open_for: Some(3600),
            acknowledged: true,
            touched: true,
            reopened: false,
        }
    }

    #[test]
    fn a_flapping_alert_is_sent_to_its_source_and_an_unanswered_one_to_a_rule() {
        let flap = Opened {
            open_for: Some(FLAPPING_WITHIN - 1),
            touched: false,
            acknowledged: false,
            ..opened("DiskPressure", 1)
        };
        let unanswered = Opened {
            acknowledged: false,
            touched: false,
            open_for: None,
            ..opened("CertExpiry", 1)
        };
        let fine = opened("HighErrorRate", 1);
        let mut all = vec![flap.clone(), flap.clone(), flap, fine.clone()];
        all.extend([unanswered.clone(), unanswered]);
        // The same alert through another integration is another row.
        all.push(opened("HighErrorRate", 2));
        let rows = tally(&all);
        let names: Vec<(&str, Option<i64>, u64)> = rows
            .iter()
            .map(|r| (r.alertname.as_str(), r.integration_id, r.incidents))
            .collect();
        assert_eq!(
            names,
            vec![
                ("DiskPressure", Some(1), 3),
                ("CertExpiry", Some(1), 2),
                ("HighErrorRate", Some(1), 1),
                ("HighErrorRate", Some(2), 1),
            ]
        );
        assert_eq!((rows[0].flapping, rows[0].unacknowledged), (3, 3));
        assert_eq!(rows[0].quieting, Quieting::Source);
        assert_eq!((rows[1].flapping, rows[1].unacknowledged), (0, 2));
        assert_eq!(rows[1].quieting, Quieting::Route);
        assert_eq!(rows[2].quieting, Quieting::Silence);
    }

    #[test]
    fn five_minutes_open_is_not_flapping_nor_is_one_someone_touched() {
        let at = |open_for, touched| Opened {
            open_for: Some(open_for),
            touched,
            ..Opened::default()
        };
        assert!(at(FLAPPING_WITHIN - 1, false).flapped());
        assert!(!at(FLAPPING_WITHIN, false).flapped());
        assert!(!at(10, true).flapped());
        assert!(!Opened::default().flapped(), "still open");
    }

    #[test]
    fn a_deadman_incident_without_integration_is_silenced_not_routed() {
        let o = Opened {
            integration_id: None,
            acknowledged: false,
            touched: false,
            open_for: None,
            ..opened("DeadMansSwitch", 0)
        };
        assert_eq!(tally(&[o])[0].quieting, Quieting::Silence);
    }
}
