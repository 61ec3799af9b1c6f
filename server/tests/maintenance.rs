//! Maintenance windows: incidents still open, nothing is paged; what would have been paged waits
//! on the timeline for the window's end and goes then if the incident is still untouched.
//! A manual clock; the recording ntfy server shows what reached a phone.

use crate::common;
use common::*;
use serde_json::{json, Value};

fn topics(pages: &[common::ntfy::Published]) -> Vec<&str> {
    pages.iter().map(|p| p.topic.as_str()).collect()
}

fn at(app: &TestApp, offset: i64) -> String {
    use klaxon_core::clock::Clock;
    klaxon_domain::Timestamp(app.clock.now() + offset).to_rfc3339()
}

both!(windows_are_bounded_owned_and_never_overlap, |app| {
    let w = app.paging_world().await;
    let path = format!("/api/teams/{}/maintenance", w.team);
    for bad in [
        json!({}),
        json!({"duration": "4m"}),
        json!({"duration": "24h1s"}),
        json!({"duration": "soon"}),
        json!({"duration": "1h", "ends_at": at(&app, 3_600)}),
        json!({"ends_at": at(&app, -60)}),
        json!({"starts_at": at(&app, -3_600), "duration": "1h"}),
        json!({"starts_at": at(&app, 366 * 86_400), "duration": "1h"}),
        json!({"starts_at": "tomorrow", "duration": "1h"}),
        json!({"duration": "1h", "reason": "deploy"}),
    ] {
        app.post(&path, &w.admin, bad.clone())
            .await
            .expect_error(400, "invalid");
    }
    app.post(&path, &w.bob.1, json!({"duration": "1h"}))
        .await
        .expect_error(403, "forbidden");
    let (_, eve) = app.user(&w.admin, "eve").await;
    app.post(&path, &eve, json!({"duration": "1h"}))
        .await
        .expect_error(404, "not_found");
    app.get(&path, &eve).await.expect_error(404, "not_found");

    let now = app
        .post(&path, &w.admin, json!({"duration": "1h"}))
        .await
        .expect(201);
    assert_eq!(now["starts_at"], at(&app, 0));
    assert_eq!(now["ends_at"], at(&app, 3_600));
    app.post(
        &path,
        &w.admin,
        json!({"starts_at": at(&app, 1_800), "duration": "1h"}),
    )
    .await
    .expect_error(409, "conflict");
    let later = app
        .post(
            &path,
            &w.admin,
            json!({"starts_at": at(&app, 7_200), "ends_at": at(&app, 9_000)}),
        )
        .await
        .expect(201);
    let listed = app.get(&path, &w.bob.1).await.expect(200);
    assert_eq!(listed, json!([now, later]));

    // A window not yet started is removed; one on now ends now and leaves the list.
    let later_path = format!("{path}/{}", later["id"]);
    app.delete(&later_path, &w.bob.1)
        .await
        .expect_error(403, "forbidden");
    app.delete(&later_path, &w.admin).await.expect(204);
    app.delete(&later_path, &w.admin)
        .await
        .expect_error(404, "not_found");
    app.clock.advance(600);
    app.delete(&format!("{path}/{}", now["id"]), &w.admin)
        .await
        .expect(204);
    assert_eq!(app.get(&path, &w.admin).await.expect(200), json!([]));
    // The ended window no longer blocks a new one.
    app.post(&path, &w.admin, json!({"duration": "5m"}))
        .await
        .expect(201);
});

both!(
    nothing_pages_in_a_window_and_the_end_brings_what_waited,
    |app| {
        let w = app.paging_world().await;
        let before = app.fire(&w.key, "before").await;
        app.tick().await;
        assert_eq!(topics(&app.ntfy.take()), ["alice-pager"]);

        let window = app
            .post(
                &format!("/api/teams/{}/maintenance", w.team),
                &w.admin,
                json!({"duration": "1h"}),
            )
            .await
            .expect(201);
        let end = window["ends_at"].as_str().unwrap().to_string();

        // An incident opens as usual; its page is held, and says so.
        let during = app.fire(&w.key, "during").await;
        let report = app.tick().await;
        assert_eq!((report.sent, report.held), (0, 1));
        assert!(app.ntfy.take().is_empty());
        let d = app.detail(&w.alice.1, during).await;
        assert_eq!(d["state"], "triggered");
        assert_eq!(
            timeline_texts(&d, "held"),
            vec![format!(
                "opening page to alice held: the team is in maintenance until {end}"
            )]
        );

        // The earlier incident's reminder falls due in the window: held too, once.
        app.clock.advance(30 * 60);
        let report = app.tick().await;
        assert_eq!((report.reminded, report.sent, report.held), (1, 0, 1));
        app.clock.advance(20 * 60);
        assert_eq!(app.tick().await.reminded, 0, "no reminder piles up");
        assert_eq!(
            timeline_texts(&app.detail(&w.alice.1, before).await, "held").len(),
            1
        );
        // Alice deals with the earlier incident meanwhile: its held reminder will not go.
        app.post(
            &format!("/api/incidents/{before}/acknowledge"),
            &w.alice.1,
            json!({}),
        )
        .await
        .expect(200);

        // The end: the open incident's page goes, once; its reminders restart from the end.
        app.clock.advance(10 * 60 - 1);
        app.tick().await;
        assert!(app.ntfy.take().is_empty(), "not a second early");
        app.clock.advance(1);
        let report = app.tick().await;
        assert_eq!((report.sent, report.cancelled), (1, 1));
        let pages = app.ntfy.take();
        assert_eq!(topics(&pages), ["alice-pager"]);
        assert!(pages[0]
            .click
            .as_deref()
            .unwrap()
            .ends_with(&format!("/incidents/{during}")));
        assert!(pages[0].ack_url().is_some());
        app.clock.advance(30 * 60 - 1);
        app.tick().await;
        assert!(app.ntfy.take().is_empty());
        app.clock.advance(1);
        assert_eq!(app.tick().await.reminded, 1);
        assert_eq!(topics(&app.ntfy.take()), ["alice-pager"]);
    }
);

both!(
    a_ladder_waits_out_the_window_and_ending_early_releases_it,
    |app| {
        let w = app.paging_world().await;
        app.put(
            &format!("/api/teams/{}/escalation", w.team),
            &w.admin,
            json!({"levels": [
                {"timeout": "5m", "targets": [{"type": "oncall"}]},
                {"timeout": "5m", "targets": [{"type": "user", "user_id": w.bob.0}]}
            ]}),
        )
        .await
        .expect(200);
        // Planned for an hour from now: until then, paging is as usual.
        let path = format!("/api/teams/{}/maintenance", w.team);
        let window = app
            .post(
                &path,
                &w.admin,
                json!({"starts_at": at(&app, 3_600), "duration": "2h"}),
            )
            .await
            .expect(201);
        app.fire(&w.key, "early").await;
        app.tick().await;
        assert_eq!(topics(&app.ntfy.take()), ["alice-pager"]);
        app.post(
            &format!(
                "/api/incidents/{}/acknowledge",
                app.incident_of("early").await
            ),
            &w.alice.1,
            json!({}),
        )
        .await
        .expect(200);

        app.clock.advance(3_600);
        let incident = app.fire(&w.key, "late").await;
        assert_eq!(app.tick().await.held, 1);
        // Level 1's timeout would pass in the window: the ladder does not move.
        app.clock.advance(10 * 60);
        let report = app.tick().await;
        assert_eq!((report.escalated, report.sent), (0, 0));
        assert!(app.ntfy.take().is_empty());

        // Ended early: what was held goes now, and level 1 gets its whole timeout from now.
        app.delete(&format!("{path}/{}", window["id"]), &w.admin)
            .await
            .expect(204);
        assert_eq!(app.tick().await.sent, 1);
        assert_eq!(topics(&app.ntfy.take()), ["alice-pager"]);
        app.clock.advance(5 * 60 - 1);
        app.tick().await;
        assert!(app.ntfy.take().is_empty());
        app.clock.advance(1);
        assert_eq!(app.tick().await.escalated, 1);
        assert_eq!(topics(&app.ntfy.take()), ["bob-pager"]);
        let d: Value = app.detail(&w.bob.1, incident).await;
        assert_eq!(timeline_texts(&d, "held").len(), 1);
    }
);
