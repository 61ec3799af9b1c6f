//! Alert intake: integrations, the alert transition table, incidents opening exactly on a
//! transition into firing, correlation, severity, cascade, idempotency and hostile payloads.

use crate::common;
use common::*;
use reqwest::Method;
use serde_json::json;

/// An admin, an owner `bob` with a team, and an integration key of that team.
async fn setup(app: &TestApp) -> (Auth, Auth, i64, String) {
    let admin = app.bootstrap().await;
    let (_, bob) = app.user(&admin, "bob").await;
    let team = app.team(&bob, "web").await;
    let key = app.integration(&bob, team).await;
    (admin, bob, team, key)
}

both!(integrations_show_their_key_once_and_derive_status, |app| {
    let (admin, bob, team, _) = setup(&app).await;
    let created = app
        .post(
            &format!("/api/teams/{team}/integrations"),
            &bob,
            json!({"name": "prod AM"}),
        )
        .await
        .expect(201);
    let key = created["key"].as_str().unwrap().to_string();
    assert_eq!(key.len(), 64);
    assert_eq!(
        created["webhook_url"],
        format!("http://127.0.0.1:8080/api/alertmanager/webhook/{key}")
    );
    assert_eq!(created["status"], "Never used");
    let id = created["id"].as_i64().unwrap();
    let list = app
        .get(&format!("/api/teams/{team}/integrations"), &bob)
        .await
        .expect(200);
    assert!(!list.to_string().contains(&key), "the key is never listed");
    // A payload with nothing usable stamps only the webhook time.
    app.webhook(&key, &Payload::new("g")).await.expect(200);
    let i = app
        .get(&format!("/api/teams/{team}/integrations"), &bob)
        .await
        .expect(200)[0]
        .clone();
    assert_eq!(
        (i["status"].as_str(), i["last_alert_at"].is_null()),
        (Some("Active"), true)
    );
    app.webhook(
        &key,
        &Payload::new("g").alert("fp1", "firing", 0, None, json!({})),
    )
    .await
    .expect(200);
    let i = app
        .get(&format!("/api/teams/{team}/integrations"), &bob)
        .await
        .expect(200)[0]
        .clone();
    assert_eq!(i["last_alert_at"], "2026-11-22T00:00:00Z");
    assert_eq!(i["alerts_24h"], 1);
    app.clock.advance(86_401);
    let i = app
        .get(&format!("/api/teams/{team}/integrations"), &bob)
        .await
        .expect(200)[0]
        .clone();
    assert_eq!(
        (i["status"].as_str(), i["alerts_24h"].as_i64()),
        (Some("Quiet"), Some(0))
    );
    // Rename keeps the key working; revoke keeps the alerts, unattributed.
    app.send(
        Method::PATCH,
        &format!("/api/teams/{team}/integrations/{id}"),
        &bob,
        Some(json!({"name": "renamed"})),
    )
    .await
    .expect(200);
    app.webhook(&key, &Payload::new("g")).await.expect(200);
    app.delete(&format!("/api/teams/{team}/integrations/{id}"), &bob)
        .await
        .expect(204);
    app.webhook(&key, &Payload::new("g"))
        .await
        .expect_error(401, "unauthorized");
    let alert = app.alert_by_fingerprint(&bob, "fp1").await;
    assert!(alert["integration_id"].is_null());
    // Only owners manage integrations; outsiders see nothing.
    let (carol_id, carol) = app.user(&admin, "carol").await;
    app.post(
        &format!("/api/teams/{team}/integrations"),
        &carol,
        json!({"name": "x"}),
    )
    .await
    .expect_error(404, "not_found");
    app.post(
        &format!("/api/teams/{team}/members"),
        &bob,
        json!({"user_id": carol_id}),
    )
    .await
    .expect(201);
    app.post(
        &format!("/api/teams/{team}/integrations"),
        &carol,
        json!({"name": "x"}),
    )
    .await
    .expect_error(403, "forbidden");
    app.post(
        &format!("/api/teams/{team}/integrations"),
        &bob,
        json!({"name": "x", "kind": "zabbix"}),
    )
    .await
    .expect_error(400, "invalid");
});

both!(
    a_firing_alert_opens_one_incident_assigned_to_today_holder,
    |app| {
        let (_, bob, team, key) = setup(&app).await;
        let bob_id = app.get("/api/me", &bob).await.expect(200)["id"]
            .as_i64()
            .unwrap();
        app.post(
            &format!("/api/teams/{team}/schedule"),
            &bob,
            json!({"user_id": bob_id, "dates": ["2026-11-22"]}),
        )
        .await
        .expect(201);
        let fixture: serde_json::Value = serde_json::from_str(include_str!(
            "../../domain/tests/fixtures/alertmanager-webhook.json"
        ))
        .unwrap();
        let r = app
            .post(
                &format!("/api/alertmanager/webhook/{key}"),
                &Auth::None,
                fixture.clone(),
            )
            .await
            .expect(200);
        assert_eq!(
            (r["accepted"].as_i64(), r["ignored"].as_i64()),
            (Some(1), Some(0))
        );
        let incidents = app.incidents(&bob, team).await;
        assert_eq!(incidents.len(), 1);
        let inc = &incidents[0];
        assert_eq!(inc["state"], "triggered");
        assert_eq!(inc["severity"], "critical");
        assert_eq!(inc["assignee"], "bob");
        assert_eq!(inc["title"], "HighErrorRate: Error rate above 5%");
        assert_eq!(inc["signature"], "HighErrorRate{service=\"checkout\"}");
        let alert = app.alert_by_fingerprint(&bob, "f7ca8b2ae37f4b50").await;
        assert!(alert["ends_at"].is_null(), "year 0001 is stored as null");
        assert_eq!(alert["incident_id"], inc["id"]);
        // Re-sends (HA Alertmanager delivers at least once) refresh, never open another.
        app.clock.advance(60);
        app.post(
            &format!("/api/alertmanager/webhook/{key}"),
            &Auth::None,
            fixture,
        )
        .await
        .expect(200);
        assert_eq!(app.incidents(&bob, team).await.len(), 1);
        assert_eq!(
            app.alert_by_fingerprint(&bob, "f7ca8b2ae37f4b50").await["received_at"],
            "2026-11-22T00:01:00Z"
        );
        let detail = app
            .get(&format!("/api/incidents/{}", inc["id"]), &bob)
            .await
            .expect(200);
        let kinds: Vec<&str> = detail["timeline"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["kind"].as_str().unwrap())
            .collect();
        // The holder has no push topic here, so nobody is paged (paging.rs covers pages).
        assert_eq!(
            kinds,
            ["opened", "assigned", "nobody_reachable", "alert_firing"]
        );
        assert_eq!(detail["alerts"].as_array().unwrap().len(), 1);
    }
);

both!(a_grafana_integration_takes_grafanas_webhook, |app| {
    let (_, bob, team, _) = setup(&app).await;
    let created = app
        .post(
            &format!("/api/teams/{team}/integrations"),
            &bob,
            json!({"name": "grafana", "kind": "grafana"}),
        )
        .await
        .expect(201);
    assert_eq!(created["kind"], "grafana");
    let key = created["key"].as_str().unwrap();
    // Grafana's payload: version "1", local-offset times, fields Alertmanager does not send.
    let fixture: serde_json::Value = serde_json::from_str(include_str!(
        "../../domain/tests/fixtures/grafana-webhook.json"
    ))
    .unwrap();
    let r = app
        .post(
            &format!("/api/alertmanager/webhook/{key}"),
            &Auth::None,
            fixture.clone(),
        )
        .await
        .expect(200);
    assert_eq!(
        (r["accepted"].as_i64(), r["ignored"].as_i64()),
        (Some(1), Some(0))
    );
    let incidents = app.incidents(&bob, team).await;
    assert_eq!(incidents.len(), 1);
    assert_eq!(
        incidents[0]["title"],
        "DiskFilling: Disk on db-1 is 93% full"
    );
    assert_eq!(incidents[0]["severity"], "critical");
    let alert = app.alert_by_fingerprint(&bob, "5e0f3c1d9a7b2e44").await;
    assert_eq!(alert["starts_at"], "2026-11-21T23:58:30Z");
    let list = app
        .get(&format!("/api/teams/{team}/integrations"), &bob)
        .await
        .expect(200);
    assert_eq!(list[0]["kind"], "grafana");
    // Resolved by Grafana, and the timeline says who.
    let mut resolved = fixture.clone();
    resolved["status"] = json!("resolved");
    resolved["alerts"][0]["status"] = json!("resolved");
    resolved["alerts"][0]["endsAt"] = json!("2026-11-22T02:10:00+02:00");
    let path = format!("/api/alertmanager/webhook/{key}");
    app.post(&path, &Auth::None, resolved).await.expect(200);
    let detail = app.detail(&bob, incidents[0]["id"].as_i64().unwrap()).await;
    assert_eq!(detail["state"], "resolved");
    let said = common::timeline_texts(&detail, "alert_resolved");
    assert!(said[0].contains("resolved by Grafana"), "{said:?}");
});

both!(the_alert_transition_table, |app| {
    let (_, bob, team, key) = setup(&app).await;
    let fire = |starts| Payload::new("g1").alert("fp", "firing", starts, None, json!({}));
    let resolve =
        |starts| Payload::new("g1").alert("fp", "resolved", starts, Some(starts + 30), json!({}));
    app.webhook(&key, &fire(0)).await.expect(200);
    // firing -> resolved by the sender: the incident cascades to resolved.
    app.webhook(&key, &resolve(0)).await.expect(200);
    let a = app.alert_by_fingerprint(&bob, "fp").await;
    assert_eq!(
        (a["status"].as_str(), a["resolution_source"].as_str()),
        (Some("resolved"), Some("alertmanager"))
    );
    assert_eq!(a["ends_at"], "2026-11-22T00:00:30Z");
    let incidents = app.incidents(&bob, team).await;
    assert_eq!(incidents[0]["state"], "resolved");
    // A late retry of the old firing notification is discarded: nothing resurrects.
    let r = app.webhook(&key, &fire(0)).await.expect(200);
    assert_eq!(r["ignored"], 1);
    assert_eq!(
        app.alert_by_fingerprint(&bob, "fp").await["status"],
        "resolved"
    );
    assert_eq!(app.incidents(&bob, team).await.len(), 1);
    // An older instance is discarded too.
    app.webhook(&key, &fire(-100)).await.expect(200);
    assert_eq!(app.incidents(&bob, team).await.len(), 1);
    // Archived, then firing with a newer startsAt: fires again, archive cleared, a new incident.
    sqlx::query("UPDATE alerts SET archived_at = 5")
        .execute(&app.core.db.pool)
        .await
        .unwrap();
    app.webhook(&key, &fire(600)).await.expect(200);
    let a = app.alert_by_fingerprint(&bob, "fp").await;
    assert_eq!(a["status"], "firing");
    assert!(a["archived_at"].is_null() && a["resolution_source"].is_null());
    let incidents = app.incidents(&bob, team).await;
    assert_eq!(
        incidents.len(),
        2,
        "one incident per occurrence; the resolved one is not reopened"
    );
    assert_eq!(
        (
            incidents[0]["state"].as_str(),
            incidents[1]["state"].as_str()
        ),
        (Some("triggered"), Some("resolved"))
    );
    // firing -> firing with a newer startsAt while open is a new occurrence too (same group: joins).
    app.webhook(&key, &fire(900)).await.expect(200);
    assert_eq!(app.incidents(&bob, team).await.len(), 2);
    // A resolved alert seen for the first time is stored and opens nothing.
    app.webhook(
        &key,
        &Payload::new("g2").alert("other", "resolved", 0, Some(10), json!({})),
    )
    .await
    .expect(200);
    assert_eq!(
        app.alert_by_fingerprint(&bob, "other").await["status"],
        "resolved"
    );
    assert_eq!(app.incidents(&bob, team).await.len(), 2);
});

both!(
    correlation_by_group_key_severity_high_water_mark_and_cascade,
    |app| {
        let (_, bob, team, key) = setup(&app).await;
        let p = Payload::new("grp").alert(
            "a",
            "firing",
            0,
            None,
            json!({"severity": "warning", "instance": "web-1"}),
        );
        app.webhook(&key, &p).await.expect(200);
        let p = Payload::new("grp").alert(
            "b",
            "firing",
            5,
            None,
            json!({"severity": "critical", "instance": "web-2"}),
        );
        app.webhook(&key, &p).await.expect(200);
        let p = Payload::new("grp").alert(
            "c",
            "firing",
            6,
            None,
            json!({"severity": "info", "instance": "web-3"}),
        );
        app.webhook(&key, &p).await.expect(200);
        let incidents = app.incidents(&bob, team).await;
        assert_eq!(incidents.len(), 1, "one group key, one open incident");
        assert_eq!(incidents[0]["severity"], "critical", "severity only rises");
        // Another group key opens its own incident.
        app.webhook(
            &key,
            &Payload::new("other").alert("d", "firing", 0, None, json!({})),
        )
        .await
        .expect(200);
        assert_eq!(app.incidents(&bob, team).await.len(), 2);
        // Resolving two of three alerts leaves it open; the third resolves it.
        let resolve = |fp: &str| {
            Payload::new("grp").alert(
                fp,
                "resolved",
                if fp == "a" {
                    0
                } else if fp == "b" {
                    5
                } else {
                    6
                },
                Some(60),
                json!({}),
            )
        };
        app.webhook(&key, &resolve("a")).await.expect(200);
        app.webhook(&key, &resolve("b")).await.expect(200);
        let id = incidents[0]["id"].as_i64().unwrap();
        assert_eq!(
            app.get(&format!("/api/incidents/{id}"), &bob)
                .await
                .expect(200)["state"],
            "triggered"
        );
        app.webhook(&key, &resolve("c")).await.expect(200);
        let d = app
            .get(&format!("/api/incidents/{id}"), &bob)
            .await
            .expect(200);
        assert_eq!(d["state"], "resolved");
        assert_eq!(d["severity"], "critical");
        // While it was resolved, the same group key opens a new incident rather than reopening.
        app.webhook(
            &key,
            &Payload::new("grp").alert("a", "firing", 120, None, json!({})),
        )
        .await
        .expect(200);
        assert_eq!(app.incidents(&bob, team).await.len(), 3);
    }
);

both!(truncated_alerts_are_never_resolved_by_omission, |app| {
    let (_, bob, team, key) = setup(&app).await;
    let p = Payload::new("g")
        .alert("x", "firing", 0, None, json!({}))
        .alert("y", "firing", 0, None, json!({}));
    app.webhook(&key, &p).await.expect(200);
    let mut p = Payload::new("g").alert("x", "firing", 0, None, json!({}));
    p.truncated = 1;
    app.webhook(&key, &p).await.expect(200);
    assert_eq!(
        app.alert_by_fingerprint(&bob, "y").await["status"],
        "firing"
    );
    assert_eq!(app.incidents(&bob, team).await[0]["state"], "triggered");
});

/// The key-less path turned on, as `KLAXON_LEGACY_WEBHOOK=true` does.
fn legacy() -> klaxon_core::Config {
    klaxon_core::Config {
        legacy_webhook: true,
        ..test_config()
    }
}

both!(the_legacy_path_is_off_unless_turned_on, |app| {
    let (_, bob, team, _) = setup(&app).await;
    let before = app.incidents(&bob, team).await.len();
    app.post(
        "/api/alertmanager/webhook",
        &Auth::None,
        Payload::new("g")
            .alert("off", "firing", 0, None, json!({}))
            .json(),
    )
    .await
    .expect_error(404, "not_found");
    // Whoever upgrades with an Alertmanager still posting here is told what to do.
    let why = app
        .post("/api/alertmanager/webhook", &Auth::None, json!({}))
        .await
        .expect_error(404, "not_found");
    assert!(why.contains("KLAXON_LEGACY_WEBHOOK"), "{why}");
    assert_eq!(app.incidents(&bob, team).await.len(), before);
    let listed = app.get("/api/alerts", &bob).await.expect(200);
    assert!(
        !listed.to_string().contains("\"off\""),
        "no alert was stored"
    );
});

both_with!(
    the_legacy_path_routes_to_the_oldest_team_and_is_deprecated,
    legacy(),
    |app| {
        let (admin, bob, team, _) = setup(&app).await;
        app.team(&admin, "younger").await;
        let r = app
            .post(
                "/api/alertmanager/webhook",
                &Auth::None,
                Payload::new("g")
                    .alert("l", "firing", 0, None, json!({}))
                    .json(),
            )
            .await;
        assert_eq!(r.headers["deprecation"], "true");
        r.expect(200);
        let alert = app.alert_by_fingerprint(&bob, "l").await;
        assert_eq!(alert["team_id"], team);
    }
);

both!(concurrent_deliveries_open_exactly_one_incident, |app| {
    let (_, bob, team, key) = setup(&app).await;
    let p = Payload::new("storm")
        .alert("s1", "firing", 0, None, json!({}))
        .alert("s2", "firing", 0, None, json!({}));
    let sends = (0..32).map(|_| app.webhook(&key, &p));
    let results = futures::future::join_all(sends).await;
    for r in results {
        assert_eq!(r.status.as_u16(), 200, "{}", r.text);
    }
    let incidents = app.incidents(&bob, team).await;
    assert_eq!(incidents.len(), 1);
    let detail = app
        .get(&format!("/api/incidents/{}", incidents[0]["id"]), &bob)
        .await
        .expect(200);
    let opened = detail["timeline"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["kind"] == "opened")
        .count();
    assert_eq!(opened, 1);
    assert_eq!(detail["alerts"].as_array().unwrap().len(), 2);
});

// Every delivery reads its group as unopened before any commits, so all but one lose the
// insert of the incident and join the one that won, inside their own transaction.
both!(
    concurrent_new_alerts_of_one_group_join_one_incident_paged_once,
    |app| {
        let w = app.paging_world().await;
        let (app, key) = (&app, &w.key);
        let sends = (0..24).map(|i| {
            let p = Payload::new("storm").alert(&format!("n{i}"), "firing", 0, None, json!({}));
            async move { app.webhook(key, &p).await }
        });
        for r in futures::future::join_all(sends).await {
            assert_eq!(r.status.as_u16(), 200, "{}", r.text);
        }
        let incidents = app.incidents(&w.admin, w.team).await;
        assert_eq!(incidents.len(), 1, "{incidents:?}");
        let detail = app
            .detail(&w.admin, incidents[0]["id"].as_i64().unwrap())
            .await;
        assert_eq!(detail["alerts"].as_array().unwrap().len(), 24);
        assert_eq!(timeline_texts(&detail, "opened").len(), 1);
        assert_eq!(timeline_texts(&detail, "paged"), vec!["paging alice"]);
        assert_eq!(app.tick().await.sent, 1);
        assert_eq!(app.ntfy.published().len(), 1);
    }
);

both!(hostile_payloads_get_4xx_or_a_correct_result, |app| {
    let (_, bob, team, key) = setup(&app).await;
    let path = format!("/api/alertmanager/webhook/{key}");
    let ct = [("content-type", "application/json")];
    app.raw(Method::POST, &path, &ct, b"{\"alerts\": [".to_vec())
        .await
        .expect_error(400, "invalid");
    app.raw(Method::POST, &path, &ct, b"{\"alerts\": \"many\"}".to_vec())
        .await
        .expect_error(400, "invalid");
    app.raw(Method::POST, &path, &ct, b"[1,2,3]".to_vec())
        .await
        .expect_error(400, "invalid");
    // An empty array would read as a payload with no alerts: a misconfigured sender must hear so.
    app.raw(Method::POST, &path, &ct, b" []".to_vec())
        .await
        .expect_error(400, "invalid");
    app.raw(
        Method::POST,
        "/api/alertmanager/webhook/short",
        &ct,
        b"{}".to_vec(),
    )
    .await
    .expect_error(401, "unauthorized");
    // Absurd timestamps and huge label sets are ignored, not stored; the good alert still lands.
    let mut huge = serde_json::Map::new();
    for i in 0..500 {
        huge.insert(format!("label{i}"), json!("x".repeat(100)));
    }
    let mut p = Payload::new("g")
        .alert("good", "firing", 0, None, json!({}))
        .alert("huge", "firing", 0, None, serde_json::Value::Object(huge));
    p.alerts.push(json!({"status": "firing", "fingerprint": "future", "startsAt": "99999-01-01T00:00:00Z", "labels": {}}));
    p.alerts.push(
        json!({"status": "firing", "fingerprint": "past", "startsAt": "not a time", "labels": {}}),
    );
    p.alerts.push(
        json!({"status": "exploding", "fingerprint": "weird", "startsAt": "2026-11-22T00:00:00Z"}),
    );
    let r = app.webhook(&key, &p).await.expect(200);
    assert_eq!(
        (r["accepted"].as_i64(), r["ignored"].as_i64()),
        (Some(1), Some(4))
    );
    let all = app.get("/api/alerts?limit=1000", &bob).await.expect(200);
    assert_eq!(all.as_array().unwrap().len(), 1);
    // The sender's link to its graph is kept, for the incident page's "Open in Prometheus".
    assert_eq!(all[0]["generator_url"], "http://prometheus/graph");
    // Over the body limit: 413 in the error shape.
    let big = format!(
        "{{\"alerts\":[],\"pad\":\"{}\"}}",
        "x".repeat(6 * 1024 * 1024)
    );
    app.raw(Method::POST, &path, &ct, big.into_bytes())
        .await
        .expect_error(413, "payload_too_large");
    // More alerts than one payload may carry: refused whole, nothing written.
    let mut p = Payload::new("many");
    for i in 0..10_001 {
        p = p.alert(&format!("m{i}"), "firing", 0, None, json!({}));
    }
    app.webhook(&key, &p).await.expect_error(400, "invalid");
    assert_eq!(app.incidents(&bob, team).await.len(), 1); // NUL characters, which PostgreSQL text cannot hold, still page: they become U+FFFD.
    let p = Payload::new("nul").alert(
        "nul\u{0}name",
        "firing",
        0,
        None,
        json!({"severity": "critical", "zone": "a\u{0}b"}),
    );
    let mut p = p;
    p.alerts[0]["annotations"] = json!({"description": "broken\u{0}text"});
    let r = app.webhook(&key, &p).await.expect(200);
    assert_eq!(r["accepted"], 1);
    let all = app.get("/api/alerts?limit=1000", &bob).await.expect(200);
    let stored = all
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["labels"]["zone"].as_str() == Some("a\u{fffd}b"))
        .expect("the alert with NUL characters landed");
    assert_eq!(stored["annotations"]["description"], "broken\u{fffd}text");
});

both!(ten_thousand_alerts_in_one_payload_all_land, |app| {
    let (_, bob, team, key) = setup(&app).await;
    let mut p = Payload::new("big");
    for i in 0..10_000 {
        p = p.alert(
            &format!("b{i:05}"),
            "firing",
            0,
            None,
            json!({"instance": format!("host-{i}")}),
        );
    }
    let r = app.webhook(&key, &p).await.expect(200);
    assert_eq!(r["accepted"], 10_000);
    let (n,): (i64,) = sqlx::query_as("SELECT COUNT(*) FROM alerts WHERE status = 'firing'")
        .fetch_one(&app.core.db.pool)
        .await
        .unwrap();
    assert_eq!(n, 10_000);
    let incidents = app.incidents(&bob, team).await;
    assert_eq!(incidents.len(), 1, "one group, one incident");
});

both_with!(the_last_sender_wins_on_integration_id, legacy(), |app| {
    let (_, bob, team, first) = setup(&app).await;
    let second = app.integration(&bob, team).await;
    let ids: Vec<i64> = app
        .get(&format!("/api/teams/{team}/integrations"), &bob)
        .await
        .expect(200)
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["id"].as_i64().unwrap())
        .collect();
    let p = Payload::new("g").alert("shared", "firing", 0, None, json!({}));
    app.webhook(&first, &p).await.expect(200);
    let a = app.alert_by_fingerprint(&bob, "shared").await;
    assert_eq!(
        a["integration_id"], ids[1],
        "newest first: ids[1] is the first integration"
    );
    app.webhook(&second, &p).await.expect(200);
    assert_eq!(
        app.alert_by_fingerprint(&bob, "shared").await["integration_id"],
        ids[0]
    );
    // The key-less path names no sender and leaves the attribution as it was.
    app.post("/api/alertmanager/webhook", &Auth::None, p.json())
        .await
        .expect(200);
    assert_eq!(
        app.alert_by_fingerprint(&bob, "shared").await["integration_id"],
        ids[0]
    );
    assert_eq!(app.incidents(&bob, team).await.len(), 1);
});
