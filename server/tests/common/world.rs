//! Replicas of `klaxon serve` on one PostgreSQL database, paging one recording ntfy, on one
//! clock the test moves (a file the debug binary reads): the setting of the replica and fault
//! tests. `alice` is on call today and tomorrow with a push topic.

use super::ntfy::{Recorder, TOKEN};
use super::process::{bootstrap, post, team_with_integration, until, Replica};
use super::Payload;
use serde_json::{json, Value};

pub struct World {
    pub replicas: Vec<Replica>,
    pub ntfy: Recorder,
    /// The test's own connection to the database.
    pub db: klaxon_core::Db,
    pub database_url: String,
    /// The administrator's API key.
    pub admin: String,
    pub team: i64,
    /// The team's Alertmanager integration key.
    pub key: String,
    pub client: reqwest::Client,
    clock: tempfile::NamedTempFile,
}

/// `n` replicas on a fresh schema of `KLAXON_TEST_DATABASE_URL`.
pub async fn world(n: usize) -> World {
    world_on(super::postgres_schema().await, n).await
}

/// `n` replicas on the database at `database_url`.
pub async fn world_on(database_url: String, n: usize) -> World {
    let ntfy = Recorder::start().await;
    let clock = tempfile::NamedTempFile::new().unwrap();
    let now = time::OffsetDateTime::now_utc().unix_timestamp();
    std::fs::write(clock.path(), now.to_string()).unwrap();
    let clock_path = clock.path().display().to_string();
    let env = [
        ("KLAXON_DATABASE_URL", database_url.as_str()),
        ("KLAXON_NTFY_URL", ntfy.url.as_str()),
        ("KLAXON_NTFY_TOKEN", TOKEN),
        ("KLAXON_TEST_CLOCK_FILE", clock_path.as_str()),
        // Faults, not a flooded phone: every page its own push, so each is counted alone.
        ("KLAXON_PAGE_BUNDLE_AFTER", "0"),
    ];
    // One at a time, so the first has migrated the schema before the others look at it.
    let mut replicas = Vec::new();
    for _ in 0..n {
        replicas.push(Replica::start(&env).await);
    }
    let client = reqwest::Client::new();
    let base = &replicas[0].url;
    let admin = bootstrap(&client, base).await;
    let (team, key) = team_with_integration(&client, base, &admin, "payments").await;
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
    post(
        &client,
        &format!("{base}/api/teams/{team}/members"),
        Some(&admin),
        json!({"user_id": alice}),
    )
    .await;
    let today = time::OffsetDateTime::from_unix_timestamp(now)
        .unwrap()
        .date();
    let tomorrow = today.next_day().unwrap();
    post(
        &client,
        &format!("{base}/api/teams/{team}/schedule"),
        Some(&admin),
        json!({"user_id": alice, "dates": [today.to_string(), tomorrow.to_string()]}),
    )
    .await;
    let db = klaxon_core::Db::connect(Some(&database_url), std::env::temp_dir().as_path())
        .await
        .unwrap();
    World {
        replicas,
        ntfy,
        db,
        database_url,
        admin,
        team,
        key,
        client,
        clock,
    }
}

impl World {
    /// Moves every replica's clock on by `secs`.
    pub fn advance(&self, secs: i64) {
        std::fs::write(self.clock.path(), (self.now() + secs).to_string()).unwrap();
    }

    /// The replicas' time.
    pub fn now(&self) -> i64 {
        std::fs::read_to_string(self.clock.path())
            .unwrap()
            .trim()
            .parse()
            .unwrap()
    }

    /// The webhook URL of the team's integration at replica `i`.
    pub fn webhook(&self, i: usize) -> String {
        format!(
            "{}/api/alertmanager/webhook/{}",
            self.replicas[i].url, self.key
        )
    }

    /// Sends `payload` to replica `i`; returns the status.
    pub async fn send(&self, i: usize, payload: &Payload) -> u16 {
        self.client
            .post(self.webhook(i))
            .json(&payload.json())
            .send()
            .await
            .unwrap()
            .status()
            .as_u16()
    }

    /// Fires one alert in its own group at replica `i`.
    pub async fn fire(&self, i: usize, group: &str) {
        let payload =
            Payload::new(group).alert(group, "firing", 0, None, json!({"severity": "critical"}));
        assert_eq!(self.send(i, &payload).await, 200);
    }

    /// `PUT /api/admin/settings` with `settings`.
    pub async fn settings(&self, settings: Value) {
        let res = self
            .client
            .put(format!("{}/api/admin/settings", self.replicas[0].url))
            .bearer_auth(&self.admin)
            .json(&settings)
            .send()
            .await
            .unwrap();
        assert!(res.status().is_success(), "{}", res.text().await.unwrap());
    }

    pub async fn sweeper_holder(&self) -> String {
        sqlx::query_as::<_, (String,)>("SELECT holder FROM leases WHERE name = 'sweeper'")
            .fetch_one(&self.db.pool)
            .await
            .unwrap()
            .0
    }

    /// Waits until the outbox has nothing left to send, and returns how many pages it sent.
    pub async fn outbox_drained(&self) -> i64 {
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

    pub async fn count(&self, sql: &str) -> i64 {
        sqlx::query_as::<_, (i64,)>(sql)
            .fetch_one(&self.db.pool)
            .await
            .unwrap()
            .0
    }

    /// Waits until every replica still running has finished two notifier passes since the
    /// call, so at least one whole pass saw the clock as it is now.
    pub async fn settle(&self) {
        for r in &self.replicas {
            if !r.running() {
                continue;
            }
            let before = r.notifier_passes().await;
            until("two notifier passes", || async {
                (r.notifier_passes().await >= before + 2).then_some(())
            })
            .await;
        }
    }

    /// The timeline texts of incident `id` with `kind`, oldest first.
    pub async fn timeline(&self, id: i64, kind: &str) -> Vec<String> {
        sqlx::query_as::<_, (String,)>(
            "SELECT text FROM timeline WHERE incident_id = $1 AND kind = $2 ORDER BY id",
        )
        .bind(id)
        .bind(kind)
        .fetch_all(&self.db.pool)
        .await
        .unwrap()
        .into_iter()
        .map(|r| r.0)
        .collect()
    }
}
