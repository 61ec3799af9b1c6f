//! `klaxon bench chat`: a Slack button pressed → the acknowledgement stored (Slack is answered
//! after it is), and → the message replaced through the press's `response_url` (a sink of the
//! bench's), one press per incident, one after another, on a quiet server: what a responder
//! waits for between pressing and seeing the channel say it is theirs. Then the same for a
//! Mattermost button, whose answer carries the message as it is now, for Telegram's and
//! Discord's buttons, and an acknowledgement in the app → the Slack app's message edited
//! (`chat_bots`).

use super::chat_bots;
use super::sinks::one_alert;
use super::{err, fresh_db, post, send_webhook};
use axum::extract::State;
use axum::routing::post as route_post;
use clap::Args;
use hmac::{Hmac, Mac};
use klaxon_core::{Config, Core, SystemClock};
use serde_json::{json, Value};
use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

#[derive(Args)]
pub struct ChatArgs {
    /// Incidents opened, each acknowledged by one press.
    #[arg(long, default_value_t = 300)]
    incidents: usize,
    /// A `postgres://…` URL: measure PostgreSQL in a throwaway schema. Default: a SQLite file.
    #[arg(long)]
    database_url: Option<String>,
}

const SECRET: &str = "bench-slack-signing-secret";

/// When each `response_url` path had its message replaced.
type Replaced = Arc<Mutex<HashMap<String, Instant>>>;

async fn sink(
    State(seen): State<Replaced>,
    uri: axum::http::Uri,
    body: axum::Json<Value>,
) -> &'static str {
    if body.0["replace_original"] == true {
        seen.lock()
            .unwrap()
            .insert(uri.path().to_string(), Instant::now());
    }
    "ok"
}

/// Posts `body` signed as Slack signs an app's requests.
async fn signed(client: &reqwest::Client, url: &str, body: String) -> Result<(), String> {
    let at = jiff::Timestamp::now().as_second().to_string();
    let mut mac = Hmac::<sha2::Sha256>::new_from_slice(SECRET.as_bytes()).map_err(err)?;
    mac.update(format!("v0:{at}:{body}").as_bytes());
    let sig = format!("v0={}", hex::encode(mac.finalize().into_bytes()));
    let res = client
        .post(url)
        .header("content-type", "application/x-www-form-urlencoded")
        .header("x-slack-request-timestamp", at)
        .header("x-slack-signature", sig)
        .body(body)
        .send()
        .await
        .map_err(err)?;
    if !res.status().is_success() {
        return Err(format!("{url}: {}", res.status()));
    }
    Ok(())
}

fn form(fields: &[(&str, &str)]) -> String {
    url::form_urlencoded::Serializer::new(String::new())
        .extend_pairs(fields)
        .finish()
}

fn ms(mut d: Vec<Duration>, q: usize) -> f64 {
    d.sort();
    let i = (d.len() * q / 100).min(d.len().saturating_sub(1));
    d.get(i).map_or(0.0, |d| d.as_secs_f64() * 1e3)
}

pub async fn chat(args: ChatArgs) -> Result<(), String> {
    sqlx::any::install_default_drivers();
    let dir = tempfile::tempdir().map_err(err)?;
    let mut schemas = Vec::new();
    let url = args.database_url.as_deref();
    let db = fresh_db(url, dir.path(), "chat", &mut schemas).await?;
    let seen: Replaced = Arc::default();
    let slack = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .map_err(err)?;
    let slack_base = format!("http://{}", slack.local_addr().map_err(err)?);
    let sink_app = axum::Router::new()
        .fallback(route_post(sink))
        .with_state(seen.clone());
    tokio::spawn(async move { axum::serve(slack, sink_app).await });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .map_err(err)?;
    let base = format!("http://{}", listener.local_addr().map_err(err)?);
    let loopback = klaxon_core::outbound::OutboundAllow::parse("127.0.0.0/8").map_err(err)?;
    let bots_seen = chat_bots::Shared::default();
    let (telegram, discord, slack_bot) =
        chat_bots::settings(&chat_bots::stand_in(bots_seen.clone()).await?);
    let config = Config {
        public_url: base.clone(),
        intake_per_minute: super::UNHELD,
        roads: klaxon_core::roads::RoadSettings {
            slack_signing_secret: Some(SECRET.into()),
            mattermost_token: Some(MATTERMOST_TOKEN.into()),
            telegram: Some(telegram),
            discord: Some(discord),
            slack_bot: Some(slack_bot),
            ..Default::default()
        },
        outbound_allow: loopback.clone(),
        personal_outbound_allow: loopback,
        ..Config::default()
    };
    let core = Core::start(db.clone(), Arc::new(SystemClock), config)
        .await
        .map_err(err)?;
    // The announcer runs as in a server: woken by each queued post.
    let (_stop, stopped) = tokio::sync::watch::channel(false);
    crate::loops::spawn_announcer(core.clone(), stopped);
    let app = crate::app(core).into_make_service_with_connect_info::<SocketAddr>();
    let server = tokio::spawn(async move { axum::serve(listener, app).await });

    let client = reqwest::Client::new();
    let team = super::bench_team(&client, &base).await?;
    let code = post(
        &client,
        &format!("{base}/api/me/chat-link-code"),
        Some(&team.api_key),
        json!({}),
    )
    .await?;
    let code = code["code"].as_str().unwrap_or_default();
    let link = form(&[
        ("team_id", "T0B"),
        ("team_domain", "bench"),
        ("user_id", "U0B"),
        ("user_name", "bench"),
        ("command", "/klaxon"),
        ("text", &format!("link {code}")),
    ]);
    signed(&client, &format!("{base}/api/chat/slack/commands"), link).await?;
    for i in 0..args.incidents {
        let body = serde_json::to_vec(&one_alert(i)).map_err(err)?;
        send_webhook(&client, &team.webhook, body.into()).await?;
    }
    let ids: Vec<(i64,)> = sqlx::query_as("SELECT id FROM incidents ORDER BY id")
        .fetch_all(&db.pool)
        .await
        .map_err(err)?;

    let (mut stored, mut replaced) = (Vec::new(), Vec::new());
    for (n, (id,)) in ids.iter().enumerate() {
        let path = format!("/respond/{n}");
        let payload = json!({
            "type": "block_actions",
            "user": {"id": "U0B", "team_id": "T0B"},
            "team": {"id": "T0B", "domain": "bench"},
            "response_url": format!("{slack_base}{path}"),
            "actions": [{"action_id": "klaxon_ack", "value": id.to_string(), "type": "button"}],
        });
        let pressed = Instant::now();
        signed(
            &client,
            &format!("{base}/api/chat/slack/interactions"),
            form(&[("payload", &payload.to_string())]),
        )
        .await?;
        stored.push(pressed.elapsed());
        let deadline = pressed + Duration::from_secs(10);
        loop {
            if let Some(at) = seen.lock().unwrap().get(&path) {
                replaced.push(at.saturating_duration_since(pressed));
                break;
            }
            if Instant::now() > deadline {
                return Err(format!("the message of incident {id} was never replaced"));
            }
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
    }
    let (pressed_mm, slack_count) = mattermost_presses(&client, &base, &team, &db, &args).await?;
    let n = args.incidents;
    let telegram = chat_bots::telegram(&client, &base, &team, &db, &bots_seen, (2 * n, n)).await?;
    let discord = chat_bots::discord(&client, &base, &team, &db, (3 * n, n)).await?;
    let edited = chat_bots::edits(&client, &base, &team, &db, &bots_seen, (4 * n, n)).await?;
    let (acked,): (i64,) =
        sqlx::query_as("SELECT COUNT(*) FROM incidents WHERE state = 'acknowledged'")
            .fetch_one(&db.pool)
            .await
            .map_err(err)?;
    server.abort();
    db.pool.close().await;
    if let Some(base) = url {
        for schema in schemas {
            super::drop_schema(base, &schema).await?;
        }
    }
    let opened = ids.len() + pressed_mm.len() + telegram.len() + discord.len() + edited.len();
    if acked as usize != opened {
        return Err(format!("{acked} of {opened} incidents acknowledged"));
    }
    let backend = if url.is_some() {
        "postgresql"
    } else {
        "sqlite"
    };
    println!(
        "chat ({backend}): {} Slack presses, one after another: pressed → acknowledgement stored p50 {:.1} ms, p99 {:.1} ms; pressed → message replaced p50 {:.1} ms, p99 {:.1} ms",
        ids.len(),
        ms(stored.clone(), 50),
        ms(stored, 99),
        ms(replaced.clone(), 50),
        ms(replaced, 99),
    );
    println!(
        "chat ({backend}): {} Mattermost presses after those {slack_count}: pressed → acknowledged and answered with the message now p50 {:.1} ms, p99 {:.1} ms",
        pressed_mm.len(),
        ms(pressed_mm.clone(), 50),
        ms(pressed_mm, 99),
    );
    for (what, took) in [
        (
            "Telegram presses: pressed → acknowledged and the press answered",
            telegram,
        ),
        (
            "Discord presses: pressed → acknowledged and the interaction answered",
            discord,
        ),
        (
            "acknowledgements in the app: acknowledged → the Slack app's announcement edited",
            edited,
        ),
    ] {
        println!(
            "chat ({backend}): {} {what} p50 {:.1} ms, p99 {:.1} ms",
            took.len(),
            ms(took.clone(), 50),
            ms(took, 99),
        );
    }
    Ok(())
}

/// Opens as many incidents again and acknowledges each by a Mattermost button, as Mattermost's
/// server posts a press: how long each press took to be answered (the acknowledgement stored
/// and the message as it is now in the answer), and how many Slack presses came before.
async fn mattermost_presses(
    client: &reqwest::Client,
    base: &str,
    team: &super::BenchTeam,
    db: &klaxon_core::Db,
    args: &ChatArgs,
) -> Result<(Vec<Duration>, usize), String> {
    let code = post(
        client,
        &format!("{base}/api/me/chat-link-code"),
        Some(&team.api_key),
        json!({}),
    )
    .await?;
    let link = form(&[
        ("token", MATTERMOST_TOKEN),
        ("team_domain", "bench"),
        ("user_id", "u0bench"),
        ("user_name", "bench"),
        (
            "text",
            &format!("link {}", code["code"].as_str().unwrap_or_default()),
        ),
    ]);
    let res = client
        .post(format!("{base}/api/chat/mattermost/commands"))
        .header("content-type", "application/x-www-form-urlencoded")
        .body(link)
        .send()
        .await
        .map_err(err)?;
    if !res.status().is_success() {
        return Err(format!("linking a Mattermost account: {}", res.status()));
    }
    let (before,): (i64,) = sqlx::query_as("SELECT COALESCE(MAX(id), 0) FROM incidents")
        .fetch_one(&db.pool)
        .await
        .map_err(err)?;
    for i in 0..args.incidents {
        let body = serde_json::to_vec(&one_alert(args.incidents + i)).map_err(err)?;
        send_webhook(client, &team.webhook, body.into()).await?;
    }
    let ids: Vec<(i64,)> = sqlx::query_as("SELECT id FROM incidents WHERE id > $1 ORDER BY id")
        .bind(before)
        .fetch_all(&db.pool)
        .await
        .map_err(err)?;
    let mut took = Vec::new();
    for (id,) in ids {
        let sig = klaxon_core::roads::mattermost::sign(MATTERMOST_TOKEN, "ack", id);
        let press = json!({
            "user_id": "u0bench", "user_name": "bench", "channel_id": "c", "team_id": "t",
            "post_id": "p", "trigger_id": "x", "type": "", "data_source": "",
            "context": {"action": "ack", "incident": id, "sig": sig},
        });
        let pressed = Instant::now();
        let res = client
            .post(format!("{base}/api/chat/mattermost/actions"))
            .json(&press)
            .send()
            .await
            .map_err(err)?;
        let answer: Value = res.json().await.map_err(err)?;
        took.push(pressed.elapsed());
        if answer["update"].is_null() {
            return Err(format!("incident {id}: {answer}"));
        }
    }
    Ok((took, before as usize))
}

const MATTERMOST_TOKEN: &str = "bench-mattermost-command-token";
