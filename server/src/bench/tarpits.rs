//! `klaxon bench paging --tarpits N`: a second team on the same server whose on-call person has
//! N Web Push subscriptions, and whose team has N channels, all at a destination that accepts
//! connections and never answers; its alerts keep firing through the run. The figures are then
//! the first team's, paged beside it: no destination may hold up another team's pages.

use super::{err, post};
use serde_json::json;
use std::time::Duration;
use tokio::io::AsyncReadExt;

/// How often the stranger's team fires a new alert during a run.
const EVERY: Duration = Duration::from_millis(200);

/// A listener that takes connections and reads them without ever answering; its URL.
async fn tarpit() -> Result<String, String> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .map_err(err)?;
    let url = format!("http://{}", listener.local_addr().map_err(err)?);
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut buf = [0u8; 4096];
                while matches!(stream.read(&mut buf).await, Ok(n) if n > 0) {}
            });
        }
    });
    Ok(url)
}

/// Sets up the stranger's team (by the administrator's `key`) and fires one of its alerts every
/// `EVERY` until the returned task is aborted.
pub(super) async fn stranger(
    base: &str,
    key: &str,
    n: usize,
) -> Result<tokio::task::JoinHandle<()>, String> {
    let client = reqwest::Client::new();
    let pit = tarpit().await?;
    let user = post(
        &client,
        &format!("{base}/api/users"),
        Some(key),
        json!({"username": "stranger", "password": "stranger password"}),
    )
    .await?;
    let user_id = user["id"].as_i64().unwrap_or_default();
    let team = post(
        &client,
        &format!("{base}/api/teams"),
        Some(key),
        json!({"name": "tarpits"}),
    )
    .await?;
    let team_id = team["id"].as_i64().unwrap_or_default();
    let members = format!("{base}/api/teams/{team_id}/members");
    post(&client, &members, Some(key), json!({"user_id": user_id})).await?;
    let today = klaxon_domain::calendar::utc_date(time::OffsetDateTime::now_utc().unix_timestamp());
    post(
        &client,
        &format!("{base}/api/teams/{team_id}/schedule"),
        Some(key),
        json!({"user_id": user_id, "dates": [today]}),
    )
    .await?;
    // Any valid keys: the tarpit never reads what is sent.
    let keys = super::sinks::push_keys();
    for i in 0..n {
        post(
            &client,
            &format!("{base}/api/users/{user_id}/contact-methods"),
            Some(key),
            json!({"name": format!("tarpit {i}"), "kind": "webpush", "subscription":
                {"endpoint": format!("{pit}/push/{i}"), "keys": {"p256dh": keys.0, "auth": keys.1}}}),
        )
        .await?;
        post(
            &client,
            &format!("{base}/api/teams/{team_id}/channels"),
            Some(key),
            json!({"name": format!("tarpit {i}"), "kind": "webhook", "target": format!("{pit}/hook/{i}")}),
        )
        .await?;
    }
    let integration = post(
        &client,
        &format!("{base}/api/teams/{team_id}/integrations"),
        Some(key),
        json!({"name": "tarpits", "kind": "alertmanager"}),
    )
    .await?;
    let webhook = format!(
        "{base}/api/alertmanager/webhook/{}",
        integration["key"].as_str().unwrap_or_default()
    );
    Ok(tokio::spawn(async move {
        for i in 0.. {
            let mut alert = super::sinks::one_alert(i);
            alert["groupKey"] = json!(format!("{{}}:{{alertname=\"Tarpit{i}\"}}"));
            alert["groupLabels"] = json!({"alertname": format!("Tarpit{i}")});
            alert["alerts"][0]["labels"]["alertname"] = json!(format!("Tarpit{i}"));
            alert["alerts"][0]["fingerprint"] = json!(format!("tarpit{i:012}"));
            let body = serde_json::to_vec(&alert).unwrap_or_default();
            let _ = super::send_webhook(&client, &webhook, body.into()).await;
            tokio::time::sleep(EVERY).await;
        }
    }))
}
