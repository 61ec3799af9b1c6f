//! The real Prometheus Alertmanager (Debian's `prometheus-alertmanager`), started on a free
//! loopback port with its own data directory and killed when dropped.

use serde_json::Value;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

const ALERTMANAGER: &str = "/usr/bin/prometheus-alertmanager";

/// Basic-auth user of `Alertmanager::start_with_basic_auth`, and its password.
pub const AM_USER: &str = "klaxon";
pub const AM_PASSWORD: &str = "am-secret";
/// bcrypt (cost 4) of `AM_PASSWORD`, as Alertmanager's web config wants it.
const AM_PASSWORD_BCRYPT: &str = "$2b$04$UkSHwCyDYwpz3jgyglZNMuGx05Dga8N9/kj6q8.5OuALuCg7XtKai";

pub struct Alertmanager {
    child: Child,
    pub url: String,
    dir: tempfile::TempDir,
    basic_auth: bool,
}

impl Drop for Alertmanager {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Alertmanager {
    /// Starts Alertmanager routing every alert to `webhook` and waits until it is ready.
    pub async fn start(webhook: &str) -> Alertmanager {
        Self::launch(webhook, "1h", false).await
    }

    /// Starts Alertmanager sending every alert through its PagerDuty notifier (Events API v2)
    /// to `url` with `routing_key`, and waits until it is ready.
    pub async fn start_pagerduty(url: &str, routing_key: &str) -> Alertmanager {
        let receiver = format!(
            "    pagerduty_configs:\n      - url: '{url}'\n        routing_key: '{routing_key}'\n        send_resolved: true\n"
        );
        Self::launch_with(&receiver, "1h", false).await
    }

    /// Starts Alertmanager sending every alert through its Opsgenie notifier (Alert API) to
    /// `api_url` (ending in `/`) with `api_key`, and waits until it is ready.
    pub async fn start_opsgenie(api_url: &str, api_key: &str) -> Alertmanager {
        let receiver = format!(
            "    opsgenie_configs:\n      - api_url: '{api_url}'\n        api_key: '{api_key}'\n        send_resolved: true\n"
        );
        Self::launch_with(&receiver, "1h", false).await
    }

    /// The same, re-sending a still-firing group every `repeat_interval`.
    pub async fn start_repeating(webhook: &str, repeat_interval: &str) -> Alertmanager {
        Self::launch(webhook, repeat_interval, false).await
    }

    /// The same, with its API behind HTTP basic auth (`AM_USER`, `AM_PASSWORD`).
    pub async fn start_with_basic_auth(webhook: &str) -> Alertmanager {
        Self::launch(webhook, "1h", true).await
    }

    async fn launch(webhook: &str, repeat_interval: &str, basic_auth: bool) -> Alertmanager {
        let receiver = format!(
            "    webhook_configs:\n      - url: '{webhook}'\n        send_resolved: true\n"
        );
        Self::launch_with(&receiver, repeat_interval, basic_auth).await
    }

    /// Starts Alertmanager with `receiver` (the YAML of the one receiver's configs).
    async fn launch_with(receiver: &str, repeat_interval: &str, basic_auth: bool) -> Alertmanager {
        assert!(
            Path::new(ALERTMANAGER).exists(),
            "{ALERTMANAGER} is missing: run scripts/setup.sh to install prometheus-alertmanager"
        );
        let dir = tempfile::tempdir().unwrap();
        let config = format!(
            "route:\n  receiver: klaxon\n  group_by: ['alertname', 'service']\n  group_wait: 1s\n  \
             group_interval: 1s\n  repeat_interval: {repeat_interval}\nreceivers:\n  - name: klaxon\n{receiver}"
        );
        std::fs::write(dir.path().join("am.yml"), config).unwrap();
        std::fs::write(
            dir.path().join("web.yml"),
            format!("basic_auth_users:\n  {AM_USER}: '{AM_PASSWORD_BCRYPT}'\n"),
        )
        .unwrap();
        // A free port: bind, read it, release it for Alertmanager.
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let log = std::fs::File::create(dir.path().join("am.log")).unwrap();
        let mut cmd = Command::new(ALERTMANAGER);
        cmd.arg(format!(
            "--config.file={}",
            dir.path().join("am.yml").display()
        ))
        .arg(format!(
            "--storage.path={}",
            dir.path().join("data").display()
        ))
        .arg(format!("--web.listen-address=127.0.0.1:{port}"))
        // Empty: clustering off, so nothing else binds a port.
        .arg("--cluster.listen-address=");
        if basic_auth {
            cmd.arg(format!(
                "--web.config.file={}",
                dir.path().join("web.yml").display()
            ));
        }
        let child = cmd
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("Alertmanager starts");
        let am = Alertmanager {
            child,
            url: format!("http://127.0.0.1:{port}"),
            dir,
            basic_auth,
        };
        for _ in 0..100 {
            if let Ok(r) = am.request(reqwest::Method::GET, "/-/ready").send().await {
                if r.status() == 200 {
                    return am;
                }
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!("Alertmanager not ready after 10 s; its log:\n{}", am.log());
    }

    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("am.log")).unwrap_or_default()
    }

    /// A request to its API, signed in when it wants basic auth.
    pub fn request(&self, method: reqwest::Method, path: &str) -> reqwest::RequestBuilder {
        let req = reqwest::Client::new().request(method, format!("{}{path}", self.url));
        if self.basic_auth {
            req.basic_auth(AM_USER, Some(AM_PASSWORD))
        } else {
            req
        }
    }

    pub async fn post_alerts(&self, alerts: Value) {
        let r = self
            .request(reqwest::Method::POST, "/api/v2/alerts")
            .json(&alerts)
            .send()
            .await
            .unwrap();
        assert_eq!(
            r.status(),
            200,
            "Alertmanager refused: {:?}",
            r.text().await
        );
    }

    /// One silence as Alertmanager's API shows it.
    pub async fn silence(&self, id: &str) -> Value {
        let r = self
            .request(reqwest::Method::GET, &format!("/api/v2/silence/{id}"))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200, "silence {id}: {:?}", r.text().await);
        r.json().await.unwrap()
    }
}

/// The DiskFull alert of storage's db-1 as posted to Alertmanager's API, started at `starts_at`
/// and, when `ends_at` is given, resolved then.
pub fn disk_full(starts_at: &str, ends_at: Option<String>) -> Value {
    let mut a = serde_json::json!({
        "labels": {"alertname": "DiskFull", "service": "storage", "instance": "db-1:9100"},
        "startsAt": starts_at,
    });
    if let Some(e) = ends_at {
        a["endsAt"] = serde_json::json!(e);
    }
    serde_json::json!([a])
}

pub fn rfc3339_now() -> String {
    time::OffsetDateTime::now_utc()
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap()
}

/// Polls `check` every 200 ms for up to 30 s (Alertmanager delivers on its own schedule).
pub async fn eventually<T, F, Fut>(am: &Alertmanager, what: &str, mut check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<T>>,
{
    for _ in 0..150 {
        if let Some(v) = check().await {
            return v;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    panic!(
        "{what}: not seen within 30 s; Alertmanager log:\n{}",
        am.log()
    );
}
