//! Reports read from the stored record, checked against figures computed by hand: on-call
//! health over two New York on-call days that cross the spring-forward change (one of 23 hours),
//! with a cover, an escalation past the person paged first, and nights read on each person's own
//! clock.

use crate::common;
use common::*;
use serde_json::{json, Value};

/// Unix seconds of `YYYY-MM-DDTHH:MM` UTC.
fn utc(s: &str) -> i64 {
    klaxon_domain::Timestamp::parse(&format!("{s}:00Z"))
        .unwrap()
        .0
}

fn person<'a>(report: &'a Value, name: &str) -> &'a Value {
    report["people"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["username"] == name)
        .unwrap_or_else(|| panic!("{name} in {report}"))
}

both!(
    on_call_health_matches_the_figures_worked_out_by_hand,
    |app| {
        let w = app.paging_world().await;
        let team = w.team;
        // Days run 09:00–09:00 New York time; alice holds 13 March 2027, bob the 14th (the clocks
        // go forward at 02:00 that night, so the 13th is 23 hours long).
        app.put(
            &format!("/api/teams/{team}/on-call-day"),
            &w.admin,
            json!({"time_zone": "America/New_York", "handoff_time": "09:00"}),
        )
        .await
        .expect(200);
        for (user, date) in [(w.alice.0, "2027-03-13"), (w.bob.0, "2027-03-14")] {
            app.post(
                &format!("/api/teams/{team}/schedule"),
                &w.admin,
                json!({"user_id": user, "dates": [date]}),
            )
            .await
            .expect(201);
        }
        // alice reads her nights in New York, bob in Berlin; carol keeps the team's zone.
        for (who, zone) in [(&w.alice, "America/New_York"), (&w.bob, "Europe/Berlin")] {
            app.put(
                &format!("/api/users/{}/notification-rules", who.0),
                &who.1,
                json!({"time_zone": zone}),
            )
            .await
            .expect(200);
        }
        // Escalation: the holder, then bob after five minutes.
        app.put(
            &format!("/api/teams/{team}/escalation"),
            &w.admin,
            json!({"levels": [
                {"timeout": "5m", "targets": [{"type": "oncall"}]},
                {"timeout": "5m", "targets": [{"type": "user", "user_id": w.bob.0}]}
            ]}),
        )
        .await
        .expect(200);
        app.clock.set(utc("2027-03-12T12:00"));
        app.post(
            &format!("/api/teams/{team}/covers"),
            &w.admin,
            json!({"user_id": w.carol.0, "covered_user_id": w.bob.0,
               "starts_at": "2027-03-14T15:00:00Z", "ends_at": "2027-03-14T17:00:00Z"}),
        )
        .await
        .expect(201);

        // 1. 03:00 UTC (22:00 in New York, 04:00 in Berlin): alice is paged, does not answer, bob is
        //    paged at the second level and acknowledges 400 s after the opening, then resolves it.
        app.clock.set(utc("2027-03-14T03:00"));
        let first = app.fire(&w.key, "night").await;
        app.tick().await;
        app.clock.advance(300);
        app.tick().await;
        app.tick().await;
        app.clock.advance(100);
        let ack = format!("/api/incidents/{first}/acknowledge");
        app.post(&ack, &w.bob.1, json!({})).await.expect(200);
        app.post(
            &format!("/api/incidents/{first}/resolve"),
            &w.bob.1,
            json!({}),
        )
        .await
        .expect(200);
        // 2. 11:30 UTC: 07:30 in New York now the clocks went forward (06:30, night, the day
        //    before): alice acknowledges after two minutes.
        app.clock.set(utc("2027-03-14T11:30"));
        let second = app.fire(&w.key, "morning").await;
        app.tick().await;
        app.clock.advance(120);
        let ack = format!("/api/incidents/{second}/acknowledge");
        app.post(&ack, &w.alice.1, json!({})).await.expect(200);
        // 3. 16:00 UTC, during carol's cover of bob: carol is paged and resolves it.
        app.clock.set(utc("2027-03-14T16:00"));
        let third = app.fire(&w.key, "afternoon").await;
        app.tick().await;
        app.clock.advance(60);
        app.post(
            &format!("/api/incidents/{third}/resolve"),
            &w.carol.1,
            json!({}),
        )
        .await
        .expect(200);

        app.clock.set(utc("2027-03-20T00:00"));
        let base = format!("/api/teams/{team}/reports/health");
        let range = "from=2027-03-13T14:00:00Z&to=2027-03-15T13:00:00Z";
        let report = app
            .get(&format!("{base}?{range}"), &w.carol.1)
            .await
            .expect(200);
        let t = &report["team"];
        assert_eq!(t["incidents"], 3, "{report}");
        assert_eq!(t["pages"], 4, "{report}");
        assert_eq!(t["night_pages"], 2, "{report}");
        assert_eq!(t["hours_on_call"], 47.0);
        assert_eq!(t["hours_uncovered"], 0.0);
        assert_eq!(t["escalated_past"], 1);
        assert_eq!(
            t["time_to_acknowledge"],
            json!({"count": 2, "median_seconds": 120, "p90_seconds": 400})
        );

        let alice = person(&report, "alice");
        assert_eq!(alice["hours_on_call"], 23.0, "the 13th is 23 hours long");
        assert_eq!(alice["time_zone"], "America/New_York");
        assert_eq!(alice["pages"], 2);
        assert_eq!(alice["pages_by_road"], json!({"ntfy": 2}));
        assert_eq!(alice["night_pages"], 1, "07:30 after the change is morning");
        assert_eq!(alice["acknowledged"], 1);
        assert_eq!(alice["resolved"], 0);
        assert_eq!(alice["escalated_past"], 1);
        assert_eq!(alice["time_to_acknowledge"]["median_seconds"], 120);
        assert_eq!(alice["page_share"], 0.5);
        assert_eq!(alice["hours_share"], 0.489);
        assert_eq!(alice["fairness"], 1.02);

        let bob = person(&report, "bob");
        assert_eq!(bob["hours_on_call"], 22.0, "24 hours less carol's two");
        assert_eq!(bob["pages"], 1);
        assert_eq!(bob["night_pages"], 1, "04:05 in Berlin");
        assert_eq!(bob["acknowledged"], 1);
        assert_eq!(bob["resolved"], 1);
        assert_eq!(bob["escalated_past"], 0);
        assert_eq!(bob["time_to_acknowledge"]["median_seconds"], 400);
        assert_eq!(bob["fairness"], 0.53);

        let carol = person(&report, "carol");
        assert_eq!(carol["hours_on_call"], 2.0);
        assert_eq!(carol["time_zone"], "America/New_York", "the team's zone");
        assert_eq!(
            (carol["pages"].clone(), carol["night_pages"].clone()),
            (json!(1), json!(0))
        );
        assert_eq!(carol["resolved"], 1);
        assert_eq!(carol["fairness"], 5.81);
        // Most pages first.
        assert_eq!(report["people"][0]["username"], "alice");

        // One person's figures; the team's stay whole.
        let one = app
            .get(&format!("{base}?{range}&person=bob"), &w.alice.1)
            .await
            .expect(200);
        assert_eq!(one["people"].as_array().unwrap().len(), 1);
        assert_eq!(one["people"][0], *bob);
        assert_eq!(one["team"], report["team"]);

        // Someone who has left is still read on their own clock: bob, gone to Tokyo, was
        // paged at 12:05 there, not in his night (on the team's New York clock it was 22:05).
        app.delete(&format!("/api/teams/{team}/members/{}", w.bob.0), &w.admin)
            .await
            .expect(204);
        app.put(
            &format!("/api/users/{}/notification-rules", w.bob.0),
            &w.bob.1,
            json!({"time_zone": "Asia/Tokyo"}),
        )
        .await
        .expect(200);
        let left = app
            .get(&format!("{base}?{range}"), &w.carol.1)
            .await
            .expect(200);
        let gone = person(&left, "bob");
        assert_eq!(
            (gone["pages"].clone(), gone["night_pages"].clone()),
            (json!(1), json!(0))
        );
        assert_eq!(left["team"]["night_pages"], 1, "{left}");

        // A range that ends before the second day: alice's hours only up to it.
        let early = app
            .get(
                &format!("{base}?from=2027-03-13T14:00:00Z&to=2027-03-14T02:00:00Z"),
                &w.alice.1,
            )
            .await
            .expect(200);
        assert_eq!(person(&early, "alice")["hours_on_call"], 12.0);
        assert_eq!(early["team"]["pages"], 0);

        // Bad input: a clear 400, or 404 for a team the caller is not in.
        for (query, needle) in [
            (
                "from=2026-01-01T00:00:00Z&to=2027-03-01T00:00:00Z",
                "366 days",
            ),
            (
                "from=2027-03-15T00:00:00Z&to=2027-03-14T00:00:00Z",
                "before",
            ),
            ("from=yesterday", "RFC 3339"),
            ("person=mallory", "not a member"),
        ] {
            let m = app
                .get(&format!("{base}?{query}"), &w.alice.1)
                .await
                .expect_error(400, "invalid");
            assert!(m.contains(needle), "{query}: {m}");
        }
        let (_, dave) = app.user(&w.admin, "dave").await;
        app.get(&base, &dave).await.expect_error(404, "not_found");
    }
);

/// An Alertmanager payload of one alert named `name` in group `group`, started `starts` seconds
/// after T0 and, when `ends` is given, resolved then.
fn alert(name: &str, group: &str, starts: i64, ends: Option<i64>) -> Payload {
    let status = if ends.is_some() { "resolved" } else { "firing" };
    Payload::new(group).alert(
        group,
        status,
        starts,
        ends,
        json!({"alertname": name, "severity": "critical"}),
    )
}

both!(
    alert_noise_names_the_noisiest_alerts_and_what_would_quiet_them,
    |app| {
        let w = app.paging_world().await;
        let team = w.team;
        // DiskPressure fires three times 20 minutes apart and its sender resolves it two minutes
        // later each time, with nobody acting: three flapping incidents, two of them reopened.
        for k in 0..3 {
            let start = k * 1200;
            app.clock.set(T0 + start);
            app.webhook(&w.key, &alert("DiskPressure", "disk", start, None))
                .await
                .expect(200);
            app.tick().await;
            app.clock.advance(120);
            app.webhook(
                &w.key,
                &alert("DiskPressure", "disk", start, Some(start + 120)),
            )
            .await
            .expect(200);
        }
        // CertExpiry pages twice, four hours apart, and nobody acknowledges it.
        for start in [4000, 4000 + 4 * 3600] {
            app.clock.set(T0 + start);
            app.webhook(&w.key, &alert("CertExpiry", "cert", start, None))
                .await
                .expect(200);
            app.tick().await;
            app.clock.advance(2 * 3600);
            app.webhook(
                &w.key,
                &alert("CertExpiry", "cert", start, Some(start + 7200)),
            )
            .await
            .expect(200);
        }
        // HighErrorRate once, acknowledged.
        app.clock.set(T0 + 30_000);
        let errors = app.fire(&w.key, "errors").await;
        app.tick().await;
        app.post(
            &format!("/api/incidents/{errors}/acknowledge"),
            &w.alice.1,
            json!({}),
        )
        .await
        .expect(200);

        let report = app
            .get(&format!("/api/teams/{team}/reports/noise"), &w.bob.1)
            .await
            .expect(200);
        assert_eq!(
            (report["incidents"].clone(), report["flapping"].clone()),
            (json!(6), json!(3))
        );
        let rows = report["rows"].as_array().unwrap();
        let names: Vec<&str> = rows
            .iter()
            .map(|r| r["alertname"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["DiskPressure", "CertExpiry", "HighErrorRate"]);
        let integrations = app
            .get(&format!("/api/teams/{team}/integrations"), &w.admin)
            .await
            .expect(200);
        let prometheus = integrations[0]["id"].as_i64().unwrap();
        let row = |i: usize, keys: &[&str]| -> Value {
            keys.iter()
                .map(|k| (k.to_string(), rows[i][*k].clone()))
                .collect()
        };
        let keys = [
            "incidents",
            "pages",
            "flapping",
            "reopened",
            "unacknowledged",
            "quieting",
            "integration",
        ];
        assert_eq!(
            row(0, &keys),
            json!({"incidents": 3, "pages": 3, "flapping": 3, "reopened": 2, "unacknowledged": 3,
               "quieting": "source", "integration": "prometheus"})
        );
        assert_eq!(
            rows[0]["action_url"], "http://prometheus/graph",
            "its source graph"
        );
        assert_eq!(
            row(1, &keys),
            json!({"incidents": 2, "pages": 2, "flapping": 0, "reopened": 0, "unacknowledged": 2,
               "quieting": "route", "integration": "prometheus"})
        );
        assert_eq!(
            rows[1]["action_url"],
            format!(
                "{}/teams/{team}#integration-{prometheus}",
                app.config.public_url
            )
        );
        assert_eq!(
            row(2, &keys),
            json!({"incidents": 1, "pages": 1, "flapping": 0, "reopened": 0, "unacknowledged": 0,
               "quieting": "silence", "integration": "prometheus"})
        );
        assert_eq!(
            rows[2]["action_url"],
            format!("{}/incidents/{errors}#silence", app.config.public_url)
        );

        // A range before any of it: nothing; bad input: 400; another team's: 404.
        let before = app
            .get(
                &format!(
                    "/api/teams/{team}/reports/noise?to={}",
                    klaxon_domain::Timestamp(T0).to_rfc3339()
                ),
                &w.bob.1,
            )
            .await
            .expect(200);
        assert_eq!(before["rows"], json!([]));
        app.get(
            &format!("/api/teams/{team}/reports/noise?from=2025-01-01T00:00:00Z"),
            &w.bob.1,
        )
        .await
        .expect_error(400, "invalid");
        let (_, dave) = app.user(&w.admin, "dave").await;
        app.get(&format!("/api/teams/{team}/reports/noise"), &dave)
            .await
            .expect_error(404, "not_found");
    }
);

both!(
    pages_stored_before_they_named_their_team_still_count_after_the_upgrade,
    |app| {
        // alice holds the day of T0 (22 November 2026) and is paged.
        let w = app.paging_world().await;
        app.fire(&w.key, "db-down").await;
        app.tick().await;
        let health = format!(
            "/api/teams/{}/reports/health?from=2026-11-21T00:00:00Z&to=2026-11-24T00:00:00Z",
            w.team
        );
        let before = app.get(&health, &w.alice.1).await.expect(200);
        assert!(before["team"]["pages"].as_u64() > Some(0), "{before}");
        // The database as a version before 0052 left it: incident pages without their team,
        // the reports' indexes not made yet.
        let pool = &app.core.db.pool;
        let mut conn = pool.acquire().await.unwrap();
        for sql in [
            "UPDATE pages SET team_id = NULL WHERE incident_id IS NOT NULL",
            "DROP INDEX pages_team_sent",
            "DROP INDEX pages_incident",
            "CREATE INDEX pages_incident ON pages(incident_id)",
            "DROP INDEX timeline_escalated",
            "DROP INDEX timeline_resolved",
            "DROP INDEX timeline_acted",
            "DELETE FROM _sqlx_migrations WHERE version = 52",
        ] {
            sqlx::query(sql).execute(&mut *conn).await.expect(sql);
        }
        drop(conn);
        app.core.db.migrate().await.expect("the upgrade");
        let after = app.get(&health, &w.alice.1).await.expect(200);
        assert_eq!(after["team"], before["team"], "{after}");
        // A page queued now names its team as it is written.
        app.fire(&w.key, "disk-full").await;
        app.tick().await;
        let (unnamed,): (i64,) = sqlx::query_as("SELECT COUNT(*) FROM pages WHERE team_id IS NULL")
            .fetch_one(pool)
            .await
            .unwrap();
        assert_eq!(unnamed, 0);
        let later = app.get(&health, &w.alice.1).await.expect(200);
        assert!(later["team"]["pages"].as_u64() > before["team"]["pages"].as_u64());
    }
);
