//! A vendor's `Source` as a Klaxon configuration file, and the report of what had no equivalent
//! and what was approximated: people matched to the accounts Klaxon has by email, teams and their
//! rotations, overrides of the next 90 days, escalation ladders and alert sources.

use super::*;

/// A name as Klaxon takes it (`a-z 0-9 - _`, at most 64).
fn slug(name: &str) -> String {
    let mut out = String::new();
    for c in name.trim().to_lowercase().chars() {
        if c.is_ascii_alphanumeric() || c == '_' {
            out.push(c);
        } else if !out.ends_with('-') {
            out.push('-');
        }
    }
    let s: String = out.trim_matches('-').chars().take(64).collect();
    if s.is_empty() {
        "team".into()
    } else {
        s
    }
}

/// A label (1 to 100 characters).
fn label(name: &str) -> String {
    let s: String = name
        .trim()
        .chars()
        .filter(|c| !c.is_control())
        .take(100)
        .collect();
    if s.is_empty() {
        "unnamed".into()
    } else {
        s
    }
}

fn date_time_in(zone: &jiff::tz::TimeZone, at: i64) -> jiff::civil::DateTime {
    zone.to_datetime(jiff::Timestamp::from_second(at).unwrap_or(jiff::Timestamp::UNIX_EPOCH))
}

/// The accounts a Klaxon already has.
#[derive(Debug, Clone, Default)]
pub struct Accounts {
    /// A lower-case email → the username holding it.
    pub by_email: HashMap<String, String>,
    /// Every username, with an email on file or not.
    pub names: HashSet<String>,
}

/// The Klaxon file for `source`, with people matched to `accounts`; `now` bounds the
/// overrides taken (the next 90 days).
pub fn to_file(source: &Source, accounts: &Accounts, now: i64) -> (ConfigFile, Report) {
    let mut report = Report {
        no_equivalent: source.notes.clone(),
        ..Report::default()
    };
    let usernames = people(source, accounts, &mut report);
    let who = |id: &str| usernames.get(id).cloned();

    let (mut teams, team_names) = teams_of(source, &who);
    // A schedule, policy or integration of no team gets a team of its own, named after it.
    let team_for =
        |teams: &mut BTreeMap<String, TeamSpec>, team: &Option<String>, fallback: &str| -> String {
            if let Some(name) = team.as_deref().and_then(|id| team_names.get(id)) {
                return name.clone();
            }
            let name = slug(fallback);
            teams.entry(name.clone()).or_insert_with(|| {
                let mut t = TeamSpec::named(&name);
                t.display_name = Some(label(fallback));
                t.members = Some(Vec::new());
                t
            });
            name
        };

    let mut rota_of: HashMap<&str, String> = HashMap::new();
    for s in &source.schedules {
        let team_name = team_for(&mut teams, &s.team, &s.name);
        let team = teams.get_mut(&team_name).expect("made above");
        if team.rotations.is_some() {
            report.no_equivalent.push(format!(
                "schedule \"{}\": team {team_name} already takes its rota from another schedule (Klaxon keeps one rota per team)",
                s.name
            ));
            continue;
        }
        rota_of.insert(&s.id, team_name.clone());
        let zone = jiff::tz::TimeZone::get(&s.time_zone).unwrap_or_else(|_| {
            report.approximated.push(format!(
                "schedule \"{}\": unknown time zone {}, read as UTC",
                s.name, s.time_zone
            ));
            jiff::tz::TimeZone::UTC
        });
        team.time_zone = Some(if zone == jiff::tz::TimeZone::UTC {
            "UTC".into()
        } else {
            s.time_zone.clone()
        });
        if let Some(first) = s.layers.first() {
            let local = date_time_in(&zone, first.start);
            team.handoff_time = Some(format!("{:02}:{:02}", local.hour(), local.minute()));
        }
        if s.layers.len() > 1 {
            report.approximated.push(format!(
                "schedule \"{}\": {} layers became {} rotations of team {team_name}; Klaxon's rota names one person per day: the first fills the next 90 dates, apply the others where they should win",
                s.name,
                s.layers.len(),
                s.layers.len()
            ));
        }
        let rotations = rotations(s, &zone, &who, &mut report);
        let days = klaxon_domain::oncall_day::HandOff::new(
            team.time_zone.as_deref().unwrap_or("UTC"),
            team.handoff_time.as_deref().unwrap_or("00:00"),
        )
        .unwrap_or_default();
        let on_call = |at: i64| holder(rotations.first()?, days.day_of(at));
        team.covers = Some(covers(s, &on_call, &who, now, &mut report));
        team.rotations = Some(rotations);
    }
    rota_people_are_members(&mut teams);

    // The team each policy went to, which routes to it send alerts to.
    let mut team_of = HashMap::new();
    for p in &source.policies {
        let team_name = team_for(&mut teams, &p.team, &p.name);
        team_of.insert(p.id.clone(), team_name.clone());
        let team = teams.get_mut(&team_name).expect("made above");
        if team.escalation.is_some() {
            report.no_equivalent.push(format!(
                "escalation policy \"{}\": team {team_name} already has a ladder (Klaxon keeps one per team)",
                p.name
            ));
            continue;
        }
        team.escalation = Some(ladder(p, &team_name, &who, &rota_of, &mut report));
    }

    for i in &source.integrations {
        let Some((kind, mut templates)) = source_kind(i, &mut report) else {
            continue;
        };
        let team_name = team_for(&mut teams, &i.team, &i.name);
        let rules =
            super::oncall_routes::rules(i, &team_name, &team_of, templates.as_mut(), &mut report);
        let team = teams.get_mut(&team_name).expect("made above");
        let sources = team.alert_sources.get_or_insert_with(Vec::new);
        let mut name = label(&i.name);
        while sources.iter().any(|s| s.name == name) {
            name = label(&format!("{name} 2"));
        }
        sources.push(AlertSourceSpec {
            name,
            kind,
            templates,
            rules: Some(rules).filter(|r| !r.is_empty()),
        });
    }
    report.to_invite.sort();
    (ConfigFile::new(None, teams.into_values().collect()), report)
}

/// The kind an integration becomes, with a generic webhook's templates (their approximations
/// reported); `None`, reported, when Klaxon has no equivalent.
fn source_kind(
    i: &super::Integration,
    report: &mut Report,
) -> Option<(IntegrationKind, Option<WebhookTemplates>)> {
    let kind = match i.kind.to_lowercase().as_str() {
        k if k.contains("alertmanager") || k.contains("prometheus") => {
            IntegrationKind::Alertmanager
        }
        k if k.contains("grafana") => IntegrationKind::Grafana,
        "pagerduty" => IntegrationKind::PagerDuty,
        "opsgenie" => IntegrationKind::Opsgenie,
        _ if i.templates.is_some() => IntegrationKind::Webhook,
        _ => {
            report.no_equivalent.push(format!(
                "integration \"{}\" ({}): Klaxon takes Alertmanager, Grafana, PagerDuty Events API and Opsgenie Alert API alerts, and any JSON through a generic webhook (add one and write its templates)",
                i.name, i.kind
            ));
            return None;
        }
    };
    let templates = match (&i.templates, kind) {
        (Some((t, notes)), IntegrationKind::Webhook) => {
            report.approximated.extend(notes.iter().cloned());
            Some(t.clone())
        }
        _ => None,
    };
    Some((kind, templates))
}

/// People: their Klaxon account, else a username suggested from the email as single sign-on
/// makes one (`-2`, `-3`… when taken), never the name of someone else's account. Those without an
/// account are to be invited (`Report::to_invite`).
fn people<'a>(
    source: &'a Source,
    accounts: &Accounts,
    report: &mut Report,
) -> HashMap<&'a str, String> {
    let mut usernames: HashMap<&str, String> = HashMap::new();
    let mut taken: HashSet<String> = accounts.names.clone();
    for u in &source.users {
        let email = u.email.trim().to_lowercase();
        if let Some(name) = accounts.by_email.get(&email) {
            usernames.insert(&u.id, name.clone());
            continue;
        }
        let base = username_base(None, Some(&email)).unwrap_or_else(|| "user".into());
        let name = (1..)
            .map(|n| match n {
                1 => base.clone(),
                n => format!("{base}-{n}"),
            })
            .find(|c| !taken.contains(c))
            .expect("a free name");
        if name != base && accounts.names.contains(&base) {
            let emailless = !accounts.by_email.values().any(|n| *n == base);
            report.approximated.push(if emailless {
                format!("{email}: the account {base} has no email on file, so the file names this person {name}; if {base} is theirs, give it this email and import again")
            } else {
                format!("{email}: the name {base} is another person's account, so the file names this person {name}")
            });
        }
        taken.insert(name.clone());
        report.to_invite.push((email, name.clone()));
        usernames.insert(&u.id, name);
    }
    usernames
}

/// A schedule's layers as rotations of whole days, approximations said in the report; the first
/// fills the next 90 dates, so someone holds the pager from the start.
fn rotations(
    s: &Schedule,
    zone: &jiff::tz::TimeZone,
    who: &dyn Fn(&str) -> Option<String>,
    report: &mut Report,
) -> Vec<RotationSpec> {
    let mut rotations = Vec::new();
    for l in &s.layers {
        let members: Vec<String> = l.users.iter().filter_map(|u| who(u)).collect();
        if members.is_empty() {
            report.no_equivalent.push(format!(
                "schedule \"{}\", layer \"{}\": nobody in it",
                s.name, l.name
            ));
            continue;
        }
        let days = (l.turn_seconds as f64 / 86_400.0).round().clamp(1.0, 365.0) as i64;
        if l.turn_seconds != days * 86_400 {
            report.approximated.push(format!(
                "schedule \"{}\", layer \"{}\": turns of {} hours became {days} day(s) (Klaxon's shifts are whole on-call days)",
                s.name,
                l.name,
                l.turn_seconds / 3600
            ));
        }
        if l.restricted {
            report.approximated.push(format!(
                "schedule \"{}\", layer \"{}\": its restrictions (part of each day or week) became whole days",
                s.name, l.name
            ));
        }
        let start = date_time_in(zone, l.start).date();
        // The first layer fills the next 90 dates, so someone holds the pager from the start.
        let fill_days = rotations.is_empty().then_some(90);
        rotations.push(RotationSpec {
            name: label(&l.name),
            members,
            shift_days: days,
            start_date: start.to_string(),
            fill_days,
        });
    }
    rotations.dedup_by(|a, b| a.name == b.name);
    rotations
}

/// Who `rotation` (the one that fills the rota) puts on call on the team's `date`.
fn holder(rotation: &RotationSpec, date: jiff::civil::Date) -> Option<String> {
    let start = klaxon_domain::calendar::parse_date(&rotation.start_date)?;
    let date = klaxon_domain::calendar::parse_date(&date.to_string())?;
    let turns: Vec<i64> = (0..rotation.members.len() as i64).collect();
    let turn = klaxon_domain::rotation::turn_on(start, rotation.shift_days, &turns, date)?;
    rotation.members.get(turn as usize).cloned()
}

/// A schedule's overrides of the next 90 days as covers of at most 14 days each, each of the
/// person `on_call` at its start. An override of the person on call anyway is left out (a
/// cover of oneself means nothing, and the server refuses it), and reported.
fn covers(
    s: &Schedule,
    on_call: &dyn Fn(i64) -> Option<String>,
    who: &dyn Fn(&str) -> Option<String>,
    now: i64,
    report: &mut Report,
) -> Vec<CoverSpec> {
    let horizon = now + 90 * 86_400;
    let mut covers = Vec::new();
    for o in s
        .overrides
        .iter()
        .filter(|o| o.end > now && o.start < horizon)
    {
        let Some(username) = who(&o.user) else {
            continue;
        };
        let start = o.start.max(now);
        let covering = on_call(start);
        if covering.as_deref() == Some(username.as_str()) {
            report.no_equivalent.push(format!(
                "schedule \"{}\": an override of {username} from {} while the rota has {username} on call anyway: nothing to cover, left out",
                s.name,
                Timestamp(start).to_rfc3339()
            ));
            continue;
        }
        let end = o
            .end
            .min(start + klaxon_domain::oncall_day::MAX_COVER_SECONDS);
        if end < o.end {
            report.approximated.push(format!(
                "schedule \"{}\": an override of {username} longer than 14 days was cut to 14",
                s.name
            ));
        }
        covers.push(CoverSpec {
            username,
            covering,
            starts_at: Timestamp(start).to_rfc3339(),
            ends_at: Timestamp(end).to_rfc3339(),
        });
    }
    covers
}

/// An escalation policy as a ladder: users by username, a schedule as the team's on-call person,
/// waits of 1 minute to 24 hours, at most 10 levels; what was approximated or dropped is reported.
fn ladder(
    p: &Policy,
    team_name: &str,
    who: &dyn Fn(&str) -> Option<String>,
    rota_of: &HashMap<&str, String>,
    report: &mut Report,
) -> EscalationSpec {
    let mut levels = Vec::new();
    for (i, l) in p.levels.iter().enumerate() {
        let mut targets = Vec::new();
        for t in &l.targets {
            match t {
                Target::User(id) => match who(id) {
                    Some(u) => targets.push(EscalationTarget {
                        kind: TargetKind::User,
                        username: Some(u),
                    }),
                    None => report.no_equivalent.push(format!(
                        "escalation policy \"{}\", level {}: an unknown user {id}",
                        p.name,
                        i + 1
                    )),
                },
                Target::Schedule(id) => {
                    if rota_of.get(id.as_str()).map(String::as_str) != Some(team_name) {
                        report.approximated.push(format!(
                            "escalation policy \"{}\", level {}: another team's schedule became this team's on-call person",
                            p.name,
                            i + 1
                        ));
                    }
                    targets.push(EscalationTarget {
                        kind: TargetKind::Oncall,
                        username: None,
                    });
                }
                Target::Other(what) => report.no_equivalent.push(format!(
                    "escalation policy \"{}\", level {}: {what}",
                    p.name,
                    i + 1
                )),
            }
        }
        targets.sort();
        targets.dedup();
        if targets.is_empty() {
            continue;
        }
        let minutes = (l.wait + 59) / 60;
        let clamped = minutes.clamp(1, 24 * 60);
        if clamped != minutes {
            report.approximated.push(format!(
                "escalation policy \"{}\", level {}: a wait of {minutes} minutes became {clamped} (Klaxon waits 1 minute to 24 hours)",
                p.name,
                i + 1
            ));
        }
        levels.push(EscalationLevel {
            timeout: klaxon_domain::Duration::minutes(clamped).to_string(),
            targets,
        });
    }
    if levels.len() > klaxon_domain::paging::MAX_LEVELS {
        report.approximated.push(format!(
            "escalation policy \"{}\": only its first 10 levels were kept",
            p.name
        ));
        levels.truncate(klaxon_domain::paging::MAX_LEVELS);
    }
    let repeat = p.repeat.min(klaxon_domain::paging::MAX_REPEAT);
    if repeat != p.repeat {
        report.approximated.push(format!(
            "escalation policy \"{}\": {} repeats became {repeat}",
            p.name, p.repeat
        ));
    }
    EscalationSpec {
        levels,
        repeat,
        fallback_topic: None,
        low_urgency: Vec::new(),
    }
}

/// The vendor's teams, each with its members (those who manage it as owners), by their Klaxon
/// name; and the Klaxon name of each vendor team id.
fn teams_of<'a>(
    source: &'a Source,
    who: &dyn Fn(&str) -> Option<String>,
) -> (BTreeMap<String, TeamSpec>, HashMap<&'a str, String>) {
    let mut teams: BTreeMap<String, TeamSpec> = BTreeMap::new();
    let mut team_names: HashMap<&str, String> = HashMap::new();
    for t in &source.teams {
        let mut name = slug(&t.name);
        while teams.contains_key(&name) {
            name = format!("{}-2", name.chars().take(62).collect::<String>());
        }
        let mut spec = TeamSpec::named(&name);
        spec.display_name = Some(label(&t.name));
        let mut members: Vec<MemberSpec> = t
            .members
            .iter()
            .filter_map(|(id, manages)| {
                who(id).map(|username| MemberSpec {
                    username,
                    role: if *manages { Role::Owner } else { Role::Member },
                })
            })
            .collect();
        members.sort_by(|a, b| a.username.cmp(&b.username));
        members.dedup_by(|a, b| a.username == b.username);
        spec.members = Some(members);
        team_names.insert(&t.id, name.clone());
        teams.insert(name, spec);
    }
    (teams, team_names)
}

/// People in a team's rotations or covers are its members.
fn rota_people_are_members(teams: &mut BTreeMap<String, TeamSpec>) {
    for team in teams.values_mut() {
        let mut names: Vec<String> = team
            .rotations
            .iter()
            .flatten()
            .flat_map(|r| r.members.clone())
            .collect();
        names.extend(team.covers.iter().flatten().map(|c| c.username.clone()));
        let members = team.members.get_or_insert_with(Vec::new);
        for n in names {
            if !members.iter().any(|m| m.username == n) {
                members.push(MemberSpec {
                    username: n,
                    role: Role::Member,
                });
            }
        }
        members.sort_by(|a, b| a.username.cmp(&b.username));
    }
}
