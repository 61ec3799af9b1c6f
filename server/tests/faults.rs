//! Faults with real processes: the push service down for ten minutes, a replica killed in the
//! middle of a sweep, PostgreSQL restarted under load. Time that matters to Klaxon (retries,
//! leases, staleness) is the test's clock; real time only bounds waiting for events.

use crate::common;

use common::process::{until, LIMIT};
use common::world::{world, world_on, World};
use common::Payload;
use futures::future::join_all;
use klaxon_server::bench::Cluster;
use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};

/// The id of the incident opened for `group`.
async fn incident(w: &World, group: &str) -> i64 {
    w.count(&format!(
        "SELECT id FROM incidents WHERE group_key = '{group}'"
    ))
    .await
}

/// The timeline texts of `kind` on incident `id`, as the REST API shows them.
async fn timeline(w: &World, id: i64, kind: &str) -> Vec<String> {
    let detail: Value = w
        .client
        .get(format!("{}/api/incidents/{id}", w.replicas[0].url))
        .bearer_auth(&w.admin)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    detail["timeline"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["kind"] == kind)
        .map(|e| e["text"].as_str().unwrap().to_string())
        .collect()
}

/// Moves the clock on `secs` in steps of `step`, letting every replica's notifier see each.
async fn pass_time(w: &World, secs: i64, step: i64) {
    let mut gone = 0;
    while gone < secs {
        w.advance(step);
        w.settle().await;
        gone += step;
    }
}

/// Adds `bob` (topic `bob-pager`) to the team and makes the ladder: on call, then bob after
/// five minutes.
async fn ladder_to_bob(w: &World) {
    let base = &w.replicas[0].url;
    let bob = common::process::post(
        &w.client,
        &format!("{base}/api/users"),
        Some(&w.admin),
        json!({"username": "bob", "password": "bob password"}),
    )
    .await["id"]
        .as_i64()
        .unwrap();
    let res = w
        .client
        .put(format!("{base}/api/users/{bob}/push-topic"))
        .bearer_auth(&w.admin)
        .json(&json!({"push_topic": "bob-pager"}))
        .send()
        .await
        .unwrap();
    assert!(res.status().is_success());
    common::process::post(
        &w.client,
        &format!("{base}/api/teams/{}/members", w.team),
        Some(&w.admin),
        json!({"user_id": bob}),
    )
    .await;
    let policy = json!({"levels": [
        {"timeout": "5m", "targets": [{"type": "oncall"}]},
        {"timeout": "30m", "targets": [{"type": "user", "user_id": bob}]},
    ]});
    let res = w
        .client
        .put(format!("{base}/api/teams/{}/escalation", w.team))
        .bearer_auth(&w.admin)
        .json(&policy)
        .send()
        .await
        .unwrap();
    assert!(res.status().is_success(), "{}", res.text().await.unwrap());
}

#[tokio::test]
#[cfg_attr(
    not(postgres_tests),
    ignore = "needs KLAXON_TEST_DATABASE_URL at build time"
)]
async fn push_service_down_for_ten_minutes_every_page_arrives_after_in_order() {
    let w = world(2).await;
    ladder_to_bob(&w).await;
    // Refused at the connection for three minutes.
    w.ntfy.down().await;
    w.fire(0, "disk").await;
    let disk = incident(&w, "disk").await;
    let first = until("the first failure on the timeline", || async {
        timeline(&w, disk, "push_failed").await.pop()
    })
    .await;
    assert!(
        first.starts_with("page to alice failed, retrying: cannot reach ntfy"),
        "{first}"
    );
    pass_time(&w, 60, 15).await;
    w.fire(1, "cpu").await;
    pass_time(&w, 60, 15).await;
    w.fire(0, "memory").await;
    pass_time(&w, 60, 15).await;
    // Back, but answering 500 for three minutes; the memory alert resolves meanwhile.
    w.ntfy.fail_all(500, None);
    w.ntfy.up().await;
    pass_time(&w, 60, 15).await;
    let resolved = Payload::new("memory").alert(
        "memory",
        "resolved",
        0,
        Some(1),
        json!({"severity": "critical"}),
    );
    assert_eq!(w.send(1, &resolved).await, 200);
    pass_time(&w, 120, 15).await;
    // Rate limited with Retry-After for four minutes; the ladder reaches bob meanwhile.
    w.ntfy.fail_all(429, Some(90));
    pass_time(&w, 240, 15).await;
    assert!(w.ntfy.published().is_empty(), "nothing got through");
    let waiting = w
        .count("SELECT COUNT(*) FROM pages WHERE state = 'pending'")
        .await;
    assert_eq!(waiting, 4, "disk and cpu: alice's page, then bob's");
    let fewest = w
        .count("SELECT MIN(attempts) FROM pages WHERE kind = 'opening' AND state = 'pending'")
        .await;
    assert!(
        fewest >= 3,
        "the pages were retried: at least {fewest} attempts each"
    );

    // Healthy again: once one page gets through, everything queued meanwhile follows, once
    // each, each person's pages in the order they were queued.
    w.ntfy.heal();
    let mut waited = 0;
    while w
        .count("SELECT COUNT(*) FROM pages WHERE state = 'pending'")
        .await
        > 0
    {
        assert!(waited < 30 * 60, "pages still pending half an hour after");
        pass_time(&w, 15, 15).await;
        waited += 15;
    }
    let published = w.ntfy.published();
    let mut per_person: BTreeMap<String, Vec<i64>> = BTreeMap::new();
    for p in &published {
        let click = p.click.clone().unwrap();
        let id = click.rsplit_once("/incidents/").unwrap().1.parse().unwrap();
        per_person.entry(p.topic.clone()).or_default().push(id);
    }
    let (cpu, memory) = (incident(&w, "cpu").await, incident(&w, "memory").await);
    for topic in ["alice-pager", "bob-pager"] {
        assert_eq!(per_person[topic], [disk, cpu], "{published:?}");
    }
    assert!(
        per_person.values().all(|ids| !ids.contains(&memory)),
        "resolved first: nobody woken"
    );
    assert_eq!(published.len(), 4, "no page twice: {published:?}");
    // The timeline tells the story: the first refusal, then each delivery and how late.
    let failed = timeline(&w, disk, "push_failed").await;
    assert_eq!(
        failed.len(),
        2,
        "alice's and bob's first failures: {failed:?}"
    );
    let delivered = timeline(&w, disk, "push_delivered").await;
    assert_eq!(delivered.len(), 2, "{delivered:?}");
    for who in ["alice", "bob"] {
        assert!(
            delivered
                .iter()
                .any(|d| d.starts_with(&format!("page to {who} delivered after "))),
            "{delivered:?}"
        );
    }
    let cancelled = w
        .count(&format!(
            "SELECT COUNT(*) FROM pages WHERE incident_id = {memory} AND state = 'cancelled'"
        ))
        .await;
    assert_eq!(cancelled, 1, "memory's page was dropped, not lost");
}

#[tokio::test]
#[cfg_attr(
    not(postgres_tests),
    ignore = "needs KLAXON_TEST_DATABASE_URL at build time"
)]
async fn a_replica_killed_in_the_middle_of_a_sweep_is_replaced_and_finishes_it() {
    let mut w = world(2).await;
    // Alerts go stale after five minutes; reminders stay out of the way.
    w.settings(json!({"stale_after": "5m", "notify_repeat_interval": "24h"}))
        .await;
    // 150 incidents of 10 alerts each: 1 500 alerts, two sweep batches.
    let payloads: Vec<Payload> = (0..150)
        .map(|g| {
            (0..10).fold(Payload::new(&format!("group-{g}")), |p, a| {
                p.alert(
                    &format!("g{g}-a{a}"),
                    "firing",
                    0,
                    None,
                    json!({"severity": "critical", "instance": format!("host-{a}")}),
                )
            })
        })
        .collect();
    let answers = join_all(payloads.iter().enumerate().map(|(i, p)| w.send(i % 2, p))).await;
    assert!(answers.iter().all(|s| *s == 200), "{answers:?}");
    assert_eq!(w.outbox_drained().await, 150);

    // The test holds a lock on the last alert, so the sweep stops inside its second batch.
    let mut lock = w.db.pool.begin().await.unwrap();
    let (me,): (i32,) = sqlx::query_as("SELECT pg_backend_pid()")
        .fetch_one(&mut *lock)
        .await
        .unwrap();
    sqlx::query("SELECT id FROM alerts WHERE id = (SELECT MAX(id) FROM alerts) FOR UPDATE")
        .execute(&mut *lock)
        .await
        .unwrap();
    w.advance(6 * 60);
    until("a sweep waiting on the held alert", || async {
        let waiting: (i64,) = sqlx::query_as(
            "SELECT COUNT(*) FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))",
        )
        .bind(me)
        .fetch_one(&w.db.pool)
        .await
        .ok()?;
        (waiting.0 > 0).then_some(())
    })
    .await;
    let expired = w
        .count("SELECT COUNT(*) FROM alerts WHERE resolution_source = 'expiry'")
        .await;
    assert_eq!(expired, 1000, "the first batch is done, the second is not");
    // Incidents whose alerts all were in the first batch are resolved; their all-clears go
    // out before the kill.
    let cleared = w
        .count("SELECT COUNT(*) FROM incidents WHERE state = 'resolved'")
        .await;
    assert!(cleared < 150, "the held alert's incident is still open");
    w.outbox_drained().await;
    let sweeping = w.sweeper_holder().await;
    let victim = w
        .replicas
        .iter()
        .position(|r| sweeping.starts_with(&format!("{}-", r.child.id().unwrap())))
        .expect("a replica holds the sweeper lease");
    w.replicas[victim].signal("KILL");
    w.replicas[victim].child.wait().await.unwrap();
    lock.rollback().await.unwrap();

    // Once the lease lapses the survivor takes the sweeper over and finishes the work.
    w.advance(klaxon_core::leases::LEASE_TTL + 1);
    until("every alert expired", || async {
        let left = w
            .count("SELECT COUNT(*) FROM alerts WHERE status = 'firing'")
            .await;
        (left == 0).then_some(())
    })
    .await;
    assert_ne!(w.sweeper_holder().await, sweeping);
    assert_eq!(
        w.count("SELECT COUNT(*) FROM incidents WHERE state = 'resolved'")
            .await,
        150
    );
    assert_eq!(w.outbox_drained().await, 300);
    let published = w.ntfy.wait_for(300, LIMIT).await;
    let clears: Vec<_> = published
        .iter()
        .filter(|p| p.title.starts_with("[RESOLVED]"))
        .map(|p| p.click.clone())
        .collect();
    let distinct: BTreeSet<_> = clears.iter().collect();
    assert_eq!(clears.len(), 150, "one all-clear per incident");
    assert_eq!(distinct.len(), 150, "no all-clear twice");
    assert_eq!(published.len(), 300);
    // Each expiry is on its incident's timeline once.
    assert_eq!(
        w.count("SELECT COUNT(*) FROM timeline WHERE kind = 'alert_resolved'")
            .await,
        1500
    );
}

#[tokio::test]
#[cfg_attr(
    not(postgres_tests),
    ignore = "needs KLAXON_TEST_DATABASE_URL at build time"
)]
async fn postgresql_restarted_under_load_loses_nothing_answered_and_the_loops_resume() {
    let cluster = Cluster::start();
    let w = world_on(cluster.url(), 1).await;
    let r = &w.replicas[0];
    // Eight senders post distinct alerts without pause; every 200 is noted.
    let accepted = Arc::new(Mutex::new(Vec::<String>::new()));
    let statuses = Arc::new(Mutex::new(BTreeMap::<u16, usize>::new()));
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let senders: Vec<_> = (0..8)
        .map(|s| {
            let (accepted, statuses, stop) = (accepted.clone(), statuses.clone(), stop.clone());
            let (client, url) = (w.client.clone(), w.webhook(0));
            tokio::spawn(async move {
                let mut n = 0;
                while !stop.load(std::sync::atomic::Ordering::SeqCst) {
                    let name = format!("s{s}-{n}");
                    n += 1;
                    let payload = Payload::new(&name).alert(
                        &name,
                        "firing",
                        0,
                        None,
                        json!({"severity": "warning"}),
                    );
                    let status = match client.post(&url).json(&payload.json()).send().await {
                        Ok(res) => res.status().as_u16(),
                        Err(_) => 0,
                    };
                    *statuses.lock().unwrap().entry(status).or_default() += 1;
                    if status == 200 {
                        accepted.lock().unwrap().push(name);
                    }
                }
            })
        })
        .collect();
    let answered = |n: usize| {
        let accepted = accepted.clone();
        move || {
            let got = accepted.lock().unwrap().len();
            async move { (got >= n).then_some(()) }
        }
    };
    until("alerts accepted before the restart", answered(50)).await;

    cluster.down();
    // While it is down: the health check and intake say 503, nothing is answered 200.
    until("the health check answering 503", || async {
        let res = reqwest::get(format!("{}/healthz", r.url)).await.ok()?;
        (res.status() == 503).then_some(())
    })
    .await;
    let before_503 = statuses.lock().unwrap().get(&503).copied().unwrap_or(0);
    until("intake answering 503", || {
        let now = statuses.lock().unwrap().get(&503).copied().unwrap_or(0);
        async move { (now > before_503).then_some(()) }
    })
    .await;
    let accepted_while_down = accepted.lock().unwrap().len();

    cluster.up();
    until("the health check answering 200", || async {
        let res = reqwest::get(format!("{}/healthz", r.url)).await.ok()?;
        (res.status() == 200).then_some(())
    })
    .await;
    until(
        "alerts accepted after the restart",
        answered(accepted_while_down + 50),
    )
    .await;
    stop.store(true, std::sync::atomic::Ordering::SeqCst);
    for s in senders {
        s.await.unwrap();
    }

    let statuses = statuses.lock().unwrap().clone();
    assert!(
        statuses.keys().all(|s| [200, 503].contains(s)),
        "only 200 or 503 answers, never a dropped connection or a 500: {statuses:?}"
    );
    // Every alert answered 200 is stored.
    let stored: BTreeSet<String> = sqlx::query_as::<_, (String,)>("SELECT fingerprint FROM alerts")
        .fetch_all(&w.db.pool)
        .await
        .unwrap()
        .into_iter()
        .map(|r| r.0)
        .collect();
    let accepted = accepted.lock().unwrap().clone();
    let lost: Vec<_> = accepted.iter().filter(|a| !stored.contains(*a)).collect();
    assert!(lost.is_empty(), "answered 200 but not stored: {lost:?}");
    // The loops resumed on their own. A page published while its outcome could not be
    // written is claimed until the claim lapses (seconds on the clock), then sent again:
    // at least once, never lost. A try that failed as the database came back is retried
    // later on the clock: the clock goes on moving while this waits, as a real one would.
    w.advance(100);
    let incidents = w.count("SELECT COUNT(*) FROM incidents").await;
    until("every incident paged", || async {
        w.advance(5);
        let paged: BTreeSet<_> = w.ntfy.published().into_iter().map(|p| p.click).collect();
        (paged.len() as i64 >= incidents).then_some(())
    })
    .await;
    let renewed = w.now() + klaxon_core::leases::LEASE_TTL;
    until("the sweeper lease renewed", || async {
        let (expires,): (i64,) =
            sqlx::query_as("SELECT expires_at FROM leases WHERE name = 'sweeper'")
                .fetch_one(&w.db.pool)
                .await
                .ok()?;
        (expires >= renewed).then_some(())
    })
    .await;
}
