//! `klaxon bench chat`, the platforms Klaxon answers through their bots' APIs (a stand-in of the
//! bench records when each call arrives): a Telegram button pressed → the press answered
//! (`answerCallbackQuery`, sent once the acknowledgement is stored), a Discord button pressed →
//! its interaction answered (the same), and an acknowledgement in the app → the Slack app's
//! announcement of the incident edited (`chat.update`): how long a channel shows a stale state.

use super::sinks::one_alert;
use super::{err, post, send_webhook, BenchTeam};
use axum::extract::State;
use axum::routing::any;
use ed25519_dalek::{Signer, SigningKey};
use klaxon_core::roads::discord::DiscordConfig;
use klaxon_core::roads::slack::api::SlackBot;
use klaxon_core::roads::telegram::TelegramConfig;
use serde_json::{json, Value};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const TELEGRAM_SECRET: &str = "bench-telegram-secret";
const DISCORD_SEED: [u8; 32] = [42; 32];

/// What the platforms' stand-in saw, and when.
#[derive(Default)]
pub(super) struct Seen {
    /// Telegram presses answered, by callback query id.
    answered: HashMap<String, Instant>,
    /// Slack messages posted: their `ts` → the incident whose buttons they carry.
    slack_ts: HashMap<String, i64>,
    /// Incidents whose Slack message was edited, when first.
    edited: HashMap<i64, Instant>,
}

pub(super) type Shared = Arc<Mutex<Seen>>;

/// The bots' settings, pointing at the stand-in at `api`.
pub(super) fn settings(api: &str) -> (TelegramConfig, DiscordConfig, SlackBot) {
    let key = SigningKey::from_bytes(&DISCORD_SEED).verifying_key();
    (
        TelegramConfig {
            api_url: api.to_string(),
            bot_token: "1:bench".into(),
            webhook_secret: Some(TELEGRAM_SECRET.into()),
        },
        DiscordConfig {
            api_url: api.to_string(),
            bot_token: "bench".into(),
            public_key: Some(key.to_bytes()),
        },
        SlackBot {
            api_url: format!("{api}/slack"),
            token: "xoxb-bench".into(),
        },
    )
}

/// Starts the stand-in; its base URL.
pub(super) async fn stand_in(seen: Shared) -> Result<String, String> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .map_err(err)?;
    let base = format!("http://{}", listener.local_addr().map_err(err)?);
    let app = axum::Router::new().fallback(any(api)).with_state(seen);
    tokio::spawn(async move { axum::serve(listener, app).await });
    Ok(base)
}

async fn api(
    State(seen): State<Shared>,
    uri: axum::http::Uri,
    body: axum::body::Bytes,
) -> axum::Json<Value> {
    let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let path = uri.path();
    let mut seen = seen.lock().unwrap();
    let answer = if path.ends_with("/answerCallbackQuery") {
        let id = body["callback_query_id"].as_str().unwrap_or_default();
        seen.answered.insert(id.to_string(), Instant::now());
        json!({"ok": true, "result": true})
    } else if path.ends_with("/chat.postMessage") {
        let ts = format!("1764000000.{:06}", seen.slack_ts.len() + 1);
        let incident = body["blocks"]
            .as_array()
            .into_iter()
            .flatten()
            .flat_map(|b| b["elements"].as_array().cloned().unwrap_or_default())
            .find_map(|e| e["value"].as_str()?.parse::<i64>().ok());
        if let Some(incident) = incident {
            seen.slack_ts.insert(ts.clone(), incident);
        }
        json!({"ok": true, "channel": body["channel"], "ts": ts})
    } else if path.ends_with("/chat.update") {
        let ts = body["ts"].as_str().unwrap_or_default();
        if let Some(incident) = seen.slack_ts.get(ts).copied() {
            seen.edited.entry(incident).or_insert_with(Instant::now);
        }
        json!({"ok": true, "channel": body["channel"], "ts": ts})
    } else {
        json!({"ok": true, "result": {"message_id": 1, "date": 0, "chat": {"id": 1}}})
    };
    axum::Json(answer)
}

/// Waits (1 ms at a time, 10 s at most) until `done` says yes.
async fn until(what: &str, mut done: impl FnMut() -> bool) -> Result<(), String> {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !done() {
        if Instant::now() > deadline {
            return Err(format!("{what} never came"));
        }
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    Ok(())
}

/// Opens `n` incidents (alerts numbered from `from`); their ids.
async fn open(
    client: &reqwest::Client,
    team: &BenchTeam,
    db: &klaxon_core::Db,
    from: usize,
    n: usize,
) -> Result<Vec<i64>, String> {
    let (before,): (i64,) = sqlx::query_as("SELECT COALESCE(MAX(id), 0) FROM incidents")
        .fetch_one(&db.pool)
        .await
        .map_err(err)?;
    for i in from..from + n {
        let body = serde_json::to_vec(&one_alert(i)).map_err(err)?;
        send_webhook(client, &team.webhook, body.into()).await?;
    }
    let ids: Vec<(i64,)> = sqlx::query_as("SELECT id FROM incidents WHERE id > $1 ORDER BY id")
        .bind(before)
        .fetch_all(&db.pool)
        .await
        .map_err(err)?;
    Ok(ids.into_iter().map(|(id,)| id).collect())
}

async fn link_code(
    client: &reqwest::Client,
    base: &str,
    team: &BenchTeam,
) -> Result<String, String> {
    let made = post(
        client,
        &format!("{base}/api/me/chat-link-code"),
        Some(&team.api_key),
        json!({}),
    )
    .await?;
    Ok(made["code"].as_str().unwrap_or_default().to_string())
}

/// Telegram: links a Telegram account, then presses Acknowledge on `n` new incidents.
pub(super) async fn telegram(
    client: &reqwest::Client,
    base: &str,
    team: &BenchTeam,
    db: &klaxon_core::Db,
    seen: &Shared,
    (from, n): (usize, usize),
) -> Result<Vec<Duration>, String> {
    let hook = format!("{base}/api/chat/telegram/webhook");
    let update = |body: Value| {
        client
            .post(&hook)
            .header("x-telegram-bot-api-secret-token", TELEGRAM_SECRET)
            .json(&body)
            .send()
    };
    let code = link_code(client, base, team).await?;
    let user = json!({"id": 9001, "is_bot": false, "first_name": "Bench", "username": "bench"});
    let link = json!({"update_id": 1, "message": {"message_id": 1, "date": 0, "from": user,
        "chat": {"id": 9001, "type": "private"}, "text": format!("/link {code}")}});
    update(link).await.map_err(err)?;
    let linked = || async {
        let (n,): (i64,) =
            sqlx::query_as("SELECT COUNT(*) FROM chat_links WHERE platform = 'telegram'")
                .fetch_one(&db.pool)
                .await
                .unwrap_or((0,));
        n > 0
    };
    let deadline = Instant::now() + Duration::from_secs(10);
    while !linked().await {
        if Instant::now() > deadline {
            return Err("the Telegram account was never linked".into());
        }
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    let mut took = Vec::new();
    for (k, id) in open(client, team, db, from, n)
        .await?
        .into_iter()
        .enumerate()
    {
        let query = format!("q{k}");
        let press = json!({"update_id": 2 + k, "callback_query": {"id": query, "from": user,
            "message": {"message_id": 1, "date": 0, "chat": {"id": -100, "type": "supergroup"}},
            "chat_instance": "1", "data": format!("ack:{id}")}});
        let pressed = Instant::now();
        update(press).await.map_err(err)?;
        until("a Telegram answer", || {
            seen.lock().unwrap().answered.contains_key(&query)
        })
        .await?;
        took.push(seen.lock().unwrap().answered[&query].saturating_duration_since(pressed));
    }
    Ok(took)
}

/// Posts a Discord interaction signed as Discord signs them; its answer.
async fn interaction(client: &reqwest::Client, base: &str, body: Value) -> Result<Value, String> {
    let body = body.to_string();
    let at = jiff::Timestamp::now().as_second().to_string();
    let sig = SigningKey::from_bytes(&DISCORD_SEED).sign(format!("{at}{body}").as_bytes());
    let res = client
        .post(format!("{base}/api/chat/discord/interactions"))
        .header("content-type", "application/json")
        .header("x-signature-ed25519", hex::encode(sig.to_bytes()))
        .header("x-signature-timestamp", at)
        .body(body)
        .send()
        .await
        .map_err(err)?;
    res.json().await.map_err(err)
}

/// Discord: links an account by `/klaxon link`, then presses Acknowledge on `n` new incidents.
pub(super) async fn discord(
    client: &reqwest::Client,
    base: &str,
    team: &BenchTeam,
    db: &klaxon_core::Db,
    (from, n): (usize, usize),
) -> Result<Vec<Duration>, String> {
    let member = json!({"user": {"id": "4242", "username": "bench"}});
    let code = link_code(client, base, team).await?;
    let link = json!({"id": "1", "type": 2, "member": member, "data": {"name": "klaxon",
        "options": [{"name": "link", "type": 1, "options": [{"name": "code", "type": 3, "value": code}]}]}});
    interaction(client, base, link).await?;
    let mut took = Vec::new();
    for id in open(client, team, db, from, n).await? {
        let press = json!({"id": "2", "type": 3, "member": member,
            "data": {"custom_id": format!("klaxon:ack:{id}"), "component_type": 2}});
        let pressed = Instant::now();
        let answer = interaction(client, base, press).await?;
        took.push(pressed.elapsed());
        if answer["type"] != 4 {
            return Err(format!("incident {id}: {answer}"));
        }
    }
    Ok(took)
}

/// Slack channels of the app's that hear only openings: `n` incidents are announced there, a
/// channel's five a minute at a time (more would go as a summary), then each is acknowledged in
/// the app, one after another: how long until its announcement was edited.
pub(super) async fn edits(
    client: &reqwest::Client,
    base: &str,
    team: &BenchTeam,
    db: &klaxon_core::Db,
    seen: &Shared,
    (from, n): (usize, usize),
) -> Result<Vec<Duration>, String> {
    let channels = format!("{base}/api/teams/{}/channels", team.team_id);
    let per_channel = klaxon_domain::paging::BUNDLE_AFTER as usize;
    let mut took = Vec::new();
    for batch in (0..n).step_by(per_channel) {
        let size = per_channel.min(n - batch);
        let channel = json!({"name": format!("bench {batch}"), "kind": "slack",
            "target": "C0BENCH01", "events": ["opened"]});
        let made = post(client, &channels, Some(&team.api_key), channel).await?;
        let ids = open(client, team, db, from + batch, size).await?;
        until("the announcements", || {
            let seen = seen.lock().unwrap();
            ids.iter().all(|id| seen.slack_ts.values().any(|i| i == id))
        })
        .await?;
        for id in ids {
            let acked = Instant::now();
            let url = format!("{base}/api/incidents/{id}/acknowledge");
            post(client, &url, Some(&team.api_key), json!({})).await?;
            until("an edit", || seen.lock().unwrap().edited.contains_key(&id)).await?;
            took.push(seen.lock().unwrap().edited[&id].saturating_duration_since(acked));
        }
        let gone = client
            .delete(format!("{channels}/{}", made["id"]))
            .bearer_auth(&team.api_key)
            .send()
            .await
            .map_err(err)?;
        if !gone.status().is_success() {
            return Err(format!("removing a channel: {}", gone.status()));
        }
    }
    Ok(took)
}
