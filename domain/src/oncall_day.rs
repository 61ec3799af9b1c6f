//! A team's on-call day in its own time: the schedule entry for date D covers from D's hand-off
//! time to the next date's hand-off time in the team's zone, so today's holder at an instant is
//! the entry whose interval contains it. A team that sets nothing keeps UTC dates handed over at
//! 00:00 UTC.
//!
//! Clock changes, decided once here:
//! - a hand-off time that does not exist on a date (02:30 in a spring-forward gap) is taken at
//!   the first instant after it that does: the transition itself (03:00 in New York);
//! - a hand-off time that occurs twice (01:30 on a fall-back night) is taken at its first
//!   occurrence.
//!
//! So a day is 23 hours on a spring-forward date and 25 on a fall-back date, and consecutive
//! dates' intervals always meet. A date a zone skipped altogether (Pacific/Apia's 30 December
//! 2011) keeps only the hours between the jump and its hand-off time: none at a midnight
//! hand-off, where the day before runs straight into the day after.

use jiff::civil::{Date, Time};
use jiff::tz::{AmbiguousOffset, TimeZone};
use jiff::Timestamp;

/// Where and when a team hands the pager over.
#[derive(Debug, Clone)]
pub struct HandOff {
    zone: TimeZone,
    at: Time,
    zone_name: String,
}

impl Default for HandOff {
    /// The seed's day: the UTC date, handed over at 00:00 UTC.
    fn default() -> HandOff {
        HandOff {
            zone: TimeZone::UTC,
            at: Time::midnight(),
            zone_name: "UTC".into(),
        }
    }
}

impl HandOff {
    /// A zone from the time zone database (`America/New_York`) and a wall-clock time (`19:00`).
    pub fn new(zone: &str, at: &str) -> Result<HandOff, String> {
        let zone_name = zone.to_string();
        let zone = TimeZone::get(zone)
            .map_err(|_| format!("time_zone: {zone} is not in the time zone database"))?;
        let at = crate::text::ClockTime::parse(at)
            .ok()
            .and_then(|t| {
                let (h, m) = t.as_str().split_once(':')?;
                Time::new(h.parse().ok()?, m.parse().ok()?, 0, 0).ok()
            })
            .ok_or_else(|| format!("handoff_time: {at} is not a time of day as HH:MM"))?;
        Ok(HandOff {
            zone,
            at,
            zone_name,
        })
    }

    /// The zone's name as the team gave it (`America/New_York`).
    pub fn zone_name(&self) -> &str {
        &self.zone_name
    }

    /// The hand-off time as `HH:MM`.
    pub fn at(&self) -> String {
        format!("{:02}:{:02}", self.at.hour(), self.at.minute())
    }

    /// An instant on the team's wall clock: "Thursday 26 November 19:00".
    pub fn local_words(&self, t: i64) -> String {
        Timestamp::from_second(t)
            .map(|i| {
                self.zone
                    .to_datetime(i)
                    .strftime("%A %-d %B %H:%M")
                    .to_string()
            })
            .unwrap_or_default()
    }

    /// `14:00`: an instant's time on the team's wall clock.
    pub fn local_time(&self, t: i64) -> String {
        Timestamp::from_second(t)
            .map(|i| self.zone.to_datetime(i).strftime("%H:%M").to_string())
            .unwrap_or_default()
    }

    /// The instant of a wall-clock time in the team's zone, written `YYYY-MM-DDTHH:MM` (as a
    /// browser's `datetime-local` field gives it). A time inside a spring-forward gap is taken
    /// as the instant after the gap's length; one that occurs twice, at its first occurrence.
    pub fn wall_instant(&self, field: &str, local: &str) -> Result<i64, String> {
        let bad = || format!("{field}: {local} is not a date and time like 2026-11-26T14:00");
        let civil: jiff::civil::DateTime = local.trim().parse().map_err(|_| bad())?;
        self.zone
            .to_ambiguous_timestamp(civil)
            .compatible()
            .map(|t| t.as_second())
            .map_err(|_| bad())
    }

    /// The date of an instant on the team's wall clock (not its on-call day).
    pub fn local_date(&self, t: i64) -> Date {
        Timestamp::from_second(t)
            .map(|i| self.zone.to_datetime(i).date())
            .unwrap_or(Date::MIN)
    }

    /// The instant date D's on-call day starts (Unix seconds).
    pub fn day_start(&self, date: Date) -> i64 {
        let local = date.to_datetime(self.at);
        let at = self.zone.to_ambiguous_timestamp(local);
        let instant: Option<Timestamp> = match at.offset() {
            AmbiguousOffset::Unambiguous { offset } => offset.to_timestamp(local).ok(),
            // The first occurrence: the offset in force before the clocks went back.
            AmbiguousOffset::Fold { before, .. } => before.to_timestamp(local).ok(),
            // Read with the offset after the gap, the time falls before the transition; the
            // transition that follows is the first instant that exists.
            AmbiguousOffset::Gap { after, .. } => after
                .to_timestamp(local)
                .ok()
                .and_then(|t| self.zone.following(t).next())
                .map(|transition| transition.timestamp()),
        };
        instant.map_or(i64::MIN, |t| t.as_second())
    }

    /// Date D's on-call day: from its start to the next date's start, end excluded.
    pub fn day_bounds(&self, date: Date) -> (i64, i64) {
        let next = date.tomorrow().unwrap_or(date);
        (self.day_start(date), self.day_start(next))
    }

    /// The date whose on-call day holds the instant `t` (Unix seconds).
    pub fn day_of(&self, t: i64) -> Date {
        let Ok(instant) = Timestamp::from_second(t) else {
            return Date::MIN;
        };
        let local = self.zone.to_datetime(instant).date();
        // The local date's day has begun, or `t` is still in the day before (before the
        // hand-off time); a skipped date's empty day holds nothing, so step past it.
        let mut date = local;
        while self.day_start(date) > t {
            match date.yesterday() {
                Ok(d) => date = d,
                Err(_) => break,
            }
        }
        while let Ok(next) = date.tomorrow() {
            if self.day_start(next) <= t {
                date = next;
            } else {
                break;
            }
        }
        date
    }
}

/// `2026-11-22 10:00` on the wall clock of `zone`; `None` for a zone not in the database.
pub fn local_stamp(t: i64, zone: &str) -> Option<String> {
    let tz = TimeZone::get(zone).ok()?;
    let instant = Timestamp::from_second(t).ok()?;
    Some(
        tz.to_datetime(instant)
            .strftime("%Y-%m-%d %H:%M")
            .to_string(),
    )
}

/// Whether the time zone database has `zone`.
pub fn known_zone(zone: &str) -> bool {
    TimeZone::get(zone).is_ok()
}

/// A team's on-call days: its rule, and while a change waits for its first hand-off, the rule
/// the dates before it keep. A change made during date D's day takes effect from D + 1: D ends
/// at the later of its two hand-offs (the old rule's and the new rule's start of D + 1), so the
/// person on call now keeps the pager until a hand-off, and every date keeps its holder. A new
/// rule more than a day ahead of the old one can leave a date with no hours (the preview says
/// when it takes effect).
#[derive(Debug, Clone, Default)]
pub struct TeamDays {
    rule: HandOff,
    earlier: Option<(HandOff, Date)>,
}

impl TeamDays {
    pub fn new(rule: HandOff) -> TeamDays {
        TeamDays {
            rule,
            earlier: None,
        }
    }

    /// Days that follow `earlier` before the date `from`, and `rule` from it.
    pub fn changed(earlier: HandOff, from: Date, rule: HandOff) -> TeamDays {
        TeamDays {
            rule,
            earlier: Some((earlier, from)),
        }
    }

    /// The rule in force from the next change on (the newest one).
    pub fn rule(&self) -> &HandOff {
        &self.rule
    }

    /// The earlier rule and the first date that no longer follows it, while it matters.
    pub fn earlier(&self) -> Option<(&HandOff, Date)> {
        self.earlier.as_ref().map(|(h, d)| (h, *d))
    }

    /// These days changed at `now` to `rule`: the day in progress keeps its end, as above. A
    /// second change before the first took effect replaces it.
    pub fn change_to(&self, rule: HandOff, now: i64) -> TeamDays {
        let today = self.day_of(now);
        match &self.earlier {
            Some((earlier, from)) if today < *from => {
                TeamDays::changed(earlier.clone(), *from, rule)
            }
            _ => TeamDays::changed(self.rule.clone(), today.tomorrow().unwrap_or(today), rule),
        }
    }

    /// The instant date D's on-call day starts (Unix seconds).
    pub fn day_start(&self, date: Date) -> i64 {
        match &self.earlier {
            Some((earlier, from)) if date < *from => earlier.day_start(date),
            Some((earlier, from)) => self.rule.day_start(date).max(earlier.day_start(*from)),
            None => self.rule.day_start(date),
        }
    }

    /// Date D's on-call day: from its start to the next date's start, end excluded.
    pub fn day_bounds(&self, date: Date) -> (i64, i64) {
        let next = date.tomorrow().unwrap_or(date);
        (self.day_start(date), self.day_start(next))
    }

    /// The date whose on-call day holds the instant `t`.
    pub fn day_of(&self, t: i64) -> Date {
        match &self.earlier {
            Some((earlier, from)) if t < self.day_start(*from) => {
                earlier.day_of(t).min(from.yesterday().unwrap_or(*from))
            }
            Some((_, from)) => self.rule.day_of(t).max(*from),
            None => self.rule.day_of(t),
        }
    }

    /// The first instant the newest rule's hand-offs are in force (the start of the first date
    /// that follows it fully); `None` when it has been for longer than `now`'s day.
    pub fn takes_effect_at(&self, now: i64) -> Option<i64> {
        let (earlier, from) = self.earlier.as_ref()?;
        let floor = earlier.day_start(*from);
        let mut d = *from;
        for _ in 0..3 {
            if self.rule.day_start(d) >= floor {
                let at = self.rule.day_start(d);
                return (at > now).then_some(at);
            }
            d = d.tomorrow().ok()?;
        }
        None
    }

    /// The date a change leaves without hours, if any (the new rule more than a day ahead).
    pub fn skipped(&self) -> Option<Date> {
        let (_, from) = self.earlier.as_ref()?;
        let mut d = *from;
        for _ in 0..2 {
            let (start, end) = self.day_bounds(d);
            if start == end {
                return Some(d);
            }
            d = d.tomorrow().ok()?;
        }
        None
    }

    /// One sentence a person reads: how days run, and from when if a change waits.
    pub fn summary(&self, now: i64) -> String {
        let rule = &self.rule;
        let (zone, at) = (rule.zone_name(), rule.at());
        match self.takes_effect_at(now) {
            Some(t) => {
                let mut s = format!(
                    "From {} {zone} time, days run {at}–{at}.",
                    rule.local_words(t)
                );
                if let Some(d) = self.skipped() {
                    s.push_str(&format!(
                        " The new hand-off comes a day sooner, so {} has no hours of its own.",
                        d.strftime("%A %-d %B")
                    ));
                }
                s
            }
            None => format!("Days run {at}–{at} {zone} time."),
        }
    }
}

/// `PUT /api/teams/{team_id}/on-call-day`: the team's zone and hand-off time. With `dry_run`
/// the answer shows the effect and nothing is stored.
#[derive(Debug, Clone, serde::Deserialize, serde::Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct OncallDayChange {
    pub time_zone: crate::text::ZoneName,
    pub handoff_time: crate::text::ClockTime,
    #[serde(default)]
    pub dry_run: bool,
}

/// A team's on-call day: the schedule entry for date D covers from D's hand-off time to the
/// next date's, in `time_zone`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct OncallDay {
    /// An IANA zone name (`America/New_York`); `UTC` unless set.
    pub time_zone: String,
    /// `HH:MM` on the team's wall clock; `00:00` unless set.
    pub handoff_time: String,
    /// While a change waits for its first hand-off: the instant it takes effect.
    pub takes_effect_at: Option<crate::Timestamp>,
    /// One sentence: "From Thursday 26 November 19:00 America/New_York time, days run
    /// 19:00–19:00."
    pub summary: String,
    /// The date of the day in progress (`YYYY-MM-DD`), and its bounds.
    pub today: String,
    pub today_starts_at: crate::Timestamp,
    pub today_ends_at: crate::Timestamp,
}

impl OncallDay {
    /// How `days` read at `now`.
    pub fn of(days: &TeamDays, now: i64) -> OncallDay {
        let today = days.day_of(now);
        let (start, end) = days.day_bounds(today);
        OncallDay {
            time_zone: days.rule().zone_name().to_string(),
            handoff_time: days.rule().at(),
            takes_effect_at: days.takes_effect_at(now).map(crate::Timestamp),
            summary: days.summary(now),
            today: today.to_string(),
            today_starts_at: crate::Timestamp(start),
            today_ends_at: crate::Timestamp(end),
        }
    }
}

/// `POST /api/teams/{team_id}/covers`: `user_id` holds the pager from `starts_at` to `ends_at`
/// (at most 14 days, starting now or later) for `covered_user_id` (by default whoever holds
/// it at `starts_at`).
#[derive(Debug, Clone, serde::Deserialize, serde::Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct NewCover {
    pub user_id: i64,
    #[serde(default)]
    pub covered_user_id: Option<i64>,
    pub starts_at: crate::Timestamp,
    pub ends_at: crate::Timestamp,
}

/// A partial-day cover: while it is in force its person is the team's holder.
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Cover {
    pub id: i64,
    pub team_id: i64,
    pub user_id: i64,
    pub username: String,
    pub covered_user_id: Option<i64>,
    pub covered_username: Option<String>,
    pub starts_at: crate::Timestamp,
    pub ends_at: crate::Timestamp,
}

/// The longest cover: two weeks.
pub const MAX_COVER_SECONDS: i64 = 14 * 86_400;
/// Covers of a team not yet ended, at most.
pub const MAX_COVERS: i64 = 200;
/// How far in the past a cover may be said to start (a phone's clock, a slow form): it starts
/// now instead.
pub const COVER_START_SLACK: i64 = 300;

#[cfg(test)]
mod tests;
