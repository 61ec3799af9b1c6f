//! Hand-off notices: at the team's time tomorrow's on-call person is told, and when a day ends
//! the outgoing one is; only when the holder changes, once per day whoever sweeps, through the
//! page outbox with its retries, never with Acknowledge. A manual clock; the recording ntfy
//! server shows what reached a phone.

mod common;
use common::*;
use serde_json::{json, Value};

const HOUR: i64 = 3_600;
const DAY: i64 = 86_400;

/// Moves the manual clock to `T0 + offset`, sweeps and delivers; what reached phones.
async fn at(app: &TestApp, offset: i64) -> (u64, Vec<common::ntfy::Published>) {
    app.clock.set(T0 + offset);
    let report = app.core.sweep().await.expect("sweep");
    app.tick().await;
    (report.handoffs, app.ntfy.take())
}

async fn handoff_pages(app: &TestApp) -> Vec<(String, i64, Option<i64>)> {
    sqlx::query_as(
        "SELECT state, attempts, incident_id FROM pages WHERE kind = 'handoff' ORDER BY id",
    )
    .fetch_all(&app.core.db.pool)
    .await
    .unwrap()
}

both!(settings_are_owned_bounded_and_off_by_default, |app| {
    let w = app.paging_world().await;
    let path = format!("/api/teams/{}/handoff", w.team);
    assert_eq!(
        app.get(&path, &w.bob.1).await.expect(200),
        json!({"enabled": false, "at": "09:00"})
    );
    for bad in [
        json!({"enabled": true, "at": "9:00"}),
        json!({"enabled": true, "at": "24:00"}),
        json!({"enabled": true, "at": "09:60"}),
        json!({"enabled": true}),
        json!({"at": "09:00"}),
        json!({"enabled": "yes", "at": "09:00"}),
        json!({"enabled": true, "at": "09:00", "tz": "Europe/Paris"}),
    ] {
        app.put(&path, &w.admin, bad.clone())
            .await
            .expect_error(400, "invalid");
    }
    app.put(&path, &w.bob.1, json!({"enabled": true, "at": "09:00"}))
        .await
        .expect_error(403, "forbidden");
    let (_, eve) = app.user(&w.admin, "eve").await;
    app.get(&path, &eve).await.expect_error(404, "not_found");
    assert_eq!(
        app.get(&path, &w.admin).await.expect(200)["enabled"],
        false,
        "refused changes stored nothing"
    );
    let set = app
        .put(&path, &w.admin, json!({"enabled": true, "at": "18:30"}))
        .await
        .expect(200);
    assert_eq!(set, json!({"enabled": true, "at": "18:30"}));
    assert_eq!(app.get(&path, &w.bob.1).await.expect(200), set);
});

both!(notices_go_when_the_holder_changes_and_only_once, |app| {
    let w = app.paging_world().await;
    let schedule = format!("/api/teams/{}/schedule", w.team);
    // alice holds 22 November (paging_world); bob 23 and 24; carol 25.
    for (user, dates) in [
        (w.bob.0, json!(["2026-11-23", "2026-11-24"])),
        (w.carol.0, json!(["2026-11-25"])),
    ] {
        app.post(
            &schedule,
            &w.admin,
            json!({"user_id": user, "dates": dates}),
        )
        .await
        .expect(201);
    }
    // Off: 09:00 passes and the day ends without a word.
    assert_eq!(at(&app, 9 * HOUR).await.0, 0);
    app.clock.set(T0 + 8 * HOUR);
    app.put(
        &format!("/api/teams/{}/handoff", w.team),
        &w.admin,
        json!({"enabled": true, "at": "09:00"}),
    )
    .await
    .expect(200);

    let (queued, sent) = at(&app, 9 * HOUR - 60).await;
    assert_eq!((queued, sent.len()), (0, 0), "not before the team's time");

    let (queued, sent) = at(&app, 9 * HOUR).await;
    assert_eq!(queued, 1);
    assert_eq!(sent.len(), 1, "{sent:?}");
    assert_eq!(sent[0].topic, "bob-pager");
    assert_eq!(
        sent[0].message,
        "You are on call tomorrow (Monday 23 November) for payments."
    );
    assert!(sent[0].actions.is_empty(), "a notice has no Acknowledge");
    assert_eq!(
        sent[0].click.as_deref(),
        Some(format!("{}/teams/{}/rota", app.config.public_url, w.team).as_str())
    );
    // Sweeping again that day, by any replica, queues nothing more.
    for later in [9 * HOUR + 60, 20 * HOUR] {
        let (queued, sent) = at(&app, later).await;
        assert_eq!((queued, sent.len()), (0, 0));
    }

    // The day ends: alice, outgoing, is told who has it now.
    let (queued, sent) = at(&app, DAY).await;
    assert_eq!(queued, 1);
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0].topic, "alice-pager");
    assert_eq!(
        sent[0].message,
        "Your on-call day for payments has ended. bob is on call now."
    );
    // bob keeps it on the 24th: no notice either way.
    assert_eq!(at(&app, DAY + 9 * HOUR).await.0, 0);
    assert_eq!(at(&app, 2 * DAY).await.0, 0);
    // carol takes the 25th: she hears at 09:00, bob when the 24th ends.
    let (_, sent) = at(&app, 2 * DAY + 9 * HOUR).await;
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0].topic, "carol-pager");
    let (_, sent) = at(&app, 3 * DAY).await;
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0].topic, "bob-pager");
    assert!(sent[0].message.contains("carol is on call now"));
    // Nobody holds the 26th: carol is told so when her day ends.
    let (_, sent) = at(&app, 4 * DAY).await;
    assert_eq!(
        sent.iter().map(|p| p.message.as_str()).collect::<Vec<_>>(),
        vec!["Your on-call day for payments has ended. Nobody is on call today."]
    );
    // Every notice is a page of the team, of no incident, and was sent.
    let pages = handoff_pages(&app).await;
    assert_eq!(pages.len(), 5);
    assert!(pages
        .iter()
        .all(|(state, _, incident)| state == "sent" && incident.is_none()));
});

both!(a_notice_that_fails_is_retried_like_a_page, |app| {
    let w = app.paging_world().await;
    app.post(
        &format!("/api/teams/{}/schedule", w.team),
        &w.admin,
        json!({"user_id": w.bob.0, "dates": ["2026-11-23"]}),
    )
    .await
    .expect(201);
    app.put(
        &format!("/api/teams/{}/handoff", w.team),
        &w.admin,
        json!({"enabled": true, "at": "09:00"}),
    )
    .await
    .expect(200);
    app.ntfy.fail_next(1, 503, Some(60));
    let (queued, sent) = at(&app, 9 * HOUR).await;
    assert_eq!((queued, sent.len()), (1, 0), "the push service refused it");
    assert_eq!(
        handoff_pages(&app).await,
        vec![("pending".to_string(), 1, None)]
    );
    let (_, sent) = at(&app, 9 * HOUR + 60).await;
    assert_eq!(sent.len(), 1, "retried after the Retry-After");
    assert_eq!(sent[0].topic, "bob-pager");
    assert_eq!(
        handoff_pages(&app).await,
        vec![("sent".to_string(), 2, None)]
    );
    // Turning notices on late does not reach back to a moment already passed.
    let other = app.team(&w.admin, "search").await;
    let _: Value = app
        .put(
            &format!("/api/teams/{other}/handoff"),
            &w.admin,
            json!({"enabled": true, "at": "09:00"}),
        )
        .await
        .expect(200);
    assert_eq!(at(&app, 10 * HOUR).await.0, 0);
});
