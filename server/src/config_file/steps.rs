//! Making one step of a plan on the server through its REST API, as the right account: the
//! administrator's key for install-wide steps, a team's `klaxon-apply.<team>` account inside it.

use super::remote::{Made, Remote};
use klaxon_domain::config::plan::Step;
use reqwest::Method;
use serde_json::{json, Value};

impl Remote {
    /// Makes one step. What it made that is shown once comes back.
    pub async fn run(
        &mut self,
        step: &Step,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Option<Made>, String> {
        // Long by design: one arm per kind of step (a request or two), the list of what apply does.
        use Step::*;
        match step {
            Settings { to, .. } => {
                let mut body = serde_json::Map::new();
                if let Some(m) = to.signup_mode {
                    body.insert("signup_mode".into(), json!(m.as_str()));
                }
                for (k, v) in [
                    ("notify_repeat_interval", &to.notify_repeat_interval),
                    ("stale_after", &to.stale_after),
                    ("archive_after", &to.archive_after),
                ] {
                    if let Some(v) = v {
                        body.insert(k.into(), json!(v));
                    }
                }
                self.call(
                    Method::PUT,
                    "/api/admin/settings",
                    Some(Value::Object(body)),
                )
                .await?;
            }
            CreateTeam { team, display_name } => {
                let v = self
                    .call(
                        Method::POST,
                        "/api/teams",
                        Some(json!({"name": team, "display_name": display_name})),
                    )
                    .await?;
                if let Some(id) = v["id"].as_i64() {
                    self.teams.insert(team.clone(), id);
                }
            }
            RenameTeam { team, to, .. } => {
                self.in_team(team, Method::PUT, "", Some(json!({"display_name": to})))
                    .await?;
            }
            OncallDay {
                team,
                time_zone,
                handoff_time,
                ..
            } => {
                let body = json!({"time_zone": time_zone, "handoff_time": handoff_time});
                self.in_team(team, Method::PUT, "/on-call-day", Some(body))
                    .await?;
            }
            Oidc { team, to } => {
                let body =
                    json!({"member_groups": to.member_groups, "owner_groups": to.owner_groups});
                self.in_team(team, Method::PUT, "/oidc", Some(body)).await?;
            }
            AddMember {
                team,
                username,
                role,
            } => {
                let body = json!({"user_id": self.user(username)?, "role": role.as_str()});
                self.in_team(team, Method::POST, "/members", Some(body))
                    .await?;
            }
            SetRole {
                team, username, to, ..
            } => {
                let u = self.user(username)?;
                let body = json!({"role": to.as_str()});
                self.in_team(team, Method::PUT, &format!("/members/{u}"), Some(body))
                    .await?;
            }
            RemoveMember { team, username } => {
                let u = self.user(username)?;
                self.in_team(team, Method::DELETE, &format!("/members/{u}"), None)
                    .await?;
            }
            CreateAlertSource { team, source } => {
                let mut body = json!({"name": source.name, "kind": source.kind.as_str()});
                if let Some(t) = &source.templates {
                    body["templates"] = json!(t);
                }
                let v = self
                    .in_team(team, Method::POST, "/integrations", Some(body))
                    .await?;
                if let Some(rules) = source.rules.as_ref().filter(|r| !r.is_empty()) {
                    self.put_rules(team, v["id"].as_i64().unwrap_or_default(), rules)
                        .await?;
                }
                return Ok(v["webhook_url"].as_str().map(|url| Made {
                    what: format!("alert source {team}/{} webhook URL", source.name),
                    value: url.to_string(),
                }));
            }
            ChangeAlertSource {
                team,
                source,
                changes,
            } => {
                let id = self.item(team, "integrations", &source.name).await?;
                let path = format!("/integrations/{id}");
                let changed = |name: &str| changes.iter().any(|c| c.field == name);
                if changed("templates") {
                    let body = json!({"templates": source.templates});
                    self.in_team(team, Method::PATCH, &path, Some(body)).await?;
                }
                if changed("rules") {
                    let rules = source.rules.clone().unwrap_or_default();
                    self.put_rules(team, id, &rules).await?;
                }
            }
            DeleteAlertSource { team, name } => {
                let id = self.item(team, "integrations", name).await?;
                self.in_team(team, Method::DELETE, &format!("/integrations/{id}"), None)
                    .await?;
            }
            CreateSwitch { team, switch } => {
                self.in_team(team, Method::POST, "/deadman/switches", Some(json!(switch)))
                    .await?;
            }
            ChangeSwitch { team, switch, .. } => {
                let id = self.item(team, "deadman/switches", &switch.name).await?;
                let path = format!("/deadman/switches/{id}");
                self.in_team(team, Method::PUT, &path, Some(json!(switch)))
                    .await?;
            }
            DeleteSwitch { team, name } => {
                let id = self.item(team, "deadman/switches", name).await?;
                self.in_team(
                    team,
                    Method::DELETE,
                    &format!("/deadman/switches/{id}"),
                    None,
                )
                .await?;
            }
            CreateRotation { team, rotation } => {
                let ids = rotation
                    .members
                    .iter()
                    .map(|u| self.user(u))
                    .collect::<Result<Vec<_>, _>>()?;
                let body = json!({
                    "name": rotation.name,
                    "user_ids": ids,
                    "shift_days": rotation.shift_days,
                    "start_date": rotation.start_date,
                });
                let made = self
                    .in_team(team, Method::POST, "/rotations", Some(body))
                    .await?;
                if let (Some(days), Some(id)) = (rotation.fill_days, made["id"].as_i64()) {
                    // From the team's today, in its zone, as the server reads it.
                    let day = self
                        .in_team(team, Method::GET, "/on-call-day", None)
                        .await?;
                    let from: jiff::civil::Date = day["today"]
                        .as_str()
                        .unwrap_or_default()
                        .parse()
                        .map_err(|e| format!("the team's today: {e}"))?;
                    let to = from
                        .checked_add(jiff::Span::new().days(i64::from(days) - 1))
                        .map_err(|e| e.to_string())?;
                    let body =
                        json!({"from": from.to_string(), "to": to.to_string(), "replace": true});
                    let path = format!("/rotations/{id}/apply");
                    self.in_team(team, Method::POST, &path, Some(body)).await?;
                }
            }
            DeleteRotation { team, name } => {
                let id = self.item(team, "rotations", name).await?;
                self.in_team(team, Method::DELETE, &format!("/rotations/{id}"), None)
                    .await?;
            }
            Rota {
                team,
                username,
                dates,
                replacing,
            } => {
                // A date held by someone else is emptied first: giving a taken date is a 409.
                for date in replacing {
                    self.in_team(team, Method::DELETE, &format!("/schedule/{date}"), None)
                        .await?;
                }
                if let Some(who) = username {
                    let user_id = self.user(who)?;
                    for chunk in dates.chunks(klaxon_domain::calendar::MAX_DATES) {
                        let body = json!({"user_id": user_id, "dates": chunk});
                        self.in_team(team, Method::POST, "/schedule", Some(body))
                            .await?;
                    }
                }
            }
            Escalation { team, to, .. } => {
                let body = self.ladder(to)?;
                self.in_team(team, Method::PUT, "/escalation", Some(body))
                    .await?;
            }
            HandoffNotices { team, to } => {
                self.in_team(team, Method::PUT, "/handoff", Some(json!({"enabled": to})))
                    .await?;
            }
            CreateMaintenance { team, window, .. } => {
                let body = json!({"starts_at": window.starts_at, "ends_at": window.ends_at});
                self.in_team(team, Method::POST, "/maintenance", Some(body))
                    .await?;
            }
            EndMaintenance { team, window } => {
                let v = self
                    .in_team(team, Method::GET, "/maintenance", None)
                    .await?;
                let same = |w: &&Value| {
                    let at = |f: &str| w[f].as_str().and_then(klaxon_domain::Timestamp::parse);
                    at("starts_at") == klaxon_domain::Timestamp::parse(&window.starts_at)
                        && at("ends_at") == klaxon_domain::Timestamp::parse(&window.ends_at)
                };
                if let Some(id) = v
                    .as_array()
                    .into_iter()
                    .flatten()
                    .find(same)
                    .and_then(|w| w["id"].as_i64())
                {
                    self.in_team(team, Method::DELETE, &format!("/maintenance/{id}"), None)
                        .await?;
                }
            }
            CreateCover { team, cover, .. } => {
                let mut body = json!({"user_id": self.user(&cover.username)?, "starts_at": cover.starts_at, "ends_at": cover.ends_at});
                if let Some(covered) = &cover.covering {
                    body["covered_user_id"] = json!(self.user(covered)?);
                }
                self.in_team(team, Method::POST, "/covers", Some(body))
                    .await?;
            }
            EndCover { team, cover } => {
                let v = self.in_team(team, Method::GET, "/covers", None).await?;
                let same = |c: &&Value| {
                    let at = |f: &str| c[f].as_str().and_then(klaxon_domain::Timestamp::parse);
                    c["username"] == cover.username.as_str()
                        && at("starts_at") == klaxon_domain::Timestamp::parse(&cover.starts_at)
                        && at("ends_at") == klaxon_domain::Timestamp::parse(&cover.ends_at)
                };
                if let Some(id) = v
                    .as_array()
                    .into_iter()
                    .flatten()
                    .find(same)
                    .and_then(|c| c["id"].as_i64())
                {
                    self.in_team(team, Method::DELETE, &format!("/covers/{id}"), None)
                        .await?;
                }
            }
            CreateChannel { team, channel } => {
                let body = json!({
                    "name": channel.name,
                    "kind": channel.kind.as_str(),
                    "target": Self::channel_target(channel, env)?,
                    "events": channel.events,
                    "severities": channel.severities,
                });
                let v = self
                    .in_team(team, Method::POST, "/channels", Some(body))
                    .await?;
                if let Some(code) = v["proof_code"].as_str() {
                    // A Matrix room hears nothing until a moderator of it posts this code there.
                    return Ok(Some(Made {
                        what: format!(
                            "channel {team}/{} proof code (a moderator of the room posts it there, then Check the room)",
                            channel.name
                        ),
                        value: code.to_string(),
                    }));
                }
                return Ok(v["signing_secret"].as_str().map(|secret| Made {
                    what: format!("channel {team}/{} signing secret", channel.name),
                    value: secret.to_string(),
                }));
            }
            ChangeChannel { team, channel, .. } => {
                let id = self.item(team, "channels", &channel.name).await?;
                let mut body = json!({
                    "events": channel.events.clone().unwrap_or_else(|| klaxon_domain::channel::ChannelEvent::ALL.to_vec()),
                    "severities": channel.severities,
                });
                if let Some(room) = &channel.room {
                    body["target"] = json!(room);
                }
                self.in_team(team, Method::PATCH, &format!("/channels/{id}"), Some(body))
                    .await?;
            }
            DeleteChannel { team, name } => {
                let id = self.item(team, "channels", name).await?;
                self.in_team(team, Method::DELETE, &format!("/channels/{id}"), None)
                    .await?;
            }
        }
        Ok(None)
    }
}
