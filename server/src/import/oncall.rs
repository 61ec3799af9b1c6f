//! Grafana OnCall, public API v1 (grafana.com/docs/oncall/latest/oncall-api-reference/): every
//! list is paged (`results`, `next`); the token goes as it is in `Authorization`.

use super::fetch::{text, Api};
use super::{
    Integration, Layer, Level, Override, Policy, Route, RouteTerm, Schedule, Source, Target, Team,
    User,
};
use serde_json::Value;
use std::collections::BTreeMap;

/// A naive local time (`2020-09-10T08:00:00`) in `zone`, as an instant.
fn local(at: &str, zone: &str) -> Option<i64> {
    let civil: jiff::civil::DateTime = at.trim_end_matches('Z').parse().ok()?;
    let tz = jiff::tz::TimeZone::get(zone).ok()?;
    Some(
        tz.to_ambiguous_timestamp(civil)
            .compatible()
            .ok()?
            .as_second(),
    )
}

fn turn_seconds(shift: &Value) -> (i64, bool) {
    let interval = shift["interval"].as_i64().unwrap_or(1).max(1);
    match shift["frequency"].as_str() {
        Some("hourly") => (3600 * interval, false),
        Some("daily") => (86_400 * interval, false),
        Some("weekly") => (7 * 86_400 * interval, false),
        Some("monthly") => (30 * 86_400 * interval, true),
        _ => (shift["duration"].as_i64().unwrap_or(86_400), false),
    }
}

pub async fn read(api: &Api) -> Result<Source, String> {
    let mut source = Source::default();
    for u in api.follow("/api/v1/users/", "results", "/next").await? {
        source.users.push(User {
            id: text(&u, "id"),
            email: text(&u, "email"),
        });
    }
    let shifts: BTreeMap<String, Value> = api
        .follow("/api/v1/on_call_shifts/", "results", "/next")
        .await?
        .into_iter()
        .map(|s| (text(&s, "id"), s))
        .collect();
    let mut members: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for s in api.follow("/api/v1/schedules/", "results", "/next").await? {
        let zone = s["time_zone"].as_str().unwrap_or("UTC").to_string();
        let team = s["team_id"].as_str().map(String::from);
        if s["type"] == "ical" {
            source.notes.push(format!(
                "schedule \"{}\": an iCal schedule (only web and API schedules are read)",
                text(&s, "name")
            ));
        }
        let (layers, overrides) = read_shifts(
            &s,
            &shifts,
            &zone,
            team.as_ref(),
            &mut source.notes,
            &mut members,
        );
        source.schedules.push(Schedule {
            id: text(&s, "id"),
            name: text(&s, "name"),
            team,
            time_zone: zone,
            layers,
            overrides,
        });
    }
    let chains = api
        .follow("/api/v1/escalation_chains/", "results", "/next")
        .await?;
    for chain in &chains {
        let id = text(chain, "id");
        let path = format!("/api/v1/escalation_policies/?escalation_chain_id={id}");
        let mut steps = api.follow(&path, "results", "/next").await?;
        steps.sort_by_key(|p| p["position"].as_i64().unwrap_or(0));
        let team = chain["team_id"].as_str().map(String::from);
        let (levels, repeat) = ladder(steps, team.as_ref(), &mut members);
        source.policies.push(Policy {
            id,
            name: text(chain, "name"),
            team,
            levels,
            repeat,
        });
    }
    for t in api.follow("/api/v1/teams/", "results", "/next").await? {
        let id = text(&t, "id");
        let mut people = members.remove(&id).unwrap_or_default();
        people.sort();
        people.dedup();
        source.teams.push(Team {
            id,
            name: text(&t, "name"),
            members: people.into_iter().map(|u| (u, false)).collect(),
        });
    }
    if !source.teams.is_empty() {
        source.notes.push(
            "team roles: OnCall's API does not say who manages a team; everyone became a member (make owners in the file)".into(),
        );
    }
    let mut routes = read_routes(api).await?;
    for i in api
        .follow("/api/v1/integrations/", "results", "/next")
        .await?
    {
        let (name, kind) = (text(&i, "name"), text(&i, "type"));
        // Every OnCall integration reads its body with Jinja templates; one of a type Klaxon
        // has no source for becomes a generic webhook with them.
        let templates = Some(super::oncall_templates::webhook_templates(
            &name,
            &kind,
            &i["templates"],
        ));
        source.integrations.push(Integration {
            name,
            team: i["team_id"].as_str().map(String::from),
            kind,
            templates,
            routes: routes.remove(&text(&i, "id")).unwrap_or_default(),
            default_policy: i["default_route"]["escalation_chain_id"]
                .as_str()
                .map(String::from),
        });
    }
    Ok(source)
}

/// Every integration's routes but its default one, in order, by the integration's id.
async fn read_routes(api: &Api) -> Result<BTreeMap<String, Vec<Route>>, String> {
    let mut all = api.follow("/api/v1/routes/", "results", "/next").await?;
    all.sort_by_key(|r| r["position"].as_i64().unwrap_or(0));
    let mut routes: BTreeMap<String, Vec<Route>> = BTreeMap::new();
    for r in all.iter().filter(|r| r["is_the_last_route"] != true) {
        let term = text(r, "routing_regex");
        routes
            .entry(text(r, "integration_id"))
            .or_default()
            .push(Route {
                term: match r["routing_type"].as_str() {
                    Some("jinja2") => RouteTerm::Jinja(term),
                    _ => RouteTerm::Regex(term),
                },
                policy: r["escalation_chain_id"].as_str().map(String::from),
            });
    }
    Ok(routes)
}

/// A schedule's shifts: rotations as layers, overrides as they are. Several people on at once
/// and monthly rotations are approximated, and said so in `notes`; the people a shift names are
/// members of the schedule's team.
fn read_shifts(
    s: &Value,
    shifts: &BTreeMap<String, Value>,
    zone: &str,
    team: Option<&String>,
    notes: &mut Vec<String>,
    members: &mut BTreeMap<String, Vec<String>>,
) -> (Vec<Layer>, Vec<Override>) {
    let mut layers = Vec::new();
    let mut overrides = Vec::new();
    for id in s["shifts"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
    {
        let Some(shift) = shifts.get(id) else {
            continue;
        };
        let shift_zone = shift["time_zone"].as_str().unwrap_or(zone).to_string();
        let Some(start) = local(&text(shift, "start"), &shift_zone) else {
            continue;
        };
        let (turn, approximated) = turn_seconds(shift);
        if approximated {
            notes.push(format!(
                "shift \"{}\": a monthly rotation, read as 30 days",
                text(shift, "name")
            ));
        }
        let groups: Vec<Vec<String>> = match shift["type"].as_str() {
            Some("rolling_users") => shift["rolling_users"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|g| {
                    g.as_array()
                        .into_iter()
                        .flatten()
                        .filter_map(Value::as_str)
                        .map(String::from)
                        .collect()
                })
                .collect(),
            _ => vec![shift["users"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .map(String::from)
                .collect()],
        };
        if shift["type"] == "override" {
            let end = start + shift["duration"].as_i64().unwrap_or(0);
            for u in groups.into_iter().flatten() {
                overrides.push(Override {
                    user: u,
                    start,
                    end,
                });
            }
            continue;
        }
        if groups.iter().any(|g| g.len() > 1) {
            notes.push(format!(
                "shift \"{}\": several people on at once; Klaxon's rota names one person a day, the first of each group was taken",
                text(shift, "name")
            ));
        }
        let users: Vec<String> = groups.iter().filter_map(|g| g.first().cloned()).collect();
        if let Some(t) = team {
            members
                .entry(t.clone())
                .or_default()
                .extend(groups.into_iter().flatten());
        }
        let by_day = shift["by_day"].as_array().is_some_and(|d| !d.is_empty());
        let partial = shift["duration"].as_i64().is_some_and(|d| d < turn);
        layers.push(Layer {
            name: text(shift, "name"),
            start,
            turn_seconds: turn,
            users,
            restricted: by_day || partial,
        });
    }
    (layers, overrides)
}

/// An escalation chain's steps as levels and a repeat count: a wait lengthens the level before
/// it (5 minutes when none is given), each notify step is a level; the people a step names are
/// members of the chain's team.
fn ladder(
    steps: Vec<Value>,
    team: Option<&String>,
    members: &mut BTreeMap<String, Vec<String>>,
) -> (Vec<Level>, u32) {
    let mut levels: Vec<Level> = Vec::new();
    let mut repeat = 0u32;
    for step in steps {
        match step["type"].as_str().unwrap_or_default() {
            "wait" => {
                if let Some(l) = levels.last_mut() {
                    l.wait += step["duration"].as_i64().unwrap_or(300);
                }
            }
            "notify_persons" | "notify_person_next_each_time" => {
                let targets = step["persons_to_notify"]
                    .as_array()
                    .or(step["persons_to_notify_next_each_time"].as_array())
                    .into_iter()
                    .flatten()
                    .filter_map(Value::as_str)
                    .map(|u| Target::User(u.to_string()))
                    .collect();
                if let Some(t) = team {
                    members.entry(t.clone()).or_default().extend(
                        step["persons_to_notify"]
                            .as_array()
                            .into_iter()
                            .flatten()
                            .filter_map(Value::as_str)
                            .map(String::from),
                    );
                }
                levels.push(Level { wait: 0, targets });
            }
            "notify_on_call_from_schedule" => levels.push(Level {
                wait: 0,
                targets: vec![Target::Schedule(text(
                    &step,
                    "notify_on_call_from_schedule",
                ))],
            }),
            // OnCall runs the chain again from the top, five times at most.
            "repeat_escalation" => repeat = 5,
            other => levels.push(Level {
                wait: 0,
                targets: vec![Target::Other(format!("a \"{other}\" step"))],
            }),
        }
    }
    for l in &mut levels {
        if l.wait == 0 {
            l.wait = 300;
        }
    }
    (levels, repeat)
}
