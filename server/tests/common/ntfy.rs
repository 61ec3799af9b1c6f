//! A recording ntfy server: it speaks ntfy's publish protocol (JSON to the root URL, or a
//! body to `/<topic>`), checks the bearer token and the 4096-byte message cap, records what
//! it accepted, and can be told to fail the next publishes with a status (500, 429 with
//! `Retry-After`, 401) the way ntfy answers errors.

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::{Json, Router};
use serde_json::{json, Value};
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::oneshot;

pub const TOKEN: &str = "tk_klaxontestaccesstoken0000";

#[derive(Debug, Clone)]
pub struct Published {
    pub topic: String,
    pub title: String,
    pub message: String,
    pub priority: i64,
    pub tags: Vec<String>,
    pub click: Option<String>,
    pub actions: Vec<Value>,
    pub body_bytes: usize,
}

impl Published {
    /// The URL of the Acknowledge action, if the page has one.
    pub fn ack_url(&self) -> Option<String> {
        self.action_url("Acknowledge")
    }

    /// The URL of a summary push's Acknowledge all action.
    pub fn ack_all_url(&self) -> Option<String> {
        self.action_url("Acknowledge all")
    }

    fn action_url(&self, label: &str) -> Option<String> {
        self.actions
            .iter()
            .find(|a| a["label"] == label)
            .and_then(|a| a["url"].as_str().map(str::to_string))
    }
}

#[derive(Default)]
struct Inner {
    published: Vec<Published>,
    /// Scripted failures for the next publishes: (status, Retry-After).
    failures: VecDeque<(u16, Option<u64>)>,
    /// Every publish is refused this way until `heal`: (status, Retry-After).
    failing: Option<(u16, Option<u64>)>,
    /// Every publish attempt, failed or not.
    attempts: usize,
    /// Topics refused with 429 and this Retry-After until `lift`, as ntfy's subscriber-based
    /// rate limiting refuses one topic; with the attempts each got.
    limited: std::collections::HashMap<String, (u64, usize)>,
    /// The next publish waits: it says it arrived, then waits to be let through (`true`) or
    /// refused (`false`).
    hold: Option<(oneshot::Sender<()>, oneshot::Receiver<bool>)>,
}

/// A publish held at the push service, from `Recorder::hold_next`.
pub struct Held {
    arrived: Option<oneshot::Receiver<()>>,
    release: Option<oneshot::Sender<bool>>,
}

impl Held {
    /// Waits until the held publish has reached the push service.
    pub async fn arrived(&mut self) {
        if let Some(rx) = self.arrived.take() {
            rx.await.expect("a publish arrived");
        }
    }

    /// Lets the held publish be accepted.
    pub fn release(&mut self) {
        if let Some(tx) = self.release.take() {
            let _ = tx.send(true);
        }
    }

    /// Refuses the held publish with a 503, as a push service that failed mid-request would:
    /// nothing is recorded.
    pub fn refuse(&mut self) {
        if let Some(tx) = self.release.take() {
            let _ = tx.send(false);
        }
    }
}

#[derive(Clone)]
pub struct Recorder {
    pub url: String,
    addr: std::net::SocketAddr,
    router: Router,
    /// The serving task; `None` while the service is down.
    serving: Arc<Mutex<Option<tokio::task::JoinHandle<()>>>>,
    inner: Arc<Mutex<Inner>>,
    arrived: Arc<tokio::sync::Notify>,
}

/// Serves `router` on `listener`. Every answer closes its connection, so once the listener is
/// gone no kept-alive connection reaches the recorder and publishers get "connection refused".
fn serve(listener: tokio::net::TcpListener, router: Router) -> tokio::task::JoinHandle<()> {
    let router = router.layer(axum::middleware::map_response(
        |mut r: Response| async move {
            r.headers_mut()
                .insert("connection", "close".parse().unwrap());
            r
        },
    ));
    tokio::spawn(async move { axum::serve(listener, router).await.unwrap() })
}

impl Recorder {
    pub async fn start() -> Recorder {
        let inner = Arc::new(Mutex::new(Inner::default()));
        let arrived = Arc::new(tokio::sync::Notify::new());
        let state = (inner.clone(), arrived.clone());
        let router = Router::new()
            .route("/", post(json_publish))
            .route("/{topic}", post(topic_publish))
            .with_state(state);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let serving = Arc::new(Mutex::new(Some(serve(listener, router.clone()))));
        Recorder {
            url: format!("http://{addr}"),
            addr,
            router,
            serving,
            inner,
            arrived,
        }
    }

    /// Stops listening: publishes are refused at the connection until `up`.
    pub async fn down(&self) {
        let task = self.serving.lock().unwrap().take();
        if let Some(task) = task {
            task.abort();
            let _ = task.await;
        }
    }

    /// Listens again on the same address.
    pub async fn up(&self) {
        let listener = tokio::net::TcpListener::bind(self.addr).await.unwrap();
        *self.serving.lock().unwrap() = Some(serve(listener, self.router.clone()));
    }

    /// Everything accepted so far, in arrival order.
    pub fn published(&self) -> Vec<Published> {
        self.inner.lock().unwrap().published.clone()
    }

    pub fn attempts(&self) -> usize {
        self.inner.lock().unwrap().attempts
    }

    /// Takes what was accepted so far, leaving the record empty.
    pub fn take(&self) -> Vec<Published> {
        std::mem::take(&mut self.inner.lock().unwrap().published)
    }

    /// Holds the next publish until `Held::release`, as a slow push service would.
    pub fn hold_next(&self) -> Held {
        let (arrived_tx, arrived_rx) = oneshot::channel();
        let (release_tx, release_rx) = oneshot::channel();
        self.inner.lock().unwrap().hold = Some((arrived_tx, release_rx));
        Held {
            arrived: Some(arrived_rx),
            release: Some(release_tx),
        }
    }

    /// The next `n` publishes are refused with `status` (and `Retry-After` when given).
    pub fn fail_next(&self, n: usize, status: u16, retry_after: Option<u64>) {
        let mut inner = self.inner.lock().unwrap();
        for _ in 0..n {
            inner.failures.push_back((status, retry_after));
        }
    }

    /// Every publish is refused with `status` (and `Retry-After` when given) until `heal`.
    pub fn fail_all(&self, status: u16, retry_after: Option<u64>) {
        self.inner.lock().unwrap().failing = Some((status, retry_after));
    }

    /// Publishes to `topic` are refused with 429 and `Retry-After: retry_after` until `lift`.
    pub fn rate_limit(&self, topic: &str, retry_after: u64) {
        let mut inner = self.inner.lock().unwrap();
        inner.limited.insert(topic.to_string(), (retry_after, 0));
    }

    /// Publishes to `topic` are accepted again; returns how many were refused meanwhile.
    pub fn lift(&self, topic: &str) -> usize {
        let mut inner = self.inner.lock().unwrap();
        inner
            .limited
            .remove(topic)
            .map_or(0, |(_, refused)| refused)
    }

    /// Publishes are accepted again.
    pub fn heal(&self) {
        self.inner.lock().unwrap().failing = None;
    }

    /// Waits until at least `n` publishes were accepted; panics after `limit` (an event that
    /// never comes, not a deadline being waited out).
    pub async fn wait_for(&self, n: usize, limit: Duration) -> Vec<Published> {
        let wait = async {
            loop {
                let notified = self.arrived.notified();
                if self.inner.lock().unwrap().published.len() >= n {
                    return;
                }
                notified.await;
            }
        };
        tokio::time::timeout(limit, wait)
            .await
            .unwrap_or_else(|_| panic!("expected {n} publishes, got {}", self.published().len()));
        self.published()
    }
}

type Shared = (Arc<Mutex<Inner>>, Arc<tokio::sync::Notify>);

fn ntfy_error(status: u16, text: &str) -> Response {
    let code = StatusCode::from_u16(status).unwrap();
    (
        code,
        Json(json!({"code": status as u64 * 100 + 1, "http": status, "error": text})),
    )
        .into_response()
}

fn valid_topic(t: &str) -> bool {
    !t.is_empty()
        && t.len() <= 64
        && t.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

/// Checks credentials and scripted failures; `Some` is the answer to give instead of accepting.
fn gate(inner: &mut Inner, headers: &HeaderMap, body: &Bytes) -> Option<Response> {
    inner.attempts += 1;
    if let Some((status, retry_after)) = inner.failures.pop_front().or(inner.failing) {
        let mut r = ntfy_error(status, "scripted failure");
        if let Some(s) = retry_after {
            r.headers_mut()
                .insert("retry-after", s.to_string().parse().unwrap());
        }
        return Some(r);
    }
    let auth = headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    if auth != format!("Bearer {TOKEN}") {
        return Some(ntfy_error(401, "unauthorized"));
    }
    if body.len() > 4096 {
        return Some(ntfy_error(413, "message too large"));
    }
    None
}

async fn json_publish(
    State((inner, arrived)): State<Shared>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let hold = inner.lock().unwrap().hold.take();
    if let Some((arrived, release)) = hold {
        let _ = arrived.send(());
        if !release.await.unwrap_or(true) {
            return ntfy_error(503, "service unavailable");
        }
    }
    let mut guard = inner.lock().unwrap();
    if let Some(refusal) = gate(&mut guard, &headers, &body) {
        return refusal;
    }
    let Ok(v) = serde_json::from_slice::<Value>(&body) else {
        return ntfy_error(400, "invalid request: request body must be JSON");
    };
    let topic = v["topic"].as_str().unwrap_or_default().to_string();
    if !valid_topic(&topic) {
        return ntfy_error(400, "invalid topic");
    }
    if let Some((retry_after, refused)) = guard.limited.get_mut(&topic) {
        *refused += 1;
        // ntfy's own words and status for a limited visitor or topic.
        let mut r = ntfy_error(429, "limit reached: too many requests");
        r.headers_mut()
            .insert("retry-after", retry_after.to_string().parse().unwrap());
        return r;
    }
    let actions = v["actions"].as_array().cloned().unwrap_or_default();
    if actions.len() > 3
        || actions.iter().any(|a| {
            a["action"] != "http" || a["label"].as_str().is_none() || a["url"].as_str().is_none()
        })
    {
        return ntfy_error(400, "invalid request: actions invalid");
    }
    let p = Published {
        topic: topic.clone(),
        title: v["title"].as_str().unwrap_or_default().to_string(),
        message: v["message"].as_str().unwrap_or_default().to_string(),
        priority: v["priority"].as_i64().unwrap_or(3),
        tags: v["tags"]
            .as_array()
            .map(|t| {
                t.iter()
                    .filter_map(|x| x.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default(),
        click: v["click"].as_str().map(str::to_string),
        actions,
        body_bytes: body.len(),
    };
    guard.published.push(p);
    drop(guard);
    arrived.notify_waiters();
    Json(json!({"id": "rec", "time": 0, "event": "message", "topic": topic})).into_response()
}

async fn topic_publish(
    State((inner, arrived)): State<Shared>,
    Path(topic): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let mut guard = inner.lock().unwrap();
    if let Some(refusal) = gate(&mut guard, &headers, &body) {
        return refusal;
    }
    if !valid_topic(&topic) {
        return ntfy_error(400, "invalid topic");
    }
    if let Some((retry_after, refused)) = guard.limited.get_mut(&topic) {
        *refused += 1;
        // ntfy's own words and status for a limited visitor or topic.
        let mut r = ntfy_error(429, "limit reached: too many requests");
        r.headers_mut()
            .insert("retry-after", retry_after.to_string().parse().unwrap());
        return r;
    }
    let header = |k: &str| {
        headers
            .get(k)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string)
    };
    guard.published.push(Published {
        topic: topic.clone(),
        title: header("title").unwrap_or_default(),
        message: String::from_utf8_lossy(&body).into_owned(),
        priority: header("priority").and_then(|p| p.parse().ok()).unwrap_or(3),
        tags: vec![],
        click: header("click"),
        actions: vec![],
        body_bytes: body.len(),
    });
    drop(guard);
    arrived.notify_waiters();
    Json(json!({"id": "rec", "time": 0, "event": "message", "topic": topic})).into_response()
}
