//! `klaxon bench`: measurements on throwaway databases, reported as ratios and percentiles
//! from one run, because the machine they run on is shared and noisy.

mod carrier;
mod chaos;
mod chat;
mod chat_bots;
mod cluster;
mod cpu;
mod flaky_ntfy;
mod formats;
mod intake;
mod paging;
mod replicas;
mod reports;
mod send;
mod sinks;
mod tarpits;
mod ticks;

pub use chaos::{chaos, ChaosArgs};
pub use chat::{chat, ChatArgs};
pub use cluster::Cluster;
pub use intake::{intake, IntakeArgs};
pub use paging::{paging, PagingArgs};
pub use replicas::{replicas, ReplicaArgs};
pub use reports::{reports, ReportArgs};
pub use ticks::{ticks, TickArgs};

use klaxon_core::Db;
use serde_json::Value;
use std::fmt::Display;
use std::path::Path;

pub(crate) fn err(e: impl Display) -> String {
    e.to_string()
}

/// A database nobody else uses: a SQLite file in `dir`, or a new PostgreSQL schema.
pub(crate) async fn fresh_db(
    database_url: Option<&str>,
    dir: &Path,
    name: &str,
    schemas: &mut Vec<String>,
) -> Result<Db, String> {
    let url = match database_url {
        None => format!(
            "sqlite://{}?mode=rwc",
            dir.join(format!("{name}.db")).display()
        ),
        Some(base) => fresh_schema(base, name, schemas).await?,
    };
    let db = Db::connect(Some(&url), dir).await.map_err(err)?;
    db.migrate().await.map_err(err)?;
    Ok(db)
}

/// A new PostgreSQL schema in the database at `base` (noted in `schemas` to be dropped);
/// returns a URL whose connections use it.
pub(crate) async fn fresh_schema(
    base: &str,
    name: &str,
    schemas: &mut Vec<String>,
) -> Result<String, String> {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_err(err)?
        .subsec_nanos();
    let schema = format!("bench_{name}_{}_{nanos}", std::process::id());
    let pool = sqlx::AnyPool::connect(base).await.map_err(err)?;
    sqlx::query(&format!("CREATE SCHEMA {schema}"))
        .execute(&pool)
        .await
        .map_err(err)?;
    pool.close().await;
    schemas.push(schema.clone());
    let sep = if base.contains('?') { '&' } else { '?' };
    Ok(format!("{base}{sep}options=-c%20search_path%3D{schema}"))
}

/// Alerts stored, incidents, and the distinct groups among them: what a bench checks for a lost
/// alert or a doubled incident.
pub(crate) async fn stored_counts(db: &Db) -> Result<(i64, i64, i64), String> {
    let (stored,): (i64,) = sqlx::query_as("SELECT COUNT(*) FROM alerts")
        .fetch_one(&db.pool)
        .await
        .map_err(err)?;
    let (incidents, groups): (i64, i64) =
        sqlx::query_as("SELECT COUNT(*), COUNT(DISTINCT group_key) FROM incidents")
            .fetch_one(&db.pool)
            .await
            .map_err(err)?;
    Ok((stored, incidents, groups))
}

pub(crate) async fn drop_schema(base: &str, schema: &str) -> Result<(), String> {
    let pool = sqlx::AnyPool::connect(base).await.map_err(err)?;
    sqlx::query(&format!("DROP SCHEMA {schema} CASCADE"))
        .execute(&pool)
        .await
        .map_err(err)?;
    pool.close().await;
    Ok(())
}

/// Waits until `base` answers `/healthz` with 200.
pub(crate) async fn wait_healthy(base: &str, limit: std::time::Duration) -> Result<(), String> {
    let client = reqwest::Client::builder()
        .timeout(std::time::Duration::from_secs(2))
        .build()
        .map_err(err)?;
    let started = std::time::Instant::now();
    loop {
        if let Ok(r) = client.get(format!("{base}/healthz")).send().await {
            if r.status().is_success() {
                return Ok(());
            }
        }
        if started.elapsed() > limit {
            return Err(format!("{base} never answered /healthz"));
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}

pub(crate) async fn post(
    client: &reqwest::Client,
    url: &str,
    bearer: Option<&str>,
    body: Value,
) -> Result<Value, String> {
    let mut req = client.post(url).json(&body);
    if let Some(key) = bearer {
        req = req.bearer_auth(key);
    }
    let res = req.send().await.map_err(err)?;
    let status = res.status();
    let text = res.text().await.map_err(err)?;
    if !status.is_success() {
        return Err(format!("POST {url}: {status}: {text}"));
    }
    serde_json::from_str(&text).map_err(err)
}

/// A `PUT` with a bearer key; an answer other than 2xx is an error.
pub(crate) async fn put(
    client: &reqwest::Client,
    url: &str,
    bearer: &str,
    body: Value,
) -> Result<(), String> {
    succeeds(client.put(url).bearer_auth(bearer).json(&body), "PUT").await
}

/// Sends the request; an answer other than 2xx is an error naming `what` and the status.
async fn succeeds(req: reqwest::RequestBuilder, what: &str) -> Result<(), String> {
    let r = req.send().await.map_err(err)?;
    if r.status().is_success() {
        Ok(())
    } else {
        Err(format!("{what} {} answered {}", r.url(), r.status()))
    }
}

/// Posts one pre-encoded webhook payload; an answer other than 2xx is an error.
pub(crate) async fn send_webhook(
    client: &reqwest::Client,
    url: &str,
    body: axum::body::Bytes,
) -> Result<(), String> {
    let req = client
        .post(url)
        .header("content-type", "application/json")
        .body(body);
    succeeds(req, "webhook").await
}

/// What `bench_team` made: the bootstrapped administrator, their team and its webhook.
pub(crate) struct BenchTeam {
    pub api_key: String,
    pub user_id: i64,
    pub team_id: i64,
    pub webhook: String,
}

/// The per-key rate the benches serve with: so high that no sender is held (their senders share
/// a key, and Klaxon's speed is measured, not its limit), while the count runs as it does in use.
pub(crate) const UNHELD: u32 = u32::MAX;

/// Bootstraps user `bench`, who makes team `bench` with an Alertmanager integration.
pub(crate) async fn bench_team(client: &reqwest::Client, base: &str) -> Result<BenchTeam, String> {
    let admin = post(
        client,
        &format!("{base}/api/bootstrap"),
        None,
        serde_json::json!({"username": "bench"}),
    )
    .await?;
    let api_key = admin["api_key"].as_str().unwrap_or_default().to_string();
    let team = post(
        client,
        &format!("{base}/api/teams"),
        Some(&api_key),
        serde_json::json!({"name": "bench"}),
    )
    .await?;
    let team_id = team["id"].as_i64().unwrap_or_default();
    let integration = post(
        client,
        &format!("{base}/api/teams/{team_id}/integrations"),
        Some(&api_key),
        serde_json::json!({"name": "bench", "kind": "alertmanager"}),
    )
    .await?;
    Ok(BenchTeam {
        user_id: admin["user"]["id"].as_i64().unwrap_or_default(),
        api_key,
        team_id,
        webhook: format!(
            "{base}/api/alertmanager/webhook/{}",
            integration["key"].as_str().unwrap_or_default()
        ),
    })
}

/// Team `bench`, written straight to the database; returns its id.
pub(crate) async fn insert_bench_team(db: &Db, now: i64) -> Result<i64, String> {
    let (team,): (i64,) = sqlx::query_as(
        "INSERT INTO teams (name, display_name, created_at) VALUES ('bench', 'bench', $1) RETURNING id",
    )
    .bind(now)
    .fetch_one(&db.pool)
    .await
    .map_err(err)?;
    Ok(team)
}
