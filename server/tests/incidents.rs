//! Incident actions and reads: acknowledge, snooze, assign, notes and resolution notes,
//! resolve, archive, visibility, similar incidents and MTTA/MTTR.

use crate::common;
use common::*;
use serde_json::json;

/// An owner `bob` with a team, a member `carol`, an outsider `dave`, and one open incident.
struct World {
    bob: Auth,
    carol: Auth,
    carol_id: i64,
    dave: Auth,
    team: i64,
    key: String,
    incident: i64,
}

async fn world(app: &TestApp) -> World {
    let admin = app.bootstrap().await;
    let (_, bob) = app.user(&admin, "bob").await;
    let (carol_id, carol) = app.user(&admin, "carol").await;
    let (_, dave) = app.user(&admin, "dave").await;
    let team = app.team(&bob, "web").await;
    app.post(
        &format!("/api/teams/{team}/members"),
        &bob,
        json!({"user_id": carol_id}),
    )
    .await
    .expect(201);
    let key = app.integration(&bob, team).await;
    app.webhook(
        &key,
        &Payload::new("g").alert("fp", "firing", 0, None, json!({"severity": "critical"})),
    )
    .await
    .expect(200);
    let incident = app.incidents(&bob, team).await[0]["id"].as_i64().unwrap();
    World {
        bob,
        carol,
        carol_id,
        dave,
        team,
        key,
        incident,
    }
}

fn kinds(detail: &serde_json::Value) -> Vec<String> {
    detail["timeline"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["kind"].as_str().unwrap().to_string())
        .collect()
}

both!(acknowledge_snooze_assign_note_resolve, |app| {
    let w = world(&app).await;
    let base = format!("/api/incidents/{}", w.incident);
    app.clock.advance(120);
    let i = app
        .post(&format!("{base}/acknowledge"), &w.carol, json!({}))
        .await
        .expect(200);
    assert_eq!(
        (i["state"].as_str(), i["acknowledged_by"].as_str()),
        (Some("acknowledged"), Some("carol"))
    );
    assert_eq!(i["acknowledged_at"], "2026-11-22T00:02:00Z");
    // Acknowledging again changes nothing.
    let again = app
        .post(&format!("{base}/acknowledge"), &w.bob, json!({}))
        .await
        .expect(200);
    assert_eq!(again["acknowledged_by"], "carol");
    let i = app
        .post(
            &format!("{base}/snooze"),
            &w.carol,
            json!({"duration": "30m"}),
        )
        .await
        .expect(200);
    assert_eq!(i["snoozed_until"], "2026-11-22T00:32:00Z");
    for bad in [
        json!({"duration": "10s"}),
        json!({"duration": "8d"}),
        json!({"duration": "soon"}),
        json!({}),
    ] {
        app.post(&format!("{base}/snooze"), &w.carol, bad)
            .await
            .expect_error(400, "invalid");
    }
    assert!(app
        .post(&format!("{base}/unsnooze"), &w.carol, json!({}))
        .await
        .expect(200)["snoozed_until"]
        .is_null());
    let i = app
        .post(
            &format!("{base}/assign"),
            &w.bob,
            json!({"user_id": w.carol_id}),
        )
        .await
        .expect(200);
    assert_eq!(i["assignee"], "carol");
    let dave_id = app.get("/api/me", &w.dave).await.expect(200)["id"]
        .as_i64()
        .unwrap();
    app.post(
        &format!("{base}/assign"),
        &w.bob,
        json!({"user_id": dave_id}),
    )
    .await
    .expect_error(400, "invalid");
    app.post(
        &format!("{base}/notes"),
        &w.carol,
        json!({"text": "restarted the pods"}),
    )
    .await
    .expect(201);
    app.post(&format!("{base}/notes"), &w.carol, json!({"text": "   "}))
        .await
        .expect_error(400, "invalid");
    app.post(
        &format!("{base}/notes"),
        &w.carol,
        json!({"text": "null\u{0}byte"}),
    )
    .await
    .expect_error(400, "invalid");
    app.post(
        &format!("{base}/notes"),
        &w.carol,
        json!({"text": "x".repeat(10_001)}),
    )
    .await
    .expect_error(400, "invalid");
    let i = app
        .post(
            &format!("{base}/resolve"),
            &w.carol,
            json!({"resolution": "rolled back deploy 42"}),
        )
        .await
        .expect(200);
    assert_eq!(i["state"], "resolved");
    app.post(&format!("{base}/resolve"), &w.carol, json!({}))
        .await
        .expect_error(409, "conflict");
    app.post(&format!("{base}/acknowledge"), &w.carol, json!({}))
        .await
        .expect_error(409, "conflict");
    app.post(
        &format!("{base}/snooze"),
        &w.carol,
        json!({"duration": "1h"}),
    )
    .await
    .expect_error(409, "conflict");
    let d = app.get(&base, &w.bob).await.expect(200);
    let notes = d["notes"].as_array().unwrap();
    assert_eq!(notes.len(), 2);
    assert_eq!(
        (notes[1]["text"].as_str(), notes[1]["resolution"].as_bool()),
        (Some("rolled back deploy 42"), Some(true))
    );
    assert_eq!(
        kinds(&d),
        [
            "opened",
            // Nobody is on call in this team, so nobody is paged.
            "nobody_reachable",
            "alert_firing",
            "acknowledged",
            "snoozed",
            "unsnoozed",
            "assigned",
            "note",
            "resolved",
            "note"
        ]
    );
    // Manual resolve is terminal: an unchanged re-send of the still-firing alert does not reopen it.
    app.webhook(
        &w.key,
        &Payload::new("g").alert("fp", "firing", 0, None, json!({})),
    )
    .await
    .expect(200);
    assert_eq!(
        app.get(&base, &w.bob).await.expect(200)["state"],
        "resolved"
    );
    assert_eq!(app.incidents(&w.bob, w.team).await.len(), 1);
});

both!(resolve_without_a_body_and_pinning_a_note, |app| {
    let w = world(&app).await;
    let base = format!("/api/incidents/{}", w.incident);
    app.post(
        &format!("{base}/notes"),
        &w.bob,
        json!({"text": "first idea"}),
    )
    .await
    .expect(201);
    app.post(
        &format!("{base}/notes"),
        &w.bob,
        json!({"text": "the real fix", "resolution": true}),
    )
    .await
    .expect(201);
    let notes = app.get(&base, &w.bob).await.expect(200)["notes"].clone();
    let first = notes[0]["id"].as_i64().unwrap();
    app.put(
        &format!("{base}/resolution-note"),
        &w.bob,
        json!({"note_id": first}),
    )
    .await
    .expect(200);
    let notes = app.get(&base, &w.bob).await.expect(200)["notes"].clone();
    assert_eq!(
        (
            notes[0]["resolution"].as_bool(),
            notes[1]["resolution"].as_bool()
        ),
        (Some(true), Some(false))
    );
    app.put(
        &format!("{base}/resolution-note"),
        &w.bob,
        json!({"note_id": 99999}),
    )
    .await
    .expect_error(400, "invalid");
    let r = app
        .raw(
            reqwest::Method::POST,
            &format!("{base}/resolve"),
            &[("authorization", &bearer(&w.bob))],
            vec![],
        )
        .await;
    assert_eq!(r.expect(200)["state"], "resolved");
});

fn bearer(a: &Auth) -> String {
    match a {
        Auth::Key(k) => format!("Bearer {k}"),
        _ => unreachable!(),
    }
}

both!(archive_hides_from_the_list_until_asked, |app| {
    let w = world(&app).await;
    let base = format!("/api/incidents/{}", w.incident);
    assert!(app
        .post(&format!("{base}/archive"), &w.bob, json!({}))
        .await
        .expect(200)["archived"]
        .as_bool()
        .unwrap());
    let list = app
        .get(&format!("/api/incidents?team_id={}", w.team), &w.bob)
        .await
        .expect(200);
    assert_eq!(list.as_array().unwrap().len(), 0);
    assert_eq!(
        app.incidents(&w.bob, w.team).await.len(),
        1,
        "archived=true shows it"
    );
    assert!(!app
        .post(&format!("{base}/unarchive"), &w.bob, json!({}))
        .await
        .expect(200)["archived"]
        .as_bool()
        .unwrap());
    let d = app.get(&base, &w.bob).await.expect(200);
    assert!(kinds(&d).ends_with(&["archived".to_string(), "unarchived".to_string()]));
});

both!(outsiders_get_404_everywhere, |app| {
    let w = world(&app).await;
    let base = format!("/api/incidents/{}", w.incident);
    for path in [base.clone(), format!("{base}/similar")] {
        app.get(&path, &w.dave).await.expect_error(404, "not_found");
    }
    for action in ["acknowledge", "resolve", "unsnooze", "archive"] {
        app.post(&format!("{base}/{action}"), &w.dave, json!({}))
            .await
            .expect_error(404, "not_found");
    }
    app.post(&format!("{base}/notes"), &w.dave, json!({"text": "hi"}))
        .await
        .expect_error(404, "not_found");
    assert_eq!(
        app.get("/api/incidents", &w.dave)
            .await
            .expect(200)
            .as_array()
            .unwrap()
            .len(),
        0
    );
    assert_eq!(
        app.get("/api/alerts", &w.dave)
            .await
            .expect(200)
            .as_array()
            .unwrap()
            .len(),
        0
    );
    let alert = app.alert_by_fingerprint(&w.bob, "fp").await;
    app.get(&format!("/api/alerts/{}", alert["id"]), &w.dave)
        .await
        .expect_error(404, "not_found");
    app.get(&format!("/api/incidents?team_id={}", w.team), &w.dave)
        .await
        .expect_error(404, "not_found");
    app.get("/api/incidents/424242", &w.bob)
        .await
        .expect_error(404, "not_found");
    app.get("/api/incidents", &Auth::None)
        .await
        .expect_error(401, "unauthorized");
});

both!(list_filters_and_paging, |app| {
    let w = world(&app).await;
    for i in 1..=4 {
        app.webhook(
            &w.key,
            &Payload::new(&format!("g{i}")).alert(&format!("f{i}"), "firing", 0, None, json!({})),
        )
        .await
        .expect(200);
    }
    let all = app
        .get(&format!("/api/incidents?team_id={}", w.team), &w.bob)
        .await
        .expect(200);
    let ids: Vec<i64> = all
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["id"].as_i64().unwrap())
        .collect();
    assert_eq!(ids.len(), 5);
    assert!(ids.windows(2).all(|p| p[0] > p[1]), "newest first");
    let page = app
        .get(&format!("/api/incidents?limit=2&before={}", ids[1]), &w.bob)
        .await
        .expect(200);
    let page: Vec<i64> = page
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["id"].as_i64().unwrap())
        .collect();
    assert_eq!(page, ids[2..4]);
    app.post(
        &format!("/api/incidents/{}/acknowledge", ids[0]),
        &w.bob,
        json!({}),
    )
    .await
    .expect(200);
    app.post(
        &format!("/api/incidents/{}/resolve", ids[1]),
        &w.bob,
        json!({}),
    )
    .await
    .expect(200);
    let count = |q: &str| {
        let app = &app;
        let bob = w.bob.clone();
        let q = q.to_string();
        async move {
            app.get(&format!("/api/incidents?{q}"), &bob)
                .await
                .expect(200)
                .as_array()
                .unwrap()
                .len()
        }
    };
    assert_eq!(count("state=acknowledged").await, 1);
    assert_eq!(count("state=resolved").await, 1);
    assert_eq!(count("state=open").await, 4);
    assert_eq!(count("state=triggered").await, 3);
    app.get("/api/incidents?state=sleepy", &w.bob)
        .await
        .expect_error(400, "invalid");
    app.get("/api/incidents?limit=0", &w.bob)
        .await
        .expect_error(400, "invalid");
    app.get("/api/incidents?limit=1001", &w.bob)
        .await
        .expect_error(400, "invalid");
    app.get("/api/incidents?limit=abc", &w.bob)
        .await
        .expect_error(400, "invalid");
    // Alerts: filters by status, name and start time.
    app.webhook(
        &w.key,
        &Payload::new("g1").alert("f1", "resolved", 0, Some(10), json!({})),
    )
    .await
    .expect(200);
    let alerts = |q: &str| {
        let app = &app;
        let bob = w.bob.clone();
        let q = q.to_string();
        async move {
            app.get(&format!("/api/alerts?{q}"), &bob)
                .await
                .expect(200)
                .as_array()
                .unwrap()
                .len()
        }
    };
    assert_eq!(alerts("").await, 5);
    assert_eq!(alerts("status=resolved").await, 1);
    assert_eq!(alerts("status=firing&name=HighErrorRate").await, 4);
    assert_eq!(alerts("name=Other").await, 0);
    assert_eq!(
        alerts("from=2026-11-22T00:00:00Z&to=2026-11-22T00:00:01Z").await,
        5
    );
    assert_eq!(alerts("from=2026-11-22T00:00:01Z").await, 0);
    assert_eq!(alerts(&format!("team={}&limit=2", w.team)).await, 2);
    app.get("/api/alerts?from=yesterday", &w.bob)
        .await
        .expect_error(400, "invalid");
    let one = app.alert_by_fingerprint(&w.bob, "f2").await;
    assert_eq!(
        app.get(&format!("/api/alerts/{}", one["id"]), &w.carol)
            .await
            .expect(200)["fingerprint"],
        "f2"
    );
});

both!(similar_incidents_put_resolution_notes_first, |app| {
    let w = world(&app).await;
    // Earlier occurrences of the same signature (same alertname and group labels, other hosts).
    let mut earlier = vec![];
    for (i, note) in [
        (1, Some(("checked logs", false))),
        (2, Some(("raised the pool size", true))),
        (3, None),
    ] {
        let starts = -10_000 * i;
        let p = Payload::new(&format!("old{i}")).alert(
            &format!("o{i}"),
            "firing",
            starts,
            None,
            json!({"instance": format!("web-{i}")}),
        );
        app.webhook(&w.key, &p).await.expect(200);
        let id = app.incidents(&w.bob, w.team).await[0]["id"]
            .as_i64()
            .unwrap();
        if let Some((text, resolution)) = note {
            app.post(
                &format!("/api/incidents/{id}/notes"),
                &w.bob,
                json!({"text": text, "resolution": resolution}),
            )
            .await
            .expect(201);
        }
        app.post(&format!("/api/incidents/{id}/resolve"), &w.bob, json!({}))
            .await
            .expect(200);
        earlier.push(id);
    }
    let similar = app
        .get(&format!("/api/incidents/{}/similar", w.incident), &w.bob)
        .await
        .expect(200);
    let ids: Vec<i64> = similar
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].as_i64().unwrap())
        .collect();
    assert_eq!(
        ids,
        [earlier[1], earlier[0]],
        "resolution-noted first; without notes left out"
    );
    assert_eq!(similar[0]["notes"][0]["text"], "raised the pool size");
});

both!(stats_are_null_until_there_is_data, |app| {
    let admin = app.bootstrap().await;
    let team = app.team(&admin, "ops").await;
    let s = app
        .get(&format!("/api/stats/incidents?team_id={team}"), &admin)
        .await
        .expect(200);
    assert!(s["mtta_seconds"].is_null() && s["mttr_seconds"].is_null());
    assert_eq!(s["opened"], 0);
    let key = app.integration(&admin, team).await;
    app.webhook(
        &key,
        &Payload::new("a").alert("a", "firing", 0, None, json!({})),
    )
    .await
    .expect(200);
    app.webhook(
        &key,
        &Payload::new("b").alert("b", "firing", 0, None, json!({})),
    )
    .await
    .expect(200);
    let ids: Vec<i64> = app
        .incidents(&admin, team)
        .await
        .iter()
        .map(|i| i["id"].as_i64().unwrap())
        .collect();
    let s = app
        .get(&format!("/api/stats/incidents?team_id={team}"), &admin)
        .await
        .expect(200);
    assert!(
        s["mtta_seconds"].is_null(),
        "opened but not acknowledged: still null, not zero"
    );
    app.clock.advance(60);
    app.post(
        &format!("/api/incidents/{}/acknowledge", ids[0]),
        &admin,
        json!({}),
    )
    .await
    .expect(200);
    app.clock.advance(120);
    app.post(
        &format!("/api/incidents/{}/acknowledge", ids[1]),
        &admin,
        json!({}),
    )
    .await
    .expect(200);
    app.post(
        &format!("/api/incidents/{}/resolve", ids[1]),
        &admin,
        json!({}),
    )
    .await
    .expect(200);
    let s = app
        .get(&format!("/api/stats/incidents?team_id={team}"), &admin)
        .await
        .expect(200);
    assert_eq!(
        (s["mtta_seconds"].as_i64(), s["mttr_seconds"].as_i64()),
        (Some(120), Some(180))
    );
    assert_eq!(
        (
            s["opened"].as_i64(),
            s["acknowledged"].as_i64(),
            s["resolved"].as_i64()
        ),
        (Some(2), Some(2), Some(1))
    );
    let later = app
        .get(
            &format!("/api/stats/incidents?team_id={team}&from=2026-11-23T00:00:00Z"),
            &admin,
        )
        .await
        .expect(200);
    assert_eq!(later["opened"], 0);
});

both!(
    acknowledge_all_shown_takes_every_triggered_one_or_nothing,
    |app| {
        let w = world(&app).await;
        for group in ["g2", "g3"] {
            app.webhook(
                &w.key,
                &Payload::new(group).alert(
                    group,
                    "firing",
                    0,
                    None,
                    json!({"severity": "warning"}),
                ),
            )
            .await
            .expect(200);
        }
        let ids: Vec<i64> = app
            .incidents(&w.bob, w.team)
            .await
            .iter()
            .map(|i| i["id"].as_i64().unwrap())
            .collect();
        assert_eq!(ids.len(), 3);
        // Dave's own team and incident, which Bob cannot see.
        let ops = app.team(&w.dave, "ops").await;
        let ops_key = app.integration(&w.dave, ops).await;
        app.webhook(
            &ops_key,
            &Payload::new("o").alert("o", "firing", 0, None, json!({})),
        )
        .await
        .expect(200);
        let daves = app.incidents(&w.dave, ops).await[0]["id"].as_i64().unwrap();
        // Carol takes the first before Bob's list is acknowledged.
        app.post(
            &format!("/api/incidents/{}/acknowledge", w.incident),
            &w.carol,
            json!({}),
        )
        .await
        .expect(200);

        let bob = app.login("bob", "bob password").await;
        let html = app.get("/", &bob).await.text;
        let path = form_action(&html, "/rpc/acknowledge_shown");
        let list = |ids: &[i64]| {
            format!(
                "ids={}",
                ids.iter()
                    .map(i64::to_string)
                    .collect::<Vec<_>>()
                    .join("%2C")
            )
        };
        // One incident Bob may not see: 404, and nothing changes.
        let r = app.rpc(&path, &bob, &list(&[ids[0], daves])).await;
        assert_eq!(r.status.as_u16(), 404, "{}", r.text);
        for bad in ["ids=", "ids=one%2Ctwo", "ids=1%2C2%2C"] {
            let r = app.rpc(&path, &bob, bad).await;
            assert_eq!(r.status.as_u16(), 400, "{bad}: {}", r.text);
        }
        let states = |list: Vec<serde_json::Value>| -> Vec<(i64, String, Option<String>)> {
            let mut v: Vec<_> = list
                .iter()
                .map(|i| {
                    (
                        i["id"].as_i64().unwrap(),
                        i["state"].as_str().unwrap().to_string(),
                        i["acknowledged_by"].as_str().map(str::to_string),
                    )
                })
                .collect();
            v.sort();
            v
        };
        let before = states(app.incidents(&w.bob, w.team).await);
        assert_eq!(
            before.iter().filter(|s| s.1 == "triggered").count(),
            2,
            "{before:?}"
        );
        let r = app.rpc(&path, &bob, &list(&ids)).await;
        assert_eq!(r.status.as_u16(), 200, "{}", r.text);
        let mut done: Vec<i64> = serde_json::from_str(&r.text).unwrap();
        done.sort();
        let mut expected: Vec<i64> = ids.iter().copied().filter(|i| *i != w.incident).collect();
        expected.sort();
        assert_eq!(done, expected);
        for (id, state, by) in states(app.incidents(&w.bob, w.team).await) {
            assert_eq!(state, "acknowledged");
            let who = if id == w.incident { "carol" } else { "bob" };
            assert_eq!(by.as_deref(), Some(who), "#{id}");
        }
        // Dave's stays his to answer.
        assert_eq!(app.incidents(&w.dave, ops).await[0]["state"], "triggered");
        // Again: nothing left to take, nothing changes.
        let r = app.rpc(&path, &bob, &list(&ids)).await;
        assert_eq!(r.status.as_u16(), 200, "{}", r.text);
        assert_eq!(r.text, "[]");
    }
);
