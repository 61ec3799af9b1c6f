//! A flooded phone: a topic gets at most five pushes a minute, the rest of its pages go out as
//! one summary push with an Acknowledge-all button and a link to exactly those incidents; a
//! topic the push service rate-limits waits for its Retry-After while other topics go on.
//! A manual clock and a recording ntfy server.

use crate::common;
use common::*;
use serde_json::json;
use std::collections::BTreeSet;

/// Fires a critical alert in each of `groups` and returns the incidents, in order.
async fn fire_all(app: &TestApp, key: &str, groups: &[String]) -> Vec<i64> {
    let mut ids = Vec::new();
    for g in groups {
        ids.push(app.fire(key, g).await);
    }
    ids
}

fn groups(prefix: &str, n: usize) -> Vec<String> {
    (0..n).map(|i| format!("{prefix}{i}")).collect()
}

/// The bundle a summary push's link names.
fn bundle_of(page: &common::ntfy::Published) -> i64 {
    let click = page
        .click
        .as_deref()
        .expect("a summary links to its incidents");
    click
        .rsplit_once("/?bundle=")
        .expect("the incident list filtered to the bundle")
        .1
        .parse()
        .unwrap()
}

/// How many pages of `incident` of `kind` were sent, and how many of them in a bundle.
async fn sent_pages(app: &TestApp, incident: i64, kind: &str) -> (i64, i64) {
    sqlx::query_as(
        "SELECT COUNT(*), COUNT(bundle_id) FROM pages WHERE incident_id = $1 AND kind = $2 AND state = 'sent'",
    )
    .bind(incident)
    .bind(kind)
    .fetch_one(&app.core.db.pool)
    .await
    .unwrap()
}

both!(
    a_flooded_topic_gets_five_pushes_a_minute_and_one_summary_acknowledges_the_rest,
    |app| {
        let w = app.paging_world().await;
        // Twelve incidents at once: four pages alone, the other eight in one summary.
        let first = fire_all(&app, &w.key, &groups("storm-", 12)).await;
        app.tick().await;
        let pushes = app.ntfy.take();
        assert_eq!(pushes.len(), 5, "{pushes:#?}");
        assert!(pushes.iter().all(|p| p.topic == "alice-pager"));
        for p in &pushes[..4] {
            assert!(
                p.ack_url().is_some(),
                "a page alone acknowledges its incident"
            );
        }
        let summary = &pushes[4];
        assert!(
            summary.title.starts_with("[CRITICAL] 8 incidents in "),
            "{}",
            summary.title
        );
        assert!(
            summary.message.starts_with("8 new incidents in ")
                && summary.message.contains(": 8 critical."),
            "{}",
            summary.message
        );
        assert_eq!(summary.priority, 5);
        let bundle = bundle_of(summary);

        // Every incident was in exactly one push, and the link lists exactly the bundled ones.
        let mut bundled = BTreeSet::new();
        for id in &first {
            let (sent, in_bundle) = sent_pages(&app, *id, "opening").await;
            assert_eq!(sent, 1, "incident {id} paged once");
            if in_bundle == 1 {
                bundled.insert(*id);
            }
        }
        assert_eq!(bundled, first[4..].iter().copied().collect());
        let listed: BTreeSet<i64> = app
            .get(&format!("/api/incidents?bundle={bundle}"), &w.alice.1)
            .await
            .expect(200)
            .as_array()
            .unwrap()
            .iter()
            .map(|i| i["id"].as_i64().unwrap())
            .collect();
        assert_eq!(listed, bundled);
        // The phone's list opened from the summary's link shows exactly those first.
        let phone = app.login("alice", "alice password").await;
        let html = app.get(&format!("/?bundle={bundle}"), &phone).await.text;
        assert!(html.contains("8 incidents paged together"), "{html}");
        let section = &html[html.find("8 incidents paged together").unwrap()..];
        let section = &section[..section
            .find("Show all incidents")
            .expect("a way back to all")];
        for id in &first {
            let link = format!("href=\"/incidents/{id}\"");
            assert_eq!(
                section.contains(&link),
                bundled.contains(id),
                "incident {id}"
            );
        }
        let d = app.detail(&w.admin, first[11]).await;
        assert!(
            timeline_texts(&d, "paged").contains(
                &"opening page to alice went in one summary push with 7 other incidents"
                    .to_string()
            ),
            "{:?}",
            timeline_texts(&d, "paged")
        );

        // Three more within the minute: the topic had its five, so they wait, and say so.
        app.clock.advance(10);
        let later = fire_all(&app, &w.key, &groups("late-", 3)).await;
        app.tick().await;
        assert!(app.ntfy.take().is_empty(), "nothing more this minute");
        let d = app.detail(&w.admin, later[0]).await;
        assert!(
            timeline_texts(&d, "paged")
                .iter()
                .any(|t| t.starts_with("page to alice waits for a summary push")),
            "{:?}",
            timeline_texts(&d, "paged")
        );
        // When the minute's first pushes age out, the three go together.
        app.clock.advance(50);
        app.tick().await;
        let pushes = app.ntfy.take();
        assert_eq!(pushes.len(), 1, "{pushes:#?}");
        assert!(
            pushes[0].title.starts_with("[CRITICAL] 3 incidents in "),
            "{}",
            pushes[0].title
        );
        for id in &later {
            assert_eq!(sent_pages(&app, *id, "opening").await, (1, 1));
        }

        // Acknowledge all acts on exactly the eight of the first summary, as alice.
        let acked = app
            .press_ack(&summary.ack_all_url().expect("Acknowledge all"))
            .await
            .expect(200);
        let acked: BTreeSet<i64> = acked["acknowledged"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_i64().unwrap())
            .collect();
        assert_eq!(acked, bundled);
        for id in &first {
            let d = app.detail(&w.admin, *id).await;
            let expected = if bundled.contains(id) {
                "acknowledged"
            } else {
                "triggered"
            };
            assert_eq!(d["state"], expected, "incident {id}");
            if bundled.contains(id) {
                assert_eq!(d["acknowledged_by"], "alice");
            }
        }
        for id in &later {
            assert_eq!(app.detail(&w.admin, *id).await["state"], "triggered");
        }
        // A second tap says so and changes nothing.
        let again = app
            .press_ack(&summary.ack_all_url().unwrap())
            .await
            .expect_error(409, "conflict");
        assert!(again.contains("already acknowledged by alice"), "{again}");
    }
);

both!(
    all_clears_and_reminders_are_bundled_by_the_same_rule,
    |app| {
        let w = app.paging_world().await;
        let ids = fire_all(&app, &w.key, &groups("g", 7)).await;
        app.tick().await;
        assert_eq!(
            app.ntfy.take().len(),
            5,
            "four alone and a summary of three"
        );

        // Half an hour on, all seven are due a reminder at once.
        app.clock.advance(30 * 60);
        assert_eq!(app.tick().await.reminded, 7);
        let reminders = app.ntfy.take();
        assert_eq!(reminders.len(), 5);
        assert!(
            reminders[4].message.starts_with("3 incidents in ")
                && reminders[4]
                    .message
                    .contains("3 still unacknowledged; 3 critical."),
            "{}",
            reminders[4].message
        );

        // A minute later all seven resolve: four all-clears alone, three in a summary.
        app.clock.advance(61);
        for i in 0..7 {
            app.clear(&w.key, &format!("g{i}")).await;
        }
        app.tick().await;
        let cleared = app.ntfy.take();
        assert_eq!(cleared.len(), 5, "{cleared:#?}");
        assert!(cleared.iter().all(|p| p.title.starts_with("[RESOLVED]")));
        assert!(
            cleared[4].title.starts_with("[RESOLVED] 3 incidents in "),
            "{}",
            cleared[4].title
        );
        assert!(cleared[4].ack_all_url().is_none(), "nothing to acknowledge");
        for id in ids {
            assert_eq!(
                sent_pages(&app, id, "all_clear").await.0,
                1,
                "incident {id}"
            );
        }
    }
);

both!(
    a_rate_limited_topic_waits_for_its_retry_after_while_other_topics_go_on,
    |app| {
        let w = app.paging_world().await;
        app.ntfy.rate_limit("alice-pager", 30);
        let a = app.fire(&w.key, "a").await;
        app.tick().await;
        let b = app.fire(&w.key, "b").await;
        // bob is paged when given a third incident, while alice's topic waits.
        let c = app.fire(&w.key, "c").await;
        app.post(
            &format!("/api/incidents/{c}/assign"),
            &w.admin,
            json!({"user_id": w.bob.0}),
        )
        .await
        .expect(200);
        app.clock.advance(10);
        app.tick().await;
        let pushes = app.ntfy.take();
        assert_eq!(
            pushes.iter().map(|p| p.topic.as_str()).collect::<Vec<_>>(),
            ["bob-pager"]
        );
        // alice's topic was asked once, not once per pass or per page.
        assert_eq!(app.ntfy.lift("alice-pager"), 1);
        let d = app.detail(&w.admin, a).await;
        assert_eq!(
            timeline_texts(&d, "push_failed"),
            ["page to alice failed, retrying: ntfy answered 429: limit reached: too many requests"]
        );

        // At the Retry-After, alice's pages go, in the order they were queued.
        app.clock.advance(19);
        app.tick().await;
        assert!(app.ntfy.take().is_empty(), "not before the 30 s asked for");
        app.clock.advance(1);
        app.tick().await;
        let pushes = app.ntfy.take();
        let clicks: Vec<String> = pushes.iter().filter_map(|p| p.click.clone()).collect();
        assert_eq!(
            clicks,
            [a, b].map(|id| format!("{}/incidents/{id}", app.config.public_url))
        );
    }
);
