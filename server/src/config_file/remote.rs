//! A Klaxon server as `klaxon export`, `diff` and `apply` see it: its REST API with an API key
//! (an instance-scoped service account's, for `apply`), and the step-by-step making of a plan.

use klaxon_domain::config::plan::Step;
use klaxon_domain::config::{ChannelSpec, ConfigFile, EscalationSpec, TargetKind};
use klaxon_domain::Timestamp;
use reqwest::Method;
use serde_json::{json, Value};
use std::collections::{HashMap, HashSet};

pub struct Remote {
    http: reqwest::Client,
    base: String,
    key: String,
    teams: HashMap<String, i64>,
    users: HashMap<String, i64>,
    /// Per team: the key `apply` acts there with, its service account and the key's id.
    team_keys: HashMap<String, (String, i64, i64)>,
}

/// The team-scoped service account `apply` acts in a team through (an instance-scoped account
/// manages teams' service accounts but not the teams themselves): one per team, its keys minted
/// for a run and revoked at its end.
pub fn apply_account(team: &str) -> String {
    format!("klaxon-apply.{team}").chars().take(64).collect()
}

/// What a step made that is shown once: a new integration's webhook URL, a new signed
/// webhook channel's secret.
pub struct Made {
    pub what: String,
    pub value: String,
}

impl Remote {
    pub fn new(server: &str, key: &str) -> Result<Remote, String> {
        let http = klaxon_core::outbound::cli::client()?;
        Ok(Remote {
            http,
            base: server.trim_end_matches('/').to_string(),
            key: key.to_string(),
            teams: HashMap::new(),
            users: HashMap::new(),
            team_keys: HashMap::new(),
        })
    }

    async fn call(&self, method: Method, path: &str, body: Option<Value>) -> Result<Value, String> {
        self.call_as(&self.key, method, path, body).await
    }

    /// A call to `rest` under `team` (`/api/teams/{id}{rest}`), with its team-scoped key.
    async fn in_team(
        &mut self,
        team: &str,
        method: Method,
        rest: &str,
        body: Option<Value>,
    ) -> Result<Value, String> {
        let t = self.team(team).await?;
        let key = self.team_key(team).await?;
        self.call_as(&key, method, &format!("/api/teams/{t}{rest}"), body)
            .await
    }

    async fn team_key(&mut self, team: &str) -> Result<String, String> {
        if let Some((key, _, _)) = self.team_keys.get(team) {
            return Ok(key.clone());
        }
        let t = self.team(team).await?;
        let name = apply_account(team);
        let accounts = self
            .call(
                Method::GET,
                &format!("/api/teams/{t}/service-accounts"),
                None,
            )
            .await?;
        let existing = accounts
            .as_array()
            .into_iter()
            .flatten()
            .find(|a| a["username"] == name.as_str() || a["user"]["username"] == name.as_str())
            .and_then(|a| a["id"].as_i64().or(a["user"]["id"].as_i64()));
        let account = match existing {
            Some(id) => id,
            None => self
                .call(
                    Method::POST,
                    &format!("/api/teams/{t}/service-accounts"),
                    Some(json!({"name": name})),
                )
                .await?["id"]
                .as_i64()
                .ok_or("the server made no service account")?,
        };
        let made = self
            .call(
                Method::POST,
                &format!("/api/service-accounts/{account}/api-keys"),
                Some(json!({"name": "klaxon apply"})),
            )
            .await?;
        let key = made["key"]
            .as_str()
            .ok_or("the server made no key")?
            .to_string();
        let id = made["id"].as_i64().unwrap_or_default();
        self.team_keys
            .insert(team.to_string(), (key.clone(), account, id));
        Ok(key)
    }

    /// Revokes the keys this run minted.
    pub async fn finish(&mut self) {
        for (_, (_, account, id)) in std::mem::take(&mut self.team_keys) {
            let _ = self
                .call(
                    Method::DELETE,
                    &format!("/api/service-accounts/{account}/api-keys/{id}"),
                    None,
                )
                .await;
        }
    }

    async fn call_as(
        &self,
        key: &str,
        method: Method,
        path: &str,
        body: Option<Value>,
    ) -> Result<Value, String> {
        crate::terminal::answer(self.send_as(key, method, path, body).await?).await
    }

    async fn send_as(
        &self,
        key: &str,
        method: Method,
        path: &str,
        body: Option<Value>,
    ) -> Result<reqwest::Response, String> {
        let mut req = self
            .http
            .request(method, format!("{}{path}", self.base))
            .bearer_auth(key);
        if let Some(b) = body {
            req = req.json(&b);
        }
        let res = req
            .send()
            .await
            .map_err(|e| format!("cannot reach {}: {e}", self.base))?;
        if res.status() == reqwest::StatusCode::UNAUTHORIZED {
            return Err("the server refused the API key (KLAXON_API_KEY or --api-key)".into());
        }
        Ok(res)
    }

    /// The server's configuration, as `export` writes it, and the server's clock as it was read
    /// (its `Date`; this machine's when it has none).
    pub async fn current(&self) -> Result<(ConfigFile, Timestamp), String> {
        let res = self
            .send_as(&self.key, Method::GET, "/api/config", None)
            .await?;
        let clock = res
            .headers()
            .get(reqwest::header::DATE)
            .and_then(|d| d.to_str().ok())
            .and_then(|d| {
                jiff::fmt::rfc2822::DateTimeParser::new()
                    .parse_timestamp(d)
                    .ok()
            })
            .map(|t| Timestamp(t.as_second()))
            .unwrap_or_else(|| Timestamp(jiff::Timestamp::now().as_second()));
        let v = crate::terminal::answer(res).await?;
        let file = serde_json::from_value(v)
            .map_err(|e| format!("the server's configuration is unreadable: {e}"))?;
        Ok((file, clock))
    }

    /// Usernames of the server's people (service accounts cannot be named in a file).
    pub async fn usernames(&mut self) -> Result<HashSet<String>, String> {
        let v = self.call(Method::GET, "/api/users", None).await?;
        let mut names = HashSet::new();
        for u in v.as_array().into_iter().flatten() {
            if let (Some(name), Some(id)) = (u["username"].as_str(), u["id"].as_i64()) {
                if u["kind"] == "human" {
                    names.insert(name.to_string());
                    self.users.insert(name.to_string(), id);
                }
            }
        }
        Ok(names)
    }

    fn user(&self, username: &str) -> Result<i64, String> {
        self.users
            .get(username)
            .copied()
            .ok_or_else(|| format!("no account named \"{username}\""))
    }

    async fn team(&mut self, name: &str) -> Result<i64, String> {
        if let Some(id) = self.teams.get(name) {
            return Ok(*id);
        }
        let v = self
            .call(Method::GET, &format!("/api/teams?name={name}"), None)
            .await?;
        let id = v[0]["id"]
            .as_i64()
            .ok_or_else(|| format!("no team named \"{name}\""))?;
        self.teams.insert(name.to_string(), id);
        Ok(id)
    }

    /// The id of the item of `list` (a team's collection) named `name`.
    async fn item(&mut self, team: &str, list: &str, name: &str) -> Result<i64, String> {
        let v = self
            .in_team(team, Method::GET, &format!("/{list}"), None)
            .await?;
        let id = v
            .as_array()
            .into_iter()
            .flatten()
            .find(|i| i["name"] == name)
            .and_then(|i| i["id"].as_i64())
            .ok_or_else(|| format!("{team}/{name} is not on the server any more"))?;
        Ok(id)
    }

    fn ladder(&self, ladder: &EscalationSpec) -> Result<Value, String> {
        let mut levels = Vec::new();
        for l in &ladder.levels {
            let mut targets = Vec::new();
            for t in &l.targets {
                targets.push(match (t.kind, &t.username) {
                    (TargetKind::User, Some(u)) => {
                        json!({"type": "user", "user_id": self.user(u)?})
                    }
                    _ => json!({"type": "oncall"}),
                });
            }
            levels.push(json!({"timeout": l.timeout, "targets": targets}));
        }
        Ok(json!({
            "levels": levels,
            "repeat": ladder.repeat,
            "fallback_topic": ladder.fallback_topic,
            "low_urgency": ladder.low_urgency,
        }))
    }

    fn channel_target(
        ch: &ChannelSpec,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<String, String> {
        match (&ch.room, &ch.url_from_env) {
            (Some(room), _) => Ok(room.clone()),
            (None, Some(var)) => {
                env(var).ok_or_else(|| format!("the environment variable {var} is not set"))
            }
            (None, None) => Err("no room and no urlFromEnv".into()),
        }
    }

    /// Makes one step. What it made that is shown once comes back.
    pub async fn run(
        &mut self,
        step: &Step,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Option<Made>, String> {
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
                let body = json!({"name": source.name, "kind": source.kind.as_str()});
                let v = self
                    .in_team(team, Method::POST, "/integrations", Some(body))
                    .await?;
                return Ok(v["webhook_url"].as_str().map(|url| Made {
                    what: format!("alert source {team}/{} webhook URL", source.name),
                    value: url.to_string(),
                }));
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
                let body = json!({"user_id": self.user(&cover.username)?, "starts_at": cover.starts_at, "ends_at": cover.ends_at});
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
