//! The checks a file passes before `apply` changes anything: its own shape (names, durations,
//! zones, bounds, duplicates) and what it says about people (every username exists, every
//! ladder level can reach someone). Each problem names the field by its path in the file
//! (`teams[0].escalation.levels[1].targets[0].username`), which the reader maps to a line.

use super::{
    AlertSourceSpec, ChannelSpec, ConfigFile, DeadmanSwitchSpec, EscalationSpec, MaintenanceSpec,
    TargetKind, TeamSpec, API_VERSION, KIND,
};
use crate::channel::ChannelKind;
use crate::oncall_day::known_zone;
use crate::paging::{LEVEL_TIMEOUT_MAX, LEVEL_TIMEOUT_MIN, MAX_LEVELS, MAX_REPEAT, MAX_TARGETS};
use crate::text::{ClockTime, Label, TeamName, Topic, Username, ZoneName};
use crate::{Duration, Timestamp};
use std::collections::{BTreeSet, HashSet};

mod rota;
mod turns;
use rota::check_rota;
use turns::{check_covers, check_rotations};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    pub path: String,
    pub message: String,
}

/// What the checks need to know of the server: its accounts, and the teams' members as they
/// are now (for a team whose file leaves `members` out).
pub struct Known<'a> {
    pub usernames: &'a HashSet<String>,
    pub current: &'a ConfigFile,
    /// Whether an environment variable named in the file is set.
    pub env_is_set: &'a dyn Fn(&str) -> bool,
    /// The server's clock: rota dates before a team's today are history.
    pub at: Timestamp,
}

struct Checker {
    problems: Vec<Problem>,
}

impl Checker {
    fn fail(&mut self, path: impl Into<String>, message: impl Into<String>) {
        self.problems.push(Problem {
            path: path.into(),
            message: message.into(),
        });
    }

    fn text(&mut self, path: String, raw: &str, parse: fn(&str) -> Result<String, String>) {
        match parse(raw) {
            Ok(v) if v == raw => {}
            Ok(v) => self.fail(path, format!("write it as \"{v}\"")),
            Err(e) => self.fail(path, e),
        }
    }

    fn duration(&mut self, path: String, raw: &str, min: Duration, max: Duration) {
        match raw.parse::<Duration>() {
            Ok(d) if d < min || d > max => self.fail(path, format!("must be {min} to {max}")),
            Ok(_) => {}
            Err(e) => self.fail(path, e),
        }
    }

    fn unique<'a>(&mut self, path: &str, names: impl Iterator<Item = &'a str>, what: &str) {
        let mut seen = HashSet::new();
        for (i, name) in names.enumerate() {
            if !seen.insert(name.to_lowercase()) {
                self.fail(
                    format!("{path}[{i}].name"),
                    format!("a second {what} named \"{name}\""),
                );
            }
        }
    }
}

/// Every problem of `file`, in the order of the file; empty when `apply` may go ahead.
pub fn check(file: &ConfigFile, known: &Known) -> Vec<Problem> {
    let mut c = Checker {
        problems: Vec::new(),
    };
    if file.api_version != API_VERSION {
        c.fail("apiVersion", format!("must be {API_VERSION}"));
    }
    if file.kind != KIND {
        c.fail("kind", format!("must be {KIND}"));
    }
    if let Some(s) = &file.settings {
        let wide = (Duration::minutes(1), Duration::days(365));
        for (field, value) in [
            ("notifyRepeatInterval", &s.notify_repeat_interval),
            ("staleAfter", &s.stale_after),
            ("archiveAfter", &s.archive_after),
        ] {
            if let Some(v) = value {
                c.duration(format!("settings.{field}"), v, wide.0, wide.1);
            }
        }
    }
    let mut names = HashSet::new();
    // The teams a routing rule may name: the file's and the server's.
    let teams: HashSet<&str> = (file.teams.iter())
        .chain(&known.current.teams)
        .map(|t| t.name.as_str())
        .collect();
    for (t, team) in file.teams.iter().enumerate() {
        let at = format!("teams[{t}]");
        c.text(format!("{at}.name"), &team.name, |s| {
            TeamName::parse(s).map(String::from)
        });
        if !names.insert(team.name.to_lowercase()) {
            c.fail(
                format!("{at}.name"),
                format!("a second team named \"{}\"", team.name),
            );
        }
        check_team(&mut c, &at, team, known, &teams);
    }
    c.problems
}

fn check_team(c: &mut Checker, at: &str, team: &TeamSpec, known: &Known, teams: &HashSet<&str>) {
    check_names(c, at, team);
    let mut person = |c: &mut Checker, path: String, username: &str| {
        match Username::parse(username) {
            Ok(u) if u.as_str() != username => c.fail(path, format!("write it as \"{}\"", u.as_str())),
            Ok(_) if !known.usernames.contains(username) => c.fail(
                path,
                format!("no account named \"{username}\" on the server: invite them, and apply once they have signed up"),
            ),
            Ok(_) => {}
            Err(e) => c.fail(path, e),
        }
    };
    // The team's people as they will be: the file's list, or the server's when it is left out.
    let members: BTreeSet<&str> = match &team.members {
        Some(list) => list.iter().map(|m| m.username.as_str()).collect(),
        None => known
            .current
            .teams
            .iter()
            .find(|t| t.name == team.name)
            .and_then(|t| t.members.as_ref())
            .map(|list| list.iter().map(|m| m.username.as_str()).collect())
            .unwrap_or_default(),
    };
    if let Some(list) = &team.members {
        let mut seen = HashSet::new();
        for (i, m) in list.iter().enumerate() {
            let path = format!("{at}.members[{i}].username");
            if !seen.insert(m.username.as_str()) {
                c.fail(path.clone(), format!("\"{}\" is listed twice", m.username));
            }
            person(c, path, &m.username);
        }
    }
    if let Some(sources) = &team.alert_sources {
        check_sources(c, at, sources, teams);
    }
    // Whether someone will be on the rota for an on-call level to reach: the file's rota, or
    // the server's when it is left out, or a rotation the file has fill dates. Dates before the
    // team's today are history.
    let current = known.current.teams.iter().find(|t| t.name == team.name);
    let on_rota = match &team.rota {
        Some(list) => {
            let today = super::rota::today(team, current, known.at);
            list.iter().any(|run| run.to >= today)
        }
        None => current
            .and_then(|t| t.rota.as_ref())
            .is_some_and(|r| !r.is_empty()),
    } || team
        .rotations
        .iter()
        .flatten()
        .any(|r| r.fill_days.is_some());
    if let Some(ladder) = &team.escalation {
        check_ladder(
            c,
            &format!("{at}.escalation"),
            ladder,
            (&members, on_rota),
            &mut person,
        );
    }
    if let Some(rota) = &team.rota {
        check_rota(c, at, rota, (&members, known), &mut person);
    }
    if let Some(rotations) = &team.rotations {
        check_rotations(c, at, rotations, (&members, known), &mut person);
    }
    if let Some(switches) = &team.deadman_switches {
        check_switches(c, at, switches);
    }
    if let Some(windows) = &team.maintenance_windows {
        check_windows(c, at, windows);
    }
    if let Some(covers) = &team.covers {
        check_covers(c, at, covers, (&members, known), &mut person);
    }
    if let Some(channels) = &team.channels {
        check_channels(c, at, channels, known);
    }
}

/// A team's display name, time zone, hand-off time and single sign-on groups.
fn check_names(c: &mut Checker, at: &str, team: &TeamSpec) {
    if let Some(d) = &team.display_name {
        c.text(format!("{at}.displayName"), d, |s| {
            Label::parse(s).map(String::from)
        });
    }
    if let Some(z) = &team.time_zone {
        match ZoneName::parse(z) {
            Ok(_) if known_zone(z) => {}
            Ok(_) => c.fail(
                format!("{at}.timeZone"),
                format!("no time zone named \"{z}\""),
            ),
            Err(e) => c.fail(format!("{at}.timeZone"), e),
        }
    }
    if let Some(h) = &team.handoff_time {
        c.text(format!("{at}.handoffTime"), h, |s| {
            ClockTime::parse(s).map(String::from)
        });
    }
    if let Some(oidc) = &team.oidc {
        for (field, groups) in [
            ("memberGroups", &oidc.member_groups),
            ("ownerGroups", &oidc.owner_groups),
        ] {
            for (i, g) in groups.iter().enumerate() {
                if g.trim().is_empty() || g.len() > 256 {
                    c.fail(
                        format!("{at}.oidc.{field}[{i}]"),
                        "a group's name is 1 to 256 characters",
                    );
                }
            }
        }
    }
}

/// A team's alert sources: names, each once; templates and routing rules within their bounds.
fn check_sources(c: &mut Checker, at: &str, sources: &[AlertSourceSpec], teams: &HashSet<&str>) {
    for (i, s) in sources.iter().enumerate() {
        c.text(format!("{at}.alertSources[{i}].name"), &s.name, |s| {
            Label::parse(s).map(String::from)
        });
        let path = format!("{at}.alertSources[{i}].templates");
        match &s.templates {
            Some(_) if s.kind != crate::incident::IntegrationKind::Webhook => {
                c.fail(path, "only a source of kind webhook has templates")
            }
            Some(t) => {
                if let Err(e) = t.check_bounds() {
                    c.fail(path, e);
                }
            }
            None => {}
        }
        if let Some(rules) = &s.rules {
            if let Err(e) = check_rules(rules) {
                // The rules' own error names the rule: `rules[2].labels: …`.
                let (rule, why) = e.split_once(": ").unwrap_or(("rules", &e));
                c.fail(format!("{at}.alertSources[{i}].{rule}"), why);
            }
            for (r, rule) in rules.iter().enumerate() {
                match rule.team.as_deref() {
                    Some(name) if !teams.contains(name) => c.fail(
                        format!("{at}.alertSources[{i}].rules[{r}].team"),
                        format!("no team named \"{name}\" in the file or on the server"),
                    ),
                    _ => {}
                }
            }
        }
    }
    c.unique(
        &format!("{at}.alertSources"),
        sources.iter().map(|s| s.name.as_str()),
        "alert source",
    );
}
/// Routing rules' bounds and, where the parser is built in, their matchers.
fn check_rules(rules: &[crate::routing::RoutingRule]) -> Result<(), String> {
    #[cfg(feature = "matcher")]
    return crate::routing::Rules::compile(rules).map(|_| ());
    #[cfg(not(feature = "matcher"))]
    return crate::routing::check(rules);
}

/// A team's dead man's switches: names, matchers, timeouts, each name once.
fn check_switches(c: &mut Checker, at: &str, switches: &[DeadmanSwitchSpec]) {
    for (i, s) in switches.iter().enumerate() {
        let path = format!("{at}.deadmanSwitches[{i}]");
        c.text(format!("{path}.name"), &s.name, |s| {
            Label::parse(s).map(String::from)
        });
        if s.matcher.trim().is_empty() || s.matcher.len() > 1000 {
            c.fail(
                format!("{path}.matcher"),
                "a matcher such as {alertname=\"Watchdog\"}",
            );
        }
        c.duration(
            format!("{path}.timeout"),
            &s.timeout,
            Duration::minutes(1),
            Duration::days(7),
        );
    }
    c.unique(
        &format!("{at}.deadmanSwitches"),
        switches.iter().map(|s| s.name.as_str()),
        "switch",
    );
}

/// A team's maintenance windows: RFC 3339 times, 5 minutes to 24 hours long.
fn check_windows(c: &mut Checker, at: &str, windows: &[MaintenanceSpec]) {
    for (i, w) in windows.iter().enumerate() {
        let path = format!("{at}.maintenanceWindows[{i}]");
        let start = Timestamp::parse(&w.starts_at);
        let end = Timestamp::parse(&w.ends_at);
        if start.is_none() {
            c.fail(
                format!("{path}.startsAt"),
                "an RFC 3339 time, e.g. 2026-12-01T22:00:00Z",
            );
        }
        if end.is_none() {
            c.fail(
                format!("{path}.endsAt"),
                "an RFC 3339 time, e.g. 2026-12-01T23:00:00Z",
            );
        }
        if let (Some(s), Some(e)) = (start, end) {
            let length = Duration::seconds(e.0 - s.0);
            if length < crate::maintenance::MIN_LENGTH || length > crate::maintenance::MAX_LENGTH {
                c.fail(
                    format!("{path}.endsAt"),
                    "5 minutes to 24 hours after the start",
                );
            }
        }
    }
}

/// A team's channels: a Matrix channel names its room; a webhook the variable holding its URL,
/// which must be set; events, when given, are not none; each name once.
fn check_channels(c: &mut Checker, at: &str, channels: &[ChannelSpec], known: &Known) {
    for (i, ch) in channels.iter().enumerate() {
        let path = format!("{at}.channels[{i}]");
        c.text(format!("{path}.name"), &ch.name, |s| {
            Label::parse(s).map(String::from)
        });
        match (ch.kind, &ch.room, &ch.url_from_env) {
            (ChannelKind::Matrix, Some(_), None) => {}
            (ChannelKind::Matrix, _, _) => c.fail(
                format!("{path}.room"),
                "a matrix channel names its room, and no urlFromEnv",
            ),
            (_, None, Some(var)) if (known.env_is_set)(var) => {}
            (_, None, Some(var)) => c.fail(
                format!("{path}.urlFromEnv"),
                format!("the environment variable {var} (the webhook's URL) is not set"),
            ),
            (_, _, _) => c.fail(
                format!("{path}.urlFromEnv"),
                "a webhook channel names the environment variable holding its URL, and no room",
            ),
        }
        if ch.events.as_ref().is_some_and(|e| e.is_empty()) {
            c.fail(
                format!("{path}.events"),
                "at least one event, or leave it out for every event",
            );
        }
    }
    c.unique(
        &format!("{at}.channels"),
        channels.iter().map(|c| c.name.as_str()),
        "channel",
    );
}

fn check_ladder(
    c: &mut Checker,
    at: &str,
    ladder: &EscalationSpec,
    (members, on_rota): (&BTreeSet<&str>, bool),
    person: &mut dyn FnMut(&mut Checker, String, &str),
) {
    if ladder.levels.len() > MAX_LEVELS {
        c.fail(
            format!("{at}.levels"),
            format!("at most {MAX_LEVELS} levels"),
        );
    }
    if ladder.repeat > MAX_REPEAT {
        c.fail(format!("{at}.repeat"), format!("0 to {MAX_REPEAT}"));
    }
    if let Some(topic) = &ladder.fallback_topic {
        if Topic::parse(topic).is_err() || topic.is_empty() {
            c.fail(format!("{at}.fallbackTopic"), "up to 64 of A-Z a-z 0-9 _ -");
        }
    }
    for (l, level) in ladder.levels.iter().enumerate() {
        let path = format!("{at}.levels[{l}]");
        c.duration(
            format!("{path}.timeout"),
            &level.timeout,
            LEVEL_TIMEOUT_MIN,
            LEVEL_TIMEOUT_MAX,
        );
        if level.targets.is_empty() || level.targets.len() > MAX_TARGETS {
            c.fail(
                format!("{path}.targets"),
                format!("1 to {MAX_TARGETS} targets"),
            );
        }
        let mut reachable = false;
        let mut seen = HashSet::new();
        for (i, target) in level.targets.iter().enumerate() {
            let tpath = format!("{path}.targets[{i}]");
            if !seen.insert(target.clone()) {
                c.fail(tpath.clone(), "listed twice on this level");
            }
            match (target.kind, &target.username) {
                (TargetKind::Oncall, None) => reachable |= !members.is_empty() && on_rota,
                (TargetKind::Oncall, Some(_)) => {
                    c.fail(format!("{tpath}.username"), "an oncall target names nobody")
                }
                (TargetKind::User, None) => c.fail(
                    format!("{tpath}.username"),
                    "a user target needs a username",
                ),
                (TargetKind::User, Some(u)) => {
                    person(c, format!("{tpath}.username"), u);
                    reachable |= members.contains(u.as_str());
                }
            }
        }
        if !reachable && !level.targets.is_empty() {
            c.fail(
                format!("{path}.targets"),
                "nobody on this level can be paged: name a member of the team, or oncall in a team with someone on its rota (a rota, or a rotation with fillDays)",
            );
        }
    }
}
