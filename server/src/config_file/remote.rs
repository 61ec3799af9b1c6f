//! A Klaxon server as `klaxon export`, `diff` and `apply` see it: its REST API with an API key
//! (an instance-scoped service account's, for `apply`), and the step-by-step making of a plan.

use klaxon_domain::config::{ChannelSpec, ConfigFile, EscalationSpec, TargetKind};
use klaxon_domain::Timestamp;
use reqwest::Method;
use serde_json::{json, Value};
use std::collections::{HashMap, HashSet};

pub struct Remote {
    pub(super) http: reqwest::Client,
    pub(super) base: String,
    pub(super) key: String,
    pub(super) teams: HashMap<String, i64>,
    pub(super) users: HashMap<String, i64>,
    /// Per team: the key `apply` acts there with, its service account and the key's id.
    pub(super) team_keys: HashMap<String, (String, i64, i64)>,
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

    pub(super) async fn call(
        &self,
        method: Method,
        path: &str,
        body: Option<Value>,
    ) -> Result<Value, String> {
        self.call_as(&self.key, method, path, body).await
    }

    /// A call to `rest` under `team` (`/api/teams/{id}{rest}`), with its team-scoped key.
    pub(super) async fn in_team(
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

    pub(super) async fn team_key(&mut self, team: &str) -> Result<String, String> {
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

    pub(super) async fn call_as(
        &self,
        key: &str,
        method: Method,
        path: &str,
        body: Option<Value>,
    ) -> Result<Value, String> {
        crate::terminal::answer(self.send_as(key, method, path, body).await?).await
    }

    pub(super) async fn send_as(
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

    pub(super) fn user(&self, username: &str) -> Result<i64, String> {
        self.users
            .get(username)
            .copied()
            .ok_or_else(|| format!("no account named \"{username}\""))
    }

    pub(super) async fn team(&mut self, name: &str) -> Result<i64, String> {
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
    /// Replaces an integration's routing rules with `apply`'s own key (instance-scoped): a
    /// rule may send alerts to another team, which a team-scoped key cannot see.
    pub(super) async fn put_rules(
        &mut self,
        team: &str,
        integration: i64,
        rules: &[klaxon_domain::routing::RoutingRule],
    ) -> Result<(), String> {
        let t = self.team(team).await?;
        let path = format!("/api/teams/{t}/integrations/{integration}/rules");
        self.call(Method::PUT, &path, Some(json!({ "rules": rules })))
            .await
            .map(|_| ())
    }

    pub(super) async fn item(&mut self, team: &str, list: &str, name: &str) -> Result<i64, String> {
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

    pub(super) fn ladder(&self, ladder: &EscalationSpec) -> Result<Value, String> {
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

    pub(super) fn channel_target(
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
}
