//! The test harness: the real router served over loopback HTTP, on a fresh SQLite file or a
//! fresh PostgreSQL schema (when `KLAXON_TEST_DATABASE_URL` is set), with a manual clock.
#![allow(dead_code)]

pub mod alertmanager;
pub mod carrier;
pub mod chat;
pub mod discord;
pub mod live;
pub mod ntfy;
pub mod oidc;
pub mod process;
pub mod slack;
pub mod smtp;
pub mod synapse;
pub mod tarpit;
pub mod telegram;
pub mod webpush;
pub mod world;

use klaxon_core::{Config, Core, Db, ManualClock};
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};
use std::sync::Arc;

/// 2026-11-22T00:00:00Z: tests start from a fixed, known instant.
pub const T0: i64 = 1_795_305_600;

/// Runs a test body once on SQLite and once on PostgreSQL, on servers configured by
/// `test_config`.
#[macro_export]
macro_rules! both {
    ($name:ident, |$app:ident| $body:block) => {
        $crate::both_with!($name, $crate::common::test_config(), |$app| $body);
    };
}

/// The same with the server's configuration given (`Config`).
#[macro_export]
macro_rules! both_with {
    ($name:ident, $config:expr, |$app:ident| $body:block) => {
        mod $name {
            #[allow(unused_imports)]
            use super::*;
            #[tokio::test]
            async fn sqlite() {
                let $app =
                    $crate::common::TestApp::spawn_with($crate::common::Backend::Sqlite, $config)
                        .await;
                $body
            }
            #[tokio::test]
            #[cfg_attr(
                not(postgres_tests),
                ignore = "needs KLAXON_TEST_DATABASE_URL at build time"
            )]
            async fn postgres() {
                let backend =
                    $crate::common::Backend::Postgres($crate::common::postgres_schema().await);
                let $app = $crate::common::TestApp::spawn_with(backend, $config).await;
                $body
            }
        }
    };
}

/// What `TestApp::spawn` runs with: the services tests stand up (Alertmanager, stand-ins) listen
/// on loopback, so the outbound policy allows it; tests of the policy itself configure their own.
pub fn test_config() -> Config {
    Config {
        outbound_allow: klaxon_core::outbound::OutboundAllow::parse("127.0.0.0/8").unwrap(),
        personal_outbound_allow: klaxon_core::outbound::OutboundAllow::parse("127.0.0.0/8")
            .unwrap(),
        // A pass's report and the rows after it tell of every send (however busy the machine);
        // the tests of slow destinations set the deployed wait.
        lane_wait: std::time::Duration::from_secs(120),
        ..Default::default()
    }
}

/// `test_config` with every page its own push: for tests of delivery itself (each page once, in
/// order, across notifiers) that send one phone more than a minute's five pushes.
#[allow(dead_code)]
pub fn unbundled() -> Config {
    Config {
        page_bundle_after: 0,
        ..test_config()
    }
}

pub enum Backend {
    Sqlite,
    Postgres(String),
}

pub struct TestApp {
    pub url: String,
    pub core: Core,
    pub clock: Arc<ManualClock>,
    pub client: reqwest::Client,
    /// Where the database lives, so a test can start a second server on it.
    pub database_url: String,
    /// The recording ntfy server this app pages (when its config names one).
    pub ntfy: ntfy::Recorder,
    pub config: Config,
    _dir: tempfile::TempDir,
    /// Keeps the live-update feed running (it stops when this is dropped).
    _feed: tokio::sync::watch::Sender<bool>,
}

/// A response: status, headers and the body parsed as JSON (Null when it is not JSON).
pub struct Res {
    pub status: StatusCode,
    pub headers: reqwest::header::HeaderMap,
    pub body: Value,
    pub text: String,
    pub bytes: Vec<u8>,
}

impl Res {
    /// Asserts the status and returns the body.
    #[track_caller]
    pub fn expect(self, status: u16) -> Value {
        assert_eq!(
            self.status.as_u16(),
            status,
            "unexpected status; body: {}",
            self.text
        );
        self.body
    }

    /// Asserts an error answer in the contract's shape with the given status and code.
    #[track_caller]
    pub fn expect_error(self, status: u16, code: &str) -> String {
        assert_eq!(
            self.status.as_u16(),
            status,
            "unexpected status; body: {}",
            self.text
        );
        assert_eq!(self.body["error"], code, "error code; body: {}", self.text);
        let message = self.body["message"].as_str().expect("message is a string");
        assert!(!message.is_empty());
        message.to_string()
    }

    pub fn cookie(&self) -> Option<String> {
        self.headers
            .get_all("set-cookie")
            .iter()
            .filter_map(|v| v.to_str().ok())
            .find(|c| c.starts_with("klaxon_session="))
            .map(str::to_string)
    }

    /// The session the answer's `Set-Cookie` started, as the credential of later requests.
    pub fn session(&self) -> Option<Auth> {
        let cookie = self.cookie()?;
        let token = cookie
            .trim_start_matches("klaxon_session=")
            .split(';')
            .next()?;
        Some(Auth::Cookie(token.to_string()))
    }
}

/// How a request authenticates.
#[derive(Clone)]
pub enum Auth {
    None,
    Key(String),
    /// The `klaxon_session` cookie value (the token).
    Cookie(String),
}

impl TestApp {
    /// A server paging a fresh recording ntfy server, configured by `test_config`.
    pub async fn spawn(backend: Backend) -> TestApp {
        Self::spawn_with(backend, test_config()).await
    }

    pub async fn spawn_postgres() -> TestApp {
        Self::spawn(Backend::Postgres(postgres_schema().await)).await
    }

    pub async fn spawn_with(backend: Backend, config: Config) -> TestApp {
        let dir = tempfile::tempdir().unwrap();
        let database_url = match backend {
            Backend::Sqlite => format!(
                "sqlite://{}?mode=rwc",
                dir.path().join("klaxon.db").display()
            ),
            Backend::Postgres(url) => url,
        };
        Self::spawn_on(dir, database_url, config).await
    }

    /// Another server on the same database and clock start, as a restart or second replica.
    /// Without an ntfy URL in `config`, the app pages a fresh recording ntfy server.
    pub async fn spawn_on(dir: tempfile::TempDir, database_url: String, config: Config) -> TestApp {
        Self::spawn_limited(dir, database_url, config, None).await
    }

    /// As `spawn_on`, with the listener's limits given (`None`: the defaults).
    pub async fn spawn_limited(
        dir: tempfile::TempDir,
        database_url: String,
        mut config: Config,
        limits: Option<klaxon_server::listen::Limits>,
    ) -> TestApp {
        let ntfy = ntfy::Recorder::start().await;
        if config.roads.ntfy_url.is_none() {
            config.roads.ntfy_url = Some(ntfy.url.clone());
            config.roads.ntfy_token = Some(ntfy::TOKEN.into());
        }
        let _ = tracing_subscriber::fmt()
            .with_test_writer()
            .with_env_filter("warn")
            .try_init();
        let clock = Arc::new(ManualClock::new(T0));
        let db = Db::connect(Some(&database_url), dir.path())
            .await
            .expect("database");
        let core = Core::start(db, clock.clone(), config.clone())
            .await
            .expect("core starts");
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let router = klaxon_server::app(core.clone());
        let (feed, feed_stopped) = tokio::sync::watch::channel(false);
        tokio::spawn({
            let core = core.clone();
            async move { core.run_event_feed(feed_stopped).await }
        });
        let limits = limits.unwrap_or_default();
        let on_full: klaxon_server::listen::OnFull = {
            let core = core.clone();
            Arc::new(move |full| core.connections_full(full))
        };
        tokio::spawn(klaxon_server::listen::serve(
            listener,
            router,
            limits,
            Some(on_full),
            std::future::pending(),
        ));
        TestApp {
            url: format!("http://{addr}"),
            core,
            clock,
            client: reqwest::Client::builder()
                .redirect(reqwest::redirect::Policy::none())
                // The server closes a connection idle for its header timeout (10 s): a client
                // does not reuse one idle that long, or it races the close.
                .pool_idle_timeout(std::time::Duration::from_secs(5))
                // A request the server never answers fails the test instead of stalling the run.
                .timeout(std::time::Duration::from_secs(120))
                .build()
                .unwrap(),
            database_url,
            ntfy,
            config,
            _dir: dir,
            _feed: feed,
        }
    }

    pub async fn send(&self, method: Method, path: &str, auth: &Auth, body: Option<Value>) -> Res {
        let mut req = self.client.request(method, format!("{}{}", self.url, path));
        req = match auth {
            Auth::None => req,
            Auth::Key(k) => req.bearer_auth(k),
            Auth::Cookie(c) => req.header("cookie", format!("klaxon_session={c}")),
        };
        if let Some(b) = body {
            req = req.json(&b);
        }
        into_res(req.send().await.expect("request sent")).await
    }

    pub async fn get(&self, path: &str, auth: &Auth) -> Res {
        self.send(Method::GET, path, auth, None).await
    }
    pub async fn post(&self, path: &str, auth: &Auth, body: Value) -> Res {
        self.send(Method::POST, path, auth, Some(body)).await
    }
    pub async fn put(&self, path: &str, auth: &Auth, body: Value) -> Res {
        self.send(Method::PUT, path, auth, Some(body)).await
    }
    pub async fn delete(&self, path: &str, auth: &Auth) -> Res {
        self.send(Method::DELETE, path, auth, None).await
    }
    pub async fn patch(&self, path: &str, auth: &Auth, body: Value) -> Res {
        self.send(Method::PATCH, path, auth, Some(body)).await
    }

    /// Raw request for hostile inputs: any body bytes, any headers.
    pub async fn raw(
        &self,
        method: Method,
        path: &str,
        headers: &[(&str, &str)],
        body: Vec<u8>,
    ) -> Res {
        let mut req = self
            .client
            .request(method, format!("{}{}", self.url, path))
            .body(body);
        for (k, v) in headers {
            req = req.header(*k, *v);
        }
        into_res(req.send().await.expect("request sent")).await
    }

    /// Bootstraps `admin` and returns its API key.
    pub async fn bootstrap(&self) -> Auth {
        let b = self
            .post(
                "/api/bootstrap",
                &Auth::None,
                json!({"username": "admin", "password": "admin password"}),
            )
            .await
            .expect(201);
        Auth::Key(b["api_key"].as_str().unwrap().to_string())
    }

    /// Creates a user with a password (as `admin`) and returns (id, an API key of theirs).
    pub async fn user(&self, admin: &Auth, name: &str) -> (i64, Auth) {
        let u = self
            .post(
                "/api/users",
                admin,
                json!({"username": name, "password": format!("{name} password")}),
            )
            .await
            .expect(201);
        let id = u["id"].as_i64().unwrap();
        let k = self
            .post(
                &format!("/api/users/{id}/api-keys"),
                admin,
                json!({"name": "test"}),
            )
            .await
            .expect(201);
        (id, Auth::Key(k["key"].as_str().unwrap().to_string()))
    }

    /// Signs in with a password and returns the session cookie's token.
    pub async fn login(&self, name: &str, password: &str) -> Auth {
        let r = self
            .post(
                "/api/auth/login",
                &Auth::None,
                json!({"username": name, "password": password}),
            )
            .await;
        let session = r.session().expect("a sign-in starts a session");
        r.expect(200);
        session
    }

    /// Lets anyone sign up without a link (`signup_mode` open), as `admin`.
    pub async fn open_signups(&self, admin: &Auth) {
        self.put("/api/admin/settings", admin, json!({"signup_mode": "open"}))
            .await
            .expect(200);
    }

    /// Mints a key for the service account `id` as `auth`.
    pub async fn service_key(&self, auth: &Auth, id: i64) -> Auth {
        let k = self
            .post(
                &format!("/api/service-accounts/{id}/api-keys"),
                auth,
                json!({"name": "k"}),
            )
            .await
            .expect(201);
        Auth::Key(k["key"].as_str().unwrap().to_string())
    }

    /// A key of a new instance-scoped service account `name`, made by `admin`: what `klaxon
    /// apply` and `klaxon import` act with.
    pub async fn instance_key(&self, admin: &Auth, name: &str) -> String {
        let sa = self
            .post("/api/service-accounts", admin, json!({ "name": name }))
            .await
            .expect(201);
        let Auth::Key(key) = self.service_key(admin, sa["id"].as_i64().unwrap()).await else {
            unreachable!("service_key answers a key")
        };
        key
    }

    /// Creates a team as `owner` and returns its id.
    pub async fn team(&self, owner: &Auth, name: &str) -> i64 {
        self.post("/api/teams", owner, json!({"name": name}))
            .await
            .expect(201)["id"]
            .as_i64()
            .unwrap()
    }
}

async fn into_res(r: reqwest::Response) -> Res {
    let status = r.status();
    let headers = r.headers().clone();
    let bytes = r.bytes().await.map(|b| b.to_vec()).unwrap_or_default();
    let text = String::from_utf8_lossy(&bytes).into_owned();
    let body = serde_json::from_str(&text).unwrap_or(Value::Null);
    Res {
        status,
        headers,
        body,
        text,
        bytes,
    }
}

/// A fresh schema in the PostgreSQL database named by `KLAXON_TEST_DATABASE_URL`, and a URL
/// whose connections use it, so every test starts from an empty database.
/// A fresh schema in `KLAXON_TEST_DATABASE_URL`'s database. Only PostgreSQL tests call it, and
/// they are built to run only when that variable is set (`server/build.rs`).
pub async fn postgres_schema() -> String {
    let base = std::env::var("KLAXON_TEST_DATABASE_URL")
        .ok()
        .filter(|u| !u.is_empty())
        .expect("KLAXON_TEST_DATABASE_URL names a PostgreSQL database");
    sqlx::any::install_default_drivers();
    let schema = format!("t_{}", rand::random::<u64>());
    let pool = sqlx::AnyPool::connect(&base)
        .await
        .expect("KLAXON_TEST_DATABASE_URL reachable");
    sqlx::query(&format!("CREATE SCHEMA {schema}"))
        .execute(&pool)
        .await
        .unwrap();
    pool.close().await;
    let sep = if base.contains('?') { '&' } else { '?' };
    format!("{base}{sep}options=-c%20search_path%3D{schema}")
}

/// The `action` of the page's first form posting to a server function under `prefix`.
pub fn form_action(html: &str, prefix: &str) -> String {
    let at = html
        .find(&format!("action=\"{prefix}"))
        .unwrap_or_else(|| panic!("no form posting to {prefix}"));
    let rest = &html[at + "action=\"".len()..];
    rest[..rest.find('"').unwrap()].to_string()
}

impl TestApp {
    /// Posts a form to a server function as a script would (`accept: application/json`), so
    /// refusals come back with their status.
    pub async fn rpc(&self, path: &str, auth: &Auth, form: &str) -> Res {
        let mut req = self
            .client
            .post(format!("{}{}", self.url, path))
            .header("content-type", "application/x-www-form-urlencoded")
            .header("accept", "application/json")
            .body(form.to_string());
        req = match auth {
            Auth::None => req,
            Auth::Key(k) => req.bearer_auth(k),
            Auth::Cookie(c) => req.header("cookie", format!("klaxon_session={c}")),
        };
        into_res(req.send().await.expect("request sent")).await
    }
}

/// A minimal Alertmanager webhook payload (version 4) for tests.
pub struct Payload {
    pub group_key: String,
    pub alerts: Vec<Value>,
    pub truncated: u64,
}

impl Payload {
    pub fn new(group_key: &str) -> Payload {
        Payload {
            group_key: group_key.into(),
            alerts: vec![],
            truncated: 0,
        }
    }

    /// Adds an alert; `starts` and `ends` are offsets in seconds from T0 (`ends: None` = still firing).
    pub fn alert(
        mut self,
        fingerprint: &str,
        status: &str,
        starts: i64,
        ends: Option<i64>,
        labels: Value,
    ) -> Payload {
        let time = |t: i64| klaxon_domain::Timestamp(T0 + t).to_rfc3339();
        let mut labels = labels;
        if labels.get("alertname").is_none() {
            labels["alertname"] = json!("HighErrorRate");
        }
        self.alerts.push(json!({
            "status": status,
            "labels": labels,
            "annotations": {"summary": "Error rate above 5%"},
            "startsAt": time(starts),
            "endsAt": ends.map(time).unwrap_or_else(|| "0001-01-01T00:00:00Z".into()),
            "generatorURL": "http://prometheus/graph",
            "fingerprint": fingerprint,
        }));
        self
    }

    pub fn json(&self) -> Value {
        let firing = self.alerts.iter().any(|a| a["status"] == "firing");
        json!({
            "version": "4",
            "groupKey": self.group_key,
            "status": if firing { "firing" } else { "resolved" },
            "receiver": "klaxon",
            "groupLabels": {"alertname": "HighErrorRate", "service": "checkout"},
            "commonLabels": {},
            "commonAnnotations": {},
            "externalURL": "http://alertmanager:9093",
            "truncatedAlerts": self.truncated,
            "alerts": self.alerts,
        })
    }
}

impl TestApp {
    /// Creates an integration in the team and returns its raw key.
    pub async fn integration(&self, owner: &Auth, team_id: i64) -> String {
        let i = self
            .post(
                &format!("/api/teams/{team_id}/integrations"),
                owner,
                json!({"name": "prometheus"}),
            )
            .await
            .expect(201);
        i["key"].as_str().unwrap().to_string()
    }

    pub async fn webhook(&self, key: &str, payload: &Payload) -> Res {
        self.post(
            &format!("/api/alertmanager/webhook/{key}"),
            &Auth::None,
            payload.json(),
        )
        .await
    }

    /// Incidents of a team, newest first (archived ones included).
    pub async fn incidents(&self, auth: &Auth, team_id: i64) -> Vec<Value> {
        let v = self
            .get(
                &format!("/api/incidents?team_id={team_id}&archived=true"),
                auth,
            )
            .await
            .expect(200);
        v.as_array().unwrap().clone()
    }

    pub async fn alert_by_fingerprint(&self, auth: &Auth, fingerprint: &str) -> Value {
        let all = self
            .get("/api/alerts?archived=true&limit=1000", auth)
            .await
            .expect(200);
        all.as_array()
            .unwrap()
            .iter()
            .find(|a| a["fingerprint"] == fingerprint)
            .cloned()
            .expect("alert stored")
    }
}

/// A team `payments` owned by `admin`, with members alice (on call today), bob and carol,
/// each subscribed to `{name}-pager`, and an integration.
pub struct Paging {
    pub admin: Auth,
    pub team: i64,
    pub key: String,
    pub alice: (i64, Auth),
    pub bob: (i64, Auth),
    pub carol: (i64, Auth),
}

impl TestApp {
    pub async fn paging_world(&self) -> Paging {
        let admin = self.bootstrap().await;
        let team = self.team(&admin, "payments").await;
        let mut people = Vec::new();
        for name in ["alice", "bob", "carol"] {
            let (id, auth) = self.user(&admin, name).await;
            self.put(
                &format!("/api/users/{id}/push-topic"),
                &admin,
                json!({"push_topic": format!("{name}-pager")}),
            )
            .await
            .expect(200);
            self.post(
                &format!("/api/teams/{team}/members"),
                &admin,
                json!({"user_id": id}),
            )
            .await
            .expect(201);
            people.push((id, auth));
        }
        self.post(
            &format!("/api/teams/{team}/schedule"),
            &admin,
            json!({"user_id": people[0].0, "dates": ["2026-11-22"]}),
        )
        .await
        .expect(201);
        let key = self.integration(&admin, team).await;
        let carol = people.pop().unwrap();
        let bob = people.pop().unwrap();
        let alice = people.pop().unwrap();
        Paging {
            admin,
            team,
            key,
            alice,
            bob,
            carol,
        }
    }

    /// One notifier pass, as the loop would run it.
    pub async fn tick(&self) -> klaxon_core::paging::notifier::NotifyReport {
        self.core.notify_tick("test").await.expect("notifier pass")
    }

    /// One announcer pass (team channels), as the loop would run it.
    pub async fn announce(&self) -> klaxon_core::channels::AnnounceReport {
        self.core
            .announce_tick("test")
            .await
            .expect("announcer pass")
    }

    /// Fires a critical alert in its own group and returns the incident it opened or joined.
    pub async fn fire(&self, key: &str, group: &str) -> i64 {
        let payload =
            Payload::new(group).alert(group, "firing", 0, None, json!({"severity": "critical"}));
        self.webhook(key, &payload).await.expect(200);
        self.incident_of(group).await
    }

    /// Resolves the alert `fire(key, group)` fired.
    pub async fn clear(&self, key: &str, group: &str) {
        let payload = Payload::new(group).alert(
            group,
            "resolved",
            0,
            Some(60),
            json!({"severity": "critical"}),
        );
        self.webhook(key, &payload).await.expect(200);
    }

    /// The newest incident of a group key, read straight from the database.
    pub async fn incident_of(&self, group: &str) -> i64 {
        let (id,): (i64,) = sqlx::query_as("SELECT MAX(id) FROM incidents WHERE group_key = $1")
            .bind(group)
            .fetch_one(&self.core.db.pool)
            .await
            .expect("an incident of the group");
        id
    }

    /// `POST` to the path of a page's Acknowledge URL, with no credential.
    pub async fn press_ack(&self, ack_url: &str) -> Res {
        let path = ack_url
            .strip_prefix(&self.config.public_url)
            .expect("ack URL under the public URL");
        self.send(Method::POST, path, &Auth::None, None).await
    }

    pub async fn detail(&self, auth: &Auth, incident: i64) -> Value {
        self.get(&format!("/api/incidents/{incident}"), auth)
            .await
            .expect(200)
    }
}

/// Timeline kinds of an incident detail, in order.
pub fn timeline_kinds(detail: &Value) -> Vec<String> {
    detail["timeline"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["kind"].as_str().unwrap().to_string())
        .collect()
}

/// Timeline texts of one kind.
pub fn timeline_texts(detail: &Value, kind: &str) -> Vec<String> {
    detail["timeline"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["kind"] == kind)
        .map(|t| t["text"].as_str().unwrap().to_string())
        .collect()
}
