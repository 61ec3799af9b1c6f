//! Hand-off notices: at each hand-off of the team's on-call day the incoming person is told, and
//! the outgoing one; a cover's start and end tell both its people. Only when the holder changes,
//! once whoever sweeps, through the page outbox with its retries, never with Acknowledge, never
//! more than an hour late. A manual clock; the recording ntfy server shows what reached a phone.

use crate::common;
use common::*;
use serde_json::json;

const HOUR: i64 = 3_600;
const DAY: i64 = 86_400;

/// Moves the manual clock to `T0 + offset`, sweeps and delivers; what reached phones.
async fn at(app: &TestApp, offset: i64) -> (u64, Vec<common::ntfy::Published>) {
    app.clock.set(T0 + offset);
    let report = app.core.sweep().await.expect("sweep");
    app.tick().await;
    (report.handoffs, app.ntfy.take())
}

/// Unix seconds of `YYYY-MM-DDTHH:MM` UTC.
fn utc(s: &str) -> i64 {
    klaxon_domain::Timestamp::parse(&format!("{s}:00Z"))
        .unwrap()
        .0
}

async fn at_time(app: &TestApp, t: i64) -> (u64, Vec<common::ntfy::Published>) {
    app.clock.set(t);
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
        json!({"enabled": false, "at": "00:00", "time_zone": "UTC"})
    );
    for bad in [
        json!({"enabled": true, "at": "9:00"}),
        json!({"enabled": true, "at": "24:00"}),
        json!({"at": "00:00"}),
        json!({"enabled": "yes"}),
        json!({"enabled": true, "tz": "Europe/Paris"}),
        // Notices go at the team's hand-off time; another time is refused, not ignored.
        json!({"enabled": true, "at": "09:00"}),
    ] {
        app.put(&path, &w.admin, bad.clone())
            .await
            .expect_error(400, "invalid");
    }
    app.put(&path, &w.bob.1, json!({"enabled": true}))
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
        .put(&path, &w.admin, json!({"enabled": true, "at": "00:00"}))
        .await
        .expect(200);
    assert_eq!(
        set,
        json!({"enabled": true, "at": "00:00", "time_zone": "UTC"})
    );
    assert_eq!(app.get(&path, &w.bob.1).await.expect(200), set);
    // They follow the team's on-call day.
    app.put(
        &format!("/api/teams/{}/on-call-day", w.team),
        &w.admin,
        json!({"time_zone": "Europe/Berlin", "handoff_time": "09:00"}),
    )
    .await
    .expect(200);
    assert_eq!(
        app.get(&path, &w.bob.1).await.expect(200),
        json!({"enabled": true, "at": "09:00", "time_zone": "Europe/Berlin"})
    );
});

both!(notices_go_at_each_hand_off_when_the_holder_changes, |app| {
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
    app.clock.set(T0 + 8 * HOUR);
    app.put(
        &format!("/api/teams/{}/handoff", w.team),
        &w.admin,
        json!({"enabled": true}),
    )
    .await
    .expect(200);
    // Turning them on does not reach back to today's hand-off.
    assert_eq!(at(&app, 9 * HOUR).await.0, 0);
    let (queued, sent) = at(&app, DAY - 60).await;
    assert_eq!((queued, sent.len()), (0, 0), "not before the hand-off");

    // The 23rd begins: bob is told he has it, alice that her day has ended.
    let (queued, mut sent) = at(&app, DAY).await;
    assert_eq!(queued, 2);
    sent.sort_by(|a, b| a.topic.cmp(&b.topic));
    assert_eq!(
        sent.iter()
            .map(|p| (p.topic.as_str(), p.message.as_str()))
            .collect::<Vec<_>>(),
        vec![
            (
                "alice-pager",
                "Your on-call day for payments has ended. bob is on call now, until Tuesday 24 November 00:00 (UTC)."
            ),
            (
                "bob-pager",
                "You are on call for payments now, until Tuesday 24 November 00:00 (UTC)."
            ),
        ]
    );
    assert!(
        sent.iter().all(|p| p.actions.is_empty()),
        "a notice has no Acknowledge"
    );
    assert_eq!(
        sent[0].click.as_deref(),
        Some(format!("{}/teams/{}/rota", app.config.public_url, w.team).as_str())
    );
    // Sweeping again that day, by any replica, queues nothing more.
    for later in [DAY + 60, DAY + 20 * HOUR] {
        let (queued, sent) = at(&app, later).await;
        assert_eq!((queued, sent.len()), (0, 0));
    }
    // bob keeps it on the 24th: no notice either way.
    assert_eq!(at(&app, 2 * DAY).await.0, 0);
    // carol takes the 25th.
    let (_, sent) = at(&app, 3 * DAY).await;
    assert_eq!(sent.len(), 2);
    assert!(sent
        .iter()
        .any(|p| p.topic == "bob-pager" && p.message.contains("carol is on call now")));
    // Nobody holds the 26th: carol is told so.
    let (_, sent) = at(&app, 4 * DAY).await;
    assert_eq!(
        sent.iter().map(|p| p.message.as_str()).collect::<Vec<_>>(),
        vec!["Your on-call day for payments has ended. Nobody is on call now."]
    );
    // Every notice is a page of the team, of no incident, and was sent.
    let pages = handoff_pages(&app).await;
    assert_eq!(pages.len(), 5);
    assert!(pages
        .iter()
        .all(|(state, _, incident)| state == "sent" && incident.is_none()));

    // A sweep more than an hour after a hand-off (every replica down) sends nothing late.
    app.post(
        &schedule,
        &w.admin,
        json!({"user_id": w.alice.0, "dates": ["2026-11-27"]}),
    )
    .await
    .expect(201);
    assert_eq!(at(&app, 5 * DAY + HOUR + 60).await.0, 0);
});

// A week across New York's spring-forward (14 March 2027, 02:00 → 03:00) with a 19:00
// hand-off: each day's notices go at 19:00 New York time, which is 00:00 UTC before the change
// and 23:00 UTC after it; the 13th's day is 23 hours long.
both!(a_spring_forward_week_of_notices_follows_local_time, |app| {
    let w = app.paging_world().await;
    app.clock.set(utc("2027-03-01T12:00"));
    app.put(
        &format!("/api/teams/{}/on-call-day", w.team),
        &w.admin,
        json!({"time_zone": "America/New_York", "handoff_time": "19:00"}),
    )
    .await
    .expect(200);
    let dates = [
        "2027-03-09",
        "2027-03-10",
        "2027-03-11",
        "2027-03-12",
        "2027-03-13",
        "2027-03-14",
        "2027-03-15",
        "2027-03-16",
    ];
    for (i, date) in dates.iter().enumerate() {
        let user = if i % 2 == 0 { w.bob.0 } else { w.alice.0 };
        app.post(
            &format!("/api/teams/{}/schedule", w.team),
            &w.admin,
            json!({"user_id": user, "dates": [date]}),
        )
        .await
        .expect(201);
    }
    app.put(
        &format!("/api/teams/{}/handoff", w.team),
        &w.admin,
        json!({"enabled": true}),
    )
    .await
    .expect(200);
    let starts = [
        "2027-03-11T00:00", // the 10th, 19:00 EST
        "2027-03-12T00:00",
        "2027-03-13T00:00",
        "2027-03-14T00:00", // the 13th: 23 hours, to 19:00 EDT on the 14th
        "2027-03-14T23:00",
        "2027-03-15T23:00",
        "2027-03-16T23:00",
    ];
    for (i, start) in starts.iter().enumerate() {
        let t = utc(start);
        let (queued, _) = at_time(&app, t - 60).await;
        assert_eq!(queued, 0, "{start}: not a minute early");
        let (queued, sent) = at_time(&app, t).await;
        assert_eq!(queued, 2, "{start}: {sent:?}");
        let incoming = if i % 2 == 0 {
            "alice-pager"
        } else {
            "bob-pager"
        };
        let notice = sent.iter().find(|p| p.topic == incoming).unwrap();
        assert!(
            notice
                .message
                .starts_with("You are on call for payments now"),
            "{start}: {}",
            notice.message
        );
    }
    // The message names the end in the team's time.
    let pages: Vec<(String,)> =
        sqlx::query_as("SELECT detail FROM pages WHERE kind = 'handoff' ORDER BY id")
            .fetch_all(&app.core.db.pool)
            .await
            .unwrap();
    assert!(pages.iter().any(|(d,)| d
        == "You are on call for payments now, until Monday 15 March 19:00 (America/New_York)."));
});

// A cover's start and end tell the person covering and the person covered.
both!(a_cover_tells_both_its_people, |app| {
    let w = app.paging_world().await;
    app.clock.set(T0 + 8 * HOUR);
    app.put(
        &format!("/api/teams/{}/handoff", w.team),
        &w.admin,
        json!({"enabled": true}),
    )
    .await
    .expect(200);
    app.post(
        &format!("/api/teams/{}/covers", w.team),
        &w.bob.1,
        json!({"user_id": w.bob.0, "starts_at": "2026-11-22T14:00:00Z", "ends_at": "2026-11-22T18:00:00Z"}),
    )
    .await
    .expect(201);
    assert_eq!(at(&app, 14 * HOUR - 60).await.0, 0);
    let (queued, mut sent) = at(&app, 14 * HOUR).await;
    assert_eq!(queued, 2);
    sent.sort_by(|a, b| a.topic.cmp(&b.topic));
    assert_eq!(
        sent.iter()
            .map(|p| (p.topic.as_str(), p.message.as_str()))
            .collect::<Vec<_>>(),
        vec![
            (
                "alice-pager",
                "bob has the payments pager for you now, until Sunday 22 November 18:00 (UTC); you are not paged until then."
            ),
            (
                "bob-pager",
                "You have the payments pager now, covering for alice, until Sunday 22 November 18:00 (UTC)."
            ),
        ]
    );
    assert_eq!(at(&app, 15 * HOUR).await.0, 0, "once");
    let (queued, mut sent) = at(&app, 18 * HOUR).await;
    assert_eq!(queued, 2);
    sent.sort_by(|a, b| a.topic.cmp(&b.topic));
    assert_eq!(
        sent.iter()
            .map(|p| (p.topic.as_str(), p.message.as_str()))
            .collect::<Vec<_>>(),
        vec![
            (
                "alice-pager",
                "bob's cover has ended: you have the payments pager again."
            ),
            (
                "bob-pager",
                "Your cover of the payments pager has ended. alice has it now."
            ),
        ]
    );
    assert_eq!(at(&app, 19 * HOUR).await.0, 0, "once");
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
        json!({"enabled": true}),
    )
    .await
    .expect(200);
    // Two notices at the 23rd's hand-off; the push service refuses the first it is sent.
    app.ntfy.fail_next(1, 503, Some(60));
    let (queued, sent) = at(&app, DAY).await;
    assert_eq!((queued, sent.len()), (2, 1), "the push service refused one");
    let pending = || async {
        handoff_pages(&app)
            .await
            .into_iter()
            .filter(|(state, _, _)| state == "pending")
            .count()
    };
    assert_eq!(pending().await, 1);
    let (_, sent) = at(&app, DAY + 60).await;
    assert_eq!(sent.len(), 1, "retried after the Retry-After");
    assert_eq!(pending().await, 0);
    assert!(handoff_pages(&app)
        .await
        .iter()
        .all(|(s, _, _)| s == "sent"));
});
