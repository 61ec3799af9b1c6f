//! Several `klaxon serve` processes on one PostgreSQL database and one recording ntfy: what
//! replicas promise, shown with real processes and real HTTP.

mod common;

use common::ntfy::{Recorder, TOKEN};
use common::process::{post, until, Replica, LIMIT};
use common::Payload;
use futures::future::join_all;
use serde_json::json;
use std::collections::BTreeSet;

/// Replicas on one fresh schema, paging one recorder; `alice` is on call today with a topic.
struct World {
    replicas: Vec<Replica>,
    ntfy: Recorder,
    db: klaxon_core::Db,
    key: String,
}

async fn world(n: usize) -> World {
    let database_url = common::postgres_schema().await;
    let ntfy = Recorder::start().await;
    let env = [
        ("KLAXON_DATABASE_URL", database_url.as_str()),
        ("KLAXON_NTFY_URL", ntfy.url.as_str()),
        ("KLAXON_NTFY_TOKEN", TOKEN),
    ];
    // One at a time, so the first has migrated the schema before the others look at it.
    let mut replicas = Vec::new();
    for _ in 0..n {
        replicas.push(Replica::start(&env).await);
    }
    let client = reqwest::Client::new();
    let base = &replicas[0].url;
    let admin = post(
        &client,
        &format!("{base}/api/bootstrap"),
        None,
        json!({"username": "admin", "password": "admin password"}),
    )
    .await["api_key"]
        .as_str()
        .unwrap()
        .to_string();
    let alice = post(
        &client,
        &format!("{base}/api/users"),
        Some(&admin),
        json!({"username": "alice", "password": "alice password"}),
    )
    .await["id"]
        .as_i64()
        .unwrap();
    let res = client
        .put(format!("{base}/api/users/{alice}/push-topic"))
        .bearer_auth(&admin)
        .json(&json!({"push_topic": "alice-pager"}))
        .send()
        .await
        .unwrap();
    assert!(res.status().is_success());
    let team = post(
        &client,
        &format!("{base}/api/teams"),
        Some(&admin),
        json!({"name": "payments"}),
    )
    .await["id"]
        .as_i64()
        .unwrap();
    post(
        &client,
        &format!("{base}/api/teams/{team}/members"),
        Some(&admin),
        json!({"user_id": alice}),
    )
    .await;
    let today = time::OffsetDateTime::now_utc().date();
    let tomorrow = today.next_day().unwrap();
    post(
        &client,
        &format!("{base}/api/teams/{team}/schedule"),
        Some(&admin),
        json!({"user_id": alice, "dates": [today.to_string(), tomorrow.to_string()]}),
    )
    .await;
    let key = post(
        &client,
        &format!("{base}/api/teams/{team}/integrations"),
        Some(&admin),
        json!({"name": "am"}),
    )
    .await["key"]
        .as_str()
        .unwrap()
        .to_string();
    let db = klaxon_core::Db::connect(Some(&database_url), std::env::temp_dir().as_path())
        .await
        .unwrap();
    World {
        replicas,
        ntfy,
        db,
        key,
    }
}

impl World {
    /// Waits until the outbox has nothing left to send, and returns how many pages it sent.
    async fn outbox_drained(&self) -> i64 {
        until("the outbox drained", || async {
            let (pending, sent): (i64, i64) = sqlx::query_as(
                "SELECT COUNT(*) FILTER (WHERE state = 'pending'), COUNT(*) FILTER (WHERE state = 'sent') FROM pages",
            )
            .fetch_one(&self.db.pool)
            .await
            .ok()?;
            (pending == 0 && sent > 0).then_some(sent)
        })
        .await
    }

    async fn count(&self, sql: &str) -> i64 {
        sqlx::query_as::<_, (i64,)>(sql)
            .fetch_one(&self.db.pool)
            .await
            .unwrap()
            .0
    }
}

#[tokio::test]
#[cfg_attr(
    not(postgres_tests),
    ignore = "needs KLAXON_TEST_DATABASE_URL at build time"
)]
async fn one_payload_sent_64_times_across_two_replicas_opens_one_incident_and_pages_once() {
    let w = world(2).await;
    let payload = Payload::new("checkout").alert(
        "checkout",
        "firing",
        0,
        None,
        json!({"severity": "critical"}),
    );
    let body = payload.json();
    let client = reqwest::Client::new();
    let answers = join_all((0..64).map(|i| {
        let url = format!(
            "{}/api/alertmanager/webhook/{}",
            w.replicas[i % 2].url,
            w.key
        );
        let req = client.post(url).json(&body).send();
        async move { req.await.unwrap().status().as_u16() }
    }))
    .await;
    assert!(answers.iter().all(|s| *s == 200), "{answers:?}");
    assert_eq!(w.outbox_drained().await, 1);
    assert_eq!(w.ntfy.published().len(), 1);
    assert_eq!(w.count("SELECT COUNT(*) FROM incidents").await, 1);
    assert_eq!(w.count("SELECT COUNT(*) FROM alerts").await, 1);
}

#[tokio::test]
#[cfg_attr(
    not(postgres_tests),
    ignore = "needs KLAXON_TEST_DATABASE_URL at build time"
)]
async fn a_thousand_alerts_from_32_senders_across_replicas_are_stored_and_paged_once_each() {
    let w = world(2).await;
    let client = reqwest::Client::new();
    let senders = (0..32).map(|s| {
        let client = client.clone();
        let urls: Vec<String> = w
            .replicas
            .iter()
            .map(|r| format!("{}/api/alertmanager/webhook/{}", r.url, w.key))
            .collect();
        async move {
            for n in 0..1000 / 32 + 1 {
                let i = s + 32 * n;
                if i >= 1000 {
                    break;
                }
                let group = format!("group-{i}");
                let payload = Payload::new(&group).alert(
                    &format!("alert-{i}"),
                    "firing",
                    0,
                    None,
                    json!({"severity": "critical"}),
                );
                let res = client
                    .post(&urls[i % urls.len()])
                    .json(&payload.json())
                    .send()
                    .await
                    .unwrap();
                assert_eq!(res.status(), 200);
            }
        }
    });
    join_all(senders).await;
    assert_eq!(w.count("SELECT COUNT(*) FROM alerts").await, 1000);
    assert_eq!(w.count("SELECT COUNT(*) FROM incidents").await, 1000);
    assert_eq!(w.outbox_drained().await, 1000);
    let published = w.ntfy.wait_for(1000, LIMIT).await;
    assert_eq!(published.len(), 1000, "each page is delivered exactly once");
    let incidents: BTreeSet<_> = published.iter().map(|p| p.click.clone()).collect();
    assert_eq!(incidents.len(), 1000, "one page per incident");
    // The sweeper runs on one replica: exactly one holds its lease.
    let held = join_all(w.replicas.iter().map(|r| r.metrics())).await;
    let holders = held
        .iter()
        .filter(|m| m.contains("klaxon_lease_held{lease=\"sweeper\"} 1"))
        .count();
    assert_eq!(holders, 1, "{held:?}");
}
