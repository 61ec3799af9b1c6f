//! Several `klaxon serve` processes on one PostgreSQL database and one recording ntfy: what
//! replicas promise, shown with real processes and real HTTP.

use crate::common;

use common::ntfy::Held;
use common::process::{until, LIMIT};
use common::world::world;
use common::Payload;
use futures::future::join_all;
use klaxon_core::leases::LEASE_TTL;
use klaxon_core::outbox::CLAIM_FOR;
use serde_json::json;
use std::collections::BTreeSet;

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

#[tokio::test]
#[cfg_attr(
    not(postgres_tests),
    ignore = "needs KLAXON_TEST_DATABASE_URL at build time"
)]
async fn a_replica_killed_mid_publish_is_replaced_and_every_page_arrives_once() {
    let mut w = world(2).await;
    let first_holder = replica_0_sweeping(&w).await;
    // Replica 0 claims the opening page and is publishing it when it is killed.
    let mut held = w.ntfy.hold_next();
    replica_0_publishing(&w, &mut held, "in-flight").await;
    w.replicas[0].signal("KILL");
    w.replicas[0].child.wait().await.unwrap();
    // Its publish never completed: ntfy refused it, so nothing was delivered.
    held.refuse();
    assert!(w.ntfy.published().is_empty());

    // Once the claim lapses on the test's clock (seconds, not a minute), the survivor's next
    // pass sends the page, and pages a new alert of its own.
    w.advance(CLAIM_FOR + 1);
    w.fire(1, "after-kill").await;
    let published = w.ntfy.wait_for(2, LIMIT).await;
    assert_eq!(w.outbox_drained().await, 2);
    assert_eq!(w.ntfy.published().len(), 2, "no page twice");
    let incidents: BTreeSet<_> = published.iter().map(|p| p.click.clone()).collect();
    assert_eq!(incidents.len(), 2, "each incident paged once");
    // The sweeper lease passes once it lapses too.
    w.advance(LEASE_TTL - CLAIM_FOR);
    until("the survivor holding the sweeper lease", || async {
        let holder = w.sweeper_holder().await;
        (holder != first_holder && !holder.is_empty()).then_some(())
    })
    .await;
}

#[tokio::test]
#[cfg_attr(
    not(postgres_tests),
    ignore = "needs KLAXON_TEST_DATABASE_URL at build time"
)]
async fn a_frozen_replica_loses_its_claim_and_sends_nothing_when_it_wakes() {
    let w = world(2).await;
    let frozen_holder = replica_0_sweeping(&w).await;
    let mut held = w.ntfy.hold_next();
    replica_0_publishing(&w, &mut held, "in-flight").await;
    w.replicas[0].signal("STOP");

    // Frozen, it renews nothing: once the claim lapses the survivor sends the page.
    w.advance(CLAIM_FOR + 1);
    let published = w.ntfy.wait_for(1, LIMIT).await;
    assert_eq!(published.len(), 1);
    w.advance(LEASE_TTL - CLAIM_FOR);
    until("the survivor holding the sweeper lease", || async {
        let holder = w.sweeper_holder().await;
        (holder != frozen_holder && !holder.is_empty()).then_some(())
    })
    .await;

    // It wakes to a refused publish: its hold lapsed on its clock, so it writes no outcome and
    // sends nothing again; it pages new alerts as before.
    held.refuse();
    w.replicas[0].signal("CONT");
    w.fire(0, "after-waking").await;
    w.ntfy.wait_for(2, LIMIT).await;
    assert_eq!(w.outbox_drained().await, 2);
    let published = w.ntfy.published();
    assert_eq!(published.len(), 2, "each page once: {published:?}");
    let incidents: BTreeSet<_> = published.iter().map(|p| p.click.clone()).collect();
    assert_eq!(incidents.len(), 2);
    assert_eq!(
        w.count("SELECT COUNT(*) FROM pages WHERE state = 'sent'")
            .await,
        2
    );
}

#[tokio::test]
#[cfg_attr(
    not(postgres_tests),
    ignore = "needs KLAXON_TEST_DATABASE_URL at build time"
)]
async fn a_slow_publish_keeps_its_claim_and_is_sent_once() {
    let w = world(2).await;
    let mut held = w.ntfy.hold_next();
    w.fire(0, "slow").await;
    held.arrived().await;
    // Ten seconds on the clock, twice the claim, while the publish hangs: the replica renews
    // its claim each second, so the other one never takes the page.
    for _ in 0..10 {
        w.advance(1);
        let now = w.now();
        until("the claim renewed", || async {
            let left = w
                .count("SELECT COALESCE(MIN(claimed_until), 0) FROM pages WHERE state = 'pending'")
                .await;
            (left >= now + CLAIM_FOR - 1).then_some(())
        })
        .await;
    }
    held.release();
    w.ntfy.wait_for(1, LIMIT).await;
    assert_eq!(w.outbox_drained().await, 1);
    assert_eq!(w.ntfy.attempts(), 1, "never taken by the other replica");
    assert_eq!(w.ntfy.published().len(), 1);
}

/// Fires `group` at replica 0 and waits until replica 0's publish of its page is `held` at ntfy.
/// Replica 1 is paused meanwhile: its own passes (every 100 ms on the test's clock) could claim
/// the page first, and the test would then kill or freeze a replica that holds nothing.
async fn replica_0_publishing(w: &common::world::World, held: &mut Held, group: &str) {
    w.replicas[1].signal("STOP");
    w.fire(0, group).await;
    held.arrived().await;
    w.replicas[1].signal("CONT");
}

/// Waits until replica 0, the first started, holds the sweeper lease; returns its holder name.
async fn replica_0_sweeping(w: &common::world::World) -> String {
    until("replica 0 holding the sweeper lease", || async {
        w.replicas[0]
            .metrics()
            .await
            .contains("klaxon_lease_held{lease=\"sweeper\"} 1")
            .then_some(())
    })
    .await;
    w.sweeper_holder().await
}
