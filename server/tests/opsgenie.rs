//! Senders set up for Opsgenie's Alert API page through Klaxon by their API URL and key alone:
//! the real Alertmanager's `opsgenie_configs`, and the API's documented answers.

use crate::common::{self, timeline_texts, Auth, TestApp};
use common::alertmanager::{disk_full, eventually, rfc3339_now, Alertmanager};
use reqwest::Method;
use serde_json::{json, Value};

/// An owner, a team and an `opsgenie` integration's key.
async fn opsgenie_team(app: &TestApp) -> (Auth, i64, String) {
    let admin = app.bootstrap().await;
    let team = app.team(&admin, "web").await;
    let created = app
        .post(
            &format!("/api/teams/{team}/integrations"),
            &admin,
            json!({"name": "uptime", "kind": "opsgenie"}),
        )
        .await
        .expect(201);
    assert_eq!(created["kind"], "opsgenie");
    (admin, team, created["key"].as_str().unwrap().to_string())
}

/// A request as an Opsgenie sender makes it, with `key` as its GenieKey.
async fn send(app: &TestApp, key: &str, path: &str, body: Option<&Value>) -> (u16, Value) {
    let auth = format!("GenieKey {key}");
    let res = app
        .raw(
            Method::POST,
            path,
            &[
                ("content-type", "application/json"),
                ("authorization", &auth),
            ],
            body.map(|b| serde_json::to_vec(b).unwrap())
                .unwrap_or_default(),
        )
        .await;
    (res.status.as_u16(), res.body)
}

both!(
    alertmanagers_opsgenie_notifier_opens_and_closes_one_incident,
    |app| {
        let (admin, team, key) = opsgenie_team(&app).await;
        let am = Alertmanager::start_opsgenie(&format!("{}/", app.url), &key).await;
        let starts_at = rfc3339_now();
        let alert = |ends_at: Option<String>| disk_full(&starts_at, ends_at);
        am.post_alerts(alert(None)).await;
        let incident = eventually(&am, "a triggered incident", || async {
            let list = app.incidents(&admin, team).await;
            list.into_iter().find(|i| i["state"] == "triggered")
        })
        .await;
        // Alertmanager's message names the alert; its common labels arrive as details.
        let title = incident["title"].as_str().unwrap();
        assert!(title.contains("DiskFull"), "{title}");
        assert_eq!(incident["severity"], "warning", "Opsgenie's default P3");
        let id = incident["id"].as_i64().unwrap();
        let d = app
            .get(&format!("/api/incidents/{id}"), &admin)
            .await
            .expect(200);
        assert_eq!(d["alerts"][0]["labels"]["instance"], "db-1:9100", "{d}");

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

both!(the_alert_api_answers_as_opsgenie_documents_it, |app| {
    let (admin, team, key) = opsgenie_team(&app).await;
    let detail = |id: i64| {
        let (app, admin) = (&app, &admin);
        async move {
            app.get(&format!("/api/incidents/{id}"), admin)
                .await
                .expect(200)
        }
    };
    // Opsgenie's own create example.
    let example: Value = serde_json::from_slice(include_bytes!(
        "../../domain/tests/fixtures/opsgenie-create.json"
    ))
    .unwrap();
    let (status, body) = send(&app, &key, "/v2/alerts", Some(&example)).await;
    assert_eq!(status, 202, "{body}");
    assert_eq!(body["result"], "Request will be processed");
    assert_eq!(body["requestId"].as_str().unwrap().len(), 36);
    assert!(body["took"].is_number());
    let list = app.incidents(&admin, team).await;
    assert_eq!(list.len(), 1);
    assert_eq!(list[0]["severity"], "critical");
    let id = list[0]["id"].as_i64().unwrap();
    assert!(list[0]["title"]
        .as_str()
        .unwrap()
        .starts_with("An example alert message"));

    // The same alias again is the same alert; under /api the same endpoint answers.
    let (status, _) = send(&app, &key, "/api/opsgenie/v2/alerts", Some(&example)).await;
    assert_eq!(status, 202);
    assert_eq!(app.incidents(&admin, team).await.len(), 1);

    // Acknowledged by its sender, by alias: no person's name, said on the timeline.
    let alias = "Life%20is%20too%20short%20for%20no%20alias";
    let ack = format!("/v2/alerts/{alias}/acknowledge?identifierType=alias");
    assert_eq!(send(&app, &key, &ack, None).await.0, 202);
    let d = detail(id).await;
    assert_eq!(d["state"], "acknowledged");
    assert_eq!(
        timeline_texts(&d, "acknowledged"),
        vec!["acknowledged by its sender (Opsgenie event)"]
    );
    // Closed by id (Klaxon's id of the alert is its alias), with a body as Alertmanager sends.
    let close = format!("/api/opsgenie/v2/alerts/{alias}/close");
    let (status, _) = send(&app, &key, &close, Some(&json!({"source": "am"}))).await;
    assert_eq!(status, 202);
    assert_eq!(detail(id).await["state"], "resolved");
    // Naming an alert no longer open is accepted and does nothing.
    assert_eq!(send(&app, &key, &ack, None).await.0, 202);
    assert_eq!(detail(id).await["state"], "resolved");

    // Without an alias, each create is a new alert, closed by its request id.
    let plain = json!({"message": "backup failed", "priority": "P4"});
    let (_, first) = send(&app, &key, "/v2/alerts", Some(&plain)).await;
    let (_, second) = send(&app, &key, "/v2/alerts", Some(&plain)).await;
    assert_ne!(first["requestId"], second["requestId"]);
    assert_eq!(app.incidents(&admin, team).await.len(), 3);
    let close = format!("/v2/alerts/{}/close", first["requestId"].as_str().unwrap());
    assert_eq!(send(&app, &key, &close, None).await.0, 202);
    let open = app.incidents(&admin, team).await;
    let open: Vec<_> = open.iter().filter(|i| i["state"] != "resolved").collect();
    assert_eq!(open.len(), 1);
    assert_eq!(open[0]["severity"], "info");

    // Refused in Opsgenie's shapes, and nothing changes.
    let (status, body) = send(&app, &key, "/v2/alerts", Some(&json!({"priority": "P7"}))).await;
    assert_eq!(status, 422, "{body}");
    assert_eq!(
        body["message"],
        "Request body is not processable. Please check the errors."
    );
    assert_eq!(body["errors"]["message"], "Message can not be empty.");
    assert!(body["errors"]["priority"].is_string(), "{body}");
    let res = app
        .raw(
            Method::POST,
            "/v2/alerts",
            &[("authorization", &format!("GenieKey {key}"))],
            b"{not json".to_vec(),
        )
        .await;
    assert_eq!(res.status.as_u16(), 400);
    assert!(res.body["requestId"].is_string());
    let tiny = format!("/v2/alerts/{alias}/close?identifierType=tiny");
    assert_eq!(send(&app, &key, &tiny, None).await.0, 422);
    let (status, body) = send(&app, "not-a-key", "/v2/alerts", Some(&plain)).await;
    assert_eq!(status, 401);
    assert!(body["message"]
        .as_str()
        .unwrap()
        .starts_with("Could not authenticate"));
    let res = app
        .raw(
            Method::POST,
            "/v2/alerts",
            &[("content-type", "application/json")],
            serde_json::to_vec(&plain).unwrap(),
        )
        .await;
    assert_eq!(res.status.as_u16(), 401, "no key");
    let webhook_key = app.integration(&admin, team).await;
    let (status, body) = send(&app, &webhook_key, "/v2/alerts", Some(&plain)).await;
    assert_eq!(status, 403);
    assert!(
        body["message"]
            .as_str()
            .unwrap()
            .contains("kind alertmanager"),
        "{body}"
    );
    // Opsgenie's older way of passing the key, as a query parameter.
    let res = app
        .raw(
            Method::POST,
            &format!("/v2/alerts?apiKey={key}"),
            &[("content-type", "application/json")],
            serde_json::to_vec(&json!({"message": "by query", "alias": "q"})).unwrap(),
        )
        .await;
    assert_eq!(res.status.as_u16(), 202);
    let mut huge = plain.clone();
    huge["description"] = json!("x".repeat(600 * 1024));
    assert_eq!(send(&app, &key, "/v2/alerts", Some(&huge)).await.0, 413);
    assert_eq!(app.incidents(&admin, team).await.len(), 4);
});
