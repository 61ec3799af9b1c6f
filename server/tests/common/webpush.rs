//! A recording Web Push service for the tests (`webpush.py`): it makes subscriptions, and checks
//! every push with implementations that are not Klaxon's (PyPI `http_ece` decrypts the body with
//! the subscription's private key; `cryptography` verifies the VAPID JWT). One service serves a
//! whole test binary; tests tell their pushes apart by subscription.

use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

pub struct PushService {
    pub url: String,
    _child: Mutex<Child>,
}

static SERVICE: OnceLock<PushService> = OnceLock::new();

/// The binary's push service, started on first use.
pub fn push_service() -> &'static PushService {
    SERVICE.get_or_init(PushService::start)
}

/// A subscription as the browser gives it, and its id at the push service.
pub struct Sub {
    pub id: String,
    pub json: Value,
}

impl PushService {
    fn start() -> PushService {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/common/webpush.py");
        let mut child = Command::new("python3")
            .arg(script)
            .arg(port.to_string())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("python3 runs the recording push service (scripts/setup.sh installs http_ece)");
        let mut ready = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut ready)
            .unwrap();
        assert_eq!(ready.trim(), "ready", "the push service did not start");
        PushService {
            url: format!("http://127.0.0.1:{port}"),
            _child: Mutex::new(child),
        }
    }

    pub async fn subscribe(&self) -> Sub {
        let json: Value = reqwest::Client::new()
            .post(format!("{}/subscribe", self.url))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        let id = json["endpoint"]
            .as_str()
            .unwrap()
            .rsplit('/')
            .next()
            .unwrap()
            .to_string();
        Sub { id, json }
    }

    /// Later pushes to `sub` answer `code` (with `Retry-After` when given).
    pub async fn answer(&self, sub: &Sub, code: u16, retry_after: Option<u64>) {
        let mut url = format!("{}/status/{}?code={code}", self.url, sub.id);
        if let Some(r) = retry_after {
            url.push_str(&format!("&retry_after={r}"));
        }
        reqwest::Client::new().post(url).send().await.unwrap();
    }

    /// Every push received for `sub`, oldest first: `{ok, error, payload, headers}`.
    pub async fn received(&self, sub: &Sub) -> Vec<Value> {
        let all: Vec<Value> = reqwest::get(format!("{}/messages", self.url))
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        all.into_iter()
            .filter(|m| m["id"] == sub.id.as_str())
            .collect()
    }

    /// Waits (at most 10 s) for the `n`th push to `sub`; pushes leave over a real connection.
    pub async fn wait_for(&self, sub: &Sub, n: usize) -> Value {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let got = self.received(sub).await;
            if got.len() >= n {
                return got[n - 1].clone();
            }
            assert!(
                Instant::now() < deadline,
                "no push {n} to subscription {}",
                sub.id
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}
