//! Opsgenie, REST API v2 (docs.opsgenie.com/docs/api-overview): lists answer `data` and, when
//! paged, `paging.next`; the token goes as `Authorization: GenieKey …`.

use super::fetch::{instant, text, Api};
use super::{Integration, Layer, Level, Override, Policy, Schedule, Source, Target, Team, User};
use serde_json::Value;

fn minutes(delay: &Value) -> i64 {
    let amount = delay["timeAmount"].as_i64().unwrap_or(0);
    match delay["timeUnit"].as_str() {
        Some("hours") => amount * 60,
        Some("days") => amount * 1440,
        _ => amount,
    }
}

pub async fn read(api: &Api, now: i64) -> Result<Source, String> {
    let mut source = Source::default();
    for u in api
        .follow("/v2/users?limit=100", "data", "/paging/next")
        .await?
    {
        source.users.push(User {
            id: text(&u, "id"),
            email: text(&u, "username"),
        });
    }
    for t in api.follow("/v2/teams", "data", "/paging/next").await? {
        let id = text(&t, "id");
        let team = api.get(&api.url(&format!("/v2/teams/{id}"))?).await?["data"].clone();
        let members = team["members"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|m| (text(&m["user"], "id"), m["role"] == "admin"))
            .collect();
        source.teams.push(Team {
            id,
            name: text(&t, "name"),
            members,
        });
    }
    for s in api
        .follow("/v2/schedules?expand=rotation", "data", "/paging/next")
        .await?
    {
        let id = text(&s, "id");
        let layers = layers(&s, now, &mut source.notes);
        let answer = api
            .get(&api.url(&format!("/v2/schedules/{id}/overrides"))?)
            .await?;
        let overrides = Override::all_of(&answer["data"], "startDate", "endDate");
        source.schedules.push(Schedule {
            id,
            name: text(&s, "name"),
            team: s["ownerTeam"]["id"].as_str().map(String::from),
            time_zone: s["timezone"].as_str().unwrap_or("UTC").to_string(),
            layers,
            overrides,
        });
    }
    for e in api
        .follow("/v2/escalations", "data", "/paging/next")
        .await?
    {
        source.policies.push(policy(&e));
    }
    for i in api
        .follow("/v2/integrations", "data", "/paging/next")
        .await?
    {
        let kind = text(&i, "type");
        source.integrations.push(Integration {
            name: text(&i, "name"),
            team: i["teamId"].as_str().map(String::from),
            // These post to the Alert API with the integration's key (Alertmanager's
            // `opsgenie_configs`, Grafana's Opsgenie contact point): they stay Alert API
            // integrations, and their senders move by their URL and key alone.
            kind: if ["API", "Prometheus", "Grafana"].contains(&kind.as_str()) {
                "opsgenie".to_string()
            } else {
                kind
            },
            templates: None,
            ..Default::default()
        });
    }
    Ok(source)
}

/// A schedule's rotations that have not ended, as layers; a participant that is not a user is
/// noted as having no equivalent.
fn layers(s: &Value, now: i64, notes: &mut Vec<String>) -> Vec<Layer> {
    let mut layers = Vec::new();
    for r in s["rotations"].as_array().into_iter().flatten() {
        if instant(&r["endDate"]).is_some_and(|end| end <= now) {
            continue;
        }
        let Some(start) = instant(&r["startDate"]) else {
            continue;
        };
        let length = r["length"].as_i64().unwrap_or(1).max(1);
        let unit = match r["type"].as_str() {
            Some("hourly") => 3600,
            Some("weekly") => 7 * 86_400,
            _ => 86_400,
        };
        let mut users = Vec::new();
        for p in r["participants"].as_array().into_iter().flatten() {
            match p["type"].as_str() {
                Some("user") => users.push(text(p, "id")),
                other => notes.push(format!(
                    "schedule \"{}\", rotation \"{}\": a participant of type {}",
                    text(s, "name"),
                    text(r, "name"),
                    other.unwrap_or("none")
                )),
            }
        }
        layers.push(Layer {
            name: text(r, "name"),
            start,
            turn_seconds: length * unit,
            users,
            restricted: !r["timeRestriction"].is_null(),
        });
    }
    layers
}

/// An escalation as a ladder: rules wait from the alert's creation, so rules with the same delay
/// are one level, and a level lasts until the next delay (the last until the repeat's wait).
fn policy(e: &Value) -> Policy {
    // Rules wait from the alert's creation: rules with the same delay are one level, and a
    // level lasts until the next delay.
    let mut rules: Vec<&Value> = e["rules"].as_array().into_iter().flatten().collect();
    rules.sort_by_key(|r| minutes(&r["delay"]));
    let mut levels: Vec<(i64, Level)> = Vec::new();
    for r in rules {
        let at = minutes(&r["delay"]);
        let target = match r["recipient"]["type"].as_str() {
            Some("user") => Target::User(text(&r["recipient"], "id")),
            Some("schedule") => Target::Schedule(text(&r["recipient"], "id")),
            other => Target::Other(format!("a recipient of type {}", other.unwrap_or("none"))),
        };
        match levels.last_mut() {
            Some((last, level)) if *last == at => level.targets.push(target),
            _ => levels.push((
                at,
                Level {
                    wait: 0,
                    targets: vec![target],
                },
            )),
        }
    }
    let repeat_wait = e["repeat"]["waitInterval"]
        .as_i64()
        .filter(|w| *w > 0)
        .unwrap_or(5)
        * 60;
    let starts: Vec<i64> = levels.iter().map(|(at, _)| *at).collect();
    for (i, (at, level)) in levels.iter_mut().enumerate() {
        level.wait = match starts.get(i + 1) {
            Some(next) => (next - *at) * 60,
            None => repeat_wait,
        };
    }
    Policy {
        id: text(e, "id"),
        name: text(e, "name"),
        team: e["ownerTeam"]["id"].as_str().map(String::from),
        levels: levels.into_iter().map(|(_, l)| l).collect(),
        repeat: e["repeat"]["count"].as_u64().unwrap_or(0) as u32,
    }
}
