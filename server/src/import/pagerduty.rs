//! PagerDuty, REST API v2 (developer.pagerduty.com/api-reference): lists are paged by `offset`
//! and `limit` until `more` is false; the token goes as `Authorization: Token token=…`.

use super::fetch::{instant, text, Api};
use super::{Integration, Layer, Level, Override, Policy, Schedule, Source, Target, Team, User};
use serde_json::Value;

const LIMIT: usize = 100;

/// Every item of the list `key` at `path`, page by page.
async fn all(api: &Api, path: &str, key: &str) -> Result<Vec<Value>, String> {
    let mut out = Vec::new();
    let join = if path.contains('?') { '&' } else { '?' };
    for _ in 0..super::fetch::MAX_PAGES {
        let page = api
            .get(&api.url(&format!("{path}{join}limit={LIMIT}&offset={}", out.len()))?)
            .await?;
        let items = page[key].as_array().cloned().unwrap_or_default();
        let got = items.len();
        out.extend(items);
        if page["more"] != true || got == 0 {
            return Ok(out);
        }
    }
    Err(super::fetch::too_many_pages("PagerDuty", path))
}

fn first_team(v: &Value) -> Option<String> {
    v["teams"][0]["id"].as_str().map(String::from)
}

pub async fn read(api: &Api, now: i64) -> Result<Source, String> {
    let mut source = Source::default();
    for u in all(api, "/users", "users").await? {
        source.users.push(User {
            id: text(&u, "id"),
            email: text(&u, "email"),
        });
    }
    for t in all(api, "/teams", "teams").await? {
        let id = text(&t, "id");
        let mut members = Vec::new();
        for m in all(api, &format!("/teams/{id}/members"), "members").await? {
            members.push((text(&m["user"], "id"), m["role"] == "manager"));
        }
        source.teams.push(Team {
            id,
            name: text(&t, "name"),
            members,
        });
    }
    let since = klaxon_domain::Timestamp(now).to_rfc3339();
    let until = klaxon_domain::Timestamp(now + 90 * 86_400).to_rfc3339();
    for listed in all(api, "/schedules", "schedules").await? {
        let id = text(&listed, "id");
        let s = api.get(&api.url(&format!("/schedules/{id}"))?).await?["schedule"].clone();
        let mut layers = Vec::new();
        for l in s["schedule_layers"].as_array().into_iter().flatten() {
            if instant(&l["end"]).is_some_and(|end| end <= now) {
                continue;
            }
            let Some(start) = instant(&l["rotation_virtual_start"]).or(instant(&l["start"])) else {
                continue;
            };
            layers.push(Layer {
                name: text(l, "name"),
                start,
                turn_seconds: l["rotation_turn_length_seconds"].as_i64().unwrap_or(86_400),
                users: l["users"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|u| text(&u["user"], "id"))
                    .collect(),
                restricted: l["restrictions"].as_array().is_some_and(|r| !r.is_empty()),
            });
        }
        let path = format!("/schedules/{id}/overrides?since={since}&until={until}");
        let answer = api.get(&api.url(&path)?).await?;
        let overrides = Override::all_of(&answer["overrides"], "start", "end");
        source.schedules.push(Schedule {
            id,
            name: text(&s, "name"),
            team: first_team(&s),
            time_zone: s["time_zone"].as_str().unwrap_or("UTC").to_string(),
            layers,
            overrides,
        });
    }
    for p in all(api, "/escalation_policies", "escalation_policies").await? {
        let mut levels = Vec::new();
        for rule in p["escalation_rules"].as_array().into_iter().flatten() {
            let targets = rule["targets"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|t| match t["type"].as_str().unwrap_or_default() {
                    "user_reference" | "user" => Target::User(text(t, "id")),
                    "schedule_reference" | "schedule" => Target::Schedule(text(t, "id")),
                    other => Target::Other(format!("a target of type {other}")),
                })
                .collect();
            levels.push(Level {
                wait: rule["escalation_delay_in_minutes"].as_i64().unwrap_or(30) * 60,
                targets,
            });
        }
        source.policies.push(Policy {
            id: text(&p, "id"),
            name: text(&p, "name"),
            team: first_team(&p),
            levels,
            repeat: p["num_loops"].as_u64().unwrap_or(0) as u32,
        });
    }
    for service in all(api, "/services?include[]=integrations", "services").await? {
        for i in service["integrations"].as_array().into_iter().flatten() {
            let vendor = i["vendor"]["summary"].as_str().unwrap_or_default();
            let kind = text(i, "type");
            source.integrations.push(Integration {
                name: format!("{} {}", text(&service, "name"), text(i, "summary"))
                    .trim()
                    .to_string(),
                team: first_team(&service),
                // An Events API integration stays one (Klaxon speaks it): its senders, whatever
                // their vendor, move by their URL and key alone.
                kind: if kind.contains("events_api") {
                    "pagerduty".to_string()
                } else if vendor.is_empty() {
                    kind
                } else {
                    vendor.to_string()
                },
                templates: None,
                routes: Vec::new(),
                // The service's policy pages for it: another team's, its alerts go there.
                default_policy: service["escalation_policy"]["id"]
                    .as_str()
                    .map(String::from),
            });
        }
    }
    Ok(source)
}
