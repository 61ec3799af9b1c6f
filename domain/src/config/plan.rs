//! What `apply` would change: the steps from the configuration on the server (as `export`
//! writes it) to the one in a file, in a safe order. A section the file leaves out is not
//! touched; a list it gives is matched by name, and what the list does not name is deleted only
//! with `prune`. Incidents and alerts are never part of a plan, and neither is deleting a team
//! (which would delete its incidents): a team the file does not name is left as it is.

use super::rota;
pub use super::step::{FieldChange, Step};
use super::{
    ConfigFile, CoverSpec, EscalationSpec, MaintenanceSpec, RotaSpec, RotationSpec, TeamSpec,
};
use crate::Timestamp;
use serde::Serialize;
use std::fmt;

fn change(field: &str, from: impl fmt::Display, to: impl fmt::Display) -> FieldChange {
    FieldChange {
        field: field.into(),
        from: from.to_string(),
        to: to.to_string(),
    }
}

fn shown<T: Serialize>(v: &T) -> String {
    serde_json::to_string(v).unwrap_or_default()
}

/// Records `field` when the file gives it and it differs from the server's.
fn field<T: PartialEq + Serialize>(
    out: &mut Vec<FieldChange>,
    name: &str,
    now: &T,
    want: &Option<T>,
) {
    if let Some(want) = want {
        if want != now {
            out.push(change(name, shown(now), shown(want)));
        }
    }
}

/// A span of time a team keeps: a maintenance window, a cover.
trait Span: Clone + PartialEq {
    fn starts_at(&mut self) -> &mut String;
    fn times(&self) -> (&str, &str);
    /// Whether `other` is the same thing but for its times (a cover's person).
    fn alike(&self, _other: &Self) -> bool {
        true
    }
    fn bounds(&self) -> Option<(Timestamp, Timestamp)> {
        let (start, end) = self.times();
        Some((Timestamp::parse(start)?, Timestamp::parse(end)?))
    }
    fn starting(&self, at: Timestamp) -> Self {
        let mut from_now = self.clone();
        *from_now.starts_at() = at.to_rfc3339();
        from_now
    }
}

impl Span for MaintenanceSpec {
    fn starts_at(&mut self) -> &mut String {
        &mut self.starts_at
    }
    fn times(&self) -> (&str, &str) {
        (&self.starts_at, &self.ends_at)
    }
}

impl Span for CoverSpec {
    fn starts_at(&mut self) -> &mut String {
        &mut self.starts_at
    }
    fn times(&self) -> (&str, &str) {
        (&self.starts_at, &self.ends_at)
    }
    /// The same person, covering the same one (a file that names nobody takes whom the
    /// server chose).
    fn alike(&self, other: &Self) -> bool {
        self.username == other.username
            && (self.covering.is_none() || self.covering == other.covering)
    }
}

/// Whether the server's `have` is the file's `want`: the same instants however written, or,
/// once both have begun, the same end (the server's copy began when it was made).
fn same_span<S: Span>(want: &S, have: &S, at: Timestamp) -> bool {
    match (want.bounds(), have.bounds()) {
        (Some((ws, we)), Some((hs, he))) => {
            want.alike(have) && we == he && (ws == hs || (ws <= at && hs <= at))
        }
        _ => want == have,
    }
}

/// What to make (and whether from now) and, with `prune`, what to end, at `at`. A span of the
/// file that has ended is history: there is nothing to make. One that has begun is made from
/// now, as the server makes nothing in the past; one the server holds is left as it is.
fn spans<S: Span>(want: &[S], have: &[S], prune: bool, at: Timestamp) -> (Vec<(S, bool)>, Vec<S>) {
    let make = want
        .iter()
        .filter(|w| w.bounds().is_none_or(|(_, end)| end > at))
        .filter(|w| !have.iter().any(|h| same_span(*w, h, at)))
        .map(|w| match w.bounds() {
            Some((start, _)) if start < at => (w.starting(at), true),
            _ => (w.clone(), false),
        })
        .collect();
    let end = have
        .iter()
        .filter(|h| prune && !want.iter().any(|w| same_span(w, *h, at)))
        .cloned()
        .collect();
    (make, end)
}

/// The steps from `current` to `desired` at `at` (the server's clock); empty when there is
/// nothing to do.
pub fn plan(current: &ConfigFile, desired: &ConfigFile, prune: bool, at: Timestamp) -> Vec<Step> {
    let mut steps = Vec::new();
    if let Some(want) = &desired.settings {
        let now = current.settings.clone().unwrap_or_default();
        let mut changes = Vec::new();
        field(
            &mut changes,
            "signupMode",
            &now.signup_mode.unwrap_or_default(),
            &want.signup_mode,
        );
        field(
            &mut changes,
            "notifyRepeatInterval",
            &now.notify_repeat_interval.clone().unwrap_or_default(),
            &want.notify_repeat_interval,
        );
        field(
            &mut changes,
            "staleAfter",
            &now.stale_after.clone().unwrap_or_default(),
            &want.stale_after,
        );
        field(
            &mut changes,
            "archiveAfter",
            &now.archive_after.clone().unwrap_or_default(),
            &want.archive_after,
        );
        if !changes.is_empty() {
            steps.push(Step::Settings {
                to: want.clone(),
                changes,
            });
        }
    }
    for want in &desired.teams {
        let empty = TeamSpec::named(&want.name);
        let now = match current.teams.iter().find(|t| t.name == want.name) {
            Some(now) => now,
            None => {
                steps.push(Step::CreateTeam {
                    team: want.name.clone(),
                    display_name: want.display_name.clone(),
                });
                &empty
            }
        };
        team_steps(&mut steps, now, want, prune, std::ptr::eq(now, &empty), at);
    }
    // Each kind's deletions before its makings (a replaced item keeps its name), people last:
    // a ladder or a rotation stops naming someone before they leave the team.
    steps.sort_by_key(order);
    steps
}

fn order(step: &Step) -> usize {
    use Step::*;
    match step {
        Settings { .. } => 0,
        CreateTeam { .. } => 1,
        RenameTeam { .. } => 2,
        OncallDay { .. } => 3,
        Oidc { .. } => 4,
        AddMember { .. } => 5,
        SetRole { .. } => 6,
        DeleteAlertSource { .. } => 7,
        CreateAlertSource { .. } => 8,
        ChangeAlertSource { .. } => 8,
        DeleteSwitch { .. } => 9,
        CreateSwitch { .. } => 10,
        ChangeSwitch { .. } => 11,
        DeleteRotation { .. } => 12,
        CreateRotation { .. } => 13,
        // After the rotations (whose `fillDays` it overrides) and before the ladder, whose
        // on-call levels need someone on the rota.
        Rota { .. } => 14,
        Escalation { .. } => 15,
        HandoffNotices { .. } => 16,
        EndMaintenance { .. } => 17,
        CreateMaintenance { .. } => 18,
        EndCover { .. } => 18,
        CreateCover { .. } => 18,
        DeleteChannel { .. } => 19,
        CreateChannel { .. } => 20,
        ChangeChannel { .. } => 21,
        RemoveMember { .. } => 22,
    }
}

mod team;

use team::team_steps;

#[cfg(test)]
mod tests;
