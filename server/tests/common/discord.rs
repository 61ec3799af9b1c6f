//! A stand-in for Discord, which cannot run here: the REST API's create and edit message
//! (<https://discord.com/developers/docs/resources/message#create-message>, `#edit-message`),
//! each checked against the documented shape (embeds,
//! <https://discord.com/developers/docs/resources/message#embed-object-embed-limits>; an action
//! row of buttons, <https://discord.com/developers/docs/components/reference#button>) and the
//! bot's `Authorization: Bot …`; and interactions signed as Discord signs them, by PyPI
//! `cryptography` (`discord_sign.py`).

use axum::extract::{Path, State};
use axum::http::{HeaderMap, Method, StatusCode};
use axum::routing::{patch, post};
use axum::{Json, Router};
use serde_json::{json, Value};
use std::io::Write;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};

pub const TOKEN: &str = "discord-bot-token-for-tests";
/// The application's key pair: this seed, and its public key (`public_key`).
pub const SEED: &str = "9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60";

fn script() -> &'static str {
    concat!(env!("CARGO_MANIFEST_DIR"), "/tests/common/discord_sign.py")
}

/// The application's public key, hex.
pub fn public_key() -> String {
    let out = Command::new("python3")
        .args([script(), SEED, "public"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

/// Discord's signature of `body` sent at `timestamp`, hex.
pub fn sign(timestamp: &str, body: &[u8]) -> String {
    let mut child = Command::new("python3")
        .args([script(), SEED, timestamp])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(body).unwrap();
    let out = child.wait_with_output().unwrap();
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

#[derive(Default)]
struct Inner {
    calls: Vec<(String, String, Value)>,
    next: u64,
}

#[derive(Clone)]
pub struct Discord {
    pub url: String,
    inner: Arc<Mutex<Inner>>,
}

impl Discord {
    pub async fn start() -> Discord {
        let inner = Arc::new(Mutex::new(Inner::default()));
        let router = Router::new()
            .route("/channels/{channel}/messages", post(receive))
            .route("/channels/{channel}/messages/{message}", patch(receive))
            .with_state(inner.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
        Discord { url, inner }
    }

    /// The calls of `method` (`POST` creates, `PATCH` edits): (path, body), in order.
    pub fn calls(&self, method: &str) -> Vec<(String, Value)> {
        let inner = self.inner.lock().unwrap();
        inner
            .calls
            .iter()
            .filter(|(m, _, _)| m == method)
            .map(|(_, p, b)| (p.clone(), b.clone()))
            .collect()
    }
}

async fn receive(
    State(inner): State<Arc<Mutex<Inner>>>,
    method: Method,
    Path(path): Path<Vec<(String, String)>>,
    headers: HeaderMap,
    Json(body): Json<Value>,
) -> (StatusCode, Json<Value>) {
    if headers.get("authorization").and_then(|v| v.to_str().ok()) != Some(&format!("Bot {TOKEN}")) {
        return (
            StatusCode::UNAUTHORIZED,
            Json(json!({"message": "401: Unauthorized", "code": 0})),
        );
    }
    if let Err(why) = message(&body) {
        return (
            StatusCode::BAD_REQUEST,
            Json(json!({"message": "Invalid Form Body", "code": 50035, "errors": why})),
        );
    }
    let channel = path[0].1.clone();
    let mut inner = inner.lock().unwrap();
    let id = match path.get(1) {
        Some((_, id)) => id.clone(),
        None => {
            inner.next += 1;
            format!("{}", 1_300_000_000_000_000_000u64 + inner.next)
        }
    };
    let shown = path
        .iter()
        .map(|(_, v)| v.as_str())
        .collect::<Vec<_>>()
        .join("/");
    inner.calls.push((method.to_string(), shown, body.clone()));
    (
        StatusCode::OK,
        Json(
            json!({"id": id, "channel_id": channel, "embeds": body["embeds"], "components": body["components"]}),
        ),
    )
}

/// A message: at most 10 embeds (title 256 characters, description 4096), at most 5 action rows
/// of at most 5 buttons; a button has a label of at most 80 characters and either a style 1 to 4
/// with a `custom_id` of at most 100 characters, or style 5 with a `url`.
fn message(body: &Value) -> Result<(), String> {
    let embeds = body["embeds"].as_array().ok_or("embeds")?;
    if embeds.len() > 10 {
        return Err("at most 10 embeds".into());
    }
    for e in embeds {
        if e["title"].as_str().is_some_and(|t| t.chars().count() > 256) {
            return Err("an embed's title is at most 256 characters".into());
        }
        if e["description"]
            .as_str()
            .is_some_and(|t| t.chars().count() > 4096)
        {
            return Err("an embed's description is at most 4096 characters".into());
        }
    }
    let rows = body["components"].as_array().ok_or("components")?;
    if rows.len() > 5 {
        return Err("at most 5 action rows".into());
    }
    for row in rows {
        if row["type"] != 1 {
            return Err("a top-level component is an action row".into());
        }
        let buttons = row["components"].as_array().ok_or("a row's components")?;
        if buttons.is_empty() || buttons.len() > 5 {
            return Err("an action row holds 1 to 5 buttons".into());
        }
        for b in buttons {
            if b["type"] != 2
                || b["label"]
                    .as_str()
                    .is_none_or(|l| l.is_empty() || l.chars().count() > 80)
            {
                return Err("a button has a label of 1 to 80 characters".into());
            }
            match (b["style"].as_i64(), b.get("custom_id"), b.get("url")) {
                (Some(1..=4), Some(id), None)
                    if id.as_str().is_some_and(|i| (1..=100).contains(&i.len())) => {}
                (Some(5), None, Some(url))
                    if url.as_str().is_some_and(|u| u.starts_with("http")) => {}
                _ => return Err(format!("a button's style and custom_id or url: {b}")),
            }
        }
    }
    Ok(())
}
