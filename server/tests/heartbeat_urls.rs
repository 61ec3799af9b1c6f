//! Dead man's switches fed by pings to a heartbeat URL (cron jobs, backups): the URL answered
//! once, a ping a heartbeat, `/start` a run shown until it ends, `/fail` a death at once with
//! what the job said; the switch rules (timeout, dormant, one incident, recovery) as for alerts.

use crate::common;
use common::*;
use reqwest::Method;
use serde_json::{json, Value};

async fn switches(app: &TestApp, auth: &Auth, team: i64) -> Vec<Value> {
    let all = app
        .get(&format!("/api/teams/{team}/deadman/switches"), auth)
        .await
        .expect(200);
    all.as_array().unwrap().clone()
}

/// A ping as curl sends it: the path of the URL, with `method` and `body`.
async fn ping(app: &TestApp, url: &str, method: Method, body: &str) -> u16 {
    let path = &url[url.find("/api/heartbeat/").expect("a heartbeat URL")..];
    app.raw(method, path, &[], body.as_bytes().to_vec())
        .await
        .status
        .as_u16()
}

/// The title of `incident`: the switch's name and what its alert says.
async fn title(app: &TestApp, auth: &Auth, incident: i64) -> String {
    let d = app.detail(auth, incident).await;
    d["title"].as_str().unwrap().to_string()
}

both!(
    a_job_pings_its_url_and_its_silence_or_failure_pages,
    |app| {
        let admin = app.bootstrap().await;
        let team = app.team(&admin, "ops").await;
        let path = format!("/api/teams/{team}/deadman/switches");
        let made = app
            .post(
                &path,
                &admin,
                json!({"name": "Nightly backup", "pings": true, "timeout": "1h"}),
            )
            .await
            .expect(201);
        let url = made["ping_url"].as_str().unwrap().to_string();
        let public = &app.core.config.public_url;
        assert!(
            url.starts_with(&format!("{public}/api/heartbeat/")),
            "{url}"
        );
        assert_eq!(made["pings"], true);
        assert_eq!(made["matcher"], "");
        assert_eq!(made["status"], "Dormant");
        // The URL is answered once: the list never shows it.
        let listed = &switches(&app, &admin, team).await[0];
        assert!(listed.get("ping_url").is_none(), "{listed}");

        // A run begins and succeeds: shown while it runs, then a heartbeat.
        assert_eq!(
            ping(&app, &format!("{url}/start"), Method::GET, "").await,
            200
        );
        assert!(switches(&app, &admin, team).await[0]["running_since"].is_string());
        assert_eq!(ping(&app, &url, Method::POST, "").await, 200);
        let s = &switches(&app, &admin, team).await[0];
        assert_eq!(s["status"], "Healthy");
        assert!(s["running_since"].is_null());
        assert!(s["last_heartbeat_at"].is_string());

        // An hour of silence is a death: one incident, paged like any other.
        app.clock.advance(3600);
        assert_eq!(app.core.sweep().await.unwrap().deadman.opened, 1);
        assert_eq!(
            app.core.sweep().await.unwrap().deadman.opened,
            0,
            "one incident"
        );
        let incident = app.incidents(&admin, team).await[0]["id"].as_i64().unwrap();
        assert_eq!(
            title(&app, &admin, incident).await,
            "Nightly backup: no heartbeat for 1h"
        );
        // The next ping is the heartbeats' return: resolved.
        assert_eq!(ping(&app, &url, Method::GET, "").await, 200);
        assert_eq!(app.core.sweep().await.unwrap().deadman.recovered, 1);
        assert_eq!(app.detail(&admin, incident).await["state"], "resolved");

        // A failure is a death at once, with what the job said.
        app.clock.advance(60);
        assert_eq!(
            ping(
                &app,
                &format!("{url}/fail"),
                Method::POST,
                "pg_dump: disk full\n"
            )
            .await,
            200
        );
        let s = &switches(&app, &admin, team).await[0];
        assert_eq!(s["status"], "Dead");
        assert_eq!(s["failure"], "pg_dump: disk full");
        assert_eq!(app.core.sweep().await.unwrap().deadman.opened, 1);
        let failed = app.incidents(&admin, team).await[0]["id"].as_i64().unwrap();
        assert_ne!(failed, incident);
        assert_eq!(
            title(&app, &admin, failed).await,
            "Nightly backup: the job reported a failure: pg_dump: disk full"
        );
        assert_eq!(ping(&app, &url, Method::GET, "").await, 200);
        assert_eq!(app.core.sweep().await.unwrap().deadman.recovered, 1);
        assert!(switches(&app, &admin, team).await[0]["failure"].is_null());

        // An unknown key changes nothing.
        assert_eq!(
            ping(&app, "/api/heartbeat/nope", Method::GET, "").await,
            404
        );
        let huge = "x".repeat(200 * 1024);
        assert_eq!(
            ping(&app, &format!("{url}/fail"), Method::POST, &huge).await,
            413
        );
        assert_eq!(switches(&app, &admin, team).await[0]["status"], "Healthy");
    }
);

both!(a_switch_is_fed_by_alerts_or_by_pings_never_both, |app| {
    let admin = app.bootstrap().await;
    let team = app.team(&admin, "ops").await;
    let path = format!("/api/teams/{team}/deadman/switches");
    let both =
        json!({"name": "x", "pings": true, "matcher": "{alertname=\"Watchdog\"}", "timeout": "1h"});
    let why = app
        .post(&path, &admin, both)
        .await
        .expect_error(400, "invalid");
    assert!(why.contains("no matcher"), "{why}");
    let neither = json!({"name": "x", "timeout": "1h"});
    app.post(&path, &admin, neither)
        .await
        .expect_error(400, "invalid");

    // Turned to alerts, the URL is forgotten; turned back to pings, a new one is answered.
    let made = app
        .post(
            &path,
            &admin,
            json!({"name": "cron", "pings": true, "timeout": "1h"}),
        )
        .await
        .expect(201);
    let (id, url) = (
        made["id"].as_i64().unwrap(),
        made["ping_url"].as_str().unwrap().to_string(),
    );
    let one = format!("{path}/{id}");
    let renamed = app
        .put(
            &one,
            &admin,
            json!({"name": "cron job", "pings": true, "timeout": "2h"}),
        )
        .await
        .expect(200);
    assert!(
        renamed.get("ping_url").is_none(),
        "the same URL stays: {renamed}"
    );
    assert_eq!(ping(&app, &url, Method::GET, "").await, 200);
    let to_alerts = app
        .put(
            &one,
            &admin,
            json!({"name": "cron job", "matcher": "{alertname=\"Cron\"}", "timeout": "2h"}),
        )
        .await
        .expect(200);
    assert_eq!(to_alerts["pings"], false);
    assert_eq!(
        to_alerts["status"], "Dormant",
        "the pings' heartbeats are forgotten"
    );
    assert_eq!(ping(&app, &url, Method::GET, "").await, 404);
    let back = app
        .put(
            &one,
            &admin,
            json!({"name": "cron job", "pings": true, "timeout": "2h"}),
        )
        .await
        .expect(200);
    let new_url = back["ping_url"].as_str().unwrap();
    assert_ne!(new_url, url);
    assert_eq!(ping(&app, new_url, Method::GET, "").await, 200);
});
