//! Paging through ntfy: the opening page, push acknowledge tokens, reminders, retries with
//! backoff and Retry-After, single delivery with two notifiers, the all-clear rule and the
//! test page — against a recording ntfy server, with a manual clock.

use crate::common;
use common::*;
use serde_json::json;
use std::time::Duration;

both!(
    opening_page_reaches_the_on_call_and_acknowledges_from_the_phone,
    |app| {
        let w = app.paging_world().await;
        let incident = app.fire(&w.key, "g1").await;
        let report = app.tick().await;
        assert_eq!(report.sent, 1);
        let pages = app.ntfy.published();
        assert_eq!(pages.len(), 1);
        let page = &pages[0];
        assert_eq!(page.topic, "alice-pager");
        assert_eq!(page.title, "[CRITICAL] HighErrorRate: Error rate above 5%");
        assert_eq!(page.priority, 5);
        assert_eq!(
            page.click.as_deref(),
            Some(format!("{}/incidents/{incident}", app.config.public_url).as_str())
        );
        assert_eq!(page.actions.len(), 1);
        assert_eq!(page.actions[0]["action"], "http");
        assert_eq!(page.actions[0]["method"], "POST");
        assert_eq!(page.actions[0]["clear"], true);
        let ack = page.ack_url().unwrap();
        assert!(ack.starts_with(&format!("{}/api/notify/ack/", app.config.public_url)));

        // Delivered once: later passes send nothing more.
        assert_eq!(app.tick().await.sent, 0);
        assert_eq!(app.ntfy.published().len(), 1);
        let d = app.detail(&w.admin, incident).await;
        assert_eq!(timeline_texts(&d, "paged"), vec!["paging alice"]);
        assert_eq!(d["pages"][0]["status"], "sent");
        assert_eq!(d["pages"][0]["kind"], "opening");
        assert_eq!(d["pages"][0]["recipient"], "alice");
        assert_eq!(d["pages"][0]["topic"], serde_json::Value::Null);

        // The button acknowledges as alice, with no credential, once.
        let r = app.press_ack(&ack).await.expect(200);
        assert_eq!(r["incident_id"], incident);
        assert_eq!(r["state"], "acknowledged");
        let d = app.detail(&w.admin, incident).await;
        assert_eq!(d["acknowledged_by"], "alice");
        // A second tap says who has it rather than "not found".
        let again = app.press_ack(&ack).await.expect_error(409, "conflict");
        assert_eq!(again, "this incident was already acknowledged by alice");
        app.post(
            &format!("/api/incidents/{incident}/resolve"),
            &w.admin,
            json!({}),
        )
        .await
        .expect(200);
        let resolved = app.press_ack(&ack).await.expect_error(409, "conflict");
        assert_eq!(resolved, "this incident is already resolved");
    }
);

both!(ack_tokens_expire_and_refuse_garbage, |app| {
    let w = app.paging_world().await;
    let incident = app.fire(&w.key, "g1").await;
    app.tick().await;
    let ack = app.ntfy.published()[0].ack_url().unwrap();
    for bad in [
        "x".to_string(),
        "A".repeat(64),
        "a".repeat(10_000),
        "%2e%2e%2fapi".to_string(),
        "é".repeat(32),
    ] {
        app.send(
            reqwest::Method::POST,
            &format!("/api/notify/ack/{bad}"),
            &Auth::None,
            None,
        )
        .await
        .expect_error(404, "not_found");
    }
    // A day later the token is dead and the incident untouched.
    app.clock.advance(86_400);
    app.press_ack(&ack).await.expect_error(404, "not_found");
    assert_eq!(app.detail(&w.admin, incident).await["state"], "triggered");

    // A token of a since-disabled user does nothing either.
    let other = app.fire(&w.key, "g2").await;
    app.tick().await;
    let pages = app.ntfy.published();
    let ack2 = pages.last().unwrap().ack_url().unwrap();
    app.put(
        &format!("/api/users/{}/disabled", w.alice.0),
        &w.admin,
        json!({"disabled": true}),
    )
    .await
    .expect(200);
    app.press_ack(&ack2).await.expect_error(404, "not_found");
    assert_eq!(app.detail(&w.admin, other).await["state"], "triggered");
});

both!(page_fits_ntfy_and_carries_the_last_fix, |app| {
    let w = app.paging_world().await;
    let first = app.fire(&w.key, "g1").await;
    app.post(
        &format!("/api/incidents/{first}/resolve"),
        &w.admin,
        json!({"resolution": "restarted the payment worker"}),
    )
    .await
    .expect(200);
    app.tick().await;
    app.ntfy.take();

    // The same alert again, with a description far past ntfy's limit.
    let mut payload =
        Payload::new("g2").alert("g2", "firing", 600, None, json!({"severity": "critical"}));
    payload.alerts[0]["annotations"]["description"] = json!("Ω".repeat(6_000));
    app.webhook(&w.key, &payload).await.expect(200);
    app.tick().await;
    let pages = app.ntfy.published();
    assert_eq!(pages.len(), 1, "refused as too large?");
    assert!(pages[0].body_bytes <= 4096);
    assert!(pages[0].message.starts_with("ΩΩ"));
    assert!(
        pages[0].message.contains("Ω…"),
        "the description is clipped"
    );
    assert!(pages[0].message.ends_with(&format!(
        "Last time (#{first}): restarted the payment worker"
    )));

    // With a short description the last fix is always in the page.
    let second = app.fire(&w.key, "g3").await;
    app.tick().await;
    let last = app.ntfy.published().pop().unwrap();
    assert!(last
        .click
        .unwrap()
        .ends_with(&format!("/incidents/{second}")));
    assert!(last.message.contains(&format!(
        "Last time (#{first}): restarted the payment worker"
    )));
});

both!(
    opening_topic_falls_back_to_the_team_topic_then_nobody,
    |app| {
        let w = app.paging_world().await;
        // Nobody on call tomorrow; the team has a fallback topic and no ladder.
        app.clock.advance(86_400);
        app.put(
            &format!("/api/teams/{}/escalation", w.team),
            &w.admin,
            json!({"levels": [], "fallback_topic": "payments-fallback"}),
        )
        .await
        .expect(200);
        let incident = app.fire(&w.key, "g1").await;
        app.tick().await;
        let pages = app.ntfy.take();
        assert_eq!(pages.len(), 1);
        assert_eq!(pages[0].topic, "payments-fallback");
        assert!(
            pages[0].actions.is_empty(),
            "a shared topic gets no Acknowledge"
        );
        let d = app.detail(&w.admin, incident).await;
        assert_eq!(
            timeline_texts(&d, "paged"),
            vec!["nobody is on call today: paging the fallback topic payments-fallback"]
        );
        assert_eq!(d["pages"][0]["topic"], "payments-fallback");

        // Without a fallback topic and with no owner who can be reached (the owner has no
        // topic), nobody is paged, and the timeline says why.
        app.post(
            &format!("/api/incidents/{incident}/acknowledge"),
            &w.admin,
            json!({}),
        )
        .await
        .expect(200);
        app.put(
            &format!("/api/teams/{}/escalation", w.team),
            &w.admin,
            json!({"levels": []}),
        )
        .await
        .expect(200);
        let lonely = app.fire(&w.key, "g2").await;
        app.tick().await;
        assert!(app.ntfy.take().is_empty());
        let d = app.detail(&w.admin, lonely).await;
        assert_eq!(
            timeline_texts(&d, "nobody_reachable"),
            vec!["nobody paged: nobody is on call today, the team has no fallback topic and no owner can be reached"]
        );
        // Nothing to remind either.
        app.clock.advance(3 * 3600);
        app.tick().await;
        assert!(app.ntfy.take().is_empty());
    }
);

both!(reminders_repeat_until_the_incident_is_touched, |app| {
    let w = app.paging_world().await;
    let incident = app.fire(&w.key, "g1").await;
    app.tick().await;
    assert_eq!(app.ntfy.take().len(), 1);

    app.clock.advance(30 * 60 - 1);
    app.tick().await;
    assert!(app.ntfy.take().is_empty(), "not before the interval");
    app.clock.advance(1);
    assert_eq!(app.tick().await.reminded, 1);
    let r = app.ntfy.take();
    assert_eq!(r.len(), 1);
    assert_eq!(r[0].topic, "alice-pager");
    assert!(r[0]
        .message
        .starts_with("Reminder: still unacknowledged (unacknowledged for 30m)"));
    assert!(r[0].ack_url().is_some());

    // The interval is read from settings on every pass.
    app.put(
        "/api/admin/settings",
        &w.admin,
        json!({"notify_repeat_interval": "10m"}),
    )
    .await
    .expect(200);
    app.clock.advance(10 * 60);
    app.tick().await;
    assert_eq!(app.ntfy.take().len(), 1);

    // Snoozed: silent; when the snooze ends paging resumes at once.
    app.post(
        &format!("/api/incidents/{incident}/snooze"),
        &w.alice.1,
        json!({"duration": "1h"}),
    )
    .await
    .expect(200);
    for _ in 0..5 {
        app.clock.advance(10 * 60);
        app.tick().await;
    }
    assert!(app.ntfy.take().is_empty(), "no reminder while snoozed");
    app.clock.advance(10 * 60);
    let report = app.tick().await;
    assert_eq!(report.resumed, 1);
    let r = app.ntfy.take();
    assert_eq!(r.len(), 1, "snooze end re-pages");
    assert!(r[0].message.contains("snooze ended"));

    // Acknowledged: reminders stop for good.
    app.post(
        &format!("/api/incidents/{incident}/acknowledge"),
        &w.alice.1,
        json!({}),
    )
    .await
    .expect(200);
    app.clock.advance(5 * 3600);
    app.tick().await;
    assert!(app.ntfy.take().is_empty());
    let d = app.detail(&w.admin, incident).await;
    assert_eq!(timeline_texts(&d, "reminder").len(), 3);

    // Archived and resolved incidents are not reminded either.
    let archived = app.fire(&w.key, "g2").await;
    let resolved = app.fire(&w.key, "g3").await;
    app.tick().await;
    app.ntfy.take();
    app.post(
        &format!("/api/incidents/{archived}/archive"),
        &w.admin,
        json!({}),
    )
    .await
    .expect(200);
    app.post(
        &format!("/api/incidents/{resolved}/resolve"),
        &w.admin,
        json!({}),
    )
    .await
    .expect(200);
    app.clock.advance(3600);
    app.tick().await;
    let left: Vec<_> = app
        .ntfy
        .take()
        .into_iter()
        .filter(|p| !p.title.starts_with("[RESOLVED]"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
});

both!(failed_sends_back_off_and_honour_retry_after, |app| {
    let w = app.paging_world().await;
    app.ntfy.fail_next(1, 500, None);
    let incident = app.fire(&w.key, "g1").await;
    assert_eq!(app.tick().await.failed, 1);
    let d = app.detail(&w.admin, incident).await;
    assert_eq!(d["pages"][0]["status"], "pending");
    assert_eq!(d["pages"][0]["attempts"], 1);
    assert!(d["pages"][0]["last_error"]
        .as_str()
        .unwrap()
        .contains("ntfy answered 500"));
    let failed = timeline_texts(&d, "push_failed");
    assert_eq!(failed.len(), 1);
    assert!(failed[0].starts_with("page to alice failed, retrying: ntfy answered 500"));

    // 5 s backoff: nothing before it, the retry after it.
    let attempts = app.ntfy.attempts();
    app.tick().await;
    app.clock.advance(4);
    app.tick().await;
    assert_eq!(app.ntfy.attempts(), attempts);
    app.clock.advance(1);
    assert_eq!(app.tick().await.sent, 1);
    assert_eq!(app.ntfy.take().len(), 1);
    assert_eq!(
        app.detail(&w.admin, incident).await["pages"][0]["status"],
        "sent"
    );

    // A 429 waits as long as Retry-After says, not the 5 s backoff.
    app.ntfy.fail_next(1, 429, Some(120));
    app.fire(&w.key, "g2").await;
    assert_eq!(app.tick().await.failed, 1);
    let attempts = app.ntfy.attempts();
    app.clock.advance(119);
    app.tick().await;
    assert_eq!(app.ntfy.attempts(), attempts);
    app.clock.advance(1);
    assert_eq!(app.tick().await.sent, 1);

    // A push service down for a day: retried with growing gaps, then given up, on the record.
    for group in ["g1", "g2"] {
        let id = app.incident_of(group).await;
        app.post(
            &format!("/api/incidents/{id}/acknowledge"),
            &w.admin,
            json!({}),
        )
        .await
        .expect(200);
    }
    app.ntfy.take();
    app.ntfy.fail_next(10_000, 503, None);
    let doomed = app.fire(&w.key, "g3").await;
    let start = app.ntfy.attempts();
    let mut passes = 0;
    loop {
        app.tick().await;
        let d = app.detail(&w.admin, doomed).await;
        if d["pages"][0]["status"] == "failed" {
            let texts = timeline_texts(&d, "push_failed");
            assert_eq!(texts.len(), 2, "first failure and giving up: {texts:?}");
            assert!(texts[1].starts_with("gave up paging alice after"));
            break;
        }
        app.clock.advance(600);
        passes += 1;
        assert!(passes < 200, "never gave up");
    }
    let tries = app.ntfy.attempts() - start;
    assert!((140..=160).contains(&tries), "{tries} attempts in a day");
    assert!(app.ntfy.published().is_empty());
});

both_with!(two_notifiers_send_each_page_once, unbundled(), |app| {
    let w = app.paging_world().await;
    let other = TestApp::spawn_on(
        tempfile::tempdir().unwrap(),
        app.database_url.clone(),
        app.config.clone(),
    )
    .await;
    for i in 0..20 {
        app.fire(&w.key, &format!("g{i}")).await;
    }
    let (a, b) = tokio::join!(
        app.core.notify_tick("replica-a"),
        other.core.notify_tick("replica-b")
    );
    let (a, b) = (a.unwrap(), b.unwrap());
    assert_eq!(a.sent + b.sent, 20);
    let pages = app.ntfy.take();
    assert_eq!(pages.len(), 20);
    let mut clicks: Vec<_> = pages.iter().map(|p| p.click.clone().unwrap()).collect();
    clicks.sort();
    clicks.dedup();
    assert_eq!(clicks.len(), 20, "one page per incident");

    // Reminders too: both replicas due at once, each incident reminded once.
    app.clock.advance(30 * 60);
    other.clock.advance(30 * 60);
    let (a, b) = tokio::join!(
        app.core.notify_tick("replica-a"),
        other.core.notify_tick("replica-b")
    );
    let (a, b) = (a.unwrap(), b.unwrap());
    assert_eq!(a.reminded + b.reminded, 20);
    assert_eq!(app.ntfy.take().len(), 20);
    // Nothing left for either.
    assert_eq!(app.tick().await.sent + other.tick().await.sent, 0);
});

both_with!(
    all_clear_only_when_the_opening_page_was_sent,
    unbundled(),
    |app| {
        let w = app.paging_world().await;
        // Sent, then resolved by Alertmanager: all-clear to the same topic.
        let sent = app.fire(&w.key, "g1").await;
        app.tick().await;
        app.ntfy.take();
        app.clear(&w.key, "g1").await;
        app.tick().await;
        let all_clear = app.ntfy.take();
        assert_eq!(all_clear.len(), 1);
        assert_eq!(all_clear[0].topic, "alice-pager");
        assert!(all_clear[0].title.starts_with("[RESOLVED] "));
        assert!(all_clear[0].actions.is_empty());
        let d = app.detail(&w.admin, sent).await;
        assert_eq!(d["pages"][1]["kind"], "all_clear");
        // A person's own topic stays private in the history; the page names them instead.
        assert_eq!(d["pages"][1]["recipient"], "alice");
        assert_eq!(d["pages"][1]["topic"], serde_json::Value::Null);

        // Resolved before the opening page left: no opening page, no all-clear.
        let quick = app.fire(&w.key, "g2").await;
        app.clear(&w.key, "g2").await;
        let report = app.tick().await;
        assert_eq!(report.cancelled, 1);
        assert!(app.ntfy.take().is_empty());
        let d = app.detail(&w.admin, quick).await;
        assert_eq!(d["pages"][0]["status"], "cancelled");
        assert_eq!(d["pages"].as_array().unwrap().len(), 1);

        // Resolved by hand after the page: all-clear too.
        let by_hand = app.fire(&w.key, "g3").await;
        app.tick().await;
        app.ntfy.take();
        app.post(
            &format!("/api/incidents/{by_hand}/resolve"),
            &w.bob.1,
            json!({}),
        )
        .await
        .expect(200);
        app.tick().await;
        assert_eq!(app.ntfy.take().len(), 1);

        // Resolved while the opening page was on its way: the all-clear follows it, once.
        let mut held = app.ntfy.hold_next();
        let racing = app.fire(&w.key, "g5").await;
        let pass = tokio::spawn({
            let core = app.core.clone();
            async move { core.notify_tick("test").await.unwrap() }
        });
        held.arrived().await;
        app.clear(&w.key, "g5").await;
        assert_eq!(app.detail(&w.admin, racing).await["state"], "resolved");
        held.release();
        assert_eq!(pass.await.unwrap().sent, 1);
        app.tick().await;
        app.tick().await;
        let pages = app.ntfy.take();
        let titles: Vec<&str> = pages.iter().map(|p| p.title.as_str()).collect();
        assert_eq!(pages.len(), 2, "{titles:?}");
        assert!(!pages[0].title.starts_with("[RESOLVED] "));
        assert!(pages[1].title.starts_with("[RESOLVED] "));
        let d = app.detail(&w.admin, racing).await;
        let kinds: Vec<&str> = d["pages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["kind"].as_str().unwrap())
            .collect();
        assert_eq!(kinds, ["opening", "all_clear"]);

        // The opening page failed (never sent), then resolved: no all-clear.
        app.ntfy.fail_next(1, 500, None);
        app.fire(&w.key, "g4").await;
        app.tick().await;
        app.clear(&w.key, "g4").await;
        app.clock.advance(10);
        app.tick().await;
        assert!(app.ntfy.take().is_empty());
    }
);

// A push waits its topic's turn behind a slow one; the incident it is about is acknowledged in
// that time. It is not sent: the next pass finds the incident owned and cancels its page.
both!(a_page_owned_while_it_waits_its_turn_is_not_sent, |app| {
    let w = app.paging_world().await;
    let first = app.fire(&w.key, "slow").await;
    let second = app.fire(&w.key, "waiting").await;
    let mut held = app.ntfy.hold_next();
    let pass = tokio::spawn({
        let core = app.core.clone();
        async move { core.notify_tick("test").await.unwrap() }
    });
    held.arrived().await;
    // The held push takes its time; meanwhile the second incident is acknowledged.
    app.clock.advance(1);
    app.post(
        &format!("/api/incidents/{second}/acknowledge"),
        &w.alice.1,
        json!({}),
    )
    .await
    .expect(200);
    held.release();
    assert_eq!(pass.await.unwrap().sent, 1);
    app.tick().await;
    let pages = app.ntfy.take();
    let clicks: Vec<String> = pages.iter().filter_map(|p| p.click.clone()).collect();
    assert_eq!(clicks.len(), 1, "{clicks:?}");
    assert!(
        clicks[0].ends_with(&format!("/incidents/{first}")),
        "{clicks:?}"
    );
    let d = app.detail(&w.admin, second).await;
    assert_eq!(d["pages"][0]["status"], "cancelled", "{d}");
});

both!(test_page_reports_the_push_service_error, |app| {
    let w = app.paging_world().await;
    // The first-steps card ticks the test page only once one reached the phone.
    let me = app.get("/api/me", &w.alice.1).await.expect(200);
    assert!(me["test_page_at"].is_null(), "{me}");
    assert_eq!(me["pages_reach_phone"], true);
    app.ntfy.fail_next(1, 500, None);
    app.post("/api/me/notify/test", &w.alice.1, json!({}))
        .await
        .expect_error(502, "push_failed");
    assert!(app.get("/api/me", &w.alice.1).await.expect(200)["test_page_at"].is_null());
    app.ntfy.take();
    app.post("/api/me/notify/test", &w.alice.1, json!({}))
        .await
        .expect(200);
    let me = app.get("/api/me", &w.alice.1).await.expect(200);
    assert!(me["test_page_at"].is_string(), "{me}");
    let p = app.ntfy.take();
    assert_eq!(p.len(), 1);
    assert_eq!(p[0].topic, "alice-pager");
    assert_eq!(
        p[0].click.as_deref(),
        Some(format!("{}/me", app.config.public_url).as_str())
    );

    app.ntfy.fail_next(1, 500, None);
    let m = app
        .post("/api/me/notify/test", &w.alice.1, json!({}))
        .await
        .expect_error(502, "push_failed");
    assert!(m.contains("ntfy answered 500"), "{m}");
    // Not queued: nothing is retried later.
    app.clock.advance(3600);
    app.tick().await;
    assert!(app.ntfy.take().is_empty());

    // Without a topic: a 400 naming the field.
    app.put(
        &format!("/api/users/{}/push-topic", w.bob.0),
        &w.admin,
        json!({"push_topic": ""}),
    )
    .await
    .expect(200);
    let m = app
        .post("/api/me/notify/test", &w.bob.1, json!({}))
        .await
        .expect_error(409, "conflict");
    assert!(m.contains("push_topic"));
    assert_eq!(
        app.get("/api/me", &w.bob.1).await.expect(200)["pages_reach_phone"],
        false
    );

    // Service accounts are refused: the endpoint is for humans.
    // Service accounts get their own endpoints later; the Actor already knows the kind.
    let (id,): (i64,) = sqlx::query_as(
        "INSERT INTO users (username, kind, push_topic, created_at) VALUES ('robot', 'service', 'robot-pager', 0) RETURNING id",
    )
    .fetch_one(&app.core.db.pool)
    .await
    .unwrap();
    let k = app
        .post(
            &format!("/api/service-accounts/{id}/api-keys"),
            &w.admin,
            json!({"name": "ci"}),
        )
        .await
        .expect(201);
    app.post(
        "/api/me/notify/test",
        &Auth::Key(k["key"].as_str().unwrap().into()),
        json!({}),
    )
    .await
    .expect_error(403, "forbidden");
});

#[tokio::test]
async fn test_page_reports_rejected_token_and_unreachable_server() {
    let recorder = common::ntfy::Recorder::start().await;
    for (url, token, expect) in [
        (
            recorder.url.clone(),
            "tk_wrong",
            "ntfy answered 401: unauthorized",
        ),
        (
            "http://127.0.0.1:1".to_string(),
            "tk_x",
            "cannot reach ntfy",
        ),
    ] {
        let config = klaxon_core::Config {
            roads: klaxon_core::roads::RoadSettings {
                ntfy_url: Some(url),
                ntfy_token: Some(token.into()),
                ..Default::default()
            },
            ..Default::default()
        };
        let app = TestApp::spawn_with(Backend::Sqlite, config).await;
        let w = app.paging_world().await;
        let m = app
            .post("/api/me/notify/test", &w.alice.1, json!({}))
            .await
            .expect_error(502, "push_failed");
        assert!(m.contains(expect), "{m}");
    }
}

both!(a_queued_page_wakes_the_notifier, |app| {
    let w = app.paging_world().await;
    // The sender lives to the end of the test: the loop runs until it says stop.
    let (_stop, stopped) = tokio::sync::watch::channel(false);
    klaxon_server::loops::spawn_notifier(app.core.clone(), "live".into(), stopped);
    // The loop's own 30 s tick cannot explain these: each page follows its webhook at once.
    for (i, group) in ["g1", "g2", "g3"].into_iter().enumerate() {
        app.fire(&w.key, group).await;
        app.ntfy.wait_for(i + 1, Duration::from_secs(10)).await;
    }
});

/// The test's clock, with background loops whose timer waits an hour.
struct TimerNeverDue(std::sync::Arc<klaxon_core::ManualClock>);

impl klaxon_core::Clock for TimerNeverDue {
    fn now(&self) -> i64 {
        self.0.now()
    }
    fn tick(&self, _usual: Duration) -> Duration {
        Duration::from_secs(3600)
    }
}

/// How many passes this replica's notifier has finished.
async fn passes(app: &TestApp) -> u64 {
    let metrics = app.get("/metrics", &Auth::None).await.text;
    metrics
        .lines()
        .find_map(|l| l.strip_prefix("klaxon_notifier_pass_duration_seconds_count "))
        .and_then(|n| n.trim().parse::<f64>().ok())
        .map_or(0, |n| n as u64)
}

both_with!(
    a_page_queued_behind_a_slow_send_goes_as_soon_as_that_send_ends,
    klaxon_core::Config {
        // As deployed: a pass leaves a slow send to finish alone.
        lane_wait: klaxon_core::lanes::WAIT_FOR_LANES,
        ..unbundled()
    },
    |app| {
        let w = app.paging_world().await;
        let (_stop, stopped) = tokio::sync::watch::channel(false);
        // A loop whose timer never comes within the test: only a wake can explain a page.
        let mut core = app.core.clone();
        core.clock = std::sync::Arc::new(TimerNeverDue(app.clock.clone()));
        klaxon_server::loops::spawn_notifier(core, "live".into(), stopped);
        let after = |n: u64, what: &'static str| {
            let app = &app;
            common::process::until(what, move || async move {
                let now = passes(app).await;
                (now > n).then_some(now)
            })
        };
        let started = after(0, "the loop's first pass").await;
        let mut held = app.ntfy.hold_next();
        app.fire(&w.key, "g1").await;
        held.arrived().await;
        // The pass has left alice's slow send to finish alone...
        let first = after(started, "the first page's pass ending").await;
        // ...and the next, woken by her second page, finds her topic's lane still sending.
        app.fire(&w.key, "g2").await;
        after(first, "the second page's pass ending").await;
        assert_eq!(app.ntfy.published().len(), 0, "the first is still held");
        // When the slow send ends, the second goes: not at the loop's next tick (an hour here).
        held.release();
        let pages = app.ntfy.wait_for(2, Duration::from_secs(10)).await;
        assert_eq!(pages.len(), 2);
    }
);

both_with!(
    many_due_reminders_are_queued_once_each_even_by_two_notifiers,
    unbundled(),
    |app| {
        let w = app.paging_world().await;
        let other = TestApp::spawn_on(
            tempfile::tempdir().unwrap(),
            app.database_url.clone(),
            app.config.clone(),
        )
        .await;
        let mut incidents = Vec::new();
        for i in 0..40 {
            incidents.push(app.fire(&w.key, &format!("g{i}")).await);
        }
        assert_eq!(app.tick().await.sent, 40);
        app.ntfy.take();
        // One incident still has a page waiting for alice's topic: its reminder is held back.
        let held = incidents[7];
        sqlx::query(
            "INSERT INTO pages (incident_id, kind, topic, user_id, detail, due_at, created_at) \
             VALUES ($1, 'escalation', 'alice-pager', $2, '', $3, $3)",
        )
        .bind(held)
        .bind(w.alice.0)
        .bind(T0 + 86_400)
        .execute(&app.core.db.pool)
        .await
        .unwrap();

        app.clock.advance(30 * 60);
        other.clock.advance(30 * 60);
        let (a, b) = tokio::join!(app.core.schedule_due(), other.core.schedule_due());
        let (a, b) = (a.unwrap(), b.unwrap());
        assert_eq!(a.reminded + b.reminded, 40);
        let counts: Vec<(i64, i64, i64)> = sqlx::query_as(
            "SELECT i.id, (SELECT COUNT(*) FROM pages p WHERE p.incident_id = i.id AND p.kind = 'reminder'), \
             (SELECT COUNT(*) FROM timeline t WHERE t.incident_id = i.id AND t.kind = 'reminder') \
             FROM incidents i ORDER BY i.id",
        )
        .fetch_all(&app.core.db.pool)
        .await
        .unwrap();
        assert_eq!(counts.len(), 40);
        for (incident, pages, entries) in counts {
            let wanted = if incident == held { 0 } else { 1 };
            assert_eq!((pages, entries), (wanted, 1), "incident {incident}");
        }
        let d = app.detail(&w.admin, incidents[0]).await;
        assert_eq!(
            timeline_texts(&d, "reminder"),
            vec!["reminded alice: unacknowledged for 30m"]
        );

        let (a, b) = tokio::join!(
            app.core.notify_tick("replica-a"),
            other.core.notify_tick("replica-b")
        );
        assert_eq!(a.unwrap().sent + b.unwrap().sent, 39);
        let mut clicks: Vec<_> = app
            .ntfy
            .take()
            .into_iter()
            .map(|p| p.click.unwrap())
            .collect();
        clicks.sort();
        clicks.dedup();
        assert_eq!(clicks.len(), 39, "one reminder per incident");
    }
);

both!(deleting_a_user_or_a_team_takes_their_pages_along, |app| {
    let w = app.paging_world().await;
    let sent = app.fire(&w.key, "g1").await;
    app.tick().await;
    let ack = app.ntfy.published()[0].ack_url().unwrap();
    let pending = app.fire(&w.key, "g2").await;
    let rows = |sql: &'static str, id: i64| {
        let pool = app.core.db.pool.clone();
        async move {
            let (n,): (i64,) = sqlx::query_as(sql).bind(id).fetch_one(&pool).await.unwrap();
            n
        }
    };

    // alice is deleted: her pages stay in the history without her name, her button is dead.
    app.delete(&format!("/api/users/{}", w.alice.0), &w.admin)
        .await
        .expect(204);
    let d = app.detail(&w.admin, sent).await;
    assert_eq!(d["pages"][0]["status"], "sent");
    assert_eq!(d["pages"][0]["recipient"], serde_json::Value::Null);
    app.press_ack(&ack).await.expect_error(404, "not_found");
    assert_eq!(app.detail(&w.admin, sent).await["state"], "triggered");
    let by_alice = "SELECT (SELECT COUNT(*) FROM pages WHERE user_id = $1) \
                    + (SELECT COUNT(*) FROM ack_tokens WHERE user_id = $1) \
                    + (SELECT COUNT(*) FROM timeline WHERE actor_id = $1)";
    assert_eq!(rows(by_alice, w.alice.0).await, 0);

    // The team is deleted: nothing of its incidents is left, and nothing more is sent.
    let before = app.ntfy.published().len();
    app.delete(&format!("/api/teams/{}", w.team), &w.admin)
        .await
        .expect(204);
    for incident in [sent, pending] {
        let left = "SELECT (SELECT COUNT(*) FROM pages WHERE incident_id = $1) \
                    + (SELECT COUNT(*) FROM ack_tokens WHERE incident_id = $1) \
                    + (SELECT COUNT(*) FROM timeline WHERE incident_id = $1)";
        assert_eq!(rows(left, incident).await, 0);
    }
    app.tick().await;
    assert_eq!(app.ntfy.published().len(), before);

    // A page left behind by a write racing the deletion is cancelled, not retried forever.
    sqlx::query(
        "INSERT INTO pages (incident_id, kind, topic, due_at, created_at) VALUES ($1, 'reminder', 'bob-pager', 0, 0)",
    )
    .bind(pending)
    .execute(&app.core.db.pool)
    .await
    .unwrap();
    assert_eq!(app.tick().await.cancelled, 1);
    assert_eq!(app.ntfy.published().len(), before);
    let cancelled = "SELECT COUNT(*) FROM pages WHERE incident_id = $1 AND state = 'cancelled' \
                     AND last_error = 'not sent: the incident was deleted'";
    assert_eq!(rows(cancelled, pending).await, 1);
});
