//! Rotations fill the schedule in turns; dates change hands by offer and take, an owner's hand
//! or "take over now"; every change is logged. The clock starts on 2026-11-22.

use crate::common;
use common::*;
use serde_json::{json, Value};

/// The schedule's dates and holders, in date order.
async fn holders(app: &TestApp, auth: &Auth, team: i64) -> Vec<(String, String)> {
    app.get(&format!("/api/teams/{team}/schedule"), auth)
        .await
        .expect(200)
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["date"].as_str().unwrap().to_string(),
                e["username"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn pairs(list: &Value, key: &str, value: &str) -> Vec<(String, Value)> {
    list.as_array()
        .unwrap()
        .iter()
        .map(|e| (e[key].as_str().unwrap().to_string(), e[value].clone()))
        .collect()
}

async fn change_kinds(app: &TestApp, auth: &Auth, team: i64) -> Vec<String> {
    app.get(&format!("/api/teams/{team}/schedule/changes"), auth)
        .await
        .expect(200)
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["kind"].as_str().unwrap().to_string())
        .collect()
}

both!(a_rotation_fills_free_dates_in_turns, |app| {
    let admin = app.bootstrap().await;
    let (bob_id, bob) = app.user(&admin, "bob").await;
    let (carol_id, carol) = app.user(&admin, "carol").await;
    let (dave_id, _) = app.user(&admin, "dave").await;
    let (eve_id, eve) = app.user(&admin, "eve").await;
    let team = app.team(&bob, "web").await;
    for id in [carol_id, dave_id] {
        app.post(
            &format!("/api/teams/{team}/members"),
            &bob,
            json!({"user_id": id}),
        )
        .await
        .expect(201);
    }
    let rotations = format!("/api/teams/{team}/rotations");
    let good = json!({"name": " Weekly ", "user_ids": [bob_id, carol_id, dave_id],
        "shift_days": 2, "start_date": "2026-11-22"});
    for (field, bad) in [
        ("name", json!("  ")),
        ("name", json!("x".repeat(101))),
        ("user_ids", json!([])),
        ("user_ids", json!([eve_id])),
        ("shift_days", json!(0)),
        ("shift_days", json!(366)),
        ("start_date", json!("2026-02-30")),
    ] {
        let mut body = good.clone();
        body[field] = bad;
        app.post(&rotations, &bob, body)
            .await
            .expect_error(400, "invalid");
    }
    app.post(&rotations, &carol, good.clone())
        .await
        .expect_error(403, "forbidden");
    app.post(&rotations, &eve, good.clone())
        .await
        .expect_error(404, "not_found");
    let made = app.post(&rotations, &bob, good.clone()).await.expect(201);
    assert_eq!(made["name"], "Weekly");
    assert_eq!(made["user_ids"], json!([bob_id, carol_id, dave_id]));
    app.post(&rotations, &bob, good.clone())
        .await
        .expect_error(409, "conflict");
    let id = made["id"].as_i64().unwrap();
    let listed = app.get(&rotations, &carol).await.expect(200);
    assert_eq!(listed, json!([made]));
    assert_eq!(holders(&app, &bob, team).await, []);

    // One date given by hand: applying without replace is refused whole.
    app.post(
        &format!("/api/teams/{team}/schedule"),
        &bob,
        json!({"user_id": carol_id, "dates": ["2026-11-25"]}),
    )
    .await
    .expect(201);
    let apply = format!("{rotations}/{id}/apply");
    let week = json!({"from": "2026-11-20", "to": "2026-11-27"});
    let why = app
        .post(&apply, &bob, week.clone())
        .await
        .expect_error(409, "conflict");
    assert!(why.contains("2026-11-25"), "{why}");
    assert_eq!(holders(&app, &bob, team).await.len(), 1);

    // The preview answers what applying would do and stores nothing; dates before the start
    // are left alone; the date given by hand is kept.
    let preview = app
        .post(
            &apply,
            &bob,
            json!({"from": "2026-11-20", "to": "2026-11-27", "replace": true, "dry_run": true}),
        )
        .await
        .expect(200);
    let expected = vec![
        ("2026-11-22".to_string(), json!(bob_id)),
        ("2026-11-23".to_string(), json!(bob_id)),
        ("2026-11-24".to_string(), json!(carol_id)),
        ("2026-11-26".to_string(), json!(dave_id)),
        ("2026-11-27".to_string(), json!(dave_id)),
    ];
    assert_eq!(pairs(&preview["dates"], "date", "user_id"), expected);
    assert_eq!(preview["skipped"], json!(["2026-11-25"]));
    assert_eq!(holders(&app, &bob, team).await.len(), 1);
    // Only the date given by hand is logged: the dry run changed nothing.
    assert_eq!(change_kinds(&app, &bob, team).await, vec!["assigned"]);

    let applied = app
        .post(
            &apply,
            &bob,
            json!({"from": "2026-11-20", "to": "2026-11-27", "replace": true}),
        )
        .await
        .expect(200);
    assert_eq!(applied, preview);
    let names = |v: &[(&str, &str)]| {
        v.iter()
            .map(|(d, u)| (d.to_string(), u.to_string()))
            .collect::<Vec<_>>()
    };
    assert_eq!(
        holders(&app, &carol, team).await,
        names(&[
            ("2026-11-22", "bob"),
            ("2026-11-23", "bob"),
            ("2026-11-24", "carol"),
            ("2026-11-25", "carol"),
            ("2026-11-26", "dave"),
            ("2026-11-27", "dave"),
        ])
    );
    // Applying again with replace rewrites its own dates and nothing else.
    assert_eq!(
        app.post(
            &apply,
            &bob,
            json!({"from": "2026-11-20", "to": "2026-11-27", "replace": true}),
        )
        .await
        .expect(200),
        applied
    );
    let log = app
        .get(&format!("/api/teams/{team}/schedule/changes"), &carol)
        .await
        .expect(200);
    assert_eq!(log[0]["kind"], "rotation_applied");
    assert_eq!(log[0]["actor"], "bob");
    assert_eq!(
        log[0]["text"],
        "Weekly filled 5 dates, 2026-11-22 to 2026-11-27"
    );
    for bad in [
        json!({"from": "2026-11-27", "to": "2026-11-20"}),
        json!({"from": "2026-11-20", "to": "2027-11-20"}),
        json!({"from": "soon", "to": "2026-11-20"}),
    ] {
        app.post(&apply, &bob, bad)
            .await
            .expect_error(400, "invalid");
    }
    app.post(&apply, &carol, week.clone())
        .await
        .expect_error(403, "forbidden");
    app.post(&format!("{rotations}/999999/apply"), &bob, week.clone())
        .await
        .expect_error(404, "not_found");

    // Dave leaves: he drops out of the rotation, and his dates stay, open for anyone to take.
    app.delete(&format!("/api/teams/{team}/members/{dave_id}"), &bob)
        .await
        .expect(204);
    assert_eq!(
        app.get(&rotations, &bob).await.expect(200)[0]["user_ids"],
        json!([bob_id, carol_id])
    );
    let open = app
        .get(&format!("/api/teams/{team}/schedule/open"), &carol)
        .await
        .expect(200);
    assert_eq!(
        pairs(&open, "date", "reason"),
        vec![
            ("2026-11-26".to_string(), json!("vacated")),
            ("2026-11-27".to_string(), json!("vacated")),
        ]
    );
    assert_eq!(open[0]["username"], "dave");
    let took = app
        .send(
            reqwest::Method::POST,
            &format!("/api/teams/{team}/schedule/2026-11-26/take"),
            &carol,
            None,
        )
        .await
        .expect(200);
    assert_eq!(took["username"], "carol");
    let open = app
        .get(&format!("/api/teams/{team}/schedule/open"), &carol)
        .await
        .expect(200);
    assert_eq!(open.as_array().unwrap().len(), 1);

    // Removing the rotation keeps the dates it filled.
    app.delete(&format!("{rotations}/{id}"), &bob)
        .await
        .expect(204);
    app.delete(&format!("{rotations}/{id}"), &bob)
        .await
        .expect_error(404, "not_found");
    assert_eq!(holders(&app, &bob, team).await.len(), 6);
});

both!(dates_change_hands_by_offer_and_take, |app| {
    let w = app.paging_world().await;
    let (team, (alice_id, alice), (bob_id, bob), (carol_id, carol)) =
        (w.team, w.alice.clone(), w.bob.clone(), w.carol.clone());
    app.post(
        &format!("/api/teams/{team}/schedule"),
        &w.admin,
        json!({"user_id": bob_id, "dates": ["2026-11-23"]}),
    )
    .await
    .expect(201);
    let date = |d: &str, action: &str| format!("/api/teams/{team}/schedule/{d}/{action}");
    let post = |path: String, auth: Auth, body: Option<Value>| {
        let app = &app;
        async move { app.send(reqwest::Method::POST, &path, &auth, body).await }
    };

    // Only the holder (or an owner) offers; nobody takes a date not offered.
    post(date("2026-11-23", "offer"), carol.clone(), None)
        .await
        .expect_error(403, "forbidden");
    post(date("2026-11-23", "take"), carol.clone(), None)
        .await
        .expect_error(409, "conflict");
    post(date("2026-11-24", "offer"), bob.clone(), None)
        .await
        .expect_error(404, "not_found");
    post(date("2026-11-21", "offer"), bob.clone(), None)
        .await
        .expect_error(400, "invalid");
    post(date("23-11-2026", "offer"), bob.clone(), None)
        .await
        .expect_error(400, "invalid");

    post(date("2026-11-23", "offer"), bob.clone(), None)
        .await
        .expect(200);
    post(date("2026-11-23", "offer"), bob.clone(), None)
        .await
        .expect(200);
    let open = app
        .get(&format!("/api/teams/{team}/schedule/open"), &alice)
        .await
        .expect(200);
    assert_eq!(
        open,
        json!([{"date": "2026-11-23", "user_id": bob_id, "username": "bob", "reason": "offered"}])
    );
    // A member may not take a date for someone else.
    post(
        date("2026-11-23", "take"),
        carol.clone(),
        Some(json!({"user_id": alice_id})),
    )
    .await
    .expect_error(403, "forbidden");
    let took = post(date("2026-11-23", "take"), carol.clone(), Some(json!({})))
        .await
        .expect(200);
    assert_eq!(
        (took["user_id"].as_i64(), took["username"].as_str()),
        (Some(carol_id), Some("carol"))
    );
    // Taken once: the offer is gone, so neither bob nor alice can take it now.
    post(date("2026-11-23", "take"), alice.clone(), None)
        .await
        .expect_error(409, "conflict");
    assert_eq!(
        app.get(&format!("/api/teams/{team}/schedule/open"), &alice)
            .await
            .expect(200),
        json!([])
    );

    // Withdrawn offers close again.
    post(date("2026-11-23", "offer"), carol.clone(), None)
        .await
        .expect(200);
    app.delete(&date("2026-11-23", "offer"), &carol)
        .await
        .expect(200);
    post(date("2026-11-23", "take"), alice.clone(), None)
        .await
        .expect_error(409, "conflict");

    // An owner hands any date to any member, and to members only.
    let handed = post(
        date("2026-11-23", "take"),
        w.admin.clone(),
        Some(json!({"user_id": alice_id})),
    )
    .await
    .expect(200);
    assert_eq!(handed["username"], "alice");
    post(
        date("2026-11-23", "take"),
        w.admin.clone(),
        Some(json!({"user_id": 999_999})),
    )
    .await
    .expect_error(400, "invalid");
    post(
        date("2026-11-23", "take"),
        w.admin.clone(),
        Some(json!({"user_id": "alice"})),
    )
    .await
    .expect_error(400, "invalid");

    // Outsiders see and change nothing.
    let (_, eve) = app.user(&w.admin, "eve").await;
    post(date("2026-11-23", "take"), eve.clone(), None)
        .await
        .expect_error(404, "not_found");
    app.get(&format!("/api/teams/{team}/schedule/changes"), &eve)
        .await
        .expect_error(404, "not_found");

    // The log, newest first, told from the team's point of view.
    let log = app
        .get(&format!("/api/teams/{team}/schedule/changes"), &bob)
        .await
        .expect(200);
    let seen: Vec<(String, String)> = log
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["kind"].as_str().unwrap().to_string(),
                c["text"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let expected: Vec<(String, String)> = [
        ("taken", "2026-11-23 moved from carol to alice"),
        ("withdrawn", "carol withdrew the offer of 2026-11-23"),
        ("offered", "carol offered 2026-11-23"),
        ("taken", "carol took 2026-11-23 from bob"),
        ("offered", "bob offered 2026-11-23"),
        ("assigned", "admin gave 2026-11-23 to bob"),
        ("assigned", "admin gave 2026-11-22 to alice"),
    ]
    .iter()
    .map(|(k, t)| (k.to_string(), t.to_string()))
    .collect();
    assert_eq!(seen, expected);
    assert_eq!(log[0]["actor"], "admin");
    assert_eq!(log[0]["from_user"], "carol");
    assert_eq!(log[0]["to_user"], "alice");
    let two = app
        .get(&format!("/api/teams/{team}/schedule/changes?limit=2"), &bob)
        .await
        .expect(200);
    assert_eq!(two.as_array().unwrap().len(), 2);
    app.get(&format!("/api/teams/{team}/schedule/changes?limit=0"), &bob)
        .await
        .expect_error(400, "invalid");
});

both!(taking_over_now_brings_the_open_incidents_along, |app| {
    let w = app.paging_world().await;
    let (team, (bob_id, bob)) = (w.team, w.bob.clone());
    let waiting = app.fire(&w.key, "g1").await;
    let owned = app.fire(&w.key, "g2").await;
    app.tick().await;
    assert_eq!(app.ntfy.take().len(), 2, "both opened on alice");
    app.post(
        &format!("/api/incidents/{owned}/acknowledge"),
        &w.alice.1,
        json!({}),
    )
    .await
    .expect(200);

    let path = format!("/api/teams/{team}/schedule/take-over");
    let entry = app.post(&path, &bob, json!({})).await.expect(200);
    assert_eq!(
        (entry["date"].as_str(), entry["username"].as_str()),
        (Some("2026-11-22"), Some("bob"))
    );
    // A `null` body is the empty one (the document marks it nullable).
    app.post(&path, &bob, json!(null))
        .await
        .expect_error(409, "conflict");
    let now = app.get("/api/schedule/current", &bob).await.expect(200);
    assert_eq!(now[0]["user_id"], bob_id);

    // The unacknowledged incident is bob's now, and its reminders reach his phone.
    let d = app.detail(&bob, waiting).await;
    assert_eq!(d["assignee"], "bob");
    assert_eq!(
        timeline_texts(&d, "assigned"),
        vec![
            "assigned to alice, on call today",
            "assigned to bob, who took over on call"
        ]
    );
    let d = app.detail(&bob, owned).await;
    assert_eq!(d["assignee"], "alice", "an acknowledged incident stays put");
    // Bob is paged at once, and reminded from then.
    app.tick().await;
    let handed = app.ntfy.take();
    assert_eq!(handed.len(), 1);
    assert_eq!(handed[0].topic, "bob-pager");
    assert!(handed[0].message.contains("assigned to you"));
    app.clock.advance(30 * 60);
    app.tick().await;
    let reminders = app.ntfy.take();
    assert_eq!(reminders.len(), 1);
    assert_eq!(reminders[0].topic, "bob-pager");

    // A new incident opens on the new holder.
    app.fire(&w.key, "g3").await;
    app.tick().await;
    assert_eq!(app.ntfy.take()[0].topic, "bob-pager");

    let log = app
        .get(&format!("/api/teams/{team}/schedule/changes"), &w.carol.1)
        .await
        .expect(200);
    assert_eq!(log[0]["kind"], "taken_over");
    assert_eq!(
        log[0]["text"],
        "bob took over today from alice (1 incident reassigned)"
    );
    // A member takes over only for themselves.
    app.post(&path, &w.carol.1, json!({"user_id": w.alice.0}))
        .await
        .expect_error(403, "forbidden");
});
