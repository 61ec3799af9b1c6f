//! Senders set up for PagerDuty's Events API v2 page through Klaxon by their URL and routing
//! key alone: the real Alertmanager's `pagerduty_configs`, and the API's documented answers.

use crate::common::{self, timeline_texts, Auth, TestApp};
use common::alertmanager::{disk_full, eventually, rfc3339_now, Alertmanager};
use reqwest::Method;
use serde_json::{json, Value};

/// An owner, a team and a `pagerduty` integration's key.
async fn pagerduty_team(app: &TestApp) -> (Auth, i64, String) {
    let admin = app.bootstrap().await;
    let team = app.team(&admin, "web").await;
    let created = app
        .post(
            &format!("/api/teams/{team}/integrations"),
            &admin,
            json!({"name": "uptime", "kind": "pagerduty"}),
        )
        .await
        .expect(201);
    assert_eq!(created["kind"], "pagerduty");
    (admin, team, created["key"].as_str().unwrap().to_string())
}

/// An event posted as a sender posts it.
async fn enqueue(app: &TestApp, path: &str, event: &Value) -> (u16, Value) {
    let res = app
        .raw(
            Method::POST,
            path,
            &[("content-type", "application/json")],
            serde_json::to_vec(event).unwrap(),
        )
        .await;
    (res.status.as_u16(), res.body)
}

both!(
    alertmanagers_pagerduty_notifier_opens_and_resolves_one_incident,
    |app| {
        let (admin, team, key) = pagerduty_team(&app).await;
        let am = Alertmanager::start_pagerduty(&format!("{}/v2/enqueue", app.url), &key).await;
        let starts_at = rfc3339_now();
        let alert = |ends_at: Option<String>| disk_full(&starts_at, ends_at);
        am.post_alerts(alert(None)).await;
        let incident = eventually(&am, "a triggered incident", || async {
            let list = app.incidents(&admin, team).await;
            list.into_iter().find(|i| i["state"] == "triggered")
        })
        .await;
        // Alertmanager's summary names the alert; its default severity, error, pages as critical.
        let title = incident["title"].as_str().unwrap();
        assert!(title.contains("DiskFull"), "{title}");
        assert_eq!(incident["severity"], "critical");
        let id = incident["id"].as_i64().unwrap();

        am.post_alerts(alert(Some(rfc3339_now()))).await;
        eventually(&am, "the incident resolved", || async {
            let d = app
                .get(&format!("/api/incidents/{id}"), &admin)
                .await
                .expect(200);
            (d["state"] == "resolved").then_some(d)
        })
        .await;
        assert_eq!(app.incidents(&admin, team).await.len(), 1);
    }
);

both!(the_events_api_answers_as_pagerduty_documents_it, |app| {
    let (admin, team, key) = pagerduty_team(&app).await;
    let detail = |id: i64| {
        let (app, admin) = (&app, &admin);
        async move {
            app.get(&format!("/api/incidents/{id}"), admin)
                .await
                .expect(200)
        }
    };
    // PagerDuty's own trigger example, with this integration's key.
    let mut example: Value = serde_json::from_slice(include_bytes!(
        "../../domain/tests/fixtures/pagerduty-trigger.json"
    ))
    .unwrap();
    example["routing_key"] = json!(key);
    let (status, body) = enqueue(&app, "/v2/enqueue", &example).await;
    assert_eq!(status, 202, "{body}");
    assert_eq!(
        body,
        json!({"status": "success", "message": "Event processed", "dedup_key": "samplekeyhere"})
    );
    let list = app.incidents(&admin, team).await;
    assert_eq!(list.len(), 1);
    assert_eq!(list[0]["title"], "Example alert on host1.example.com");
    assert_eq!(list[0]["severity"], "info");
    let id = list[0]["id"].as_i64().unwrap();

    // The same key again is the same alert; under /api the same endpoint answers.
    let (status, _) = enqueue(&app, "/api/pagerduty/v2/enqueue", &example).await;
    assert_eq!(status, 202);
    assert_eq!(app.incidents(&admin, team).await.len(), 1);

    // Acknowledged by its sender: no person's name, said on the timeline.
    let by_key = |action: &str| json!({"routing_key": key, "dedup_key": "samplekeyhere", "event_action": action});
    assert_eq!(
        enqueue(&app, "/v2/enqueue", &by_key("acknowledge")).await.0,
        202
    );
    let d = detail(id).await;
    assert_eq!(d["state"], "acknowledged");
    assert_eq!(
        timeline_texts(&d, "acknowledged"),
        vec!["acknowledged by its sender (PagerDuty event)"]
    );
    assert_eq!(
        enqueue(&app, "/v2/enqueue", &by_key("resolve")).await.0,
        202
    );
    assert_eq!(detail(id).await["state"], "resolved");
    // Naming an alert no longer firing is accepted and does nothing, as PagerDuty drops it.
    assert_eq!(
        enqueue(&app, "/v2/enqueue", &by_key("acknowledge")).await.0,
        202
    );
    assert_eq!(detail(id).await["state"], "resolved");
    // A trigger after the resolve is a new occurrence: a new incident.
    assert_eq!(enqueue(&app, "/v2/enqueue", &example).await.0, 202);
    assert_eq!(app.incidents(&admin, team).await.len(), 2);

    // Without a key, each trigger is a new alert with a key made for it.
    let no_key = json!({"routing_key": key, "event_action": "trigger",
            "payload": {"summary": "backup failed", "source": "nas", "severity": "warning"}});
    let (_, first) = enqueue(&app, "/v2/enqueue", &no_key).await;
    let (_, second) = enqueue(&app, "/v2/enqueue", &no_key).await;
    assert_ne!(first["dedup_key"], second["dedup_key"]);
    assert_eq!(app.incidents(&admin, team).await.len(), 4);

    // Refused in PagerDuty's shape, and nothing changes.
    let (status, body) = enqueue(
        &app,
        "/v2/enqueue",
        &json!({"routing_key": key, "event_action": "trigger", "payload": {"source": "nas"}}),
    )
    .await;
    assert_eq!(status, 400);
    assert_eq!(body["status"], "invalid event");
    assert_eq!(body["message"], "Event object is invalid");
    assert_eq!(
        body["errors"],
        json!([
            "'payload.summary' is missing",
            "'payload.severity' must be critical, error, warning or info"
        ])
    );
    let stranger = json!({"routing_key": "not-a-key", "dedup_key": "samplekeyhere", "event_action": "resolve"});
    let (status, body) = enqueue(&app, "/v2/enqueue", &stranger).await;
    assert_eq!(status, 400);
    assert_eq!(
        body["errors"],
        json!(["'routing_key' is not the key of a Klaxon integration"])
    );
    let webhook_key = app.integration(&admin, team).await;
    let other_kind =
        json!({"routing_key": webhook_key, "dedup_key": "x", "event_action": "resolve"});
    let (status, body) = enqueue(&app, "/v2/enqueue", &other_kind).await;
    assert_eq!(status, 400);
    assert!(
        body["errors"][0]
            .as_str()
            .unwrap()
            .contains("kind alertmanager"),
        "{body}"
    );
    let mut huge = no_key.clone();
    huge["payload"]["custom_details"] = json!("x".repeat(600 * 1024));
    assert_eq!(enqueue(&app, "/v2/enqueue", &huge).await.0, 413);
    assert_eq!(app.incidents(&admin, team).await.len(), 4);
});

both!(
    change_events_are_kept_beside_the_incidents_that_follow_and_page_no_one,
    |app| {
        let (admin, team, key) = pagerduty_team(&app).await;
        // PagerDuty's own change example, with this integration's key and a time just before now.
        let mut change: Value = serde_json::from_slice(include_bytes!(
            "../../domain/tests/fixtures/pagerduty-change.json"
        ))
        .unwrap();
        change["routing_key"] = json!(key);
        change["payload"]["timestamp"] =
            json!(klaxon_domain::Timestamp(app.core.now() - 600).to_rfc3339());
        let (status, body) = enqueue(&app, "/v2/change/enqueue", &change).await;
        assert_eq!(status, 202, "{body}");
        assert_eq!(
            body,
            json!({"status": "success", "message": "Change event processed"})
        );
        assert!(
            app.incidents(&admin, team).await.is_empty(),
            "a change pages no one"
        );
        // The integration was heard from: its last webhook time is stamped.
        let integrations = app
            .get(&format!("/api/teams/{team}/integrations"), &admin)
            .await
            .expect(200);
        assert_eq!(integrations[0]["status"], "Active", "{integrations}");
        let listed = app
            .get(&format!("/api/teams/{team}/changes"), &admin)
            .await
            .expect(200);
        assert_eq!(
            listed[0]["summary"],
            "Build Success: Increase snapshot create timeout to 30 seconds"
        );
        assert_eq!(listed[0]["link"], "https://acme.pagerduty.dev/build/2");

        // An incident that begins ten minutes after it shows it; one three hours later does not.
        let trigger = |dedup: &str| {
            json!({"routing_key": key, "event_action": "trigger", "dedup_key": dedup,
        "payload": {"summary": format!("{dedup} is down"), "source": "web-1", "severity": "critical"}})
        };
        assert_eq!(
            enqueue(&app, "/v2/enqueue", &trigger("checkout")).await.0,
            202
        );
        let first = app.incidents(&admin, team).await[0]["id"].as_i64().unwrap();
        let d = app.detail(&admin, first).await;
        assert_eq!(d["changes_before"].as_array().unwrap().len(), 1, "{d}");
        assert_eq!(
            d["changes_before"][0]["source"],
            "acme-build-pipeline-tool-default-i-9999"
        );
        app.clock.advance(3 * 3600);
        assert_eq!(
            enqueue(&app, "/v2/enqueue", &trigger("search")).await.0,
            202
        );
        let later = app.incidents(&admin, team).await[0]["id"].as_i64().unwrap();
        assert_ne!(later, first);
        assert!(app.detail(&admin, later).await["changes_before"]
            .as_array()
            .unwrap()
            .is_empty());

        // Refused in PagerDuty's shape, changing nothing; under /api the same endpoint answers.
        let (status, body) = enqueue(
            &app,
            "/api/pagerduty/v2/change/enqueue",
            &json!({"routing_key": key, "payload": {}}),
        )
        .await;
        assert_eq!(status, 400);
        assert_eq!(body["errors"], json!(["'payload.summary' is missing"]));
        let (status, _) = enqueue(
            &app,
            "/v2/change/enqueue",
            &json!({"routing_key": "nope", "payload": {"summary": "s"}}),
        )
        .await;
        assert_eq!(status, 400);
        let listed = app
            .get(&format!("/api/teams/{team}/changes"), &admin)
            .await
            .expect(200);
        assert_eq!(listed.as_array().unwrap().len(), 1);

        // Kept 90 days.
        app.clock.advance(91 * 86_400);
        assert_eq!(app.core.sweep().await.unwrap().changes_forgotten, 1);
        let listed = app
            .get(&format!("/api/teams/{team}/changes"), &admin)
            .await
            .expect(200);
        assert!(listed.as_array().unwrap().is_empty());
    }
);
