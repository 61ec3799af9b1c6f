//! The on-call schedule: all-or-nothing creation, members only, current holders, iCalendar.

use crate::common;
use common::*;
use serde_json::json;

both!(shifts_are_all_or_nothing_and_for_members_only, |app| {
    let admin = app.bootstrap().await;
    let (bob_id, bob) = app.user(&admin, "bob").await;
    let (carol_id, carol) = app.user(&admin, "carol").await;
    let (dave_id, _) = app.user(&admin, "dave").await;
    let team = app.team(&bob, "web").await;
    app.post(
        &format!("/api/teams/{team}/members"),
        &bob,
        json!({"user_id": carol_id}),
    )
    .await
    .expect(201);
    let path = format!("/api/teams/{team}/schedule");
    let made = app
        .post(
            &path,
            &bob,
            json!({"user_id": bob_id, "dates": ["2026-11-23", "2026-11-22"]}),
        )
        .await
        .expect(201);
    assert_eq!(made[0]["date"], "2026-11-22");
    // One date taken: the whole request is refused and nothing is stored.
    app.post(
        &path,
        &carol,
        json!({"user_id": carol_id, "dates": ["2026-11-24", "2026-11-23"]}),
    )
    .await
    .expect_error(409, "conflict");
    assert_eq!(
        app.get(&path, &bob)
            .await
            .expect(200)
            .as_array()
            .unwrap()
            .len(),
        2
    );
    app.post(
        &path,
        &bob,
        json!({"user_id": dave_id, "dates": ["2026-11-25"]}),
    )
    .await
    .expect_error(400, "invalid");
    for bad in [
        json!({"user_id": bob_id, "dates": []}),
        json!({"user_id": bob_id, "dates": ["2026-02-30"]}),
        json!({"user_id": bob_id, "dates": ["tomorrow"]}),
        json!({"user_id": bob_id, "dates": ["2026-12-01", "2026-12-01"]}),
    ] {
        app.post(&path, &bob, bad)
            .await
            .expect_error(400, "invalid");
    }
    app.post(
        &path,
        &carol,
        json!({"user_id": carol_id, "dates": ["2026-11-24"]}),
    )
    .await
    .expect(201);
    let ranged = app
        .get(&format!("{path}?from=2026-11-23&to=2026-11-24"), &bob)
        .await
        .expect(200);
    let dates: Vec<&str> = ranged
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["date"].as_str().unwrap())
        .collect();
    assert_eq!(dates, ["2026-11-23", "2026-11-24"]);
    // A bound given must be a date, even an empty one (the document says `format: date`).
    for bad in ["from=23/11/2026", "from=", "to="] {
        app.get(&format!("{path}?{bad}"), &bob)
            .await
            .expect_error(400, "invalid");
    }
    app.delete(&format!("{path}/2026-11-24"), &carol)
        .await
        .expect(204);
    app.delete(&format!("{path}/2026-11-24"), &carol)
        .await
        .expect_error(404, "not_found");
    // Outsiders see nothing.
    let (_, eve) = app.user(&admin, "eve").await;
    app.get(&path, &eve).await.expect_error(404, "not_found");
    app.post(
        &path,
        &eve,
        json!({"user_id": bob_id, "dates": ["2026-12-24"]}),
    )
    .await
    .expect_error(404, "not_found");
});

both!(current_holder_per_team_and_the_calendar_feed, |app| {
    let admin = app.bootstrap().await;
    let (bob_id, bob) = app.user(&admin, "bob").await;
    let web = app.team(&bob, "web").await;
    let db = app.team(&bob, "db").await;
    app.post(
        &format!("/api/teams/{web}/schedule"),
        &bob,
        json!({"user_id": bob_id, "dates": ["2026-11-22", "2026-11-23"]}),
    )
    .await
    .expect(201);
    app.post(
        &format!("/api/teams/{db}/schedule"),
        &bob,
        json!({"user_id": bob_id, "dates": ["2026-11-23"]}),
    )
    .await
    .expect(201);
    let now = app.get("/api/schedule/current", &bob).await.expect(200);
    assert_eq!(
        now.as_array().unwrap().len(),
        1,
        "only teams with a holder today"
    );
    assert_eq!(
        (now[0]["team_id"].as_i64(), now[0]["username"].as_str()),
        (Some(web), Some("bob"))
    );
    app.clock.advance(86_400);
    assert_eq!(
        app.get("/api/schedule/current", &bob)
            .await
            .expect(200)
            .as_array()
            .unwrap()
            .len(),
        2
    );
    let r = app
        .get(&format!("/api/teams/{web}/schedule.ics"), &bob)
        .await;
    assert!(r.headers["content-type"]
        .to_str()
        .unwrap()
        .starts_with("text/calendar"));
    assert_eq!(r.status.as_u16(), 200);
    assert!(r.text.starts_with("BEGIN:VCALENDAR\r\n") && r.text.ends_with("END:VCALENDAR\r\n"));
    assert_eq!(r.text.matches("BEGIN:VEVENT").count(), 2);
    assert!(r
        .text
        .contains("DTSTART:20261122T000000Z\r\nDTEND:20261123T000000Z"));
    assert!(r.text.contains("X-WR-TIMEZONE:UTC\r\n"));
    assert!(r.text.contains("SUMMARY:On call: bob (web)"));
    app.get(&format!("/api/teams/{web}/schedule.ics"), &Auth::None)
        .await
        .expect_error(401, "unauthorized");
});

both!(
    a_calendar_link_reads_one_teams_schedule_until_it_is_replaced_or_its_person_leaves,
    |app| {
        let admin = app.bootstrap().await;
        let (_, bob) = app.user(&admin, "bob").await;
        let (carol_id, _) = app.user(&admin, "carol").await;
        let team = app.team(&bob, "web").await;
        app.post(
            &format!("/api/teams/{team}/members"),
            &bob,
            json!({"user_id": carol_id}),
        )
        .await
        .expect(201);
        app.post(
            &format!("/api/teams/{team}/schedule"),
            &bob,
            json!({"user_id": carol_id, "dates": ["2026-11-23"]}),
        )
        .await
        .expect(201);
        let carol = app.login("carol", "carol password").await;
        let html = app.get(&format!("/teams/{team}"), &carol).await.text;
        let make = form_action(&html, "/rpc/make_calendar_feed");
        let made = app.rpc(&make, &carol, &format!("team_id={team}")).await;
        assert_eq!(made.status.as_u16(), 200, "{}", made.text);
        let url = made.body["url"].as_str().unwrap().to_string();
        assert!(url.starts_with(&app.core.config.public_url), "{url}");
        let path = &url[url.find("/api/calendar/").expect("a calendar link")..];
        assert!(regex_like(path), "a link of 64 letters and digits: {path}");
        // A calendar app sends nothing but the URL.
        let feed = app.get(path, &Auth::None).await;
        assert_eq!(feed.status.as_u16(), 200, "{}", feed.text);
        assert!(feed.headers["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/calendar"));
        assert!(feed.text.contains("BEGIN:VCALENDAR"));
        assert!(feed.text.contains("carol"), "{}", feed.text);

        // A new link stops the old one.
        let again = app.rpc(&make, &carol, &format!("team_id={team}")).await;
        let newer = again.body["url"].as_str().unwrap().to_string();
        let newer = newer[newer.find("/api/calendar/").unwrap()..].to_string();
        app.get(path, &Auth::None)
            .await
            .expect_error(404, "not_found");
        app.get(&newer, &Auth::None).await.expect(200);
        // Only her own team: a team she is not in is not hers to link.
        let other = app.team(&bob, "ops").await;
        let r = app.rpc(&make, &carol, &format!("team_id={other}")).await;
        assert_eq!(r.status.as_u16(), 404, "{}", r.text);
        // Leaving the team ends what the link reads.
        app.delete(&format!("/api/teams/{team}/members/{carol_id}"), &bob)
            .await
            .expect(204);
        app.get(&newer, &Auth::None)
            .await
            .expect_error(404, "not_found");
        // Links that never were.
        for bad in ["short", &"x".repeat(64), &"A1".repeat(40)] {
            app.get(&format!("/api/calendar/{bad}/schedule.ics"), &Auth::None)
                .await
                .expect_error(404, "not_found");
        }
    }
);

/// `/api/calendar/{64 letters and digits}/schedule.ics`.
fn regex_like(path: &str) -> bool {
    path.strip_prefix("/api/calendar/")
        .and_then(|rest| rest.strip_suffix("/schedule.ics"))
        .is_some_and(|t| t.len() == 64 && t.bytes().all(|b| b.is_ascii_alphanumeric()))
}
