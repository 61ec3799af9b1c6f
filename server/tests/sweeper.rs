//! The sweeper tick with a controlled clock: expiry by ends_at plus grace and by the stale
//! window, cascading to incidents, archiving, and settings read on every tick.

use crate::common;
use common::*;
use serde_json::json;

async fn setup(app: &TestApp) -> (Auth, i64, String) {
    let admin = app.bootstrap().await;
    let team = app.team(&admin, "web").await;
    let key = app.integration(&admin, team).await;
    (admin, team, key)
}

both!(stale_alerts_expire_and_resolve_their_incident, |app| {
    let (admin, team, key) = setup(&app).await;
    app.webhook(
        &key,
        &Payload::new("g").alert("a", "firing", 0, None, json!({})),
    )
    .await
    .expect(200);
    // Refreshed within the stale window (6h by default): nothing happens.
    app.clock.advance(5 * 3600);
    app.webhook(
        &key,
        &Payload::new("g").alert("a", "firing", 0, None, json!({})),
    )
    .await
    .expect(200);
    app.clock.advance(5 * 3600);
    assert_eq!(app.core.sweep().await.unwrap().expired, 0);
    // Exactly at the window's edge it still counts as fresh; one second past, it expires.
    app.clock.advance(3600);
    assert_eq!(app.core.sweep().await.unwrap().expired, 0);
    app.clock.advance(1);
    let r = app.core.sweep().await.unwrap();
    assert_eq!((r.expired, r.incidents_resolved), (1, 1));
    let a = app.alert_by_fingerprint(&admin, "a").await;
    assert_eq!(
        (a["status"].as_str(), a["resolution_source"].as_str()),
        (Some("resolved"), Some("expiry"))
    );
    let inc = &app.incidents(&admin, team).await[0];
    assert_eq!(inc["state"], "resolved");
    let d = app
        .get(&format!("/api/incidents/{}", inc["id"]), &admin)
        .await
        .expect(200);
    assert_eq!(
        d["timeline"].as_array().unwrap().last().unwrap()["kind"],
        "resolved"
    );
    // A second tick finds nothing more to do.
    assert_eq!(app.core.sweep().await.unwrap(), Default::default());
});

both!(
    an_ends_at_in_the_past_expires_after_the_grace_period,
    |app| {
        let (admin, _, key) = setup(&app).await;
        // Firing, but the sender said it would end at T0+60 unless refreshed.
        app.webhook(
            &key,
            &Payload::new("g").alert("e", "firing", 0, Some(60), json!({})),
        )
        .await
        .expect(200);
        app.clock.advance(60 + 5 * 60);
        assert_eq!(
            app.core.sweep().await.unwrap().expired,
            0,
            "within the grace period"
        );
        app.clock.advance(1);
        assert_eq!(app.core.sweep().await.unwrap().expired, 1);
        assert_eq!(
            app.alert_by_fingerprint(&admin, "e").await["ends_at"],
            "2026-11-22T00:01:00Z"
        );
    }
);

both!(one_expired_alert_of_two_keeps_the_incident_open, |app| {
    let (admin, team, key) = setup(&app).await;
    app.webhook(
        &key,
        &Payload::new("g")
            .alert("old", "firing", 0, Some(10), json!({}))
            .alert("live", "firing", 0, None, json!({})),
    )
    .await
    .expect(200);
    app.clock.advance(3600);
    app.webhook(
        &key,
        &Payload::new("g").alert("live", "firing", 0, None, json!({})),
    )
    .await
    .expect(200);
    let r = app.core.sweep().await.unwrap();
    assert_eq!((r.expired, r.incidents_resolved), (1, 0));
    assert_eq!(app.incidents(&admin, team).await[0]["state"], "triggered");
});

both!(
    resolved_alerts_are_archived_after_the_window_which_is_read_each_tick,
    |app| {
        let (admin, _, key) = setup(&app).await;
        app.webhook(
            &key,
            &Payload::new("g").alert("r", "firing", 0, None, json!({})),
        )
        .await
        .expect(200);
        app.webhook(
            &key,
            &Payload::new("g").alert("r", "resolved", 0, Some(0), json!({})),
        )
        .await
        .expect(200);
        app.clock.advance(2 * 3600);
        assert_eq!(app.core.sweep().await.unwrap().archived, 0, "7d by default");
        app.put(
            "/api/admin/settings",
            &admin,
            json!({"archive_after": "1h"}),
        )
        .await
        .expect(200);
        assert_eq!(app.core.sweep().await.unwrap().archived, 1);
        let listed = app.get("/api/alerts", &admin).await.expect(200);
        assert_eq!(
            listed.as_array().unwrap().len(),
            0,
            "archived alerts are hidden by default"
        );
        assert!(!app.alert_by_fingerprint(&admin, "r").await["archived_at"].is_null());
        // The stale window is read each tick too.
        app.webhook(
            &key,
            &Payload::new("h").alert("s", "firing", 0, None, json!({})),
        )
        .await
        .expect(200);
        app.clock.advance(10 * 60);
        assert_eq!(app.core.sweep().await.unwrap().expired, 0);
        app.put("/api/admin/settings", &admin, json!({"stale_after": "5m"}))
            .await
            .expect(200);
        assert_eq!(app.core.sweep().await.unwrap().expired, 1);
    }
);

both!(one_replica_holds_the_sweeper_lease, |app| {
    assert!(app.core.take_lease("sweeper", "a", 90).await.unwrap());
    assert!(
        !app.core.take_lease("sweeper", "b", 90).await.unwrap(),
        "held by a"
    );
    assert!(
        app.core.take_lease("sweeper", "a", 90).await.unwrap(),
        "a renews"
    );
    app.clock.advance(91);
    assert!(
        app.core.take_lease("sweeper", "b", 90).await.unwrap(),
        "expired: b takes over"
    );
    assert!(!app.core.take_lease("sweeper", "a", 90).await.unwrap());
});

both_with!(
    one_sweep_resolves_exactly_the_quiet_incidents_of_a_batch,
    unbundled(),
    |app| {
        let w = app.paging_world().await;
        // Six incidents whose opening page went out, six whose page is still queued.
        let mut sent = Vec::new();
        for i in 0..6 {
            sent.push(app.fire(&w.key, &format!("s{i}")).await);
        }
        assert_eq!(app.tick().await.sent, 6);
        app.ntfy.take();
        let mut queued = Vec::new();
        for i in 0..6 {
            queued.push(app.fire(&w.key, &format!("q{i}")).await);
        }
        // Two of each kind also have an alert that keeps being refreshed.
        for group in ["s0", "s1", "q0", "q1"] {
            app.webhook(
                &w.key,
                &Payload::new(group).alert(&format!("{group}-live"), "firing", 0, None, json!({})),
            )
            .await
            .expect(200);
        }
        app.clock.advance(5 * 3600);
        for group in ["s0", "s1", "q0", "q1"] {
            app.webhook(
                &w.key,
                &Payload::new(group).alert(&format!("{group}-live"), "firing", 0, None, json!({})),
            )
            .await
            .expect(200);
        }
        app.clock.advance(3600 + 1);

        let r = app.core.sweep().await.unwrap();
        assert_eq!((r.expired, r.incidents_resolved), (12, 8));
        let quiet: Vec<i64> = sent[2..].iter().chain(&queued[2..]).copied().collect();
        for &incident in sent.iter().chain(&queued) {
            let d = app.detail(&w.admin, incident).await;
            let expected = if quiet.contains(&incident) {
                "resolved"
            } else {
                "triggered"
            };
            assert_eq!(d["state"], expected, "incident {incident}");
            assert_eq!(timeline_texts(&d, "alert_resolved").len(), 1);
            let resolved = timeline_texts(&d, "resolved");
            if expected == "resolved" {
                assert_eq!(resolved, vec!["every alert stopped firing (expired)"]);
            } else {
                assert!(resolved.is_empty());
            }
            let all_clears = d["pages"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|p| p["kind"] == "all_clear")
                .count();
            // An all-clear only where the opening page was sent and the incident resolved.
            let wanted = usize::from(sent[2..].contains(&incident));
            assert_eq!(all_clears, wanted, "incident {incident}");
        }

        app.tick().await;
        let mut cleared: Vec<String> = app
            .ntfy
            .take()
            .into_iter()
            .filter(|p| p.title.starts_with("[RESOLVED]"))
            .map(|p| p.click.unwrap())
            .collect();
        cleared.sort();
        let mut expected: Vec<String> = sent[2..]
            .iter()
            .map(|id| format!("{}/incidents/{id}", app.config.public_url))
            .collect();
        expected.sort();
        assert_eq!(cleared, expected);
        assert_eq!(app.core.sweep().await.unwrap(), Default::default());
    }
);
