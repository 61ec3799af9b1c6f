//! Dead man's switches: the switch collection and its checks, heartbeats through normal intake,
//! the death rule's edges (the sweeper and the list agree), per-cluster sources, removal, and
//! seeding from the environment once per install. Time moves on a manual clock.

use crate::common;
use common::*;
use klaxon_core::Config;
use klaxon_domain::alerting::Severity;
use klaxon_domain::deadman::SwitchSpec;
use klaxon_domain::Duration;
use serde_json::{json, Value};

const WATCHDOG: &str = r#"{alertname="Watchdog"}"#;

fn switches_path(team: i64) -> String {
    format!("/api/teams/{team}/deadman/switches")
}

async fn create(app: &TestApp, auth: &Auth, team: i64, body: Value) -> Value {
    app.post(&switches_path(team), auth, body).await.expect(201)
}

async fn list(app: &TestApp, auth: &Auth, team: i64) -> Vec<Value> {
    app.get(&switches_path(team), auth)
        .await
        .expect(200)
        .as_array()
        .unwrap()
        .clone()
}

async fn one(app: &TestApp, auth: &Auth, team: i64) -> Value {
    let all = list(app, auth, team).await;
    assert_eq!(all.len(), 1, "{all:?}");
    all[0].clone()
}

/// A Watchdog heartbeat as Alertmanager repeats it: same fingerprint and start, re-sent.
async fn beat(app: &TestApp, key: &str, cluster: Option<&str>) {
    let mut labels = json!({"alertname": "Watchdog", "severity": "none"});
    let fingerprint = match cluster {
        Some(c) => {
            labels["cluster"] = json!(c);
            format!("watchdog-{c}")
        }
        None => "watchdog".to_string(),
    };
    let payload = Payload::new(&format!("{{}}:{{alertname=\"Watchdog\"}}/{fingerprint}")).alert(
        &fingerprint,
        "firing",
        0,
        None,
        labels,
    );
    let r = app.webhook(key, &payload).await.expect(200);
    assert_eq!(r["accepted"], 1);
}

fn ts(offset: i64) -> String {
    klaxon_domain::Timestamp(T0 + offset).to_rfc3339()
}

both!(owners_manage_switches_members_read_them, |app| {
    let w = app.paging_world().await;
    let (owner, member) = (&w.admin, &w.bob.1);
    let created = create(
        &app,
        owner,
        w.team,
        json!({"name": "Watchdog", "matcher": WATCHDOG, "timeout": "10m", "severity": "warning"}),
    )
    .await;
    let id = created["id"].as_i64().unwrap();
    assert_eq!(created["name"], "Watchdog");
    assert_eq!(created["matcher"], WATCHDOG);
    assert_eq!(created["timeout"], "10m");
    assert_eq!(created["severity"], "warning");
    assert_eq!(created["status"], "Dormant", "never heard: Dormant");
    assert_eq!(created["last_heartbeat_at"], Value::Null);
    assert_eq!(created["last_incident"], Value::Null);
    assert_eq!(created["clusters"], json!([]));

    // Members read; only owners change.
    assert_eq!(list(&app, member, w.team).await.len(), 1);
    let body = json!({"name": "Other", "matcher": WATCHDOG, "timeout": "5m"});
    app.post(&switches_path(w.team), member, body.clone())
        .await
        .expect_error(403, "forbidden");
    app.put(
        &format!("{}/{id}", switches_path(w.team)),
        member,
        body.clone(),
    )
    .await
    .expect_error(403, "forbidden");
    app.delete(&format!("{}/{id}", switches_path(w.team)), member)
        .await
        .expect_error(403, "forbidden");
    // Outside the team the switches do not exist.
    let (_, stranger) = app.user(owner, "mallory").await;
    app.get(&switches_path(w.team), &stranger)
        .await
        .expect_error(404, "not_found");

    // Update in place keeps the id; severity defaults to critical.
    let updated = app
        .put(
            &format!("{}/{id}", switches_path(w.team)),
            owner,
            json!({"name": "Pipeline", "matcher": r#"{alertname="Watchdog", cluster=~"prod-.*"}"#, "timeout": "1h30m"}),
        )
        .await
        .expect(200);
    assert_eq!(updated["id"], id);
    assert_eq!(updated["name"], "Pipeline");
    assert_eq!(updated["timeout"], "1h30m");
    assert_eq!(updated["severity"], "critical");
    assert_eq!(one(&app, owner, w.team).await["name"], "Pipeline");

    // Names are unique in a team.
    create(
        &app,
        owner,
        w.team,
        json!({"name": "Second", "matcher": WATCHDOG, "timeout": "5m"}),
    )
    .await;
    let m = app
        .post(
            &switches_path(w.team),
            owner,
            json!({"name": "Pipeline", "matcher": WATCHDOG, "timeout": "5m"}),
        )
        .await
        .expect_error(409, "conflict");
    assert!(m.contains("Pipeline"), "{m}");

    app.delete(&format!("{}/{id}", switches_path(w.team)), owner)
        .await
        .expect(204);
    app.delete(&format!("{}/{id}", switches_path(w.team)), owner)
        .await
        .expect_error(404, "not_found");
    app.put(&format!("{}/{id}", switches_path(w.team)), owner, body)
        .await
        .expect_error(404, "not_found");
    let left = list(&app, owner, w.team).await;
    assert_eq!(left.len(), 1);
    assert_eq!(left[0]["name"], "Second");
});

both!(bad_switches_are_refused_and_change_nothing, |app| {
    let w = app.paging_world().await;
    let owner = &w.admin;
    let existing = create(
        &app,
        owner,
        w.team,
        json!({"name": "Watchdog", "matcher": WATCHDOG, "timeout": "10m"}),
    )
    .await;
    let path = format!("{}/{}", switches_path(w.team), existing["id"]);
    let long = format!("{{alertname=\"{}\"}}", "a".repeat(1000));
    let cases = [
        (
            json!({"name": "x", "matcher": r#"{cluster="prod"}"#, "timeout": "10m"}),
            "alertname",
        ),
        (
            json!({"name": "x", "matcher": r#"{alertname!="Watchdog"}"#, "timeout": "10m"}),
            "alertname",
        ),
        (
            json!({"name": "x", "matcher": r#"{alertname=~"("}"#, "timeout": "10m"}),
            "matcher",
        ),
        (
            json!({"name": "x", "matcher": r#"{alertname="a"} or vector(1)"#, "timeout": "10m"}),
            "matcher",
        ),
        (
            json!({"name": "x", "matcher": "Watchdog", "timeout": "10m"}),
            "matcher",
        ),
        (
            json!({"name": "x", "matcher": "", "timeout": "10m"}),
            "matcher",
        ),
        (
            json!({"name": "x", "matcher": long, "timeout": "10m"}),
            "matcher",
        ),
        (
            json!({"name": "x", "matcher": WATCHDOG, "timeout": "30s"}),
            "timeout",
        ),
        (
            json!({"name": "x", "matcher": WATCHDOG, "timeout": "8d"}),
            "timeout",
        ),
        (
            json!({"name": "x", "matcher": WATCHDOG, "timeout": "soon"}),
            "timeout",
        ),
        (
            json!({"name": "x", "matcher": WATCHDOG, "timeout": 600}),
            "timeout",
        ),
        (
            json!({"name": "x", "matcher": WATCHDOG, "timeout": "10m", "severity": "page-me"}),
            "severity",
        ),
        (
            json!({"name": "  ", "matcher": WATCHDOG, "timeout": "10m"}),
            "name",
        ),
        (json!({"name": "x", "matcher": WATCHDOG}), "timeout"),
        (
            json!({"name": "x", "matcher": WATCHDOG, "timeout": "10m", "cluster": "x"}),
            "cluster",
        ),
    ];
    for (body, names) in cases {
        let m = app
            .post(&switches_path(w.team), owner, body.clone())
            .await
            .expect_error(400, "invalid");
        assert!(m.contains(names), "POST {body}: {m}");
        let m = app
            .put(&path, owner, body.clone())
            .await
            .expect_error(400, "invalid");
        assert!(m.contains(names), "PUT {body}: {m}");
    }
    let Auth::Key(k) = owner else { unreachable!() };
    let bearer = format!("Bearer {k}");
    app.raw(
        reqwest::Method::POST,
        &switches_path(w.team),
        &[
            ("authorization", &bearer),
            ("content-type", "application/json"),
        ],
        b"{not json".to_vec(),
    )
    .await
    .expect_error(400, "invalid");
    let after = one(&app, owner, w.team).await;
    assert_eq!(after, existing, "nothing changed");
    // A team has at most 50 switches.
    for i in 1..50 {
        create(
            &app,
            owner,
            w.team,
            json!({"name": format!("s{i}"), "matcher": WATCHDOG, "timeout": "10m"}),
        )
        .await;
    }
    let m = app
        .post(
            &switches_path(w.team),
            owner,
            json!({"name": "s50", "matcher": WATCHDOG, "timeout": "10m"}),
        )
        .await
        .expect_error(400, "invalid");
    assert!(m.contains("50"), "{m}");
});

both!(
    a_silent_heartbeat_opens_one_incident_and_its_return_resolves_it,
    |app| {
        let w = app.paging_world().await;
        let owner = &w.admin;
        let sw = create(&app, owner, w.team, json!({"name": "Watchdog", "matcher": WATCHDOG, "timeout": "10m", "severity": "critical"})).await;
        let id = sw["id"].as_i64().unwrap();

        // The heartbeat lands through normal intake, is stored, and pages nobody.
        beat(&app, &w.key, None).await;
        let s = one(&app, owner, w.team).await;
        assert_eq!(s["status"], "Healthy");
        assert_eq!(s["last_heartbeat_at"], ts(0));
        assert!(
            app.incidents(owner, w.team).await.is_empty(),
            "a heartbeat opens no incident"
        );
        assert_eq!(
            app.alert_by_fingerprint(owner, "watchdog").await["status"],
            "firing"
        );
        app.tick().await;
        assert!(
            app.ntfy.published().is_empty(),
            "nobody paged for a heartbeat"
        );

        // One second short of the timeout: alive, and the sweeper agrees with the list.
        app.clock.advance(599);
        assert_eq!(one(&app, owner, w.team).await["status"], "Healthy");
        assert_eq!(app.core.sweep().await.unwrap().deadman.opened, 0);
        // Exactly at the timeout: dead, in the list and to the sweeper.
        app.clock.advance(1);
        assert_eq!(one(&app, owner, w.team).await["status"], "Dead");
        assert_eq!(app.core.sweep().await.unwrap().deadman.opened, 1);
        let incidents = app.incidents(owner, w.team).await;
        assert_eq!(incidents.len(), 1);
        let inc = &incidents[0];
        let incident = inc["id"].as_i64().unwrap();
        assert_eq!(inc["group_key"], format!("deadman/{id}"));
        assert_eq!(inc["severity"], "critical");
        assert_eq!(inc["state"], "triggered");
        assert_eq!(inc["title"], "Watchdog: no heartbeat for 10m");
        assert_eq!(inc["assignee_id"], w.alice.0, "assigned to today's on-call");
        let s = one(&app, owner, w.team).await;
        assert_eq!(s["last_incident"]["id"], incident);
        assert_eq!(s["last_incident"]["state"], "triggered");

        // Paged like any other incident.
        app.tick().await;
        let pages = app.ntfy.take();
        assert_eq!(pages.len(), 1);
        assert_eq!(pages[0].topic, "alice-pager");
        assert!(pages[0].title.contains("Watchdog"), "{}", pages[0].title);

        // Later sweeps of the same silence open nothing more.
        app.clock.advance(3600);
        assert_eq!(app.core.sweep().await.unwrap().deadman.opened, 0);
        assert_eq!(app.incidents(owner, w.team).await.len(), 1);

        // Heartbeats return: the timeline says so and the incident resolves (with its all-clear).
        beat(&app, &w.key, None).await;
        assert_eq!(one(&app, owner, w.team).await["status"], "Healthy");
        assert_eq!(app.core.sweep().await.unwrap().deadman.recovered, 1);
        let d = app.detail(owner, incident).await;
        assert_eq!(d["state"], "resolved");
        let back = timeline_texts(&d, "alert_resolved");
        assert_eq!(back.len(), 1, "{back:?}");
        assert!(
            back[0].contains("heartbeats of Watchdog returned"),
            "{back:?}"
        );
        assert_eq!(timeline_texts(&d, "resolved"), ["the heartbeats returned"]);
        app.tick().await;
        let clear = app.ntfy.take();
        assert_eq!(clear.len(), 1, "one all-clear");
        let s = one(&app, owner, w.team).await;
        assert_eq!(s["last_incident"]["state"], "resolved");

        // Silent again: a new incident for the new silence.
        app.clock.advance(600);
        assert_eq!(app.core.sweep().await.unwrap().deadman.opened, 1);
        let incidents = app.incidents(owner, w.team).await;
        assert_eq!(incidents.len(), 2);
        assert_ne!(incidents[0]["id"], incident);
    }
);

both!(each_cluster_is_its_own_source, |app| {
    let w = app.paging_world().await;
    let owner = &w.admin;
    let sw = create(
        &app,
        owner,
        w.team,
        json!({"name": "Watchdog", "matcher": WATCHDOG, "timeout": "10m"}),
    )
    .await;
    let id = sw["id"].as_i64().unwrap();
    beat(&app, &w.key, Some("prod-eu")).await;
    let s = one(&app, owner, w.team).await;
    assert_eq!(s["clusters"], json!([]), "one source: no breakdown");
    beat(&app, &w.key, Some("prod-us")).await;
    let s = one(&app, owner, w.team).await;
    assert_eq!(
        s["clusters"],
        json!([
            {"cluster": "prod-eu", "status": "Healthy", "last_heartbeat_at": ts(0)},
            {"cluster": "prod-us", "status": "Healthy", "last_heartbeat_at": ts(0)},
        ])
    );

    // prod-eu keeps beating, prod-us falls silent: the live cluster does not hide the dead one.
    app.clock.advance(300);
    beat(&app, &w.key, Some("prod-eu")).await;
    app.clock.advance(300);
    beat(&app, &w.key, Some("prod-eu")).await;
    let s = one(&app, owner, w.team).await;
    assert_eq!(s["status"], "Dead");
    assert_eq!(s["last_heartbeat_at"], ts(600));
    assert_eq!(s["clusters"][0]["status"], "Healthy");
    assert_eq!(s["clusters"][1]["status"], "Dead");
    assert_eq!(app.core.sweep().await.unwrap().deadman.opened, 1);
    let incidents = app.incidents(owner, w.team).await;
    assert_eq!(incidents.len(), 1);
    assert_eq!(incidents[0]["group_key"], format!("deadman/{id}/prod-us"));
    assert_eq!(
        incidents[0]["title"],
        "Watchdog: no heartbeat from prod-us for 10m"
    );

    // A new cluster appearing is one more healthy source; it opens nothing.
    beat(&app, &w.key, Some("prod-ap")).await;
    let s = one(&app, owner, w.team).await;
    assert_eq!(s["clusters"].as_array().unwrap().len(), 3);
    assert_eq!(s["clusters"][0]["cluster"], "prod-ap");
    assert_eq!(s["clusters"][0]["status"], "Healthy");
    let r = app.core.sweep().await.unwrap().deadman;
    assert_eq!((r.opened, r.recovered), (0, 0));

    // prod-us resumes: its incident resolves; the switch is healthy again.
    beat(&app, &w.key, Some("prod-us")).await;
    assert_eq!(one(&app, owner, w.team).await["status"], "Healthy");
    assert_eq!(app.core.sweep().await.unwrap().deadman.recovered, 1);
    assert_eq!(app.incidents(owner, w.team).await[0]["state"], "resolved");
});

both!(
    only_matching_firing_alerts_of_the_team_are_heartbeats,
    |app| {
        let w = app.paging_world().await;
        let owner = &w.admin;
        create(&app, owner, w.team, json!({"name": "Watchdog", "matcher": r#"{alertname="Watchdog", env=~"prod|stage"}"#, "timeout": "10m"})).await;
        // Another alert name, a non-matching label and a resolved Watchdog are not heartbeats.
        let payload = Payload::new("g")
            .alert("other", "firing", 0, None, json!({"alertname": "DiskFull"}))
            .alert(
                "dev",
                "firing",
                0,
                None,
                json!({"alertname": "Watchdog", "env": "dev"}),
            )
            .alert(
                "old",
                "resolved",
                -600,
                Some(-60),
                json!({"alertname": "Watchdog", "env": "prod"}),
            );
        app.webhook(&w.key, &payload).await.expect(200);
        assert_eq!(one(&app, owner, w.team).await["status"], "Dormant");
        // Ordinary alerts still open incidents.
        assert_eq!(app.incidents(owner, w.team).await.len(), 1);
        // The same heartbeat sent to another team does not feed this team's switch.
        let other = app.team(owner, "search").await;
        let other_key = app.integration(owner, other).await;
        let hb = Payload::new("hb").alert(
            "hb",
            "firing",
            0,
            None,
            json!({"alertname": "Watchdog", "env": "prod"}),
        );
        app.webhook(&other_key, &hb).await.expect(200);
        assert_eq!(one(&app, owner, w.team).await["status"], "Dormant");
        app.webhook(&w.key, &hb).await.expect(200);
        assert_eq!(one(&app, owner, w.team).await["status"], "Healthy");
        // A switch that has never heard a heartbeat never opens an incident.
        create(
            &app,
            owner,
            w.team,
            json!({"name": "Quiet", "matcher": r#"{alertname="NeverSent"}"#, "timeout": "1m"}),
        )
        .await;
        app.clock.advance(86_400);
        assert_eq!(
            app.core.sweep().await.unwrap().deadman.opened,
            1,
            "only Watchdog died"
        );
    }
);

both!(
    removing_a_switch_stops_watching_and_leaves_its_incident_open,
    |app| {
        let w = app.paging_world().await;
        let owner = &w.admin;
        let sw = create(
            &app,
            owner,
            w.team,
            json!({"name": "Watchdog", "matcher": WATCHDOG, "timeout": "10m"}),
        )
        .await;
        beat(&app, &w.key, None).await;
        app.clock.advance(600);
        assert_eq!(app.core.sweep().await.unwrap().deadman.opened, 1);
        let incident = app.incidents(owner, w.team).await[0]["id"]
            .as_i64()
            .unwrap();
        app.delete(&format!("{}/{}", switches_path(w.team), sw["id"]), owner)
            .await
            .expect(204);
        // A heartbeat now is only an alert: it neither resolves the incident nor opens one.
        beat(&app, &w.key, None).await;
        let r = app.core.sweep().await.unwrap().deadman;
        assert_eq!((r.opened, r.recovered), (0, 0));
        app.clock.advance(86_400);
        assert_eq!(app.core.sweep().await.unwrap().deadman.opened, 0);
        let d = app.detail(owner, incident).await;
        assert_eq!(d["state"], "triggered", "left open for a human");
        assert!(list(&app, owner, w.team).await.is_empty());
    }
);

both!(a_new_matcher_forgets_old_sources, |app| {
    let w = app.paging_world().await;
    let owner = &w.admin;
    let sw = create(
        &app,
        owner,
        w.team,
        json!({"name": "Watchdog", "matcher": WATCHDOG, "timeout": "10m"}),
    )
    .await;
    beat(&app, &w.key, Some("prod-eu")).await;
    beat(&app, &w.key, Some("old-dc")).await;
    let path = format!("{}/{}", switches_path(w.team), sw["id"]);
    // Same matcher, new timeout: the sources stay.
    let s = app
        .put(
            &path,
            owner,
            json!({"name": "Watchdog", "matcher": WATCHDOG, "timeout": "20m"}),
        )
        .await
        .expect(200);
    assert_eq!(s["clusters"].as_array().unwrap().len(), 2);
    // A new matcher (the old data centre left out) starts over.
    let s = app
        .put(&path, owner, json!({"name": "Watchdog", "matcher": r#"{alertname="Watchdog", cluster!="old-dc"}"#, "timeout": "20m"}))
        .await
        .expect(200);
    assert_eq!(s["status"], "Dormant");
    assert_eq!(s["clusters"], json!([]));
    app.clock.advance(86_400);
    assert_eq!(app.core.sweep().await.unwrap().deadman.opened, 0);
});

fn seeded() -> Config {
    Config {
        deadman_seed: Some(SwitchSpec {
            name: klaxon_domain::text::Label::parse("Pipeline").unwrap(),
            matcher: WATCHDOG.into(),
            pings: false,
            timeout: Duration::minutes(15),
            severity: Severity::Warning,
        }),
        ..Config::default()
    }
}

/// The switch names of each team, read as an administrator.
async fn names(app: &TestApp, admin: &Auth, teams: &[i64]) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    for t in teams {
        out.push(
            list(app, admin, *t)
                .await
                .iter()
                .map(|s| s["name"].as_str().unwrap().to_string())
                .collect(),
        );
    }
    out
}

both!(environment_defaults_are_seeded_once_per_install, |app| {
    let admin = app.bootstrap().await;
    let a = app.team(&admin, "alpha").await;
    let b = app.team(&admin, "beta").await;
    create(
        &app,
        &admin,
        b,
        json!({"name": "Own", "matcher": WATCHDOG, "timeout": "5m"}),
    )
    .await;

    // A restart with KLAXON_DEADMAN_* set seeds the teams that have no switch.
    let again = TestApp::spawn_on(
        tempfile::tempdir().unwrap(),
        app.database_url.clone(),
        seeded(),
    )
    .await;
    assert_eq!(
        names(&again, &admin, &[a, b]).await,
        [vec!["Pipeline"], vec!["Own"]]
    );
    let s = one(&again, &admin, a).await;
    assert_eq!(
        (s["timeout"].as_str(), s["severity"].as_str()),
        (Some("15m"), Some("warning"))
    );
    let (marker,): (String,) =
        sqlx::query_as("SELECT value FROM settings WHERE key = 'deadman_seeded_at'")
            .fetch_one(&again.core.db.pool)
            .await
            .unwrap();
    assert_eq!(marker, T0.to_string(), "recorded in settings");

    // Deleting the last switch, or creating a team later, never brings the default back.
    again
        .delete(&format!("{}/{}", switches_path(a), s["id"]), &admin)
        .await
        .expect(204);
    let c = again.team(&admin, "gamma").await;
    let third = TestApp::spawn_on(
        tempfile::tempdir().unwrap(),
        app.database_url.clone(),
        seeded(),
    )
    .await;
    assert_eq!(
        names(&third, &admin, &[a, b, c]).await,
        [vec![] as Vec<String>, vec!["Own".to_string()], vec![]]
    );
});

both!(
    without_the_environment_nothing_is_seeded_and_nothing_recorded,
    |app| {
        let admin = app.bootstrap().await;
        let a = app.team(&admin, "alpha").await;
        let again = TestApp::spawn_on(
            tempfile::tempdir().unwrap(),
            app.database_url.clone(),
            Config::default(),
        )
        .await;
        assert!(list(&again, &admin, a).await.is_empty());
        let marker: Option<(String,)> =
            sqlx::query_as("SELECT value FROM settings WHERE key = 'deadman_seeded_at'")
                .fetch_optional(&again.core.db.pool)
                .await
                .unwrap();
        assert!(marker.is_none());
        // The first start that asks for it still seeds.
        let third = TestApp::spawn_on(
            tempfile::tempdir().unwrap(),
            app.database_url.clone(),
            seeded(),
        )
        .await;
        assert_eq!(names(&third, &admin, &[a]).await, [vec!["Pipeline"]]);
    }
);
