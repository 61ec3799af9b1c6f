//! On-call health: what holding a team's pager cost each person over a range. Hours held, pages
//! received (by road), pages in the person's own night, what they acknowledged and resolved,
//! escalations that went past them, their time to acknowledge (median and 90th percentile, never
//! a mean alone) and fairness: their share of the pages against their share of the hours.
//!
//! Computed here from what core reads of the stored record, so every figure is checked against
//! hand-made fixtures without a database.

use crate::Timestamp;
use jiff::tz::TimeZone;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The range a report reads when none is given: the last four weeks.
pub const DEFAULT_RANGE: i64 = 28 * 86_400;
/// A person's night on their own wall clock: from 22:00 to 07:00.
pub const NIGHT_FROM_HOUR: i8 = 22;
pub const NIGHT_UNTIL_HOUR: i8 = 7;

/// A report's range, checked: `[from, to)` in Unix seconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Range {
    pub from: i64,
    pub to: i64,
}

impl Range {
    /// `to` defaults to now, `from` to four weeks before `to`; at most a year (as exports).
    pub fn check(now: i64, from: Option<i64>, to: Option<i64>) -> Result<Range, String> {
        let to = to.unwrap_or(now + 1);
        let from = from.unwrap_or(to - DEFAULT_RANGE);
        if from >= to {
            return Err("from: must be before to".into());
        }
        if to - from > crate::export::MAX_RANGE {
            return Err("to: a report covers at most 366 days".into());
        }
        Ok(Range { from, to })
    }

    /// The part of `[start, end)` inside the range, in seconds.
    pub fn overlap(&self, start: i64, end: i64) -> i64 {
        (end.min(self.to) - start.max(self.from)).max(0)
    }
}

/// Someone holding the pager over `[start, end)`: a schedule day's holder or a cover's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Held {
    pub user_id: i64,
    pub start: i64,
    pub end: i64,
}

/// Seconds each person held the pager in the range. A cover holds it for its hours in place of
/// whoever the day named (covers of one team never overlap each other).
pub fn seconds_held(range: Range, days: &[Held], covers: &[Held]) -> BTreeMap<i64, i64> {
    let mut held: BTreeMap<i64, i64> = BTreeMap::new();
    for day in days {
        let covered: i64 = covers
            .iter()
            .map(|c| Range {
                from: c.start.max(range.from),
                to: c.end.min(range.to),
            })
            .filter(|c| c.from < c.to)
            .map(|c| c.overlap(day.start, day.end))
            .sum();
        let own = range.overlap(day.start, day.end) - covered;
        if own > 0 {
            *held.entry(day.user_id).or_default() += own;
        }
    }
    for cover in covers {
        let own = range.overlap(cover.start, cover.end);
        if own > 0 {
            *held.entry(cover.user_id).or_default() += own;
        }
    }
    held
}

/// The wall clock of `zone` over the range, as spans of one offset from UTC: `(from, seconds
/// east)` in order, the first from the range's start, one more at each of the zone's transitions
/// inside it (where clocks change, two a year). A zone the database does not know is UTC. With
/// these, whether a moment is in someone's night is arithmetic a database can do (`night_second`).
pub fn wall_clock(zone: Option<&str>, range: Range) -> Vec<(i64, i32)> {
    let tz = zone
        .and_then(|z| TimeZone::get(z).ok())
        .unwrap_or(TimeZone::UTC);
    let Ok(start) = jiff::Timestamp::from_second(range.from) else {
        return vec![(range.from, 0)];
    };
    let mut spans = vec![(range.from, tz.to_offset(start).seconds())];
    for t in tz.following(start) {
        let at = t.timestamp().as_second();
        if at >= range.to {
            break;
        }
        spans.push((at, t.offset().seconds()));
    }
    spans
}

/// Whether a second of the local day (0–86 399) is in the night.
pub fn night_second(second_of_day: i64) -> bool {
    !(i64::from(NIGHT_UNTIL_HOUR) * 3600..i64::from(NIGHT_FROM_HOUR) * 3600)
        .contains(&second_of_day)
}

/// Median and 90th percentile of times to acknowledge, in seconds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct AckTimes {
    /// How many acknowledgements these are of.
    pub count: u64,
    pub median_seconds: Option<i64>,
    pub p90_seconds: Option<i64>,
}

impl AckTimes {
    /// The median and 90th percentile by nearest rank (a value that happened, never an
    /// interpolation) from each value and how many times it came, in any order: a year's
    /// acknowledgements are read as a few hundred (seconds, count) rows, not one row each.
    pub fn of_counts(counts: &[(i64, u64)]) -> AckTimes {
        let mut sorted = counts.to_vec();
        sorted.sort_unstable();
        let n: u64 = sorted.iter().map(|(_, c)| c).sum();
        let at = |p: u64| {
            let rank = (p * n).div_ceil(100).max(1);
            let mut seen = 0;
            sorted.iter().find_map(|&(value, c)| {
                seen += c;
                (seen >= rank).then_some(value)
            })
        };
        AckTimes {
            count: n,
            median_seconds: at(50),
            p90_seconds: at(90),
        }
    }
}

/// One person's figures over the range.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct PersonHealth {
    pub user_id: i64,
    pub username: String,
    /// The zone their nights are read in (their own; the team's when they set none).
    pub time_zone: String,
    /// Hours holding the team's pager (schedule days and covers), to the minute.
    pub hours_on_call: f64,
    /// Pages that reached them (sent), for the team's incidents.
    pub pages: u64,
    /// The same, by road (`ntfy`, `webpush`, `email`, `sms`, `voice`, …).
    pub pages_by_road: BTreeMap<String, u64>,
    /// Pages sent between 22:00 and 07:00 on their own wall clock: sleep interruptions.
    pub night_pages: u64,
    /// Incidents they acknowledged, and resolved.
    pub acknowledged: u64,
    pub resolved: u64,
    /// Incidents that escalated past them: paged, not acknowledged before the next level.
    pub escalated_past: u64,
    pub time_to_acknowledge: AckTimes,
    /// Their share of the team's pages and of its on-call hours, 0 to 1.
    pub page_share: f64,
    pub hours_share: f64,
    /// Page share over hours share: 1 is fair, 2 means twice the pages their hours would bring.
    /// Absent when they held no hours (every page they got is then beyond their share) or the
    /// team had no pages.
    pub fairness: Option<f64>,
}

/// The team's figures over the range.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct TeamHealth {
    pub incidents: u64,
    pub pages: u64,
    pub night_pages: u64,
    pub hours_on_call: f64,
    /// Hours of the range nobody held the pager.
    pub hours_uncovered: f64,
    pub escalated_past: u64,
    pub time_to_acknowledge: AckTimes,
}

/// The on-call health report of one team.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct OncallHealth {
    pub team_id: i64,
    pub from: Timestamp,
    pub to: Timestamp,
    pub team: TeamHealth,
    /// Everyone who held the pager or was paged in the range, most pages first.
    pub people: Vec<PersonHealth>,
}

/// Hours to the minute, as a report shows them.
pub fn hours(seconds: i64) -> f64 {
    (seconds as f64 / 60.0).round() / 60.0
}

/// A share rounded to three places.
fn share(part: f64, whole: f64) -> f64 {
    if whole <= 0.0 {
        return 0.0;
    }
    (part / whole * 1000.0).round() / 1000.0
}

/// Fills each person's shares and fairness from the team's totals.
pub fn weigh(people: &mut [PersonHealth]) {
    let pages: u64 = people.iter().map(|p| p.pages).sum();
    let hours: f64 = people.iter().map(|p| p.hours_on_call).sum();
    for p in people.iter_mut() {
        p.page_share = share(p.pages as f64, pages as f64);
        p.hours_share = share(p.hours_on_call, hours);
        p.fairness = (pages > 0 && p.hours_share > 0.0)
            .then(|| (p.page_share / p.hours_share * 100.0).round() / 100.0);
    }
}

#[cfg(test)]
mod tests;
