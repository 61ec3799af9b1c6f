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
                let skip =
                    zone == "Pacific/Apia" && (d == date(2011, 12, 29) || d == date(2011, 12, 30));
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

/// A change of rule keeps the day in progress to a hand-off and every later date with its
/// own hours under the new rule; consecutive days still meet.
#[test]
fn a_change_takes_effect_from_the_next_hand_off() {
    let utc_days = TeamDays::default();
    let ny = HandOff::new("America/New_York", "19:00").unwrap();
    // Changed on Wednesday 25 November at 12:00 UTC: Wednesday's day runs on until
    // Thursday 19:00 New York time, when Thursday's begins.
    let now = utc("2026-11-25T12:00");
    let days = utc_days.change_to(ny.clone(), now);
    assert_eq!(days.day_of(now), date(2026, 11, 25));
    assert_eq!(
        days.day_bounds(date(2026, 11, 25)),
        (utc("2026-11-25T00:00"), utc("2026-11-27T00:00"))
    );
    assert_eq!(days.day_of(utc("2026-11-26T23:59")), date(2026, 11, 25));
    assert_eq!(days.day_of(utc("2026-11-27T00:00")), date(2026, 11, 26));
    assert_eq!(days.takes_effect_at(now), Some(utc("2026-11-27T00:00")));
    assert_eq!(
        days.summary(now),
        "From Thursday 26 November 19:00 America/New_York time, days run 19:00–19:00."
    );
    assert_eq!(days.skipped(), None);
    // Once in force, the summary is the rule alone.
    assert_eq!(
        days.summary(utc("2026-11-28T00:00")),
        "Days run 19:00–19:00 America/New_York time."
    );
    // A second change before the first took effect replaces it.
    let berlin = HandOff::new("Europe/Berlin", "09:00").unwrap();
    let again = days.change_to(berlin.clone(), utc("2026-11-25T13:00"));
    assert_eq!(again.earlier().unwrap().1, date(2026, 11, 26));
    assert_eq!(again.earlier().unwrap().0.zone_name(), "UTC");
    assert_eq!(
        again.day_bounds(date(2026, 11, 26)),
        (utc("2026-11-26T08:00"), utc("2026-11-27T08:00"))
    );
    // A change after it took effect starts from the rule in force.
    let later = days.change_to(berlin, utc("2026-11-30T12:00"));
    assert_eq!(later.earlier().unwrap().0.zone_name(), "America/New_York");
    assert_eq!(later.earlier().unwrap().1, date(2026, 11, 30));

    // Back from New York 19:00 to UTC midnight: the new rule is a day ahead, so one date
    // gets no hours, and the summary says which.
    let back = TeamDays::new(ny).change_to(HandOff::default(), now);
    assert_eq!(back.skipped(), Some(date(2026, 11, 25)));
    assert!(back
        .summary(now)
        .contains("Wednesday 25 November has no hours"));
    assert_eq!(back.day_of(utc("2026-11-25T23:59")), date(2026, 11, 24));
    assert_eq!(back.day_of(utc("2026-11-26T00:00")), date(2026, 11, 26));
}

/// Across changes between any two of these rules, made at any hour of a week: days meet,
/// never go backwards, and each instant's date is the one whose interval holds it.
#[test]
fn days_tile_time_across_a_change() {
    let rules = [
        ("UTC", "00:00"),
        ("America/New_York", "19:00"),
        ("Australia/Sydney", "02:30"),
        ("Asia/Kolkata", "09:00"),
        ("Pacific/Kiritimati", "00:00"),
        ("Pacific/Pago_Pago", "23:00"),
    ];
    for (z1, a1) in rules {
        for (z2, a2) in rules {
            let first = TeamDays::new(HandOff::new(z1, a1).unwrap());
            for hour in (0..7 * 24).step_by(5) {
                let now = utc("2026-10-01T00:00") + hour * H;
                let days = first.change_to(HandOff::new(z2, a2).unwrap(), now);
                let today = first.day_of(now);
                assert_eq!(days.day_of(now), today, "{z1} {a1} → {z2} {a2} at {now}");
                let mut d = date(2026, 9, 25);
                while d < date(2026, 10, 20) {
                    let (from, to) = days.day_bounds(d);
                    assert!(from <= to, "{z1} {a1} → {z2} {a2} {d}");
                    assert_eq!(to, days.day_bounds(d.tomorrow().unwrap()).0);
                    if from < to {
                        assert_eq!(days.day_of(from), d, "{z1} {a1} → {z2} {a2} {d}");
                        assert_eq!(days.day_of(to - 1), d, "{z1} {a1} → {z2} {a2} {d}");
                    }
                    // Days already begun keep their start.
                    if first.day_start(d) <= now {
                        assert_eq!(from, first.day_start(d), "{z1} {a1} → {z2} {a2} {d}");
                    }
                    d = d.tomorrow().unwrap();
                }
            }
        }
    }
}

#[test]
fn wall_clock_times_in_the_teams_zone_are_instants() {
    let ny = HandOff::new("America/New_York", "19:00").unwrap();
    assert_eq!(
        ny.wall_instant("from", "2026-11-26T14:00"),
        Ok(utc("2026-11-26T19:00"))
    );
    // Inside the spring-forward gap: moved on by the gap (02:30 EST is 03:30 EDT).
    assert_eq!(
        ny.wall_instant("from", "2026-03-08T02:30"),
        Ok(utc("2026-03-08T07:30"))
    );
    // The repeated hour: its first occurrence (EDT).
    assert_eq!(
        ny.wall_instant("from", "2026-11-01T01:30"),
        Ok(utc("2026-11-01T05:30"))
    );
    assert!(ny
        .wall_instant("from", "tomorrow")
        .unwrap_err()
        .starts_with("from: "));
    assert_eq!(ny.local_time(utc("2026-11-26T19:00")), "14:00");
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
