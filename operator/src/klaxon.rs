//! Klaxon's REST API as the operator calls it, like any other client: one `Klaxon` per
//! credential (none for bootstrap, the instance-scoped key, or a team's key).

use klaxon_domain::account::{Bootstrapped, NewApiKey, User};
use klaxon_domain::deadman::{DeadmanSwitch, SwitchSpec};
use klaxon_domain::incident::{Integration, NewIntegration};
use klaxon_domain::invite::NewInvite;
use klaxon_domain::paging::EscalationPolicy;
use klaxon_domain::team::Team;
use reqwest::{Method, StatusCode};
use serde::de::DeserializeOwned;
use serde_json::{json, Value};
use std::time::Duration;

#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    /// Klaxon answered with an error in its `{error, message}` shape.
    #[error("Klaxon answered {status}: {message}")]
    Refused {
        status: u16,
        code: String,
        message: String,
    },
    #[error("cannot reach Klaxon: {0}")]
    Unreachable(String),
}

impl ApiError {
    pub fn status(&self) -> Option<u16> {
        match self {
            ApiError::Refused { status, .. } => Some(*status),
            ApiError::Unreachable(_) => None,
        }
    }
}

pub type Result<T> = std::result::Result<T, ApiError>;

#[derive(Clone)]
pub struct Klaxon {
    base: String,
    key: Option<String>,
    http: reqwest::Client,
}

impl Klaxon {
    pub fn new(base: &str, key: Option<String>) -> Klaxon {
        Klaxon {
            base: base.trim_end_matches('/').to_string(),
            key,
            http: reqwest::Client::builder()
                .timeout(Duration::from_secs(15))
                .build()
                .expect("an HTTP client"),
        }
    }

    /// The same server with another credential.
    pub fn with_key(&self, key: &str) -> Klaxon {
        Klaxon {
            key: Some(key.to_string()),
            ..self.clone()
        }
    }

    async fn send(&self, method: Method, path: &str, body: Option<Value>) -> Result<Value> {
        let mut req = self.http.request(method, format!("{}{path}", self.base));
        if let Some(k) = &self.key {
            req = req.bearer_auth(k);
        }
        if let Some(b) = body {
            req = req.json(&b);
        }
        let res = req
            .send()
            .await
            .map_err(|e| ApiError::Unreachable(e.to_string()))?;
        let status = res.status();
        let text = res
            .text()
            .await
            .map_err(|e| ApiError::Unreachable(e.to_string()))?;
        let body: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
        if status.is_success() {
            return Ok(body);
        }
        Err(ApiError::Refused {
            status: status.as_u16(),
            code: body["error"].as_str().unwrap_or("unknown").to_string(),
            message: body["message"]
                .as_str()
                .map(str::to_string)
                .unwrap_or_else(|| format!("{status} {text}")),
        })
    }

    async fn call<T: DeserializeOwned>(
        &self,
        method: Method,
        path: &str,
        body: Option<Value>,
    ) -> Result<T> {
        let value = self.send(method, path, body).await?;
        serde_json::from_value(value).map_err(|e| ApiError::Refused {
            status: StatusCode::OK.as_u16(),
            code: "unexpected".into(),
            message: format!("an answer this operator does not understand: {e}"),
        })
    }

    /// Reachability (`GET /api/version`).
    pub async fn version(&self) -> Result<Value> {
        self.send(Method::GET, "/api/version", None).await
    }

    /// The first administrator, with no password: its key is the only way in.
    pub async fn bootstrap(&self, username: &str) -> Result<Bootstrapped> {
        self.call(
            Method::POST,
            "/api/bootstrap",
            Some(json!({"username": username})),
        )
        .await
    }

    pub async fn create_instance_account(&self, name: &str) -> Result<User> {
        self.call(
            Method::POST,
            "/api/service-accounts",
            Some(json!({"name": name})),
        )
        .await
    }

    /// A user by exact username (`GET /api/users?username=`).
    pub async fn user_by_name(&self, username: &str) -> Result<Option<User>> {
        let url = reqwest::Url::parse_with_params("http://x/api/users", [("username", username)])
            .expect("a valid URL");
        let path = format!("/api/users?{}", url.query().unwrap_or_default());
        let users: Vec<User> = self.call(Method::GET, &path, None).await?;
        Ok(users.into_iter().find(|u| u.username == username))
    }

    /// A new key for a service account.
    pub async fn mint_key(&self, account_id: i64, name: &str) -> Result<NewApiKey> {
        self.call(
            Method::POST,
            &format!("/api/service-accounts/{account_id}/api-keys"),
            Some(json!({"name": name})),
        )
        .await
    }

    pub async fn team_by_name(&self, name: &str) -> Result<Option<Team>> {
        let url = reqwest::Url::parse_with_params("http://x/api/teams", [("name", name)])
            .expect("a valid URL");
        let path = format!("/api/teams?{}", url.query().unwrap_or_default());
        let teams: Vec<Team> = self.call(Method::GET, &path, None).await?;
        Ok(teams.into_iter().find(|t| t.name == name))
    }

    pub async fn create_team(&self, name: &str, display_name: Option<&str>) -> Result<Team> {
        self.call(
            Method::POST,
            "/api/teams",
            Some(json!({"name": name, "display_name": display_name})),
        )
        .await
    }

    pub async fn team_accounts(&self, team_id: i64) -> Result<Vec<User>> {
        self.call(
            Method::GET,
            &format!("/api/teams/{team_id}/service-accounts"),
            None,
        )
        .await
    }

    pub async fn create_team_account(&self, team_id: i64, name: &str) -> Result<User> {
        self.call(
            Method::POST,
            &format!("/api/teams/{team_id}/service-accounts"),
            Some(json!({"name": name})),
        )
        .await
    }

    pub async fn rename_team(&self, team_id: i64, display_name: &str) -> Result<Team> {
        self.call(
            Method::PUT,
            &format!("/api/teams/{team_id}"),
            Some(json!({"display_name": display_name})),
        )
        .await
    }

    pub async fn set_oidc_mapping(
        &self,
        team_id: i64,
        member_groups: &[String],
        owner_groups: &[String],
    ) -> Result<Team> {
        self.call(
            Method::PUT,
            &format!("/api/teams/{team_id}/oidc"),
            Some(json!({"member_groups": member_groups, "owner_groups": owner_groups})),
        )
        .await
    }

    pub async fn oncall_day(&self, team_id: i64) -> Result<klaxon_domain::oncall_day::OncallDay> {
        self.call(
            Method::GET,
            &format!("/api/teams/{team_id}/on-call-day"),
            None,
        )
        .await
    }

    pub async fn set_oncall_day(
        &self,
        team_id: i64,
        time_zone: &str,
        handoff_time: &str,
    ) -> Result<klaxon_domain::oncall_day::OncallDay> {
        self.call(
            Method::PUT,
            &format!("/api/teams/{team_id}/on-call-day"),
            Some(json!({"time_zone": time_zone, "handoff_time": handoff_time})),
        )
        .await
    }

    pub async fn delete_team(&self, team_id: i64) -> Result<()> {
        self.send(Method::DELETE, &format!("/api/teams/{team_id}"), None)
            .await
            .map(drop)
    }

    pub async fn create_invite(
        &self,
        team_id: i64,
        role: &str,
        max_uses: i64,
    ) -> Result<NewInvite> {
        self.call(
            Method::POST,
            &format!("/api/teams/{team_id}/invites"),
            Some(json!({"role": role, "max_uses": max_uses})),
        )
        .await
    }

    pub async fn revoke_invite(&self, team_id: i64, invite_id: i64) -> Result<()> {
        self.send(
            Method::DELETE,
            &format!("/api/teams/{team_id}/invites/{invite_id}"),
            None,
        )
        .await
        .map(drop)
    }

    pub async fn create_integration(
        &self,
        team_id: i64,
        name: &str,
        kind: &str,
    ) -> Result<NewIntegration> {
        self.call(
            Method::POST,
            &format!("/api/teams/{team_id}/integrations"),
            Some(json!({"name": name, "kind": kind})),
        )
        .await
    }

    pub async fn rename_integration(
        &self,
        team_id: i64,
        id: i64,
        name: &str,
    ) -> Result<Integration> {
        self.call(
            Method::PATCH,
            &format!("/api/teams/{team_id}/integrations/{id}"),
            Some(json!({"name": name})),
        )
        .await
    }

    pub async fn delete_integration(&self, team_id: i64, id: i64) -> Result<()> {
        self.send(
            Method::DELETE,
            &format!("/api/teams/{team_id}/integrations/{id}"),
            None,
        )
        .await
        .map(drop)
    }

    /// Replaces the team's ladder whole (there is no delete: an empty policy clears it).
    pub async fn put_escalation(
        &self,
        team_id: i64,
        policy: &EscalationPolicy,
    ) -> Result<EscalationPolicy> {
        self.call(
            Method::PUT,
            &format!("/api/teams/{team_id}/escalation"),
            Some(serde_json::to_value(policy).expect("a policy serializes")),
        )
        .await
    }

    pub async fn switches(&self, team_id: i64) -> Result<Vec<DeadmanSwitch>> {
        self.call(
            Method::GET,
            &format!("/api/teams/{team_id}/deadman/switches"),
            None,
        )
        .await
    }

    pub async fn create_switch(&self, team_id: i64, spec: &SwitchSpec) -> Result<DeadmanSwitch> {
        self.call(
            Method::POST,
            &format!("/api/teams/{team_id}/deadman/switches"),
            Some(serde_json::to_value(spec).expect("a switch serializes")),
        )
        .await
    }

    pub async fn update_switch(
        &self,
        team_id: i64,
        id: i64,
        spec: &SwitchSpec,
    ) -> Result<DeadmanSwitch> {
        self.call(
            Method::PUT,
            &format!("/api/teams/{team_id}/deadman/switches/{id}"),
            Some(serde_json::to_value(spec).expect("a switch serializes")),
        )
        .await
    }

    pub async fn delete_switch(&self, team_id: i64, id: i64) -> Result<()> {
        self.send(
            Method::DELETE,
            &format!("/api/teams/{team_id}/deadman/switches/{id}"),
            None,
        )
        .await
        .map(drop)
    }
}
