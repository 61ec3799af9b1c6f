//! No incident goes unpaged: an incident nobody holds pages the team's owners when there is no
//! fallback topic; taking over or assigning an untouched incident pages the new assignee and
//! starts reminders from then; a page held by a maintenance window goes to whoever has the
//! incident when the window ends. A manual clock and a recording ntfy server.

use crate::common;
use common::*;
use serde_json::json;

fn topics(pages: &[common::ntfy::Published]) -> Vec<&str> {
    pages.iter().map(|p| p.topic.as_str()).collect()
}

/// The paging world a day later, when nobody holds the date, with the team's owner (the
/// administrator) subscribed to `admin-pager`.
async fn nobody_on_call(app: &TestApp) -> Paging {
    let w = app.paging_world().await;
    app.clock.advance(86_400);
    let me = app.get("/api/me", &w.admin).await.expect(200);
    app.put(
        &format!("/api/users/{}/push-topic", me["id"]),
        &w.admin,
        json!({"push_topic": "admin-pager"}),
    )
    .await
    .expect(200);
    w
}

/// The open incident as the list shows it.
async fn listed(app: &TestApp, w: &Paging, incident: i64) -> serde_json::Value {
    app.incidents(&w.admin, w.team)
        .await
        .into_iter()
        .find(|i| i["id"] == incident)
        .expect("listed")
}

both!(
    an_incident_nobody_holds_pages_the_owners_and_says_so,
    |app| {
        let w = nobody_on_call(&app).await;
        let incident = app.fire(&w.key, "g1").await;
        app.tick().await;
        let pages = app.ntfy.take();
        assert_eq!(topics(&pages), ["admin-pager"]);
        assert!(
            pages[0].ack_url().is_some(),
            "a page to one owner acknowledges"
        );
        let i = listed(&app, &w, incident).await;
        assert_eq!(i["assignee"], serde_json::Value::Null);
        assert_eq!(i["paged"], "the team's owners");
        let d = app.detail(&w.admin, incident).await;
        assert_eq!(
        timeline_texts(&d, "paged"),
        vec!["nobody is on call today and the team has no fallback topic: paging its owners admin"]
    );

        // Reminders and the all-clear go to the owners too.
        app.clock.advance(30 * 60);
        assert_eq!(app.tick().await.reminded, 1);
        assert_eq!(topics(&app.ntfy.take()), ["admin-pager"]);
        app.clear(&w.key, "g1").await;
        app.tick().await;
        let cleared = app.ntfy.take();
        assert_eq!(topics(&cleared), ["admin-pager"]);
        assert!(
            cleared[0].title.starts_with("[RESOLVED]"),
            "{}",
            cleared[0].title
        );

        // With a fallback topic, that is paged instead, and the list says so.
        app.put(
            &format!("/api/teams/{}/escalation", w.team),
            &w.admin,
            json!({"levels": [], "fallback_topic": "payments-fallback"}),
        )
        .await
        .expect(200);
        let shared = app.fire(&w.key, "g2").await;
        app.tick().await;
        assert_eq!(topics(&app.ntfy.take()), ["payments-fallback"]);
        assert_eq!(
            listed(&app, &w, shared).await["paged"],
            "the fallback topic"
        );
    }
);

both!(
    with_no_owner_reachable_the_list_says_nobody_was_paged,
    |app| {
        let w = app.paging_world().await;
        app.clock.advance(86_400);
        let incident = app.fire(&w.key, "g1").await;
        app.tick().await;
        assert!(app.ntfy.take().is_empty());
        assert_eq!(
            listed(&app, &w, incident).await["paged"],
            serde_json::Value::Null
        );
        let d = app.detail(&w.admin, incident).await;
        assert_eq!(
        timeline_texts(&d, "nobody_reachable"),
        vec!["nobody paged: nobody is on call today, the team has no fallback topic and no owner can be reached"]
    );
    }
);

both!(
    taking_over_an_unpaged_incident_pages_the_taker_and_starts_reminders,
    |app| {
        let w = app.paging_world().await;
        app.clock.advance(86_400);
        let incident = app.fire(&w.key, "g1").await;
        app.tick().await;
        assert!(app.ntfy.take().is_empty(), "nobody to page yet");

        app.post(
            &format!("/api/teams/{}/schedule/take-over", w.team),
            &w.bob.1,
            json!({}),
        )
        .await
        .expect(200);
        app.tick().await;
        let pages = app.ntfy.take();
        assert_eq!(topics(&pages), ["bob-pager"], "taken over: paged at once");
        assert!(pages[0].title.starts_with("[CRITICAL]"), "the opening page");
        let i = listed(&app, &w, incident).await;
        assert_eq!(
            (i["assignee"].as_str(), i["paged"].as_str()),
            (Some("bob"), Some("bob"))
        );
        let d = app.detail(&w.admin, incident).await;
        assert_eq!(
            timeline_texts(&d, "paged"),
            vec!["paging bob, the new assignee"]
        );

        // Reminders run from the take-over, and the button acknowledges as bob.
        app.clock.advance(30 * 60 - 1);
        app.tick().await;
        assert!(app.ntfy.take().is_empty(), "not before the interval");
        app.clock.advance(1);
        app.tick().await;
        let reminder = app.ntfy.take();
        assert_eq!(topics(&reminder), ["bob-pager"]);
        app.press_ack(&reminder[0].ack_url().unwrap())
            .await
            .expect(200);
        assert_eq!(
            app.detail(&w.admin, incident).await["acknowledged_by"],
            "bob"
        );
    }
);

both!(
    assigning_an_untouched_incident_pages_the_new_assignee,
    |app| {
        let w = app.paging_world().await;
        let incident = app.fire(&w.key, "g1").await;
        app.tick().await;
        assert_eq!(topics(&app.ntfy.take()), ["alice-pager"]);

        let assign = format!("/api/incidents/{incident}/assign");
        app.post(&assign, &w.alice.1, json!({"user_id": w.carol.0}))
            .await
            .expect(200);
        app.tick().await;
        let pages = app.ntfy.take();
        assert_eq!(topics(&pages), ["carol-pager"]);
        assert!(
            pages[0].message.contains("assigned to you"),
            "{}",
            pages[0].message
        );
        // Assigning to the same person again pages nobody.
        app.post(&assign, &w.alice.1, json!({"user_id": w.carol.0}))
            .await
            .expect(200);
        app.tick().await;
        assert!(app.ntfy.take().is_empty());
        // Reminders follow carol from the assignment.
        app.clock.advance(30 * 60);
        app.tick().await;
        assert_eq!(topics(&app.ntfy.take()), ["carol-pager"]);

        // An acknowledged incident is not paged when assigned.
        app.post(
            &format!("/api/incidents/{incident}/acknowledge"),
            &w.carol.1,
            json!({}),
        )
        .await
        .expect(200);
        app.post(&assign, &w.carol.1, json!({"user_id": w.bob.0}))
            .await
            .expect(200);
        app.tick().await;
        assert!(app.ntfy.take().is_empty());
    }
);

both!(
    a_held_page_goes_to_whoever_has_the_incident_when_released,
    |app| {
        let w = app.paging_world().await;
        let window = app
            .post(
                &format!("/api/teams/{}/maintenance", w.team),
                &w.admin,
                json!({"duration": "1h"}),
            )
            .await
            .expect(201);
        let incident = app.fire(&w.key, "g1").await;
        assert_eq!(app.tick().await.held, 1);
        assert!(app.ntfy.take().is_empty());

        app.post(
            &format!("/api/incidents/{incident}/assign"),
            &w.admin,
            json!({"user_id": w.bob.0}),
        )
        .await
        .expect(200);
        app.tick().await;
        assert!(app.ntfy.take().is_empty(), "still in maintenance");

        // Ended early: the held page goes, to bob only.
        app.clock.advance(600);
        app.delete(
            &format!("/api/teams/{}/maintenance/{}", w.team, window["id"]),
            &w.admin,
        )
        .await
        .expect(204);
        app.tick().await;
        assert_eq!(topics(&app.ntfy.take()), ["bob-pager"]);
        app.tick().await;
        assert!(app.ntfy.take().is_empty(), "paged once");
    }
);
