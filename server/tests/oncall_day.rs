//! A team's on-call day in its own time and partial-day covers, with the controlled clock:
//! incidents opened a minute either side of a local hand-off go to the right person, a change
//! of zone keeps every date with its holder and takes effect from the next hand-off, and a
//! cover holds the pager from its start to its end, then the day's holder is back.

use crate::common;
use common::*;
use serde_json::{json, Value};

const MINUTE: i64 = 60;
const HOUR: i64 = 3_600;
const DAY: i64 = 86_400;

/// Unix seconds of `YYYY-MM-DDTHH:MM` UTC.
fn utc(s: &str) -> i64 {
    klaxon_domain::Timestamp::parse(&format!("{s}:00Z"))
        .unwrap()
        .0
}

/// The assignee's name of a new incident of its own group, opened at `t`.
async fn assigned_at(app: &TestApp, w: &Paging, t: i64, group: &str) -> Value {
    app.clock.set(t);
    let id = app.fire(&w.key, group).await;
    let d = app.detail(&w.admin, id).await;
    json!({
        "assignee": d["assignee"].clone(),
        "why": d["timeline"].as_array().unwrap().iter()
            .find(|e| e["kind"] == "assigned").map(|e| e["text"].clone()),
    })
}

both!(a_new_incident_goes_to_the_holder_of_the_local_day, |app| {
    let w = app.paging_world().await;
    let day = format!("/api/teams/{}/on-call-day", w.team);
    // The seed's day until a team says otherwise.
    let seed = app.get(&day, &w.bob.1).await.expect(200);
    assert_eq!(seed["time_zone"], "UTC");
    assert_eq!(seed["handoff_time"], "00:00");
    assert_eq!(seed["takes_effect_at"], Value::Null);
    assert_eq!(seed["summary"], "Days run 00:00–00:00 UTC time.");
    assert_eq!(seed["today"], "2026-11-22");

    // alice holds the 22nd (paging_world), bob the 23rd, carol the 24th.
    for (user, date) in [(w.bob.0, "2026-11-23"), (w.carol.0, "2026-11-24")] {
        app.post(
            &format!("/api/teams/{}/schedule", w.team),
            &w.admin,
            json!({"user_id": user, "dates": [date]}),
        )
        .await
        .expect(201);
    }

    // Bad input changes nothing.
    for bad in [
        json!({"time_zone": "Mars/Olympus", "handoff_time": "19:00"}),
        json!({"time_zone": "America/New_York", "handoff_time": "7pm"}),
        json!({"time_zone": "America/New_York", "handoff_time": "24:00"}),
        json!({"time_zone": "America/New_York"}),
        json!({"time_zone": "../etc/passwd", "handoff_time": "19:00"}),
        json!({"time_zone": "America/New_York", "handoff_time": "19:00", "offset": -5}),
    ] {
        app.put(&day, &w.admin, bad.clone())
            .await
            .expect_error(400, "invalid");
    }
    app.put(
        &day,
        &w.bob.1,
        json!({"time_zone": "America/New_York", "handoff_time": "19:00"}),
    )
    .await
    .expect_error(403, "forbidden");

    // The preview shows the effect and stores nothing.
    app.clock.set(utc("2026-11-22T12:00"));
    let change = json!({"time_zone": "America/New_York", "handoff_time": "19:00"});
    let mut dry = change.clone();
    dry["dry_run"] = json!(true);
    let preview = app.put(&day, &w.admin, dry).await.expect(200);
    assert_eq!(
        preview["summary"],
        "From Monday 23 November 19:00 America/New_York time, days run 19:00–19:00."
    );
    assert_eq!(preview["takes_effect_at"], "2026-11-24T00:00:00Z");
    assert_eq!(app.get(&day, &w.admin).await.expect(200), seed);

    let saved = app.put(&day, &w.admin, change).await.expect(200);
    assert_eq!(saved, preview);
    assert_eq!(app.get(&day, &w.bob.1).await.expect(200), saved);
    // Today keeps its holder to the next hand-off: alice's 22nd runs to Monday 19:00 New York
    // time (midnight UTC), when bob's 23rd begins.
    assert_eq!(saved["today"], "2026-11-22");
    assert_eq!(saved["today_ends_at"], "2026-11-24T00:00:00Z");

    let t = utc("2026-11-24T00:00");
    assert_eq!(
        assigned_at(&app, &w, t - MINUTE, "before").await,
        json!({"assignee": "alice", "why": "assigned to alice, on call today"})
    );
    assert_eq!(
        assigned_at(&app, &w, t + MINUTE, "after").await["assignee"],
        "bob"
    );
    // From then on days run 19:00–19:00 New York time: carol's 24th from Tuesday 19:00.
    let t = utc("2026-11-25T00:00");
    assert_eq!(
        assigned_at(&app, &w, t - MINUTE, "tuesday-before").await["assignee"],
        "bob"
    );
    assert_eq!(
        assigned_at(&app, &w, t + MINUTE, "tuesday-after").await["assignee"],
        "carol"
    );
    let current = app.get("/api/schedule/current", &w.bob.1).await.expect(200);
    assert_eq!(current[0]["date"], "2026-11-24");
    assert_eq!(current[0]["username"], "carol");
    let now = app.get(&day, &w.bob.1).await.expect(200);
    assert_eq!(
        now["summary"],
        "Days run 19:00–19:00 America/New_York time."
    );
    assert_eq!(now["today_starts_at"], "2026-11-25T00:00:00Z");

    // Dates change hands by the team's day: the 23rd has passed in New York.
    app.post(
        &format!("/api/teams/{}/schedule/2026-11-23/offer", w.team),
        &w.bob.1,
        json!({}),
    )
    .await
    .expect_error(400, "invalid");

    // The calendar feed has each date's real instants, and the zone.
    let ics = app
        .get(&format!("/api/teams/{}/schedule.ics", w.team), &w.bob.1)
        .await
        .text;
    assert!(ics.contains("X-WR-TIMEZONE:America/New_York\r\n"), "{ics}");
    assert!(
        ics.contains("DTSTART:20261125T000000Z\r\nDTEND:20261126T000000Z\r\n"),
        "carol's 24th, 19:00 to 19:00 New York time: {ics}"
    );
});

both!(a_cover_holds_the_pager_from_its_start_to_its_end, |app| {
    let w = app.paging_world().await;
    let covers = format!("/api/teams/{}/covers", w.team);
    // alice holds the 22nd; bob covers 14:00–18:00 UTC while she is at the dentist.
    app.clock.set(utc("2026-11-22T09:00"));
    let cover = |from: &str, to: &str| {
        json!({"user_id": w.bob.0, "covered_user_id": w.alice.0,
               "starts_at": format!("{from}:00Z"), "ends_at": format!("{to}:00Z")})
    };
    // Bad input: each a clear 400 (or 403), nothing stored.
    let (eve_id, eve) = app.user(&w.admin, "eve").await;
    for (body, status, code) in [
        (
            cover("2026-11-22T18:00", "2026-11-22T14:00"),
            400,
            "invalid",
        ),
        (
            cover("2026-11-22T14:00", "2026-11-22T14:00"),
            400,
            "invalid",
        ),
        (
            cover("2026-11-22T14:00", "2026-12-07T14:00"),
            400,
            "invalid",
        ),
        (
            cover("2026-11-22T08:00", "2026-11-22T10:00"),
            400,
            "invalid",
        ),
        (
            json!({"user_id": eve_id, "starts_at": "2026-11-22T14:00:00Z", "ends_at": "2026-11-22T18:00:00Z"}),
            400,
            "invalid",
        ),
        (
            json!({"user_id": w.bob.0, "covered_user_id": eve_id, "starts_at": "2026-11-22T14:00:00Z", "ends_at": "2026-11-22T18:00:00Z"}),
            400,
            "invalid",
        ),
        (
            json!({"user_id": w.bob.0, "starts_at": "14:00", "ends_at": "2026-11-22T18:00:00Z"}),
            400,
            "invalid",
        ),
    ] {
        app.post(&covers, &w.bob.1, body.clone())
            .await
            .expect_error(status, code);
    }
    // carol is neither of its people nor an owner; eve is not in the team.
    app.post(
        &covers,
        &w.carol.1,
        cover("2026-11-22T14:00", "2026-11-22T18:00"),
    )
    .await
    .expect_error(403, "forbidden");
    app.get(&covers, &eve).await.expect_error(404, "not_found");
    assert_eq!(app.get(&covers, &w.bob.1).await.expect(200), json!([]));

    // The person covered cannot put a colleague on the pager; the person covering can.
    app.post(
        &covers,
        &w.alice.1,
        cover("2026-11-22T14:00", "2026-11-22T18:00"),
    )
    .await
    .expect_error(403, "forbidden");
    let made = app
        .post(
            &covers,
            &w.bob.1,
            cover("2026-11-22T14:00", "2026-11-22T18:00"),
        )
        .await
        .expect(201);
    // The schedule's log says who made it.
    let changes = app
        .get(
            &format!("/api/teams/{}/schedule/changes", w.team),
            &w.carol.1,
        )
        .await
        .expect(200);
    assert_eq!(changes[0]["kind"], "covered", "{changes}");
    assert_eq!(changes[0]["actor"], "bob", "{changes}");
    assert_eq!(
        changes[0]["text"],
        "bob covers for alice from 2026-11-22T14:00:00Z to 2026-11-22T18:00:00Z"
    );
    assert_eq!(made["username"], "bob");
    assert_eq!(made["covered_username"], "alice");
    assert_eq!(made["starts_at"], "2026-11-22T14:00:00Z");
    // Overlapping covers of one team are refused.
    app.post(
        &covers,
        &w.admin,
        json!({"user_id": w.carol.0, "starts_at": "2026-11-22T17:00:00Z", "ends_at": "2026-11-22T19:00:00Z"}),
    )
    .await
    .expect_error(409, "conflict");
    assert_eq!(
        app.get(&covers, &w.carol.1).await.expect(200),
        json!([made.clone()])
    );

    let (start, end) = (utc("2026-11-22T14:00"), utc("2026-11-22T18:00"));
    assert_eq!(
        assigned_at(&app, &w, start - MINUTE, "before").await["assignee"],
        "alice"
    );
    assert_eq!(
        assigned_at(&app, &w, start, "during").await,
        json!({"assignee": "bob",
               "why": "assigned to bob, covering for alice until Sunday 22 November 18:00 (UTC)"})
    );
    let current = app
        .get("/api/schedule/current", &w.carol.1)
        .await
        .expect(200);
    assert_eq!(current[0]["username"], "bob");
    assert_eq!(current[0]["cover_id"], made["id"]);
    assert_eq!(current[0]["date"], "2026-11-22");
    assert_eq!(
        assigned_at(&app, &w, end, "after").await["assignee"],
        "alice",
        "when it ends the day's holder is back"
    );
    let current = app
        .get("/api/schedule/current", &w.carol.1)
        .await
        .expect(200);
    assert_eq!(current[0]["username"], "alice");
    assert_eq!(current[0]["cover_id"], Value::Null);
    assert_eq!(app.get(&covers, &w.bob.1).await.expect(200), json!([]));

    // One ended early: the day's holder has it again at once.
    app.clock.set(utc("2026-11-22T19:00"));
    let early = app
        .post(
            &covers,
            &w.bob.1,
            cover("2026-11-22T19:00", "2026-11-22T23:00"),
        )
        .await
        .expect(201);
    app.clock.set(utc("2026-11-22T20:00"));
    assert_eq!(
        app.get("/api/schedule/current", &w.carol.1)
            .await
            .expect(200)[0]["username"],
        "bob"
    );
    app.delete(&format!("{covers}/{}", early["id"]), &w.carol.1)
        .await
        .expect_error(403, "forbidden");
    app.delete(&format!("{covers}/{}", early["id"]), &w.bob.1)
        .await
        .expect(204);
    let changes = app
        .get(
            &format!("/api/teams/{}/schedule/changes", w.team),
            &w.carol.1,
        )
        .await
        .expect(200);
    assert_eq!(changes[0]["kind"], "cover_ended", "{changes}");
    assert_eq!(changes[0]["text"], "bob's cover ended early");
    assert_eq!(
        app.get("/api/schedule/current", &w.carol.1)
            .await
            .expect(200)[0]["username"],
        "alice"
    );
    app.delete(&format!("{covers}/{}", early["id"]), &w.bob.1)
        .await
        .expect_error(404, "not_found");

    // A cover may span days, up to 14 of them, and names whoever holds the start by default.
    let long = app
        .post(
            &covers,
            &w.carol.1,
            json!({"user_id": w.carol.0, "starts_at": "2026-11-22T21:00:00Z", "ends_at": "2026-12-06T21:00:00Z"}),
        )
        .await
        .expect(201);
    assert_eq!(long["covered_username"], "alice");
    app.clock.set(utc("2026-11-22T21:00") + 3 * DAY + 5 * HOUR);
    assert_eq!(
        app.get("/api/schedule/current", &w.bob.1).await.expect(200)[0]["username"],
        "carol"
    );
    // Someone who leaves the team holds its pager no more.
    app.delete(
        &format!("/api/teams/{}/members/{}", w.team, w.carol.0),
        &w.admin,
    )
    .await
    .expect(204);
    assert_eq!(app.get(&covers, &w.bob.1).await.expect(200), json!([]));
    assert_eq!(
        app.get("/api/schedule/current", &w.bob.1).await.expect(200),
        json!([]),
        "nobody holds the 25th"
    );
});
