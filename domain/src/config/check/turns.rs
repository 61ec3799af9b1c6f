//! A team's rotations and covers, checked: who takes turns and who stands in, each a member.

use super::{Checker, Known};
use crate::config::{CoverSpec, RotationSpec};
use crate::text::Label;
use crate::Timestamp;
use std::collections::BTreeSet;

/// Rotations: a name, 1 to 100 turns of members, a shift length, the dates to fill and a start.
pub(super) fn check_rotations(
    c: &mut Checker,
    at: &str,
    rotations: &[RotationSpec],
    (members, known): (&BTreeSet<&str>, &Known),
    person: &mut dyn FnMut(&mut Checker, String, &str),
) {
    for (i, r) in rotations.iter().enumerate() {
        let path = format!("{at}.rotations[{i}]");
        c.text(format!("{path}.name"), &r.name, |s| {
            Label::parse(s).map(String::from)
        });
        if r.members.is_empty() || r.members.len() > crate::rotation::MAX_MEMBERS {
            c.fail(format!("{path}.members"), "1 to 100 turns");
        }
        for (j, u) in r.members.iter().enumerate() {
            let p = format!("{path}.members[{j}]");
            person(c, p.clone(), u);
            if known.usernames.contains(u.as_str()) && !members.contains(u.as_str()) {
                c.fail(p, format!("\"{u}\" is not a member of the team"));
            }
        }
        if !(1..=crate::rotation::MAX_SHIFT_DAYS).contains(&r.shift_days) {
            c.fail(format!("{path}.shiftDays"), "1 to 365 days");
        }
        if r.fill_days
            .is_some_and(|d| !(1..=crate::rotation::MAX_APPLY_DATES as u32).contains(&d))
        {
            c.fail(format!("{path}.fillDays"), "1 to 365 dates");
        }
        if crate::calendar::parse_date(&r.start_date).is_none() {
            c.fail(format!("{path}.startDate"), "a date, YYYY-MM-DD");
        }
    }
    c.unique(
        &format!("{at}.rotations"),
        rotations.iter().map(|r| r.name.as_str()),
        "rotation",
    );
}

/// Covers: a member standing in for another member, for at most 14 days.
pub(super) fn check_covers(
    c: &mut Checker,
    at: &str,
    covers: &[CoverSpec],
    (members, known): (&BTreeSet<&str>, &Known),
    person: &mut dyn FnMut(&mut Checker, String, &str),
) {
    for (i, cover) in covers.iter().enumerate() {
        let path = format!("{at}.covers[{i}]");
        person(c, format!("{path}.username"), &cover.username);
        if let Some(covered) = &cover.covering {
            person(c, format!("{path}.covering"), covered);
            if covered == &cover.username {
                c.fail(format!("{path}.covering"), "nobody covers for themselves");
            } else if known.usernames.contains(covered.as_str())
                && !members.contains(covered.as_str())
            {
                c.fail(
                    format!("{path}.covering"),
                    format!("\"{covered}\" is not a member of the team"),
                );
            }
        }
        if known.usernames.contains(cover.username.as_str())
            && !members.contains(cover.username.as_str())
        {
            c.fail(
                format!("{path}.username"),
                format!("\"{}\" is not a member of the team", cover.username),
            );
        }
        match (
            Timestamp::parse(&cover.starts_at),
            Timestamp::parse(&cover.ends_at),
        ) {
            (Some(s), Some(e))
                if e.0 > s.0 && e.0 - s.0 <= crate::oncall_day::MAX_COVER_SECONDS => {}
            (Some(_), Some(_)) => c.fail(
                format!("{path}.endsAt"),
                "after the start, at most 14 days later",
            ),
            _ => c.fail(path, "startsAt and endsAt are RFC 3339 times"),
        }
    }
}
