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
}

impl Default for HandOff {
    /// The seed's day: the UTC date, handed over at 00:00 UTC.
    fn default() -> HandOff {
        HandOff {
            zone: TimeZone::UTC,
            at: Time::midnight(),
        }
    }
}

impl HandOff {
    /// A zone from the time zone database (`America/New_York`) and a wall-clock time (`19:00`).
    pub fn new(zone: &str, at: &str) -> Result<HandOff, String> {
        let zone = TimeZone::get(zone)
            .map_err(|_| format!("time_zone: {zone} is not in the time zone database"))?;
        let at = crate::text::ClockTime::parse(at)
            .ok()
            .and_then(|t| {
                let (h, m) = t.as_str().split_once(':')?;
                Time::new(h.parse().ok()?, m.parse().ok()?, 0, 0).ok()
            })
            .ok_or_else(|| format!("handoff_time: {at} is not a time of day as HH:MM"))?;
        Ok(HandOff { zone, at })
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

#[cfg(test)]
mod tests {
    use super::*;
    use jiff::civil::date;

    /// Unix seconds of a UTC wall-clock time written `YYYY-MM-DDTHH:MM`.
    fn utc(s: &str) -> i64 {
        format!("{s}:00Z").parse::<Timestamp>().unwrap().as_second()
    }

    fn day(zone: &str, at: &str, d: Date) -> (i64, i64) {
        HandOff::new(zone, at).unwrap().day_bounds(d)
    }

    const H: i64 = 3600;

    #[test]
    fn days_start_at_the_hand_off_in_the_teams_zone_across_both_transitions() {
        // (zone, hand-off, date, its start in UTC, its length in minutes)
        let table: &[(&str, &str, Date, &str, i64)] = &[
            // New York: spring forward 2026-03-08 02:00, fall back 2026-11-01 02:00.
            (
                "America/New_York",
                "19:00",
                date(2026, 3, 7),
                "2026-03-08T00:00",
                23 * 60,
            ),
            (
                "America/New_York",
                "19:00",
                date(2026, 3, 8),
                "2026-03-08T23:00",
                24 * 60,
            ),
            (
                "America/New_York",
                "00:00",
                date(2026, 11, 1),
                "2026-11-01T04:00",
                25 * 60,
            ),
            (
                "America/New_York",
                "19:00",
                date(2026, 10, 31),
                "2026-10-31T23:00",
                25 * 60,
            ),
            // Inside the gap: the first instant that exists, 03:00 EDT.
            (
                "America/New_York",
                "02:30",
                date(2026, 3, 8),
                "2026-03-08T07:00",
                23 * 60 + 30,
            ),
            // Inside the repeated hour: its first occurrence, 01:30 EDT.
            (
                "America/New_York",
                "01:30",
                date(2026, 11, 1),
                "2026-11-01T05:30",
                25 * 60,
            ),
            // Berlin: 2026-03-29 02:00 → 03:00, 2026-10-25 03:00 → 02:00.
            (
                "Europe/Berlin",
                "00:00",
                date(2026, 3, 29),
                "2026-03-28T23:00",
                23 * 60,
            ),
            (
                "Europe/Berlin",
                "02:30",
                date(2026, 3, 29),
                "2026-03-29T01:00",
                23 * 60 + 30,
            ),
            (
                "Europe/Berlin",
                "02:30",
                date(2026, 10, 25),
                "2026-10-25T00:30",
                25 * 60,
            ),
            (
                "Europe/Berlin",
                "09:00",
                date(2026, 7, 1),
                "2026-07-01T07:00",
                24 * 60,
            ),
            // Sydney, southern hemisphere: 2026-04-05 03:00 → 02:00, 2026-10-04 02:00 → 03:00.
            (
                "Australia/Sydney",
                "00:00",
                date(2026, 4, 5),
                "2026-04-04T13:00",
                25 * 60,
            ),
            (
                "Australia/Sydney",
                "02:30",
                date(2026, 4, 5),
                "2026-04-04T15:30",
                25 * 60,
            ),
            (
                "Australia/Sydney",
                "00:00",
                date(2026, 10, 4),
                "2026-10-03T14:00",
                23 * 60,
            ),
            (
                "Australia/Sydney",
                "02:30",
                date(2026, 10, 4),
                "2026-10-03T16:00",
                23 * 60 + 30,
            ),
            // Kolkata, half an hour off UTC and no clock changes.
            (
                "Asia/Kolkata",
                "19:00",
                date(2026, 6, 1),
                "2026-06-01T13:30",
                24 * 60,
            ),
            // Lord Howe moves its clocks by 30 minutes: 2026-04-05 02:00 → 01:30, 2026-10-04
            // 02:00 → 02:30.
            (
                "Australia/Lord_Howe",
                "00:00",
                date(2026, 4, 5),
                "2026-04-04T13:00",
                24 * 60 + 30,
            ),
            (
                "Australia/Lord_Howe",
                "01:45",
                date(2026, 4, 5),
                "2026-04-04T14:45",
                24 * 60 + 30,
            ),
            (
                "Australia/Lord_Howe",
                "00:00",
                date(2026, 10, 4),
                "2026-10-03T13:30",
                23 * 60 + 30,
            ),
            (
                "Australia/Lord_Howe",
                "02:15",
                date(2026, 10, 4),
                "2026-10-03T15:30",
                23 * 60 + 45,
            ),
            // Apia skipped 30 December 2011: the 29th runs into the 31st.
            (
                "Pacific/Apia",
                "00:00",
                date(2011, 12, 29),
                "2011-12-29T10:00",
                24 * 60,
            ),
            (
                "Pacific/Apia",
                "00:00",
                date(2011, 12, 30),
                "2011-12-30T10:00",
                0,
            ),
            (
                "Pacific/Apia",
                "00:00",
                date(2011, 12, 31),
                "2011-12-30T10:00",
                24 * 60,
            ),
            // The seed's default: the UTC date from 00:00 UTC.
            (
                "UTC",
                "00:00",
                date(2026, 11, 27),
                "2026-11-27T00:00",
                24 * 60,
            ),
        ];
        for (zone, at, d, start, minutes) in table {
            let (from, to) = day(zone, at, *d);
            assert_eq!(
                (from, (to - from) / 60),
                (utc(start), *minutes),
                "{zone} {at} {d}"
            );
        }
        let seed = HandOff::default();
        assert_eq!(
            seed.day_bounds(date(2026, 11, 27)),
            (utc("2026-11-27T00:00"), utc("2026-11-28T00:00"))
        );
    }

    #[test]
    fn the_holder_at_an_instant_is_the_day_whose_interval_holds_it() {
        let ny = HandOff::new("America/New_York", "19:00").unwrap();
        // 18:59 New York time on Thursday is still Wednesday's day; 19:00 is Thursday's.
        assert_eq!(ny.day_of(utc("2026-11-26T23:59")), date(2026, 11, 25));
        assert_eq!(ny.day_of(utc("2026-11-27T00:00")), date(2026, 11, 26));
        let apia = HandOff::new("Pacific/Apia", "00:00").unwrap();
        assert_eq!(apia.day_of(utc("2011-12-30T09:59")), date(2011, 12, 29));
        assert_eq!(apia.day_of(utc("2011-12-30T10:00")), date(2011, 12, 31));
        assert_eq!(
            HandOff::default().day_of(utc("2026-11-27T23:59")),
            date(2026, 11, 27)
        );
    }

    /// Every date of two years, in each zone, at hand-off times on the hour, on the half hour
    /// and inside the transitions: consecutive days meet exactly, each day holds its own
    /// instants, and a day is 23 to 25 hours, except around a date a zone skipped.
    #[test]
    fn consecutive_days_tile_time() {
        let zones = [
            "UTC",
            "America/New_York",
            "Europe/Berlin",
            "Australia/Sydney",
            "Asia/Kolkata",
            "Australia/Lord_Howe",
            "Pacific/Apia",
        ];
        for zone in zones {
            for at in [
                "00:00", "01:30", "02:15", "02:30", "03:00", "09:00", "19:00", "23:59",
            ] {
                let h = HandOff::new(zone, at).unwrap();
                let mut d = date(2011, 1, 1);
                while d < date(2012, 12, 31) {
                    let (from, to) = h.day_bounds(d);
                    let next = d.tomorrow().unwrap();
                    assert_eq!(to, h.day_bounds(next).0, "{zone} {at} {d}");
                    let len = to - from;
                    // Apia's skipped date: the 29th and the 30th share one day's hours between
                    // them (all the 29th's at a midnight hand-off).
                    let skip = zone == "Pacific/Apia"
                        && (d == date(2011, 12, 29) || d == date(2011, 12, 30));
                    if skip {
                        let (_, end) = h.day_bounds(date(2011, 12, 30));
                        assert_eq!(end - h.day_bounds(date(2011, 12, 29)).0, 24 * H);
                    } else {
                        assert!((23 * H..=25 * H).contains(&len), "{zone} {at} {d}: {len}");
                    }
                    if len > 0 {
                        assert_eq!(h.day_of(from), d, "{zone} {at} {d}");
                        assert_eq!(h.day_of(to - 1), d, "{zone} {at} {d}");
                    }
                    d = next;
                }
            }
        }
    }

    #[test]
    fn unknown_zones_and_bad_times_are_refused() {
        assert!(HandOff::new("Mars/Olympus", "19:00")
            .unwrap_err()
            .contains("time zone database"));
        for bad in ["7pm", "24:00", "19:0", "19:00:00", ""] {
            assert!(
                HandOff::new("UTC", bad)
                    .unwrap_err()
                    .starts_with("handoff_time"),
                "{bad}"
            );
        }
    }
}
