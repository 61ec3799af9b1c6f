//! Alertmanager silences made from an incident, against the real Alertmanager behind basic
//! auth: the matchers are the labels the incident's alerts share, nothing is recorded unless
//! Alertmanager took the silence, and expiring it early expires it in Alertmanager.

use crate::common;
use common::alertmanager::{Alertmanager, AM_PASSWORD, AM_USER};
use common::*;
use serde_json::{json, Value};

/// The manual clock moves to the real present: Alertmanager refuses silences that end in
/// its past.
fn clock_to_now(app: &TestApp) {
    app.clock
        .set(time::OffsetDateTime::now_utc().unix_timestamp());
}

async fn integration_id(app: &TestApp, auth: &Auth, team: i64) -> i64 {
    app.get(&format!("/api/teams/{team}/integrations"), auth)
        .await
        .expect(200)[0]["id"]
        .as_i64()
        .unwrap()
}

/// Two alerts of one incident: same alertname and job, different instances.
async fn disk_incident(app: &TestApp, key: &str) -> i64 {
    let payload = Payload::new("disk")
        .alert(
            "d1",
            "firing",
            0,
            None,
            json!({"alertname": "DiskFull", "job": "node", "instance": "db-1"}),
        )
        .alert(
            "d2",
            "firing",
            0,
            None,
            json!({"alertname": "DiskFull", "job": "node", "instance": "db-2"}),
        );
    app.webhook(key, &payload).await.expect(200);
    app.incident_of("disk").await
}

fn count(detail: &Value, kind: &str) -> usize {
    timeline_kinds(detail).iter().filter(|k| *k == kind).count()
}

/// A silence Alertmanager did not take: 502 with a reason saying `why`, and the incident shows
/// no silence and still `silenced` silence entries on its timeline.
async fn refused(app: &TestApp, auth: &Auth, incident: i64, why: &str, silenced: usize) {
    let reason = app
        .post(
            &format!("/api/incidents/{incident}/silence"),
            auth,
            json!({"duration": "1h"}),
        )
        .await
        .expect_error(502, "upstream_failed");
    assert!(reason.contains(why), "{reason}");
    let detail = app.detail(auth, incident).await;
    assert_eq!(detail["silence"], Value::Null);
    assert_eq!(count(&detail, "silenced"), silenced);
}

both!(a_silence_reaches_alertmanager_and_expires_early, |app| {
    let w = app.paging_world().await;
    clock_to_now(&app);
    let incident = disk_incident(&app, &w.key).await;
    let integration = integration_id(&app, &w.admin, w.team).await;
    let silence = format!("/api/incidents/{incident}/silence");
    let settings = format!("/api/teams/{}/integrations/{integration}", w.team);

    // No Alertmanager named yet: the preview says why and a silence is refused.
    let preview = app.get(&silence, &w.bob.1).await.expect(200);
    assert!(preview["unavailable"]
        .as_str()
        .unwrap()
        .contains("no Alertmanager"));
    app.post(&silence, &w.bob.1, json!({"duration": "2h"}))
        .await
        .expect_error(400, "invalid");

    let am = Alertmanager::start_with_basic_auth(&format!(
        "{}/api/alertmanager/webhook/{}",
        app.url, w.key
    ))
    .await;
    // Owners only; bad settings change nothing.
    app.send(
        reqwest::Method::PATCH,
        &settings,
        &w.bob.1,
        Some(json!({"alertmanager_url": am.url})),
    )
    .await
    .expect_error(403, "forbidden");
    for bad in [
        json!({"alertmanager_url": "ftp://am"}),
        json!({"alertmanager_url": format!("http://{AM_USER}:{AM_PASSWORD}@127.0.0.1:9093")}),
        json!({"alertmanager_url": am.url, "alertmanager_auth": {"type": "basic", "username": "a:b", "password": "x"}}),
        json!({"alertmanager_url": am.url, "alertmanager_auth": {"type": "digest"}}),
        json!({"alertmanager_auth": {"type": "bearer", "token": "t"}}),
        json!({"alertmanager_url": am.url, "colour": "red"}),
    ] {
        app.send(
            reqwest::Method::PATCH,
            &settings,
            &w.admin,
            Some(bad.clone()),
        )
        .await
        .expect_error(400, "invalid");
    }
    let i = app
        .send(
            reqwest::Method::PATCH,
            &settings,
            &w.admin,
            Some(json!({"alertmanager_url": format!("{}/", am.url)})),
        )
        .await
        .expect(200);
    assert_eq!(i["alertmanager_url"], json!(am.url));
    assert_eq!(i["alertmanager_auth_set"], false);
    assert_eq!(i["name"], "prometheus", "the name is kept");

    // The matchers are shown before anything is sent.
    let preview = app.get(&silence, &w.bob.1).await.expect(200);
    assert_eq!(preview["unavailable"], Value::Null);
    assert_eq!(
        preview["matchers"],
        json!([{"name": "alertname", "value": "DiskFull"}, {"name": "job", "value": "node"}]),
        "the labels both alerts share; their instances differ"
    );

    // Without credentials Alertmanager answers 401: the error says so and nothing is recorded.
    refused(&app, &w.bob.1, incident, "401", 0).await;

    // With them, a member silences for two hours.
    let i = app
        .send(reqwest::Method::PATCH, &settings, &w.admin, Some(json!({"alertmanager_auth": {"type": "basic", "username": AM_USER, "password": AM_PASSWORD}})))
        .await
        .expect(200);
    assert_eq!(i["alertmanager_auth_set"], true);
    let listed = app
        .get(&format!("/api/teams/{}/integrations", w.team), &w.admin)
        .await
        .expect(200);
    assert!(
        !listed.to_string().contains(AM_PASSWORD),
        "credentials are never shown back"
    );
    for bad in [
        json!({"duration": "4m"}),
        json!({"duration": "31d"}),
        json!({}),
        json!({"duration": "2h", "x": 1}),
    ] {
        app.post(&silence, &w.bob.1, bad)
            .await
            .expect_error(400, "invalid");
    }
    let (_, eve) = app.user(&w.admin, "eve").await;
    app.post(&silence, &eve, json!({"duration": "2h"}))
        .await
        .expect_error(404, "not_found");

    let made = app
        .post(&silence, &w.bob.1, json!({"duration": "2h"}))
        .await
        .expect(200);
    use klaxon_core::clock::Clock;
    assert_eq!(
        made["ends_at"],
        klaxon_domain::Timestamp(app.clock.now() + 7_200).to_rfc3339()
    );
    assert_eq!(made["matchers"], preview["matchers"]);
    let id = made["silence_id"].as_str().unwrap().to_string();
    let in_am = am.silence(&id).await;
    assert_eq!(in_am["status"]["state"], "active", "{in_am}");
    assert_eq!(in_am["createdBy"], "bob");
    // Ours are sorted by name; Alertmanager's order is its own.
    let mut am_matchers = in_am["matchers"].as_array().unwrap().clone();
    am_matchers.sort_by_key(|m| m["name"].as_str().unwrap().to_string());
    let ours: Vec<Value> = made["matchers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| json!({"name": m["name"], "value": m["value"], "isRegex": false, "isEqual": true}))
        .collect();
    assert_eq!(am_matchers, ours);

    let detail = app.detail(&w.alice.1, incident).await;
    assert_eq!(detail["silence"]["silence_id"], json!(id));
    let text = timeline_texts(&detail, "silenced");
    assert_eq!(text.len(), 1);
    assert!(
        text[0].contains(&id) && text[0].contains("alertname=\"DiskFull\""),
        "{text:?}"
    );

    // Expired early: Alertmanager shows it expired, the incident shows none.
    app.delete(&silence, &w.alice.1).await.expect(204);
    assert_eq!(am.silence(&id).await["status"]["state"], "expired");
    let detail = app.detail(&w.alice.1, incident).await;
    assert_eq!(detail["silence"], Value::Null);
    assert_eq!(count(&detail, "unsilenced"), 1);
    app.delete(&silence, &w.alice.1)
        .await
        .expect_error(409, "conflict");

    // Alertmanager down: the reason is shown and nothing is recorded as silenced.
    drop(am);
    refused(&app, &w.bob.1, incident, "could not be reached", 1).await;

    // Clearing the URL clears the credentials too.
    let i = app
        .send(
            reqwest::Method::PATCH,
            &settings,
            &w.admin,
            Some(json!({"alertmanager_url": null})),
        )
        .await
        .expect(200);
    assert_eq!(i["alertmanager_url"], Value::Null);
    assert_eq!(i["alertmanager_auth_set"], false);
});

both!(
    alerts_without_a_shared_alertname_are_never_silenced,
    |app| {
        let w = app.paging_world().await;
        clock_to_now(&app);
        let integration = integration_id(&app, &w.admin, w.team).await;
        let am =
            Alertmanager::start(&format!("{}/api/alertmanager/webhook/{}", app.url, w.key)).await;
        app.send(
            reqwest::Method::PATCH,
            &format!("/api/teams/{}/integrations/{integration}", w.team),
            &w.admin,
            Some(json!({"alertmanager_url": am.url})),
        )
        .await
        .expect(200);
        let payload = Payload::new("mixed")
            .alert(
                "m1",
                "firing",
                0,
                None,
                json!({"alertname": "DiskFull", "job": "node"}),
            )
            .alert(
                "m2",
                "firing",
                0,
                None,
                json!({"alertname": "HighLoad", "job": "node"}),
            );
        app.webhook(&w.key, &payload).await.expect(200);
        let incident = app.incident_of("mixed").await;
        let path = format!("/api/incidents/{incident}/silence");
        let preview = app.get(&path, &w.bob.1).await.expect(200);
        assert!(
            preview["unavailable"]
                .as_str()
                .unwrap()
                .contains("share no alertname"),
            "{preview}"
        );
        let why = app
            .post(&path, &w.bob.1, json!({"duration": "1h"}))
            .await
            .expect_error(400, "invalid");
        assert!(why.contains("share no alertname"), "{why}");
        let listed: Value = am
            .request(reqwest::Method::GET, "/api/v2/silences")
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        assert_eq!(listed, json!([]), "nothing reached Alertmanager");
        assert_eq!(count(&app.detail(&w.bob.1, incident).await, "silenced"), 0);
    }
);
