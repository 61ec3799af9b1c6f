//! Rotations and swaps: ways to fill and change the per-date schedule, which stays the one
//! record of who is on call. A rotation is an ordered list of members taking turns of
//! `shift_days` days from `start_date`; applying it writes ordinary schedule entries.

use crate::calendar::parse_date;
use crate::Timestamp;
use serde::{Deserialize, Serialize};
use time::Date;

/// Most dates one application may fill (a year).
pub const MAX_APPLY_DATES: usize = 365;
pub const MAX_SHIFT_DAYS: i64 = 365;
pub const MAX_MEMBERS: usize = 100;
pub const MAX_NAME: usize = 100;

/// `GET|POST /api/teams/{team_id}/rotations`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Rotation {
    pub id: i64,
    pub team_id: i64,
    pub name: String,
    /// Members in turn order; one person may appear more than once.
    pub user_ids: Vec<i64>,
    pub shift_days: i64,
    /// The first day of the first shift, `YYYY-MM-DD` (UTC).
    pub start_date: String,
}

/// A rotation as a team owner writes it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct NewRotation {
    /// 1 to 100 characters.
    #[cfg_attr(feature = "openapi", schema(min_length = 1, max_length = 100))]
    pub name: String,
    /// 1 to 100 members of the team, in turn order.
    #[cfg_attr(feature = "openapi", schema(min_items = 1, max_items = 100))]
    pub user_ids: Vec<i64>,
    /// 1 to 365 days per shift.
    #[cfg_attr(feature = "openapi", schema(minimum = 1, maximum = 365))]
    pub shift_days: i64,
    #[cfg_attr(feature = "openapi", schema(value_type = String, format = Date))]
    pub start_date: String,
}

impl NewRotation {
    /// The rotation's shape, checked before any member lookup; the name comes back trimmed.
    pub fn check(&self) -> Result<NewRotation, String> {
        let name = self.name.trim();
        if name.is_empty() || name.chars().count() > MAX_NAME {
            return Err(format!("name must be 1 to {MAX_NAME} characters"));
        }
        if self.user_ids.is_empty() {
            return Err("user_ids: a rotation needs at least one member".into());
        }
        if self.user_ids.len() > MAX_MEMBERS {
            return Err(format!("user_ids: at most {MAX_MEMBERS} turns"));
        }
        if !(1..=MAX_SHIFT_DAYS).contains(&self.shift_days) {
            return Err(format!("shift_days must be 1 to {MAX_SHIFT_DAYS}"));
        }
        parse_date(&self.start_date)
            .ok_or_else(|| "start_date must be a date YYYY-MM-DD".to_string())?;
        Ok(NewRotation {
            name: name.to_string(),
            ..self.clone()
        })
    }
}

/// Whose turn `date` is: `None` before the rotation starts or when it has no members.
pub fn turn_on(start: Date, shift_days: i64, user_ids: &[i64], date: Date) -> Option<i64> {
    if user_ids.is_empty() || shift_days < 1 || date < start {
        return None;
    }
    let days = (date - start).whole_days();
    let turn = (days / shift_days) as usize % user_ids.len();
    Some(user_ids[turn])
}

/// `POST /api/teams/{team_id}/rotations/{id}/apply`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ApplyRotation {
    #[cfg_attr(feature = "openapi", schema(value_type = String, format = Date))]
    pub from: String,
    /// Inclusive; at most 365 dates from `from`.
    #[cfg_attr(feature = "openapi", schema(value_type = String, format = Date))]
    pub to: String,
    /// Overwrite dates this rotation filled before (dates given by hand are kept and listed in
    /// `skipped`). Without it, any taken date refuses the whole application with 409.
    #[serde(default)]
    pub replace: bool,
    /// Answer what would be written, store nothing.
    #[serde(default)]
    pub dry_run: bool,
}

/// The dates from `from` through `to`, checked: both dates, in order, at most a year.
pub fn apply_range(from: &str, to: &str) -> Result<Vec<Date>, String> {
    let first = parse_date(from).ok_or("from must be a date YYYY-MM-DD")?;
    let last = parse_date(to).ok_or("to must be a date YYYY-MM-DD")?;
    if last < first {
        return Err("to must not be before from".into());
    }
    let count = (last - first).whole_days() + 1;
    if count as usize > MAX_APPLY_DATES {
        return Err(format!(
            "a rotation is applied to at most {MAX_APPLY_DATES} dates at once"
        ));
    }
    Ok((0..count)
        .map(|i| first + time::Duration::days(i))
        .collect())
}

/// One date a rotation application writes (or would write).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct RotationDate {
    pub date: String,
    pub user_id: i64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct AppliedRotation {
    pub dates: Vec<RotationDate>,
    /// Dates kept because someone holds them by hand or by another rotation (with `replace`).
    pub skipped: Vec<String>,
}

/// A date anyone in the team may take: its holder offered it, or left the team.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct OpenDate {
    pub date: String,
    pub user_id: i64,
    pub username: String,
    pub reason: OpenReason,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum OpenReason {
    /// The holder offered it.
    Offered,
    /// The holder is no longer a member of the team: the date needs a new holder.
    Vacated,
}

/// What happened to the schedule, for its change log.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum ChangeKind {
    Offered,
    Withdrawn,
    Taken,
    TakenOver,
    RotationApplied,
    /// Dates given by hand (`POST /api/teams/{id}/schedule`).
    Assigned,
    /// A date removed from the schedule.
    Removed,
    /// A cover made (`POST /api/teams/{id}/covers`).
    Covered,
    /// A cover ended early or removed before it began.
    CoverEnded,
}

crate::words!(ChangeKind, "schedule change" {
    Offered => "offered",
    Withdrawn => "withdrawn",
    Taken => "taken",
    TakenOver => "taken_over",
    RotationApplied => "rotation_applied",
    Assigned => "assigned",
    Removed => "removed",
    Covered => "covered",
    CoverEnded => "cover_ended",
});

/// `GET /api/teams/{team_id}/schedule/changes`: newest first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ScheduleChange {
    pub id: i64,
    pub kind: ChangeKind,
    /// The date changed (the first date of a rotation's application).
    pub date: String,
    /// Who did it.
    pub actor: Option<String>,
    /// The holder before (offers, takes, take-overs).
    pub from_user: Option<String>,
    /// The holder after.
    pub to_user: Option<String>,
    /// What it was, in a sentence.
    pub text: String,
    pub at: Timestamp,
}

/// `POST …/schedule/{date}/take` and `…/schedule/take-over`: an owner may name who gets it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct TakeDate {
    /// Who gets the date (owners only); the caller when absent.
    #[serde(default)]
    pub user_id: Option<i64>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(s: &str) -> Date {
        parse_date(s).unwrap()
    }

    #[test]
    fn turns_follow_shift_length_and_wrap() {
        let start = d("2026-12-01");
        let who = |date| turn_on(start, 7, &[1, 2, 3], d(date));
        assert_eq!(who("2026-11-30"), None);
        assert_eq!(who("2026-12-01"), Some(1));
        assert_eq!(who("2026-12-07"), Some(1));
        assert_eq!(who("2026-12-08"), Some(2));
        assert_eq!(who("2026-12-15"), Some(3));
        assert_eq!(who("2026-12-22"), Some(1));
        assert_eq!(who("2026-12-29"), Some(2));
        assert_eq!(turn_on(start, 1, &[], d("2026-12-02")), None);
    }

    #[test]
    fn ranges_are_ordered_and_at_most_a_year() {
        assert_eq!(apply_range("2026-12-01", "2026-12-03").unwrap().len(), 3);
        assert_eq!(apply_range("2027-01-01", "2027-12-31").unwrap().len(), 365);
        assert!(apply_range("2028-01-01", "2028-12-31").is_err());
        assert!(apply_range("2026-12-03", "2026-12-01").is_err());
        assert!(apply_range("2026-12-01", "soon").is_err());
    }

    #[test]
    fn rotations_need_members_a_name_and_a_shift_length() {
        let ok = NewRotation {
            name: " weekly ".into(),
            user_ids: vec![1, 2],
            shift_days: 7,
            start_date: "2026-12-01".into(),
        };
        assert_eq!(ok.check().unwrap().name, "weekly");
        for bad in [
            NewRotation {
                user_ids: vec![],
                ..ok.clone()
            },
            NewRotation {
                name: "  ".into(),
                ..ok.clone()
            },
            NewRotation {
                shift_days: 0,
                ..ok.clone()
            },
            NewRotation {
                shift_days: 366,
                ..ok.clone()
            },
            NewRotation {
                start_date: "2026-02-30".into(),
                ..ok.clone()
            },
        ] {
            assert!(bad.check().is_err(), "{bad:?}");
        }
    }
}

/// How many days ahead the rota's "your dates" lists, today included.
pub const MY_DAYS: usize = 60;
/// How many changes the rota page shows.
pub const RECENT_CHANGES: i64 = 10;

/// A rotation with its members' names in turn order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NamedRotation {
    pub rotation: Rotation,
    pub names: Vec<String>,
}

/// One of the caller's coming dates.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MyDate {
    pub date: String,
    pub offered: bool,
}

/// A team's rota page, read in one core call, with what the caller may do.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Rota {
    pub today: String,
    pub me: i64,
    /// Whether the caller may manage the team: rotations, hand-off notices, anyone's dates.
    pub may_manage: bool,
    /// Today's holder, if anyone.
    pub holder: Option<crate::schedule::ScheduleEntry>,
    /// Dates anyone may take, the caller's own offers included.
    pub open: Vec<OpenDate>,
    pub mine: Vec<MyDate>,
    pub rotations: Vec<NamedRotation>,
    pub changes: Vec<ScheduleChange>,
    pub handoff: crate::handoff::HandoffSettings,
}

/// A rotation's filling as the rota page shows it: each date with its holder's name.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Filling {
    pub rotation_id: i64,
    pub from: String,
    pub to: String,
    pub preview: bool,
    /// Date and holder, in date order.
    pub dates: Vec<(String, String)>,
    /// Dates kept as they were (given by hand or by another rotation).
    pub skipped: Vec<String>,
}
