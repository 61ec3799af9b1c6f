//! What `apply` would change: the steps from the configuration on the server (as `export`
//! writes it) to the one in a file, in a safe order. A section the file leaves out is not
//! touched; a list it gives is matched by name, and what the list does not name is deleted only
//! with `prune`. Incidents and alerts are never part of a plan, and neither is deleting a team
//! (which would delete its incidents): a team the file does not name is left as it is.

pub use super::step::{FieldChange, Step};
use super::{ConfigFile, CoverSpec, EscalationSpec, MaintenanceSpec, RotationSpec, TeamSpec};
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
    fn alike(&self, other: &Self) -> bool {
        self.username == other.username
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
        DeleteSwitch { .. } => 9,
        CreateSwitch { .. } => 10,
        ChangeSwitch { .. } => 11,
        DeleteRotation { .. } => 12,
        CreateRotation { .. } => 13,
        Escalation { .. } => 14,
        HandoffNotices { .. } => 15,
        EndMaintenance { .. } => 16,
        CreateMaintenance { .. } => 17,
        EndCover { .. } => 17,
        CreateCover { .. } => 17,
        DeleteChannel { .. } => 18,
        CreateChannel { .. } => 19,
        ChangeChannel { .. } => 20,
        RemoveMember { .. } => 21,
    }
}

fn team_steps(
    steps: &mut Vec<Step>,
    now: &TeamSpec,
    want: &TeamSpec,
    prune: bool,
    new: bool,
    at: Timestamp,
) {
    let team = || want.name.clone();
    if let Some(to) = &want.display_name {
        let from = now.display_name.clone().unwrap_or_else(|| now.name.clone());
        if !new && &from != to {
            steps.push(Step::RenameTeam {
                team: team(),
                from,
                to: to.clone(),
            });
        }
    }
    if want.time_zone.is_some() || want.handoff_time.is_some() {
        let zone = now.time_zone.clone().unwrap_or_else(|| "UTC".into());
        let at = now.handoff_time.clone().unwrap_or_else(|| "00:00".into());
        let mut changes = Vec::new();
        field(&mut changes, "timeZone", &zone, &want.time_zone);
        field(&mut changes, "handoffTime", &at, &want.handoff_time);
        if !changes.is_empty() {
            steps.push(Step::OncallDay {
                team: team(),
                changes,
                time_zone: want.time_zone.clone().unwrap_or(zone),
                handoff_time: want.handoff_time.clone().unwrap_or(at),
            });
        }
    }
    if let Some(to) = &want.oidc {
        if now.oidc.clone().unwrap_or_default() != *to {
            steps.push(Step::Oidc {
                team: team(),
                to: to.clone(),
            });
        }
    }
    if let Some(list) = &want.members {
        let have = now.members.clone().unwrap_or_default();
        for m in list {
            match have.iter().find(|h| h.username == m.username) {
                None => steps.push(Step::AddMember {
                    team: team(),
                    username: m.username.clone(),
                    role: m.role,
                }),
                Some(h) if h.role != m.role => steps.push(Step::SetRole {
                    team: team(),
                    username: m.username.clone(),
                    from: h.role,
                    to: m.role,
                }),
                Some(_) => {}
            }
        }
        for username in unnamed(prune, &have, list, |x| &x.username) {
            steps.push(Step::RemoveMember {
                team: team(),
                username,
            });
        }
    }
    if let Some(list) = &want.alert_sources {
        let have = now.alert_sources.clone().unwrap_or_default();
        for s in list {
            match have.iter().find(|h| h.name == s.name) {
                None => steps.push(Step::CreateAlertSource {
                    team: team(),
                    source: s.clone(),
                }),
                // A new kind is a new integration, with a new URL.
                Some(h) if h.kind != s.kind => {
                    steps.push(Step::DeleteAlertSource {
                        team: team(),
                        name: h.name.clone(),
                    });
                    steps.push(Step::CreateAlertSource {
                        team: team(),
                        source: s.clone(),
                    });
                }
                Some(_) => {}
            }
        }
        for name in unnamed(prune, &have, list, |x| &x.name) {
            steps.push(Step::DeleteAlertSource { team: team(), name });
        }
    }
    if let Some(list) = &want.deadman_switches {
        let have = now.deadman_switches.clone().unwrap_or_default();
        for s in list {
            match have.iter().find(|h| h.name == s.name) {
                None => steps.push(Step::CreateSwitch {
                    team: team(),
                    switch: s.clone(),
                }),
                Some(h) if h != s => {
                    let mut changes = Vec::new();
                    field(
                        &mut changes,
                        "matcher",
                        &h.matcher,
                        &Some(s.matcher.clone()),
                    );
                    field(
                        &mut changes,
                        "timeout",
                        &h.timeout,
                        &Some(s.timeout.clone()),
                    );
                    field(&mut changes, "severity", &h.severity, &Some(s.severity));
                    steps.push(Step::ChangeSwitch {
                        team: team(),
                        switch: s.clone(),
                        changes,
                    });
                }
                Some(_) => {}
            }
        }
        for name in unnamed(prune, &have, list, |x| &x.name) {
            steps.push(Step::DeleteSwitch { team: team(), name });
        }
    }
    if let Some(list) = &want.rotations {
        let have = now.rotations.clone().unwrap_or_default();
        for r in list {
            // `fillDays` is read when the rotation is made, never compared.
            let bare = |x: &RotationSpec| RotationSpec {
                fill_days: None,
                ..x.clone()
            };
            match have.iter().find(|h| h.name == r.name) {
                None => steps.push(Step::CreateRotation {
                    team: team(),
                    rotation: r.clone(),
                }),
                Some(h) if bare(h) != bare(r) => {
                    steps.push(Step::DeleteRotation {
                        team: team(),
                        name: h.name.clone(),
                    });
                    steps.push(Step::CreateRotation {
                        team: team(),
                        rotation: r.clone(),
                    });
                }
                Some(_) => {}
            }
        }
        for name in unnamed(prune, &have, list, |x| &x.name) {
            steps.push(Step::DeleteRotation { team: team(), name });
        }
    }
    if let Some(to) = &want.escalation {
        let from = now.escalation.clone().unwrap_or_default();
        let mut normal = to.clone();
        normal.low_urgency.sort();
        normal.low_urgency.dedup();
        if from != normal {
            let mut changes = Vec::new();
            if from.levels != normal.levels {
                changes.push(change("levels", ladder_text(&from), ladder_text(&normal)));
            }
            field(&mut changes, "repeat", &from.repeat, &Some(normal.repeat));
            field(
                &mut changes,
                "fallbackTopic",
                &from.fallback_topic,
                &Some(normal.fallback_topic.clone()),
            );
            field(
                &mut changes,
                "lowUrgency",
                &from.low_urgency,
                &Some(normal.low_urgency.clone()),
            );
            steps.push(Step::Escalation {
                team: team(),
                to: normal,
                changes,
            });
        }
    }
    if let Some(to) = want.handoff_notices {
        if now.handoff_notices.unwrap_or(false) != to {
            steps.push(Step::HandoffNotices { team: team(), to });
        }
    }
    if let Some(list) = &want.maintenance_windows {
        let have = now.maintenance_windows.clone().unwrap_or_default();
        let (make, end) = spans(list, &have, prune, at);
        for (window, from_now) in make {
            steps.push(Step::CreateMaintenance {
                team: team(),
                window,
                from_now,
            });
        }
        for window in end {
            steps.push(Step::EndMaintenance {
                team: team(),
                window,
            });
        }
    }
    if let Some(list) = &want.covers {
        let have = now.covers.clone().unwrap_or_default();
        let (make, end) = spans(list, &have, prune, at);
        for (cover, from_now) in make {
            steps.push(Step::CreateCover {
                team: team(),
                cover,
                from_now,
            });
        }
        for cover in end {
            steps.push(Step::EndCover {
                team: team(),
                cover,
            });
        }
    }
    if let Some(list) = &want.channels {
        let have = now.channels.clone().unwrap_or_default();
        for ch in list {
            match have.iter().find(|h| h.name == ch.name) {
                None => steps.push(Step::CreateChannel {
                    team: team(),
                    channel: ch.clone(),
                }),
                // A kind cannot change in place.
                Some(h) if h.kind != ch.kind => {
                    steps.push(Step::DeleteChannel {
                        team: team(),
                        name: h.name.clone(),
                    });
                    steps.push(Step::CreateChannel {
                        team: team(),
                        channel: ch.clone(),
                    });
                }
                Some(h) => {
                    // A webhook's URL is a secret the server never shows: it is not compared.
                    let mut changes = Vec::new();
                    field(&mut changes, "room", &h.room, &Some(ch.room.clone()));
                    let all = crate::channel::ChannelEvent::ALL.to_vec();
                    let events = |e: &Option<Vec<_>>| e.clone().unwrap_or_else(|| all.clone());
                    field(
                        &mut changes,
                        "events",
                        &events(&h.events),
                        &Some(events(&ch.events)),
                    );
                    field(
                        &mut changes,
                        "severities",
                        &h.severities,
                        &Some(ch.severities.clone()),
                    );
                    if !changes.is_empty() {
                        steps.push(Step::ChangeChannel {
                            team: team(),
                            channel: ch.clone(),
                            changes,
                        });
                    }
                }
            }
        }
        for name in unnamed(prune, &have, list, |x| &x.name) {
            steps.push(Step::DeleteChannel { team: team(), name });
        }
    }
}

/// The names (by `key`) of what `have` holds and `list` does not name, when pruning.
fn unnamed<T>(prune: bool, have: &[T], list: &[T], key: impl Fn(&T) -> &String) -> Vec<String> {
    if !prune {
        return Vec::new();
    }
    have.iter()
        .filter(|h| !list.iter().any(|l| key(l) == key(h)))
        .map(|h| key(h).clone())
        .collect()
}

fn ladder_text(ladder: &EscalationSpec) -> String {
    if ladder.levels.is_empty() {
        return "none".into();
    }
    ladder
        .levels
        .iter()
        .map(|l| {
            let who: Vec<String> = l
                .targets
                .iter()
                .map(|t| t.username.clone().unwrap_or_else(|| "oncall".into()))
                .collect();
            format!("{} {}", l.timeout, who.join("+"))
        })
        .collect::<Vec<_>>()
        .join(", then ")
}

#[cfg(test)]
mod tests;
