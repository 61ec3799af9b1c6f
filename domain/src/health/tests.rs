use super::*;
use crate::oncall_day::HandOff;
use jiff::civil::date;

/// The `p`-th percentile (0–100) of `values` by nearest rank, worked out one value at a time:
/// what the counted figures must agree with.
fn percentile(values: &[i64], p: u32) -> Option<i64> {
    if values.is_empty() {
        return None;
    }
    let mut sorted = values.to_vec();
    sorted.sort_unstable();
    let rank = (p as usize * sorted.len()).div_ceil(100).max(1);
    Some(sorted[rank - 1])
}

/// `AckTimes` worked out one value at a time.
fn one_by_one(seconds: &[i64]) -> AckTimes {
    AckTimes {
        count: seconds.len() as u64,
        median_seconds: percentile(seconds, 50),
        p90_seconds: percentile(seconds, 90),
    }
}

/// Whether `t` falls in the night (22:00–07:00) on the wall clock of `zone`, as the zone database
/// reads it (a zone it does not know as UTC): what the database's arithmetic must agree with.
fn at_night(t: i64, zone: Option<&str>) -> bool {
    let tz = zone
        .and_then(|z| jiff::tz::TimeZone::get(z).ok())
        .unwrap_or(jiff::tz::TimeZone::UTC);
    let Ok(instant) = jiff::Timestamp::from_second(t) else {
        return false;
    };
    let hour = tz.to_datetime(instant).hour();
    !(NIGHT_UNTIL_HOUR..NIGHT_FROM_HOUR).contains(&hour)
}

fn utc(s: &str) -> i64 {
    s.parse::<jiff::Timestamp>().unwrap().as_second()
}

#[test]
fn a_range_is_four_weeks_by_default_and_at_most_a_year() {
    let now = 10_000_000;
    let r = Range::check(now, None, None).unwrap();
    assert_eq!((r.from, r.to), (now + 1 - 28 * 86_400, now + 1));
    assert!(Range::check(now, Some(5), Some(5))
        .unwrap_err()
        .starts_with("from:"));
    let year = Range::check(now, Some(0), Some(367 * 86_400)).unwrap_err();
    assert!(year.starts_with("to:"), "{year}");
}

#[test]
fn a_cover_takes_its_hours_from_the_day_it_covers() {
    // Alice holds two days, Bob covers her from 10:00 to 14:00 on the first; the range starts
    // at 06:00 on the first day.
    let day = 86_400;
    let range = Range {
        from: 6 * 3600,
        to: 2 * day,
    };
    let days = [
        Held {
            user_id: 1,
            start: 0,
            end: day,
        },
        Held {
            user_id: 1,
            start: day,
            end: 2 * day,
        },
    ];
    let covers = [Held {
        user_id: 2,
        start: 10 * 3600,
        end: 14 * 3600,
    }];
    let held = seconds_held(range, &days, &covers);
    assert_eq!(held[&1], (18 - 4 + 24) * 3600);
    assert_eq!(held[&2], 4 * 3600);
}

#[test]
fn a_cover_beyond_the_range_counts_only_inside_it() {
    let range = Range { from: 0, to: 3600 };
    let days = [Held {
        user_id: 1,
        start: 0,
        end: 86_400,
    }];
    let covers = [Held {
        user_id: 2,
        start: 1800,
        end: 7200,
    }];
    let held = seconds_held(range, &days, &covers);
    assert_eq!((held[&1], held[&2]), (1800, 1800));
}

#[test]
fn the_day_the_clocks_go_back_is_held_for_25_hours() {
    let days = HandOff::new("America/New_York", "09:00").unwrap();
    let (start, end) = days.day_bounds(date(2026, 10, 31));
    let range = Range {
        from: start - 86_400,
        to: end + 86_400,
    };
    let held = seconds_held(
        range,
        &[Held {
            user_id: 7,
            start,
            end,
        }],
        &[],
    );
    assert_eq!(held[&7], 25 * 3600);
    assert_eq!(hours(held[&7]), 25.0);
}

#[test]
fn night_is_read_on_the_persons_own_clock_across_a_clock_change() {
    let ny = Some("America/New_York");
    // 1 November 2026, clocks back at 02:00: 11:30 UTC is 06:30 EST (night); with the summer
    // offset it would be 07:30.
    assert!(at_night(utc("2026-11-01T11:30:00Z"), ny));
    // The day before, 11:30 UTC is 07:30 EDT: morning.
    assert!(!at_night(utc("2026-10-31T11:30:00Z"), ny));
    // 8 March 2026, clocks forward at 02:00: 11:30 UTC is 07:30 EDT (morning), 06:30 in winter.
    assert!(!at_night(utc("2026-03-08T11:30:00Z"), ny));
    assert!(at_night(utc("2026-03-07T11:30:00Z"), ny));
    // 22:00 is night, 21:59 is not; an unknown zone reads as UTC.
    assert!(at_night(utc("2026-06-01T22:00:00Z"), None));
    assert!(!at_night(utc("2026-06-01T21:59:00Z"), Some("Mars/Olympus")));
}

/// The night as a database reads it (`wall_clock` spans, then `night_second`).
fn night_by_spans(t: i64, spans: &[(i64, i32)]) -> bool {
    let (_, offset) = spans.iter().rev().find(|(from, _)| *from <= t).unwrap();
    night_second((t + i64::from(*offset)).rem_euclid(86_400))
}

#[test]
fn the_wall_clock_spans_give_the_same_nights_as_the_zone_database() {
    let range = Range {
        from: utc("2026-01-01T00:00:00Z"),
        to: utc("2027-01-01T00:00:00Z"),
    };
    let ny = wall_clock(Some("America/New_York"), range);
    // The year's offset, then its two changes.
    assert_eq!(
        ny,
        vec![
            (range.from, -5 * 3600),
            (utc("2026-03-08T07:00:00Z"), -4 * 3600),
            (utc("2026-11-01T06:00:00Z"), -5 * 3600),
        ]
    );
    assert_eq!(
        wall_clock(Some("Mars/Olympus"), range),
        vec![(range.from, 0)]
    );
    // Every 7 minutes of the year, in zones with half-hour and quarter-hour offsets and a
    // half-hour summer change as well.
    let zones = [
        "America/New_York",
        "Europe/Berlin",
        "Asia/Kolkata",
        "Asia/Kathmandu",
        "Australia/Lord_Howe",
        "America/St_Johns",
    ];
    for zone in zones {
        let spans = wall_clock(Some(zone), range);
        for t in (range.from..range.to).step_by(7 * 60) {
            assert_eq!(
                night_by_spans(t, &spans),
                at_night(t, Some(zone)),
                "{zone} {t}"
            );
        }
    }
}

#[test]
fn percentiles_are_values_that_happened() {
    assert_eq!(percentile(&[], 50), None);
    assert_eq!(percentile(&[40], 90), Some(40));
    // Nearest rank: the median of four is the second, p90 of ten the ninth.
    assert_eq!(percentile(&[300, 100, 400, 200], 50), Some(200));
    let ten: Vec<i64> = (1..=10).rev().map(|i| i * 60).collect();
    assert_eq!(percentile(&ten, 90), Some(540));
    assert_eq!(percentile(&ten, 50), Some(300));
    let t = AckTimes::of_counts(&[(120, 1), (60, 1), (3600, 1)]);
    assert_eq!(
        (t.count, t.median_seconds, t.p90_seconds),
        (3, Some(120), Some(3600))
    );
}

#[test]
fn counted_values_give_the_same_percentiles_as_the_values_one_by_one() {
    assert_eq!(AckTimes::of_counts(&[]), one_by_one(&[]));
    // Values in any order, repeated: each list against its counted form.
    let lists: [&[i64]; 5] = [
        &[40],
        &[300, 100, 400, 200],
        &[60, 60, 60, 3600],
        &[5, 9, 5, 1, 9, 9, 9, 2, 7, 5, 5],
        &[120, 60, 3600, 60, 120, 120, 7200, 60, 60, 60, 30],
    ];
    for values in lists {
        let mut counts: Vec<(i64, u64)> = Vec::new();
        for v in values.iter().rev() {
            match counts.iter_mut().find(|(x, _)| x == v) {
                Some((_, c)) => *c += 1,
                None => counts.push((*v, 1)),
            }
        }
        assert_eq!(
            AckTimes::of_counts(&counts),
            one_by_one(values),
            "{values:?}"
        );
    }
}

#[test]
fn fairness_weighs_a_share_of_pages_against_a_share_of_hours() {
    let person = |pages, hours_on_call| PersonHealth {
        pages,
        hours_on_call,
        ..PersonHealth::default()
    };
    // Alice held half the hours and got three quarters of the pages; Bob the rest; Carol was
    // paged once at a level past them without holding the pager.
    let mut people = vec![person(6, 84.0), person(1, 84.0), person(1, 0.0)];
    weigh(&mut people);
    assert_eq!((people[0].page_share, people[0].hours_share), (0.75, 0.5));
    assert_eq!(people[0].fairness, Some(1.5));
    assert_eq!(people[1].fairness, Some(0.25));
    assert_eq!(people[2].fairness, None);
    let mut quiet = vec![person(0, 10.0)];
    weigh(&mut quiet);
    assert_eq!(quiet[0].fairness, None);
}
