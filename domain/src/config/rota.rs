//! The rota in the file: who holds each of a team's on-call dates, written as runs of dates
//! (`{username, from, to}`) so a year of weekly turns is 52 short entries, not 365.

use super::{RotaSpec, TeamSpec};
use crate::calendar::{format_date, parse_date};
use std::collections::BTreeMap;

/// The longest run one entry may hold; `export` starts a new entry after it.
pub const MAX_RUN: usize = 365;

/// The team's today at `at` (`YYYY-MM-DD`), by the file's zone and hand-off time, else the
/// server's (`now`), else UTC at 00:00.
pub fn today(want: &TeamSpec, now: Option<&TeamSpec>, at: crate::Timestamp) -> String {
    let pick = |f: fn(&TeamSpec) -> &Option<String>, default: &'static str| {
        f(want)
            .clone()
            .or_else(|| now.and_then(|n| f(n).clone()))
            .unwrap_or_else(|| default.into())
    };
    crate::oncall_day::HandOff::new(
        &pick(|t| &t.time_zone, "UTC"),
        &pick(|t| &t.handoff_time, "00:00"),
    )
    .unwrap_or_default()
    .day_of(at.0)
    .to_string()
}

/// Dates (`YYYY-MM-DD`, in order) and their holders as runs: consecutive dates of one person
/// make one entry, of at most `MAX_RUN` dates.
pub fn runs<'a>(days: impl IntoIterator<Item = (&'a str, &'a str)>) -> Vec<RotaSpec> {
    let mut out: Vec<(RotaSpec, usize)> = Vec::new();
    for (date, username) in days {
        if let Some((last, len)) = out.last_mut() {
            let next = parse_date(&last.to)
                .and_then(|d| d.next_day())
                .map(format_date);
            if last.username == username && next.as_deref() == Some(date) && *len < MAX_RUN {
                last.to = date.to_string();
                *len += 1;
                continue;
            }
        }
        out.push((
            RotaSpec {
                username: username.to_string(),
                from: date.to_string(),
                to: date.to_string(),
            },
            1,
        ));
    }
    out.into_iter().map(|(r, _)| r).collect()
}

/// Each date of a run, in order; `None` when its dates are not dates or run backwards, or it
/// holds more than `MAX_RUN`.
pub fn dates_of(run: &RotaSpec) -> Option<Vec<String>> {
    let (mut day, to) = (parse_date(&run.from)?, parse_date(&run.to)?);
    let mut out = Vec::new();
    while day <= to {
        if out.len() == MAX_RUN {
            return None;
        }
        out.push(format_date(day));
        day = day.next_day()?;
    }
    (!out.is_empty()).then_some(out)
}

/// Every date the runs give, with its holder (runs that are not runs are left out: the checks
/// name them). A date given twice keeps its last holder.
pub fn holders(runs: &[RotaSpec]) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for run in runs {
        for date in dates_of(run).unwrap_or_default() {
            out.insert(date, run.username.clone());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(who: &str, from: &str, to: &str) -> RotaSpec {
        RotaSpec {
            username: who.into(),
            from: from.into(),
            to: to.into(),
        }
    }

    #[test]
    fn consecutive_dates_of_one_person_are_one_run() {
        let days = [
            ("2026-12-30", "alice"),
            ("2026-12-31", "alice"),
            ("2027-01-01", "alice"),
            ("2027-01-02", "bob"),
            ("2027-01-04", "bob"),
        ];
        assert_eq!(
            runs(days),
            vec![
                run("alice", "2026-12-30", "2027-01-01"),
                run("bob", "2027-01-02", "2027-01-02"),
                run("bob", "2027-01-04", "2027-01-04"),
            ]
        );
        let back = holders(&runs(days));
        assert_eq!(back.len(), 5);
        assert_eq!(back["2027-01-01"], "alice");
    }

    #[test]
    fn a_run_longer_than_a_year_is_split_and_a_backwards_one_is_none() {
        let year: Vec<String> = (0..400)
            .scan(parse_date("2027-01-01").unwrap(), |d, _| {
                let this = *d;
                *d = d.next_day().unwrap();
                Some(format_date(this))
            })
            .collect();
        let r = runs(year.iter().map(|d| (d.as_str(), "alice")));
        assert_eq!(r.len(), 2);
        assert_eq!(dates_of(&r[0]).unwrap().len(), MAX_RUN);
        assert_eq!(dates_of(&r[1]).unwrap().len(), 400 - MAX_RUN);
        assert_eq!(dates_of(&run("a", "2027-01-02", "2027-01-01")), None);
        assert_eq!(dates_of(&run("a", "2027-02-30", "2027-03-01")), None);
    }
}
