//! Live updates (`GET /api/events`): what a browser tab hears, from which teams, across
//! replicas, and after a dropped connection.

use crate::common;
use common::live::about_incident;
use common::*;
use serde_json::json;
use std::time::Duration;

/// Two people in their own teams, each with an integration.
struct Teams {
    admin: Auth,
    bob: Auth,
    bob_id: i64,
    bob_team: i64,
    bob_key: String,
    dave: Auth,
    dave_id: i64,
    dave_team: i64,
    dave_key: String,
}

async fn teams(app: &TestApp) -> Teams {
    let admin = app.bootstrap().await;
    let (bob_id, bob) = app.user(&admin, "bob").await;
    let (dave_id, dave) = app.user(&admin, "dave").await;
    let bob_team = app.team(&bob, "web").await;
    let dave_team = app.team(&dave, "db").await;
    let bob_key = app.integration(&bob, bob_team).await;
    let dave_key = app.integration(&dave, dave_team).await;
    Teams {
        admin,
        bob,
        bob_id,
        bob_team,
        bob_key,
        dave,
        dave_id,
        dave_team,
        dave_key,
    }
}

both!(
    a_tab_hears_what_changes_in_its_teams_and_nothing_else,
    |app| {
        let t = teams(&app).await;
        let mut bob_tab = app.events(&t.bob, None).await;
        let mut dave_tab = app.events(&t.dave, None).await;
        // A webhook for dave's team first, then one for bob's.
        let theirs = app.fire(&t.dave_key, "disk").await;
        let ours = app.fire(&t.bob_key, "checkout").await;
        let (heard, before) = bob_tab.until(about_incident(ours)).await;
        assert_eq!(heard.data["team_id"], t.bob_team);
        assert!(
            before.iter().all(|e| e.data["team_id"] == t.bob_team),
            "bob heard another team: {before:?}"
        );
        let (_, before) = dave_tab.until(about_incident(theirs)).await;
        assert!(before.iter().all(|e| e.data["team_id"] == t.dave_team));

        // Someone else acknowledges: the incident's page hears of it.
        app.post(
            &format!("/api/incidents/{ours}/acknowledge"),
            &t.admin,
            json!({}),
        )
        .await
        .expect(200);
        bob_tab.until(about_incident(ours)).await;
        // A note, too.
        app.post(
            &format!("/api/incidents/{ours}/notes"),
            &t.admin,
            json!({"text": "restarted the pods"}),
        )
        .await
        .expect(201);
        bob_tab.until(about_incident(ours)).await;

        // The team page and the schedule hear their own events.
        app.put(
            &format!("/api/teams/{}", t.bob_team),
            &t.bob,
            json!({"display_name": "Web shop"}),
        )
        .await
        .expect(200);
        let (team, _) = bob_tab.until(|e| e.kind == "team").await;
        assert_eq!(team.data, json!({"id": t.bob_team, "team_id": t.bob_team}));
        app.post(
            &format!("/api/teams/{}/schedule", t.bob_team),
            &t.bob,
            json!({"user_id": t.bob_id, "dates": ["2026-11-25"]}),
        )
        .await
        .expect(201);
        let (schedule, _) = bob_tab.until(|e| e.kind == "schedule").await;
        assert_eq!(schedule.data["id"], t.bob_team);
    }
);

both!(a_new_member_hears_the_team_from_then_on, |app| {
    let t = teams(&app).await;
    let mut dave_tab = app.events(&t.dave, None).await;
    app.post(
        &format!("/api/teams/{}/members", t.bob_team),
        &t.bob,
        json!({"user_id": t.dave_id}),
    )
    .await
    .expect(201);
    // (Events from before the tab opened may still arrive: a page reloads once more, no harm.)
    let bob_team = t.bob_team;
    dave_tab
        .until(|e| e.kind == "team" && e.data["id"] == bob_team)
        .await;
    let incident = app.fire(&t.bob_key, "checkout").await;
    dave_tab.until(about_incident(incident)).await;
});

both!(
    a_dropped_stream_resumes_after_the_last_event_it_heard,
    |app| {
        let t = teams(&app).await;
        let first = app.fire(&t.bob_key, "first").await;
        let mut tab = app.events(&t.bob, None).await;
        let second = app.fire(&t.bob_key, "second").await;
        let (heard, _) = tab.until(about_incident(second)).await;
        drop(tab);
        // While no tab is open: one incident changes, one opens, and dave's team changes.
        app.post(
            &format!("/api/incidents/{first}/acknowledge"),
            &t.bob,
            json!({}),
        )
        .await
        .expect(200);
        let third = app.fire(&t.bob_key, "third").await;
        app.fire(&t.dave_key, "elsewhere").await;
        let mut tab = app.events(&t.bob, Some(heard.seq)).await;
        let mut missed = Vec::new();
        while let Some(e) = tab.next(Duration::from_millis(500)).await {
            assert!(e.seq > heard.seq, "replayed an event it had: {e:?}");
            missed.push(e);
        }
        let incidents: Vec<i64> = missed
            .iter()
            .filter(|e| e.kind == "incident")
            .map(|e| e.data["id"].as_i64().unwrap())
            .collect();
        // Each incident once (coalesced), in the order they last changed; nothing of dave's team.
        assert_eq!(incidents, vec![first, third], "{missed:?}");
        assert!(missed.iter().all(|e| e.data["team_id"] == t.bob_team));
    }
);

both!(the_stream_needs_a_credential_and_a_real_event_id, |app| {
    let t = teams(&app).await;
    let res = app.open_events(&Auth::None, None).await;
    assert_eq!(res.status(), 401);
    assert_eq!(
        res.json::<serde_json::Value>().await.unwrap()["error"],
        "unauthorized"
    );
    let res = app
        .client
        .get(format!("{}/api/events", app.url))
        .bearer_auth(match &t.bob {
            Auth::Key(k) => k.clone(),
            _ => unreachable!(),
        })
        .header("last-event-id", "yesterday")
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 400);
    // A key works as well as a cookie: the stream is an API like any other.
    let cookie = app.login("bob", "bob password").await;
    let mut tab = app.events(&cookie, None).await;
    let incident = app.fire(&t.bob_key, "x").await;
    tab.until(about_incident(incident)).await;
});

/// The `klaxon-events` meta tag of a page as `cookie` sees it.
async fn rendered_after(app: &TestApp, path: &str, cookie: &Auth) -> i64 {
    let html = app.get(path, cookie).await.text;
    let tag = r#"<meta name="klaxon-events" content=""#;
    let at = html
        .find(tag)
        .unwrap_or_else(|| panic!("no resume point in {path}"))
        + tag.len();
    let end = at + html[at..].find('"').unwrap();
    html[at..end].parse().unwrap()
}

both!(a_page_s_stream_resumes_where_the_page_was_rendered, |app| {
    let t = teams(&app).await;
    let cookie = app.login("bob", "bob password").await;
    let before = app.fire(&t.bob_key, "before").await;
    let after = rendered_after(&app, "/", &cookie).await;
    assert!(
        app.get("/login", &Auth::None)
            .await
            .text
            .find("klaxon-events")
            .is_none(),
        "a page without a session has no stream to resume"
    );
    // Changes after the render, before the stream opens: they are what the page missed.
    let missed = app.fire(&t.bob_key, "missed").await;
    app.post(
        &format!("/api/incidents/{before}/acknowledge"),
        &t.bob,
        json!({}),
    )
    .await
    .expect(200);
    let res = app
        .open_events_at(&format!("?after={after}"), &cookie, None)
        .await;
    assert_eq!(res.status(), 200);
    let mut heard = Vec::new();
    let mut tab = common::live::Tab::from(res);
    while let Some(e) = tab.next(Duration::from_millis(500)).await {
        heard.push(e);
    }
    let incidents: Vec<i64> = heard
        .iter()
        .filter(|e| e.kind == "incident")
        .map(|e| e.data["id"].as_i64().unwrap())
        .collect();
    // The opening of `before` was shown by the render; only what came after is replayed.
    assert!(heard.iter().all(|e| e.seq > after), "{heard:?}");
    assert!(incidents.contains(&missed), "{heard:?}");
    assert!(
        incidents.contains(&before),
        "the acknowledgement: {heard:?}"
    );

    // A page rendered when nothing has changed since hears nothing until something does.
    let after = rendered_after(&app, &format!("/incidents/{missed}"), &cookie).await;
    let res = app
        .open_events_at(&format!("?after={after}"), &cookie, None)
        .await;
    let mut tab = common::live::Tab::from(res);
    assert_eq!(tab.next(Duration::from_millis(500)).await, None);
    app.post(
        &format!("/api/incidents/{missed}/notes"),
        &t.bob,
        json!({"text": "looking"}),
    )
    .await
    .expect(201);
    tab.until(about_incident(missed)).await;
});

both!(a_stream_is_not_resumed_from_events_no_longer_kept, |app| {
    let t = teams(&app).await;
    for query in ["?after=-1", "?after=yesterday"] {
        let res = app.open_events_at(query, &t.bob, None).await;
        assert_eq!(res.status(), 400, "{query}");
    }
    app.fire(&t.bob_key, "first").await;
    app.fire(&t.bob_key, "second").await;
    let (kept_from,): (i64,) = sqlx::query_as("SELECT MAX(id) FROM events")
        .fetch_one(&app.core.db.pool)
        .await
        .unwrap();
    // The sweeper has pruned everything older than the newest event.
    sqlx::query("DELETE FROM events WHERE id < $1")
        .bind(kept_from)
        .execute(&app.core.db.pool)
        .await
        .unwrap();
    let res = app.open_events_at("?after=1", &t.bob, None).await;
    assert_eq!(res.status(), 409);
    let body: serde_json::Value = res.json().await.unwrap();
    assert_eq!(body["error"], "conflict", "{body}");
    // Right below what is kept, or with `Last-Event-ID` (a reconnect), it opens.
    let res = app
        .open_events_at(&format!("?after={}", kept_from - 1), &t.bob, None)
        .await;
    assert_eq!(res.status(), 200);
    let res = app.open_events_at("?after=1", &t.bob, Some(1)).await;
    assert_eq!(res.status(), 200);
});

/// On PostgreSQL a transaction can take an event id and commit after a later one: a page
/// rendered meanwhile does not show its change, so its stream resumes below that id.
#[tokio::test]
#[cfg_attr(
    not(postgres_tests),
    ignore = "needs KLAXON_TEST_DATABASE_URL at build time"
)]
async fn a_render_never_resumes_past_a_change_still_being_written() {
    let app = TestApp::spawn_postgres().await;
    let t = teams(&app).await;
    let mut open = app.core.db.pool.begin().await.unwrap();
    let (held,): (i64,) = sqlx::query_as(
        "INSERT INTO events (kind, subject_id, team_id) VALUES ('team', $1, $1) RETURNING id",
    )
    .bind(t.bob_team)
    .fetch_one(&mut *open)
    .await
    .unwrap();
    app.fire(&t.bob_key, "later").await;
    let (newest,): (i64,) = sqlx::query_as("SELECT MAX(id) FROM events")
        .fetch_one(&app.core.db.pool)
        .await
        .unwrap();
    assert!(newest > held);
    assert_eq!(app.core.resume_point().await.unwrap(), held - 1);
    open.commit().await.unwrap();
    assert_eq!(app.core.resume_point().await.unwrap(), newest);
}

/// An event committed through one replica reaches a tab connected to the other: the feed reads
/// the shared table (woken by PostgreSQL's NOTIFY), not this process's memory.
#[tokio::test]
#[cfg_attr(
    not(postgres_tests),
    ignore = "needs KLAXON_TEST_DATABASE_URL at build time"
)]
async fn an_event_on_one_replica_reaches_a_tab_on_another() {
    let a = TestApp::spawn_postgres().await;
    let b = TestApp::spawn_on(
        tempfile::tempdir().unwrap(),
        a.database_url.clone(),
        a.config.clone(),
    )
    .await;
    let t = teams(&a).await;
    let incident = a.fire(&t.bob_key, "checkout").await;
    let mut tab = b.events(&t.bob, None).await;
    a.post(
        &format!("/api/incidents/{incident}/acknowledge"),
        &t.bob,
        json!({}),
    )
    .await
    .expect(200);
    let (heard, _) = tab.until(about_incident(incident)).await;
    assert_eq!(heard.data["team_id"], t.bob_team);
}
