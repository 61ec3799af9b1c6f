//! End to end with the real Prometheus Alertmanager: an alert posted to Alertmanager reaches
//! Klaxon through its webhook, opens one incident, and its resolution resolves the incident; a
//! Watchdog that Alertmanager keeps repeating keeps a dead man's switch alive until Alertmanager
//! stops.

use crate::common;
use common::alertmanager::{eventually, rfc3339_now, Alertmanager};
use serde_json::json;

both!(
    an_alert_through_alertmanager_opens_and_resolves_one_incident,
    |app| {
        let admin = app.bootstrap().await;
        let team = app.team(&admin, "web").await;
        let key = app.integration(&admin, team).await;
        // The integration's webhook_url follows the public URL; the test server listens elsewhere.
        let am = Alertmanager::start(&format!("{}/api/alertmanager/webhook/{key}", app.url)).await;

        let starts_at = rfc3339_now();
        let alert = |ends_at: Option<String>| {
            let mut a = json!({
                "labels": {"alertname": "DiskFull", "service": "storage", "severity": "critical",
                           "instance": "db-1:9100"},
                "annotations": {"summary": "Disk 95% full"},
                "startsAt": starts_at,
            });
            if let Some(e) = ends_at {
                a["endsAt"] = json!(e);
            }
            json!([a])
        };
        am.post_alerts(alert(None)).await;

        let incident = eventually(&am, "a triggered incident", || async {
            let list = app.incidents(&admin, team).await;
            list.into_iter().find(|i| i["state"] == "triggered")
        })
        .await;
        assert_eq!(incident["title"], "DiskFull: Disk 95% full");
        assert_eq!(incident["severity"], "critical");
        let id = incident["id"].as_i64().unwrap();

        am.post_alerts(alert(Some(rfc3339_now()))).await;
        let detail = eventually(&am, "the incident resolved", || async {
            let d = app
                .get(&format!("/api/incidents/{id}"), &admin)
                .await
                .expect(200);
            (d["state"] == "resolved").then_some(d)
        })
        .await;
        let alerts = detail["alerts"].as_array().unwrap();
        assert_eq!(alerts.len(), 1, "one alert: {alerts:?}");
        assert_eq!(alerts[0]["status"], "resolved");
        assert_eq!(alerts[0]["resolution_source"], "alertmanager");
        assert_eq!(alerts[0]["labels"]["instance"], "db-1:9100");
        assert_eq!(
            app.incidents(&admin, team).await.len(),
            1,
            "exactly one incident opened"
        );
    }
);

both!(
    a_watchdog_repeated_by_alertmanager_keeps_its_switch_alive_until_it_stops,
    |app| {
        let w = app.paging_world().await;
        let owner = &w.admin;
        let path = format!("/api/teams/{}/deadman/switches", w.team);
        app.post(
            &path,
            owner,
            json!({"name": "Watchdog", "matcher": "{alertname=\"Watchdog\"}", "timeout": "1m"}),
        )
        .await
        .expect(201);
        let am = Alertmanager::start_repeating(
            &format!("{}/api/alertmanager/webhook/{}", app.url, w.key),
            "2s",
        )
        .await;
        let far = time::OffsetDateTime::now_utc() + time::Duration::hours(1);
        am.post_alerts(json!([{
            "labels": {"alertname": "Watchdog", "severity": "none"},
            "annotations": {"summary": "The alerting pipeline is alive"},
            "startsAt": rfc3339_now(),
            "endsAt": far.format(&time::format_description::well_known::Rfc3339).unwrap(),
        }]))
        .await;
        // Waits for a heartbeat stamped at the (manual) clock's present.
        let heard_now = || async {
            let now = klaxon_domain::Timestamp(app.core.now()).to_rfc3339();
            let list = app.get(&path, owner).await.expect(200);
            let s = list[0].clone();
            (s["last_heartbeat_at"] == json!(now)).then_some(s)
        };
        let s = eventually(&am, "the first heartbeat", heard_now).await;
        assert_eq!(s["status"], "Healthy");
        // Two minutes of the manual clock, twice the timeout: only Alertmanager's repeats keep
        // the switch alive.
        for _ in 0..4 {
            app.clock.advance(30);
            let s = eventually(&am, "a repeated heartbeat", heard_now).await;
            assert_eq!(s["status"], "Healthy");
            assert_eq!(app.core.sweep().await.unwrap().deadman.opened, 0);
        }
        assert!(
            app.incidents(owner, w.team).await.is_empty(),
            "a heartbeat pages nobody"
        );

        // Alertmanager stops: a minute later the switch is dead and its incident pages on-call.
        drop(am);
        app.clock.advance(60);
        assert_eq!(app.get(&path, owner).await.expect(200)[0]["status"], "Dead");
        assert_eq!(app.core.sweep().await.unwrap().deadman.opened, 1);
        let incidents = app.incidents(owner, w.team).await;
        assert_eq!(incidents.len(), 1);
        assert_eq!(incidents[0]["title"], "Watchdog: no heartbeat for 1m");
        app.tick().await;
        let pages = app.ntfy.take();
        assert_eq!(pages.len(), 1);
        assert_eq!(pages[0].topic, "alice-pager");
    }
);
