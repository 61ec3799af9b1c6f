//! Invite links and sign-up: creating, listing and revoking links, the public check's one
//! answer for every unusable link, redemption counted once inside the sign-up transaction,
//! the sign-up modes, and the sign-up limiter kept apart from the sign-in counters.

use crate::common;
use common::*;
use serde_json::{json, Value};

/// `admin` owning team `payments`, with a plain member `carol` and an outsider `dave`.
struct World {
    admin: Auth,
    team: i64,
    carol: Auth,
    dave: Auth,
}

async fn world(app: &TestApp) -> World {
    let admin = app.bootstrap().await;
    let team = app.team(&admin, "payments").await;
    let (carol_id, carol) = app.user(&admin, "carol").await;
    app.post(
        &format!("/api/teams/{team}/members"),
        &admin,
        json!({"user_id": carol_id}),
    )
    .await
    .expect(201);
    let (_, dave) = app.user(&admin, "dave").await;
    World {
        admin,
        team,
        carol,
        dave,
    }
}

async fn invite(app: &TestApp, auth: &Auth, team: i64, body: Value) -> Value {
    app.post(&format!("/api/teams/{team}/invites"), auth, body)
        .await
        .expect(201)
}

async fn signup(app: &TestApp, username: &str, invite: Option<&str>) -> Res {
    app.post(
        "/api/signup",
        &Auth::None,
        json!({"username": username, "password": "a long password", "invite": invite}),
    )
    .await
}

fn token(invite: &Value) -> String {
    invite["token"].as_str().unwrap().to_string()
}

async fn user_count(app: &TestApp) -> i64 {
    let (n,): (i64,) = sqlx::query_as("SELECT COUNT(*) FROM users")
        .fetch_one(&app.core.db.pool)
        .await
        .unwrap();
    n
}

both!(owners_create_list_and_revoke_links, |app| {
    let w = world(&app).await;
    let now = app.core.now();
    let made = invite(&app, &w.admin, w.team, json!({})).await;
    let t = token(&made);
    assert_eq!(t.len(), 64);
    assert_eq!(
        made["url"],
        format!("{}/signup?invite={t}", app.config.public_url)
    );
    assert_eq!(made["role"], "member");
    assert_eq!(made["max_uses"], 1);
    assert_eq!(made["uses"], 0);
    assert_eq!(made["state"], "usable");
    assert_eq!(made["created_by"], "admin");
    assert_eq!(
        made["expires_at"],
        klaxon_domain::Timestamp(now + 7 * 86_400).to_rfc3339()
    );
    let owners = invite(
        &app,
        &w.admin,
        w.team,
        json!({"role": "owner", "max_uses": 100}),
    )
    .await;
    assert_eq!(owners["role"], "owner");
    // The list shows every link with its state and never a token.
    let list = app
        .get(&format!("/api/teams/{}/invites", w.team), &w.admin)
        .await
        .expect(200);
    assert_eq!(list.as_array().unwrap().len(), 2);
    assert_eq!(list[0]["id"], owners["id"], "newest first");
    assert!(list
        .as_array()
        .unwrap()
        .iter()
        .all(|i| i.get("token").is_none() && i.get("url").is_none()));
    // Revoked once; again is a conflict; its state says so.
    let path = format!("/api/teams/{}/invites/{}", w.team, made["id"]);
    assert_eq!(app.delete(&path, &w.admin).await.status, 204);
    app.delete(&path, &w.admin)
        .await
        .expect_error(409, "conflict");
    let list = app
        .get(&format!("/api/teams/{}/invites", w.team), &w.admin)
        .await
        .expect(200);
    assert_eq!(list[1]["state"], "revoked");
    // A week later the other one has expired.
    app.clock.advance(7 * 86_400);
    let list = app
        .get(&format!("/api/teams/{}/invites", w.team), &w.admin)
        .await
        .expect(200);
    assert_eq!(list[0]["state"], "expired");
});

both!(links_are_for_owners_and_bad_input_changes_nothing, |app| {
    let w = world(&app).await;
    let team = w.team;
    // A member may not, an outsider sees no team.
    app.post(&format!("/api/teams/{team}/invites"), &w.carol, json!({}))
        .await
        .expect_error(403, "forbidden");
    app.get(&format!("/api/teams/{team}/invites"), &w.carol)
        .await
        .expect_error(403, "forbidden");
    app.post(&format!("/api/teams/{team}/invites"), &w.dave, json!({}))
        .await
        .expect_error(404, "not_found");
    for body in [
        json!({"max_uses": 0}),
        json!({"max_uses": 101}),
        json!({"max_uses": "3"}),
        json!({"role": "boss"}),
        json!({"role": "admin", "max_uses": 2}),
        json!({"uses": 5}),
    ] {
        app.post(
            &format!("/api/teams/{team}/invites"),
            &w.admin,
            body.clone(),
        )
        .await
        .expect_error(400, "invalid");
    }
    let list = app
        .get(&format!("/api/teams/{team}/invites"), &w.admin)
        .await
        .expect(200);
    assert_eq!(list, json!([]), "no refused request made a link");
    // Another team's link is not found through this team.
    let other = app.team(&w.admin, "search").await;
    let theirs = invite(&app, &w.admin, other, json!({})).await;
    app.delete(
        &format!("/api/teams/{team}/invites/{}", theirs["id"]),
        &w.admin,
    )
    .await
    .expect_error(404, "not_found");
    app.delete(&format!("/api/teams/{team}/invites/999999"), &w.admin)
        .await
        .expect_error(404, "not_found");
});

both!(every_unusable_link_gets_the_same_bytes, |app| {
    let w = world(&app).await;
    let usable = token(&invite(&app, &w.admin, w.team, json!({})).await);
    let check = app
        .get(&format!("/api/signup?invite={usable}"), &Auth::None)
        .await
        .expect(200);
    assert_eq!(check["invite_usable"], true);
    assert_eq!(check["team"]["name"], "payments");
    assert_eq!(check["role"], "member");
    assert_eq!(check["signup_mode"], "invite_only");

    let revoked = invite(&app, &w.admin, w.team, json!({})).await;
    app.delete(
        &format!("/api/teams/{}/invites/{}", w.team, revoked["id"]),
        &w.admin,
    )
    .await;
    let used = token(&invite(&app, &w.admin, w.team, json!({})).await);
    signup(&app, "erin", Some(&used)).await.expect(201);
    let expiring = token(&invite(&app, &w.admin, w.team, json!({"max_uses": 5})).await);
    app.clock.advance(7 * 86_400);
    let unknown = "A".repeat(64);
    let mut answers = Vec::new();
    for t in [
        token(&revoked),
        used.clone(),
        expiring.clone(),
        unknown.clone(),
        "short".to_string(),
        "%3Cscript%3E".to_string(),
    ] {
        let r = app
            .get(&format!("/api/signup?invite={t}"), &Auth::None)
            .await;
        assert_eq!(r.status, 200);
        answers.push(r.text);
    }
    answers.push(app.get("/api/signup", &Auth::None).await.text);
    assert!(answers.windows(2).all(|p| p[0] == p[1]), "{answers:?}");
    assert_eq!(
        serde_json::from_str::<Value>(&answers[0]).unwrap(),
        json!({"signup_mode": "invite_only", "invite_usable": false, "team": null, "role": null})
    );
    // Signing up with any of them is one answer too, and creates nobody.
    let before = user_count(&app).await;
    let mut refusals = Vec::new();
    for (i, t) in [token(&revoked), used, expiring, unknown, "short".into()]
        .iter()
        .enumerate()
    {
        let r = signup(&app, &format!("frank{i}"), Some(t)).await;
        assert_eq!(r.status, 400, "{}", r.text);
        assert_eq!(r.body["error"], "invite_unusable");
        refusals.push(r.text);
    }
    assert!(refusals.windows(2).all(|p| p[0] == p[1]), "{refusals:?}");
    assert_eq!(user_count(&app).await, before);
});

both!(
    signing_up_through_a_link_joins_the_team_and_signs_in,
    |app| {
        let w = world(&app).await;
        let link = invite(
            &app,
            &w.admin,
            w.team,
            json!({"role": "owner", "max_uses": 2}),
        )
        .await;
        let r = signup(&app, "  Erin ", Some(&token(&link))).await;
        let cookie = r.cookie().expect("the sign-up signs in");
        assert!(cookie.contains("HttpOnly"));
        let session = r.session().unwrap();
        let body = r.expect(201);
        assert_eq!(body["user"]["username"], "erin");
        assert_eq!(body["user"]["kind"], "human");
        let me = app.get("/api/me", &session).await.expect(200);
        assert_eq!(me["teams"][0]["name"], "payments");
        assert_eq!(me["teams"][0]["role"], "owner");
        // The same sign-up again: the username is taken, and the link's second use stays unused.
        signup(&app, "erin", Some(&token(&link)))
            .await
            .expect_error(409, "conflict");
        let list = app
            .get(&format!("/api/teams/{}/invites", w.team), &w.admin)
            .await
            .expect(200);
        assert_eq!(list[0]["uses"], 1);
        assert_eq!(list[0]["state"], "usable");
        // Bad input is refused before the link is touched.
        for (name, password) in [
            ("", "a long password"),
            ("bad name", "a long password"),
            ("gina", "short"),
            ("gina\u{0}", "a long password"),
        ] {
            let r = app
                .post(
                    "/api/signup",
                    &Auth::None,
                    json!({"username": name, "password": password, "invite": token(&link)}),
                )
                .await;
            r.expect_error(400, "invalid");
        }
        let long = "x".repeat(1025);
        app.post(
            "/api/signup",
            &Auth::None,
            json!({"username": "gina", "password": long, "invite": token(&link)}),
        )
        .await
        .expect_error(400, "invalid");
        let list = app
            .get(&format!("/api/teams/{}/invites", w.team), &w.admin)
            .await
            .expect(200);
        assert_eq!(list[0]["uses"], 1);
        // The last use works once.
        signup(&app, "gina", Some(&token(&link))).await.expect(201);
        signup(&app, "hank", Some(&token(&link)))
            .await
            .expect_error(400, "invite_unusable");
    }
);

both!(without_a_link_only_an_open_install_takes_sign_ups, |app| {
    let w = world(&app).await;
    signup(&app, "erin", None)
        .await
        .expect_error(403, "forbidden");
    signup(&app, "erin", Some(""))
        .await
        .expect_error(403, "forbidden");
    app.put(
        "/api/admin/settings",
        &w.admin,
        json!({"signup_mode": "open"}),
    )
    .await
    .expect(200);
    let check = app.get("/api/signup", &Auth::None).await.expect(200);
    assert_eq!(check["signup_mode"], "open");
    let r = signup(&app, "erin", None).await;
    let session = r.session().unwrap();
    r.expect(201);
    let me = app.get("/api/me", &session).await.expect(200);
    assert_eq!(me["teams"], json!([]), "an open sign-up joins no team");
    // A usable link still joins its team in open mode.
    let link = token(&invite(&app, &w.admin, w.team, json!({})).await);
    signup(&app, "fay", Some(&link)).await.expect(201);
    // An unparseable stored mode behaves as invite-only.
    sqlx::query("UPDATE settings SET value = 'wide-open' WHERE key = 'signup_mode'")
        .execute(&app.core.db.pool)
        .await
        .unwrap();
    signup(&app, "gus", None)
        .await
        .expect_error(403, "forbidden");
    let check = app.get("/api/signup", &Auth::None).await.expect(200);
    assert_eq!(check["signup_mode"], "invite_only");
});

both!(racing_sign_ups_redeem_the_last_use_once, |app| {
    let w = world(&app).await;
    let link = token(&invite(&app, &w.admin, w.team, json!({"max_uses": 3})).await);
    let before = user_count(&app).await;
    let attempts = (0..20).map(|i| {
        let link = link.clone();
        let app = &app;
        async move { signup(app, &format!("racer{i}"), Some(&link)).await }
    });
    let results = futures::future::join_all(attempts).await;
    let created = results.iter().filter(|r| r.status == 201).count();
    let refused = results
        .iter()
        .filter(|r| r.status == 400 && r.body["error"] == "invite_unusable")
        .count();
    assert_eq!(
        (created, refused),
        (3, 17),
        "{:?}",
        results.iter().map(|r| &r.text).collect::<Vec<_>>()
    );
    assert_eq!(user_count(&app).await, before + 3);
    let list = app
        .get(&format!("/api/teams/{}/invites", w.team), &w.admin)
        .await
        .expect(200);
    assert_eq!(list[0]["uses"], 3);
    assert_eq!(list[0]["state"], "used_up");
    let members = app
        .get(&format!("/api/teams/{}/members", w.team), &w.admin)
        .await
        .expect(200);
    let racers = members
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["username"].as_str().unwrap().starts_with("racer"))
        .count();
    assert_eq!(racers, 3);
});

both!(a_burst_of_sign_ups_never_locks_out_sign_in, |app| {
    let w = world(&app).await;
    let _ = w;
    let limit = klaxon_core::throttle::SIGNUPS_PER_ADDRESS;
    for i in 0..limit {
        // Refused attempts count too: each may cost the server a password hash.
        signup(&app, &format!("burst{i}"), None)
            .await
            .expect_error(403, "forbidden");
    }
    let r = signup(&app, "one-more", None).await;
    let retry: i64 = r.headers["retry-after"].to_str().unwrap().parse().unwrap();
    assert!(retry > 0 && retry <= klaxon_core::throttle::WINDOW);
    r.expect_error(429, "rate_limited");
    // Signing in from the same address is untouched.
    let session = app.login("carol", "carol password").await;
    app.get("/api/me", &session).await.expect(200);
    // The window passes and sign-ups are taken again.
    app.clock.advance(klaxon_core::throttle::WINDOW + 1);
    signup(&app, "later", None)
        .await
        .expect_error(403, "forbidden");
});

both!(someone_signed_in_joins_with_a_link_once, |app| {
    let w = world(&app).await;
    let link = invite(
        &app,
        &w.admin,
        w.team,
        json!({"role": "owner", "max_uses": 3}),
    )
    .await;
    let t = token(&link);
    let joined = app
        .post("/api/invites/join", &w.dave, json!({"invite": t}))
        .await
        .expect(201);
    assert_eq!(joined["id"], w.team);
    assert_eq!(joined["role"], "owner");
    let members = app
        .get(&format!("/api/teams/{}/members", w.team), &w.admin)
        .await
        .expect(200);
    assert!(members
        .as_array()
        .unwrap()
        .iter()
        .any(|m| m["username"] == "dave" && m["role"] == "owner"));
    // A member already: 409, and the use is not counted.
    let again = app
        .post("/api/invites/join", &w.carol, json!({"invite": t}))
        .await
        .expect_error(409, "conflict");
    assert!(again.contains("already a member of payments"), "{again}");
    let listed = app
        .get(&format!("/api/teams/{}/invites", w.team), &w.admin)
        .await
        .expect(200);
    assert_eq!(listed[0]["uses"], 1);
    // Unusable links get sign-up's one answer; a service account cannot be a member.
    for bad in ["A".repeat(64), "short".to_string(), String::new()] {
        app.post("/api/invites/join", &w.carol, json!({"invite": bad}))
            .await
            .expect_error(400, "invite_unusable");
    }
    let service = app
        .post(
            &format!("/api/teams/{}/service-accounts", w.team),
            &w.admin,
            json!({"name": "robot"}),
        )
        .await
        .expect(201);
    let key = app
        .service_key(&w.admin, service["id"].as_i64().unwrap())
        .await;
    app.post("/api/invites/join", &key, json!({"invite": t}))
        .await
        .expect_error(403, "forbidden");
    app.post("/api/invites/join", &Auth::None, json!({"invite": t}))
        .await
        .expect_error(401, "unauthorized");
    app.post(
        "/api/invites/join",
        &w.carol,
        json!({"invite": t, "extra": 1}),
    )
    .await
    .expect_error(400, "invalid");
    let listed = app
        .get(&format!("/api/teams/{}/invites", w.team), &w.admin)
        .await
        .expect(200);
    assert_eq!(listed[0]["uses"], 1);
});
