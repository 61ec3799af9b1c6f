//! The escalation ladder: saving a policy (and refusing an unreachable one), then every row
//! of the ladder table — next level on timeout, repeat, exhaustion with the fallback topic,
//! unreachable levels passed, snooze pausing and acknowledgement stopping — with a manual clock.

use crate::common;
use common::*;
use serde_json::{json, Value};

fn topics(pages: &[common::ntfy::Published]) -> Vec<String> {
    let mut t: Vec<String> = pages.iter().map(|p| p.topic.clone()).collect();
    t.sort();
    t
}

async fn set_policy(app: &TestApp, w: &Paging, policy: Value) -> Value {
    app.put(
        &format!("/api/teams/{}/escalation", w.team),
        &w.admin,
        policy,
    )
    .await
    .expect(200)
}

both!(policy_is_validated_and_replaced_wholesale, |app| {
    let w = app.paging_world().await;
    let path = format!("/api/teams/{}/escalation", w.team);
    assert_eq!(
        app.get(&path, &w.bob.1).await.expect(200),
        json!({"levels": [], "repeat": 0, "fallback_topic": null, "low_urgency": []})
    );
    let good = json!({
        "levels": [
            {"timeout": "5m", "targets": [{"type": "oncall"}]},
            {"timeout": "1h30m", "targets": [{"type": "user", "user_id": w.bob.0}, {"type": "user", "user_id": w.carol.0}]}
        ],
        "repeat": 1,
        "fallback_topic": "ops-fallback",
        "low_urgency": ["info"]
    });
    // Members read, only owners write; other teams do not exist for outsiders.
    app.put(&path, &w.bob.1, good.clone())
        .await
        .expect_error(403, "forbidden");
    let admin = w.admin.clone();
    let (_, dave) = app.user(&admin, "dave").await;
    app.get(&path, &dave).await.expect_error(404, "not_found");
    assert_eq!(set_policy(&app, &w, good.clone()).await, good);
    assert_eq!(app.get(&path, &w.carol.1).await.expect(200), good);

    // Bad input: a clear 400 naming the problem, and the saved policy unchanged.
    let dave_id = app
        .get("/api/users?username=dave", &admin)
        .await
        .expect(200)[0]["id"]
        .as_i64()
        .unwrap();
    app.put(
        &format!("/api/users/{}/push-topic", w.carol.0),
        &admin,
        json!({"push_topic": ""}),
    )
    .await
    .expect(200);
    let level = |timeout: &str, targets: Value| json!({"levels": [{"timeout": timeout, "targets": targets}]});
    for (body, needle) in [
        (level("0s", json!([{"type": "oncall"}])), "timeout"),
        (level("2d", json!([{"type": "oncall"}])), "timeout"),
        (level("soon", json!([{"type": "oncall"}])), "duration"),
        (level("5m", json!([])), "targets"),
        (
            level("5m", json!([{"type": "oncall"}, {"type": "oncall"}])),
            "twice",
        ),
        (level("5m", json!([{"type": "team"}])), "type"),
        (level("5m", json!([{"type": "user"}])), "user_id"),
        (
            level("5m", json!([{"type": "user", "user_id": dave_id}])),
            "not a member",
        ),
        (
            level(
                "5m",
                json!([{"type": "user", "user_id": 999_999_999_999i64}]),
            ),
            "not a member",
        ),
        (
            level("5m", json!([{"type": "user", "user_id": w.carol.0}])),
            "no reachable target (carol has no push topic and no verified contact method)",
        ),
        (json!({"levels": [], "repeat": 11}), "repeat"),
        (json!({"levels": [], "repeat": -1}), "repeat"),
        (
            json!({"levels": [], "fallback_topic": "has spaces"}),
            "fallback_topic",
        ),
        (json!({"levels": [], "surprise": true}), "surprise"),
        (json!({"levels": "all"}), "levels"),
    ] {
        let m = app
            .put(&path, &admin, body.clone())
            .await
            .expect_error(400, "invalid");
        assert!(m.contains(needle), "{body}: {m}");
    }
    let Auth::Key(key) = &admin else {
        unreachable!()
    };
    let bearer = format!("Bearer {key}");
    let headers = [
        ("content-type", "application/json"),
        ("authorization", bearer.as_str()),
    ];
    app.raw(
        reqwest::Method::PUT,
        &path,
        &headers,
        b"{\"levels\": [".to_vec(),
    )
    .await
    .expect_error(400, "invalid");
    assert_eq!(app.get(&path, &admin).await.expect(200), good);

    // The rota counts as reachable only while it names someone with a topic today or later.
    app.delete(
        &format!("/api/teams/{}/schedule/2026-11-22", w.team),
        &admin,
    )
    .await
    .expect(204);
    let m = app
        .put(&path, &admin, level("5m", json!([{"type": "oncall"}])))
        .await
        .expect_error(400, "invalid");
    assert!(
        m.contains("nobody with a push topic or a verified contact method is on the rota"),
        "{m}"
    );
    app.post(
        &format!("/api/teams/{}/schedule", w.team),
        &admin,
        json!({"user_id": w.bob.0, "dates": ["2026-12-01"]}),
    )
    .await
    .expect(201);
    set_policy(&app, &w, level("5m", json!([{"type": "oncall"}]))).await;
    // A level passes when one of its targets is reachable.
    set_policy(
        &app,
        &w,
        level(
            "5m",
            json!([{"type": "user", "user_id": w.carol.0}, {"type": "user", "user_id": w.bob.0}]),
        ),
    )
    .await;
    // `levels: []` removes the ladder.
    assert_eq!(
        set_policy(&app, &w, json!({"levels": []})).await,
        json!({"levels": [], "repeat": 0, "fallback_topic": null, "low_urgency": []})
    );
});

both!(
    ladder_walks_levels_repeats_and_exhausts_to_the_fallback,
    |app| {
        let w = app.paging_world().await;
        set_policy(
        &app,
        &w,
        json!({
            "levels": [
                {"timeout": "5m", "targets": [{"type": "oncall"}]},
                {"timeout": "10m", "targets": [{"type": "user", "user_id": w.bob.0}, {"type": "user", "user_id": w.carol.0}]}
            ],
            "repeat": 1,
            "fallback_topic": "ops-fallback"
        }),
    )
    .await;
        let incident = app.fire(&w.key, "g1").await;
        // Opening page and level 1 (alice, on call) on the same pass: alice is paged once.
        assert_eq!(app.tick().await.escalated, 1);
        let p = app.ntfy.take();
        assert_eq!(topics(&p), vec!["alice-pager"]);
        let d = app.detail(&w.admin, incident).await;
        assert_eq!(
            timeline_texts(&d, "escalated"),
            vec!["level 1: paging alice (on call) (already being paged)"]
        );

        // Level 1's timeout: not a second early.
        app.clock.advance(5 * 60 - 1);
        app.tick().await;
        assert!(app.ntfy.take().is_empty());
        app.clock.advance(1);
        assert_eq!(app.tick().await.escalated, 1);
        let p = app.ntfy.take();
        assert_eq!(topics(&p), vec!["bob-pager", "carol-pager"]);
        // Each target has its own token, acting as that target.
        let ack_of = |topic: &str| {
            p.iter()
                .find(|x| x.topic == topic)
                .and_then(|x| x.ack_url())
                .unwrap()
        };
        let (bob_ack, carol_ack) = (ack_of("bob-pager"), ack_of("carol-pager"));
        assert_ne!(bob_ack, carol_ack);
        assert!(p
            .iter()
            .all(|x| x.message.starts_with("Escalated to you (level 2).")));

        // No reminders on a ladder team, whatever the interval.
        app.clock.advance(10 * 60 - 1);
        app.tick().await;
        assert!(app.ntfy.take().is_empty());

        // Round 2 starts again at level 1.
        app.clock.advance(1);
        app.tick().await;
        assert_eq!(topics(&app.ntfy.take()), vec!["alice-pager"]);
        app.clock.advance(5 * 60);
        app.tick().await;
        assert_eq!(topics(&app.ntfy.take()), vec!["bob-pager", "carol-pager"]);

        // Repeats used up: the fallback topic once, no Acknowledge, the incident stays open.
        app.clock.advance(10 * 60);
        app.tick().await;
        let p = app.ntfy.take();
        assert_eq!(topics(&p), vec!["ops-fallback"]);
        assert!(p[0].actions.is_empty());
        for _ in 0..6 {
            app.clock.advance(3600);
            app.tick().await;
        }
        assert!(app.ntfy.take().is_empty(), "exhausted means silent");
        let d = app.detail(&w.admin, incident).await;
        assert_eq!(d["state"], "triggered");
        assert_eq!(
            timeline_texts(&d, "escalation_exhausted"),
            vec!["escalation exhausted: paged the fallback topic ops-fallback"]
        );
        assert_eq!(
            timeline_texts(&d, "escalated"),
            vec![
                "level 1: paging alice (on call) (already being paged)",
                "level 2: paging bob, carol",
                "level 1 (round 2): paging alice (on call)",
                "level 2 (round 2): paging bob, carol",
            ]
        );
        assert!(timeline_texts(&d, "reminder").is_empty());

        // An old escalation token still acknowledges, as its own target.
        let r = app.press_ack(&carol_ack).await.expect(200);
        assert_eq!(r["state"], "acknowledged");
        assert_eq!(
            app.detail(&w.admin, incident).await["acknowledged_by"],
            "carol"
        );
        // Bob's token then finds it already owned: nothing changes, the answer says so.
        assert_eq!(
            app.press_ack(&bob_ack).await.expect(200)["state"],
            "acknowledged"
        );
        assert_eq!(
            app.detail(&w.admin, incident).await["acknowledged_by"],
            "carol"
        );
    }
);

both!(acknowledging_leaves_the_ladder, |app| {
    let w = app.paging_world().await;
    set_policy(
        &app,
        &w,
        json!({"levels": [
            {"timeout": "5m", "targets": [{"type": "oncall"}]},
            {"timeout": "5m", "targets": [{"type": "user", "user_id": w.bob.0}]}
        ]}),
    )
    .await;
    let incident = app.fire(&w.key, "g1").await;
    app.tick().await;
    let ack = app.ntfy.take()[0].ack_url().unwrap();
    app.press_ack(&ack).await.expect(200);
    for _ in 0..12 {
        app.clock.advance(5 * 60);
        app.tick().await;
    }
    assert!(app.ntfy.take().is_empty());
    let d = app.detail(&w.admin, incident).await;
    assert_eq!(timeline_texts(&d, "escalated").len(), 1);
    assert!(timeline_texts(&d, "escalation_exhausted").is_empty());
});

both!(unreachable_level_is_entered_recorded_and_passed, |app| {
    let w = app.paging_world().await;
    set_policy(
        &app,
        &w,
        json!({"levels": [
            {"timeout": "5m", "targets": [{"type": "user", "user_id": w.bob.0}]},
            {"timeout": "5m", "targets": [{"type": "user", "user_id": w.carol.0}]}
        ], "repeat": 1}),
    )
    .await;
    // Bob loses his topic after the policy was saved.
    app.put(
        &format!("/api/users/{}/push-topic", w.bob.0),
        &w.admin,
        json!({"push_topic": ""}),
    )
    .await
    .expect(200);
    let incident = app.fire(&w.key, "g1").await;
    app.tick().await;
    // The opening page to alice, and level 2 (carol) at once: level 1 had nobody.
    assert_eq!(topics(&app.ntfy.take()), vec!["alice-pager", "carol-pager"]);
    let d = app.detail(&w.admin, incident).await;
    assert_eq!(
        timeline_texts(&d, "nobody_reachable"),
        vec!["level 1: nobody reachable (bob has no push topic and no verified contact method)"]
    );
    assert_eq!(
        timeline_texts(&d, "escalated"),
        vec!["level 2: paging carol"]
    );

    // Carol disabled too: every level unreachable, exhausted with no fallback topic.
    app.put(
        &format!("/api/users/{}/disabled", w.carol.0),
        &w.admin,
        json!({"disabled": true}),
    )
    .await
    .expect(200);
    app.clock.advance(5 * 60);
    app.tick().await;
    assert!(app.ntfy.take().is_empty());
    let d = app.detail(&w.admin, incident).await;
    assert_eq!(
        timeline_texts(&d, "nobody_reachable"),
        vec![
            "level 1: nobody reachable (bob has no push topic and no verified contact method)",
            "level 1 (round 2): nobody reachable (bob has no push topic and no verified contact method)",
            "level 2 (round 2): nobody reachable (carol is disabled)",
        ]
    );
    assert_eq!(
        timeline_texts(&d, "escalation_exhausted"),
        vec!["escalation exhausted: the team has no fallback topic"]
    );
    assert_eq!(d["state"], "triggered");
});

both!(snooze_pauses_and_resumes_the_ladder, |app| {
    let w = app.paging_world().await;
    set_policy(
        &app,
        &w,
        json!({"levels": [
            {"timeout": "5m", "targets": [{"type": "oncall"}]},
            {"timeout": "5m", "targets": [{"type": "user", "user_id": w.bob.0}]}
        ]}),
    )
    .await;
    let incident = app.fire(&w.key, "g1").await;
    app.tick().await;
    app.ntfy.take();
    app.post(
        &format!("/api/incidents/{incident}/snooze"),
        &w.alice.1,
        json!({"duration": "1h"}),
    )
    .await
    .expect(200);
    for _ in 0..11 {
        app.clock.advance(5 * 60);
        app.tick().await;
    }
    assert!(app.ntfy.take().is_empty(), "paused while snoozed");
    // The snooze ends: level 1 again, its timeout restarted, then level 2.
    app.clock.advance(5 * 60);
    let r = app.tick().await;
    assert_eq!((r.resumed, r.escalated), (1, 1));
    assert_eq!(topics(&app.ntfy.take()), vec!["alice-pager"]);
    app.clock.advance(5 * 60 - 1);
    app.tick().await;
    assert!(app.ntfy.take().is_empty());
    app.clock.advance(1);
    app.tick().await;
    assert_eq!(topics(&app.ntfy.take()), vec!["bob-pager"]);

    // Unsnoozing by hand resumes at once too.
    app.post(
        &format!("/api/incidents/{incident}/snooze"),
        &w.alice.1,
        json!({"duration": "1h"}),
    )
    .await
    .expect(200);
    app.clock.advance(60);
    app.post(
        &format!("/api/incidents/{incident}/unsnooze"),
        &w.alice.1,
        json!({}),
    )
    .await
    .expect(200);
    app.tick().await;
    assert_eq!(topics(&app.ntfy.take()), vec!["bob-pager"]);
});
