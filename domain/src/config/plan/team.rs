//! A team's steps: its display name, members, rotations, schedule, covers, ladder, channels,
//! maintenance windows, alert sources and dead man's switches, each matched by name.

use super::*;

pub(super) fn team_steps(
    steps: &mut Vec<Step>,
    now: &TeamSpec,
    want: &TeamSpec,
    prune: bool,
    new: bool,
    at: Timestamp,
) {
    let diff = Diff {
        now,
        want,
        prune,
        new,
        at,
    };
    diff.settings(steps);
    diff.lists(steps);
    diff.times(steps);
}

/// A team as it is (`now`) and as the file wants it.
#[derive(Clone, Copy)]
struct Diff<'a> {
    now: &'a TeamSpec,
    want: &'a TeamSpec,
    prune: bool,
    /// The team is made by this plan.
    new: bool,
    at: Timestamp,
}

impl Diff<'_> {
    /// Its name, on-call day, single sign-on groups, members and alert sources.
    fn settings(&self, steps: &mut Vec<Step>) {
        let &Diff {
            now,
            want,
            prune,
            new,
            ..
        } = self;
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
                    // Templates or rules given and not the server's: replaced in place, same URL.
                    Some(h) => {
                        let mut changes = Vec::new();
                        if s.templates.is_some() {
                            field(
                                &mut changes,
                                "templates",
                                &h.templates,
                                &Some(s.templates.clone()),
                            );
                        }
                        field(
                            &mut changes,
                            "rules",
                            &h.rules.clone().unwrap_or_default(),
                            &s.rules,
                        );
                        if !changes.is_empty() {
                            steps.push(Step::ChangeAlertSource {
                                team: team(),
                                source: s.clone(),
                                changes,
                            });
                        }
                    }
                }
            }
            for name in unnamed(prune, &have, list, |x| &x.name) {
                steps.push(Step::DeleteAlertSource { team: team(), name });
            }
        }
    }

    /// Its dead man's switches, rotations, ladder and hand-off notices.
    fn lists(&self, steps: &mut Vec<Step>) {
        let &Diff {
            now, want, prune, ..
        } = self;
        let team = || want.name.clone();
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
        if let Some(list) = &want.rota {
            rota_steps(steps, self, list);
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
    }

    /// Its maintenance windows, covers and channels.
    fn times(&self, steps: &mut Vec<Step>) {
        let &Diff {
            now,
            want,
            prune,
            at,
            ..
        } = self;
        let team = || want.name.clone();
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
}

/// The rota's dates from the team's today on: each person's dates that are not theirs yet (one
/// step per person), and with `prune` the dates the file leaves to nobody.
fn rota_steps(steps: &mut Vec<Step>, diff: &Diff, list: &[RotaSpec]) {
    let Diff {
        now, want, prune, ..
    } = *diff;
    let today = rota::today(want, Some(now), diff.at);
    let from_today = |runs: &[RotaSpec]| {
        let mut days = rota::holders(runs);
        days.retain(|date, _| *date >= today);
        days
    };
    let (wanted, held) = (
        from_today(list),
        from_today(now.rota.as_deref().unwrap_or(&[])),
    );
    let mut give: std::collections::BTreeMap<&str, (Vec<String>, Vec<String>)> = Default::default();
    for (date, who) in &wanted {
        let (dates, replacing) = give.entry(who).or_default();
        match held.get(date) {
            Some(h) if h == who => {}
            Some(_) => {
                dates.push(date.clone());
                replacing.push(date.clone());
            }
            None => dates.push(date.clone()),
        }
    }
    for (who, (dates, replacing)) in give {
        if !dates.is_empty() {
            steps.push(Step::Rota {
                team: want.name.clone(),
                username: Some(who.to_string()),
                dates,
                replacing,
            });
        }
    }
    let cleared: Vec<String> = held
        .keys()
        .filter(|d| prune && !wanted.contains_key(*d))
        .cloned()
        .collect();
    if !cleared.is_empty() {
        steps.push(Step::Rota {
            team: want.name.clone(),
            username: None,
            dates: cleared.clone(),
            replacing: cleared,
        });
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
