//! Real `klaxon serve` processes on free ports, for what one process cannot show: replicas on
//! one database, signals. They use the system clock, so tests wait for events (with `until`),
//! never for deadlines.

use serde_json::Value;
use std::process::Stdio;
use std::time::Duration;
use tokio::process::{Child, Command};

/// A bound on events that do come; a test that reaches it has failed.
pub const LIMIT: Duration = Duration::from_secs(60);

/// A free loopback port (nothing listens on it once this returns).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Polls `check` until it answers; panics after `LIMIT`.
pub async fn until<T, F, Fut>(what: &str, mut check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<T>>,
{
    tokio::time::timeout(LIMIT, async {
        loop {
            if let Some(v) = check().await {
                return v;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await
    .unwrap_or_else(|_| panic!("{what} never happened"))
}

/// The `klaxon` binary the processes run: this build's, or the one `KLAXON_TEST_SERVER_BIN`
/// names (`scripts/test.sh` names the release build, which is what a deployment runs).
pub fn binary() -> String {
    std::env::var("KLAXON_TEST_SERVER_BIN")
        .ok()
        .filter(|b| !b.is_empty())
        .unwrap_or_else(|| env!("CARGO_BIN_EXE_klaxon").to_string())
}

/// One `klaxon serve` process.
pub struct Replica {
    pub url: String,
    pub port: u16,
    pub child: Child,
    _dir: tempfile::TempDir,
}

impl Replica {
    /// Starts `klaxon serve` with `env` on a free port and waits until `/healthz` answers.
    pub async fn start(env: &[(&str, &str)]) -> Replica {
        let dir = tempfile::tempdir().unwrap();
        let port = free_port();
        let child = Command::new(binary())
            .arg("serve")
            .env("KLAXON_ADDR", format!("127.0.0.1:{port}"))
            .env("KLAXON_DATA_DIR", dir.path())
            .env("KLAXON_LOG", "warn")
            .envs(env.iter().copied())
            .stdout(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("klaxon starts");
        let url = format!("http://127.0.0.1:{port}");
        let client = reqwest::Client::new();
        until("the replica answering", || async {
            let r = client.get(format!("{url}/healthz")).send().await.ok()?;
            r.status().is_success().then_some(())
        })
        .await;
        Replica {
            url,
            port,
            child,
            _dir: dir,
        }
    }

    /// The SQLite file of a replica started without `KLAXON_DATABASE_URL`.
    pub fn sqlite_url(&self) -> String {
        format!("sqlite://{}", self._dir.path().join("klaxon.db").display())
    }

    pub fn data_dir(&self) -> &std::path::Path {
        self._dir.path()
    }

    pub fn signal(&self, signal: &str) {
        let pid = self.child.id().expect("still running").to_string();
        let sent = std::process::Command::new("kill")
            .args([&format!("-{signal}"), &pid])
            .status()
            .unwrap();
        assert!(sent.success());
    }

    /// Whether the process has not been waited for after a kill.
    pub fn running(&self) -> bool {
        self.child.id().is_some()
    }

    /// How many notifier passes this replica has finished.
    pub async fn notifier_passes(&self) -> u64 {
        self.metric("klaxon_notifier_pass_duration_seconds_count")
            .await
            .unwrap_or(0.0) as u64
    }

    /// The value of the unlabelled sample `name` in `/metrics`.
    pub async fn metric(&self, name: &str) -> Option<f64> {
        let text = self.metrics().await;
        text.lines()
            .find_map(|l| l.strip_prefix(name)?.strip_prefix(' ')?.parse().ok())
    }

    /// `GET /metrics` of this replica.
    pub async fn metrics(&self) -> String {
        reqwest::get(format!("{}/metrics", self.url))
            .await
            .unwrap()
            .text()
            .await
            .unwrap()
    }
}

/// POSTs JSON, with an API key when given, and returns the answer's body; panics on failure.
pub async fn post(client: &reqwest::Client, url: &str, key: Option<&str>, body: Value) -> Value {
    let mut req = client.post(url).json(&body);
    if let Some(k) = key {
        req = req.bearer_auth(k);
    }
    let res = req.send().await.unwrap();
    let status = res.status();
    let text = res.text().await.unwrap();
    assert!(status.is_success(), "{url}: {status} {text}");
    serde_json::from_str(&text).unwrap_or(Value::Null)
}

/// Bootstraps `admin` on the server at `base`; returns its API key.
pub async fn bootstrap(client: &reqwest::Client, base: &str) -> String {
    let b = post(
        client,
        &format!("{base}/api/bootstrap"),
        None,
        serde_json::json!({"username": "admin", "password": "admin password"}),
    )
    .await;
    b["api_key"].as_str().unwrap().to_string()
}

/// A team named `name` with one Alertmanager integration; returns the team id and the key.
pub async fn team_with_integration(
    client: &reqwest::Client,
    base: &str,
    admin: &str,
    name: &str,
) -> (i64, String) {
    let team = post(
        client,
        &format!("{base}/api/teams"),
        Some(admin),
        serde_json::json!({"name": name}),
    )
    .await["id"]
        .as_i64()
        .unwrap();
    let key = post(
        client,
        &format!("{base}/api/teams/{team}/integrations"),
        Some(admin),
        serde_json::json!({"name": "am"}),
    )
    .await["key"]
        .as_str()
        .unwrap()
        .to_string();
    (team, key)
}
