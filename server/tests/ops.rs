//! What an operator watches: `/metrics` counting what the replica did, and `/healthz` turning
//! `degraded` when paging is stuck (an overdue page, a stale lease, a stalled notifier).

use crate::common;
use common::*;
use klaxon_core::leases::LEASE_TTL;

/// The value of one sample line of the exposition, `None` when the series is absent.
fn sample(text: &str, series: &str) -> Option<f64> {
    text.lines()
        .find_map(|l| l.strip_prefix(series)?.strip_prefix(' ')?.parse().ok())
}

async fn metrics(app: &TestApp) -> String {
    let r = app
        .raw(reqwest::Method::GET, "/metrics", &[], Vec::new())
        .await;
    assert_eq!(r.status.as_u16(), 200, "{}", r.text);
    r.text
}

both!(metrics_count_intake_incidents_pages_and_requests, |app| {
    let w = app.paging_world().await;
    let integration = app
        .get(&format!("/api/teams/{}/integrations", w.team), &w.admin)
        .await
        .expect(200)[0]["id"]
        .as_i64()
        .unwrap();
    app.fire(&w.key, "db").await;
    // One pending page, due now.
    let before = metrics(&app).await;
    assert_eq!(sample(&before, "klaxon_outbox_pending_pages"), Some(1.0));
    assert_eq!(sample(&before, "klaxon_incidents_opened_total"), Some(1.0));
    assert_eq!(
        sample(
            &before,
            &format!("klaxon_webhooks_received_total{{integration=\"{integration}\"}}")
        ),
        Some(1.0)
    );
    assert_eq!(
        sample(
            &before,
            &format!("klaxon_alerts_accepted_total{{integration=\"{integration}\"}}")
        ),
        Some(1.0)
    );
    // The opening page fails once, is retried, then goes out.
    app.ntfy.fail_next(1, 500, None);
    app.tick().await;
    app.clock.advance(60);
    app.tick().await;
    assert_eq!(app.ntfy.published().len(), 1);
    let after = metrics(&app).await;
    for (series, value) in [
        (
            "klaxon_pages_failed_total{kind=\"opening\",road=\"ntfy\"}",
            1.0,
        ),
        (
            "klaxon_pages_retried_total{kind=\"opening\",road=\"ntfy\"}",
            1.0,
        ),
        (
            "klaxon_pages_sent_total{kind=\"opening\",road=\"ntfy\"}",
            1.0,
        ),
        // Due at the first try, taken by ntfy at the retry a minute later.
        (
            "klaxon_page_delivery_delay_seconds_count{road=\"ntfy\"}",
            1.0,
        ),
        (
            "klaxon_page_delivery_delay_seconds_sum{road=\"ntfy\"}",
            60.0,
        ),
        ("klaxon_outbox_pending_pages", 0.0),
        ("klaxon_oldest_due_page_age_seconds", 0.0),
        ("klaxon_notifier_pass_duration_seconds_count", 2.0),
        ("klaxon_degraded", 0.0),
    ] {
        assert_eq!(sample(&after, series), Some(value), "{series}:\n{after}");
    }
    // Requests are counted by route template, never by the raw path (which holds the key).
    let webhook = "klaxon_http_requests_total{method=\"POST\",route=\"/api/alertmanager/webhook/{key}\",status=\"200\"}";
    assert_eq!(sample(&after, webhook), Some(1.0), "{after}");
    assert!(!after.contains(&w.key));
    assert!(after.contains("klaxon_http_request_duration_seconds_bucket"));
    assert!(sample(&after, "klaxon_db_pool_connections").unwrap() >= 1.0);
});

both!(metrics_can_be_turned_off, |app| {
    let off = TestApp::spawn_on(
        tempfile::tempdir().unwrap(),
        app.database_url.clone(),
        klaxon_core::Config {
            metrics: false,
            ..app.config.clone()
        },
    )
    .await;
    // Nothing serves the path (the app's not-found page), and the document says so.
    assert_eq!(off.get("/metrics", &Auth::None).await.status.as_u16(), 404);
    let doc = off.get("/api/openapi.json", &Auth::None).await.expect(200);
    assert!(doc["paths"]["/metrics"].is_null());
    assert!(doc["paths"]["/healthz"]["get"]["responses"]["503"].is_object());
    metrics(&app).await;
    let doc = app.get("/api/openapi.json", &Auth::None).await.expect(200);
    assert!(doc["paths"]["/metrics"]["get"].is_object());
});

both!(
    an_overdue_page_makes_health_degraded_until_it_is_sent,
    |app| {
        let w = app.paging_world().await;
        assert_eq!(
            app.get("/healthz", &Auth::None).await.expect(200)["status"],
            "ok"
        );
        app.fire(&w.key, "db").await;
        // Nothing sends it: a minute later it is overdue.
        app.clock.advance(61);
        let h = app.get("/healthz", &Auth::None).await.expect(200);
        assert_eq!(h["status"], "degraded");
        let reason = h["reasons"][0].as_str().unwrap();
        assert!(reason.contains("1 page(s) due but not sent"), "{reason}");
        assert_eq!(
            sample(&metrics(&app).await, "klaxon_oldest_due_page_age_seconds"),
            Some(61.0)
        );
        assert_eq!(sample(&metrics(&app).await, "klaxon_degraded"), Some(1.0));
        app.tick().await;
        let h = app.get("/healthz", &Auth::None).await.expect(200);
        assert_eq!(h, serde_json::json!({"status": "ok"}));
    }
);

both!(a_stale_lease_and_a_stalled_notifier_are_reported, |app| {
    app.bootstrap().await;
    // The sweeper's lease, taken and then not renewed for two sweep periods.
    assert!(app
        .core
        .take_lease("sweeper", "elsewhere", LEASE_TTL)
        .await
        .unwrap());
    app.tick().await;
    app.clock.advance(60);
    assert_eq!(
        app.get("/healthz", &Auth::None).await.expect(200)["status"],
        "ok",
        "one missed period is not yet a problem"
    );
    app.clock.advance(10);
    let h = app.get("/healthz", &Auth::None).await.expect(200);
    assert_eq!(h["status"], "degraded");
    let reasons = h["reasons"].to_string();
    assert!(
        reasons.contains("the sweeper lease has not been renewed for 70 s"),
        "{reasons}"
    );
    assert!(
        reasons.contains("notifier has not finished a pass for 70 s"),
        "{reasons}"
    );
    // Renewed and ticked: healthy again.
    assert!(app
        .core
        .take_lease("sweeper", "elsewhere", LEASE_TTL)
        .await
        .unwrap());
    app.tick().await;
    assert_eq!(
        app.get("/healthz", &Auth::None).await.expect(200)["status"],
        "ok"
    );
    // A released lease passes to the next replica at once.
    app.core.release("elsewhere").await.unwrap();
    assert!(app
        .core
        .take_lease("sweeper", "next", LEASE_TTL)
        .await
        .unwrap());
});

// A database that does not answer (here: every pooled connection held) is a 503 in about 2 s,
// not an answer that waits on the pool's 10 s acquire timeout, which a probe never sees.
both!(healthz_answers_unavailable_before_probes_give_up, |app| {
    let pool = &app.core.db.pool;
    let mut held = Vec::new();
    while let Ok(Ok(conn)) =
        tokio::time::timeout(std::time::Duration::from_millis(500), pool.acquire()).await
    {
        held.push(conn);
    }
    assert!(!held.is_empty());
    let answer = reqwest::Client::new()
        .get(format!("{}/healthz", app.url))
        .timeout(std::time::Duration::from_secs(6))
        .send()
        .await
        .expect("an answer before the client gives up");
    assert_eq!(answer.status().as_u16(), 503);
    let body: serde_json::Value = answer.json().await.unwrap();
    assert_eq!(body["status"], "unavailable");
    assert_eq!(body["error"], "unavailable");
    drop(held);
    assert_eq!(
        app.get("/healthz", &Auth::None).await.expect(200)["status"],
        "ok"
    );
});

// A page failing for minutes is overdue although every retry moves its due time forward: health
// and the oldest-due metric count from when it was first due.
both!(a_page_failing_for_minutes_is_overdue, |app| {
    let w = app.paging_world().await;
    app.ntfy.fail_all(500, None);
    app.fire(&w.key, "db").await;
    let mut waited = 0;
    while waited < 150 {
        app.tick().await;
        app.clock.advance(10);
        waited += 10;
    }
    app.tick().await;
    let h = app.get("/healthz", &Auth::None).await.expect(200);
    assert_eq!(h["status"], "degraded", "{h}");
    let reason = h["reasons"][0].as_str().unwrap();
    assert!(reason.contains("the oldest for 150 s"), "{reason}");
    assert_eq!(
        sample(&metrics(&app).await, "klaxon_oldest_due_page_age_seconds"),
        Some(150.0)
    );
    // Once ntfy answers again the page goes and health is ok.
    app.ntfy.heal();
    app.clock.advance(600);
    app.tick().await;
    let h = app.get("/healthz", &Auth::None).await.expect(200);
    assert_eq!(h, serde_json::json!({"status": "ok"}));
});
