//! The team page's charts: incidents and response times per week, alert volume per hour.

use crate::common;
use common::*;
use serde_json::json;

both!(
    weekly_stats_have_every_week_and_nulls_where_nothing_happened,
    |app| {
        let admin = app.bootstrap().await;
        let (_, bob) = app.user(&admin, "bob").await;
        let team = app.team(&bob, "web").await;
        let key = app.integration(&bob, team).await;
        // Sunday 2026-11-22: opened, acknowledged after 2 minutes, resolved after 10.
        let first = app.fire(&key, "checkout").await;
        app.clock.advance(120);
        app.post(
            &format!("/api/incidents/{first}/acknowledge"),
            &bob,
            json!({}),
        )
        .await
        .expect(200);
        app.clock.advance(480);
        app.post(&format!("/api/incidents/{first}/resolve"), &bob, json!({}))
            .await
            .expect(200);
        // Monday 2026-11-30: one more, still open.
        app.clock.set(T0 + 8 * 86_400);
        app.fire(&key, "disk").await;
        let weeks = app
            .get(
                &format!("/api/stats/incidents/weekly?team_id={team}&weeks=3"),
                &bob,
            )
            .await
            .expect(200);
        assert_eq!(
            weeks,
            json!([
                {"week_start": "2026-11-16", "opened": 1, "mtta_seconds": 120, "mttr_seconds": 600},
                {"week_start": "2026-11-23", "opened": 0, "mtta_seconds": null, "mttr_seconds": null},
                {"week_start": "2026-11-30", "opened": 1, "mtta_seconds": null, "mttr_seconds": null},
            ])
        );
        // Twelve weeks unless asked; the bounds are refused in the error shape.
        let default = app
            .get(&format!("/api/stats/incidents/weekly?team_id={team}"), &bob)
            .await
            .expect(200);
        assert_eq!(default.as_array().unwrap().len(), 12);
        app.get("/api/stats/incidents/weekly?weeks=0", &bob)
            .await
            .expect_error(400, "invalid");
        app.get("/api/stats/incidents/weekly?weeks=105", &bob)
            .await
            .expect_error(400, "invalid");
        // Another team's numbers are not the caller's to read.
        let (_, dave) = app.user(&admin, "dave").await;
        app.get(
            &format!("/api/stats/incidents/weekly?team_id={team}"),
            &dave,
        )
        .await
        .expect_error(404, "not_found");
    }
);

both!(volume_counts_alerts_by_the_hour_they_started, |app| {
    let admin = app.bootstrap().await;
    let (_, bob) = app.user(&admin, "bob").await;
    let team = app.team(&bob, "web").await;
    let key = app.integration(&bob, team).await;
    let other = app.integration(&bob, team).await;
    // Now is 05:30 on T0's day: two alerts started at 02:10, one at 05:00, one in another
    // integration, one a day before the window.
    app.clock.set(T0 + 5 * 3_600 + 1_800);
    let at = |h: i64, m: i64| h * 3_600 + m * 60;
    let payload = Payload::new("g")
        .alert("a", "firing", at(2, 10), None, json!({}))
        .alert("b", "firing", at(2, 40), None, json!({}))
        .alert("c", "firing", at(5, 0), None, json!({}))
        .alert("old", "firing", at(-30, 0), None, json!({}));
    app.webhook(&key, &payload).await.expect(200);
    app.webhook(
        &other,
        &Payload::new("h").alert("d", "firing", at(5, 1), None, json!({})),
    )
    .await
    .expect(200);
    let integrations = app
        .get(&format!("/api/teams/{team}/integrations"), &bob)
        .await
        .expect(200);
    let id = integrations
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["id"].as_i64().unwrap())
        .min()
        .unwrap();
    let hours = app
        .get(
            &format!("/api/teams/{team}/integrations/{id}/volume?hours=6"),
            &bob,
        )
        .await
        .expect(200);
    let counts: Vec<(String, i64)> = hours
        .as_array()
        .unwrap()
        .iter()
        .map(|h| {
            (
                h["hour"].as_str().unwrap().to_string(),
                h["alerts"].as_i64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        counts,
        vec![
            ("2026-11-22T00:00:00Z".to_string(), 0),
            ("2026-11-22T01:00:00Z".to_string(), 0),
            ("2026-11-22T02:00:00Z".to_string(), 2),
            ("2026-11-22T03:00:00Z".to_string(), 0),
            ("2026-11-22T04:00:00Z".to_string(), 0),
            ("2026-11-22T05:00:00Z".to_string(), 1),
        ]
    );
    let day = app
        .get(&format!("/api/teams/{team}/integrations/{id}/volume"), &bob)
        .await
        .expect(200);
    assert_eq!(day.as_array().unwrap().len(), 24);
    app.get(
        &format!("/api/teams/{team}/integrations/{id}/volume?hours=169"),
        &bob,
    )
    .await
    .expect_error(400, "invalid");
    app.get(&format!("/api/teams/{team}/integrations/999/volume"), &bob)
        .await
        .expect_error(404, "not_found");
    let (_, dave) = app.user(&admin, "dave").await;
    app.get(
        &format!("/api/teams/{team}/integrations/{id}/volume"),
        &dave,
    )
    .await
    .expect_error(404, "not_found");
});
