//! Accounts: bootstrap, sign-in and lockout, sessions, the credential rules, API keys and
//! user administration.

use crate::common;
use common::*;
use reqwest::Method;
use serde_json::json;

both!(bootstrap_once_with_a_key_shown_once, |app| {
    assert_eq!(
        app.get("/api/auth/config", &Auth::None).await.expect(200)["needs_bootstrap"],
        true
    );
    let b = app
        .post(
            "/api/bootstrap",
            &Auth::None,
            json!({"username": "Root", "password": "root password"}),
        )
        .await
        .expect(201);
    assert_eq!(b["user"]["username"], "root");
    assert_eq!(b["user"]["is_admin"], true);
    let key = b["api_key"].as_str().unwrap();
    assert_eq!(key.len(), 64);
    let me = app.get("/api/me", &Auth::Key(key.into())).await.expect(200);
    assert_eq!(me["username"], "root");
    app.post("/api/bootstrap", &Auth::None, json!({"username": "again"}))
        .await
        .expect_error(409, "conflict");
    let keys = app
        .get(
            &format!("/api/users/{}/api-keys", me["id"]),
            &Auth::Key(key.into()),
        )
        .await
        .expect(200);
    assert!(
        !keys.to_string().contains(key),
        "a listing never shows the key"
    );
    assert_eq!(keys[0]["prefix"], &key[..8]);
});

both!(concurrent_bootstraps_make_one_user, |app| {
    let calls = (0..8).map(|i| {
        let app = &app;
        async move {
            app.post(
                "/api/bootstrap",
                &Auth::None,
                json!({"username": format!("u{i}"), "password": "long enough"}),
            )
            .await
            .status
            .as_u16()
        }
    });
    let statuses = futures::future::join_all(calls).await;
    assert_eq!(
        statuses.iter().filter(|s| **s == 201).count(),
        1,
        "{statuses:?}"
    );
    assert!(
        statuses.iter().all(|s| *s == 201 || *s == 409),
        "{statuses:?}"
    );
    let (n,): (i64,) = sqlx::query_as("SELECT COUNT(*) FROM users")
        .fetch_one(&app.core.db.pool)
        .await
        .unwrap();
    assert_eq!(n, 1);
});

both!(password_login_sets_a_session_cookie, |app| {
    app.bootstrap().await;
    let r = app
        .post(
            "/api/auth/login",
            &Auth::None,
            json!({"username": "ADMIN", "password": "admin password"}),
        )
        .await;
    let cookie = r.cookie().expect("cookie set");
    assert_eq!(r.expect(200)["user"]["username"], "admin");
    for attr in ["HttpOnly", "SameSite=Lax", "Path=/", "Max-Age=2592000"] {
        assert!(cookie.contains(attr), "{cookie} lacks {attr}");
    }
    assert!(
        !cookie.contains("Secure"),
        "plain http public URL: no Secure flag"
    );
    let session = app.login("admin", "admin password").await;
    assert_eq!(
        app.get("/api/me", &session).await.expect(200)["username"],
        "admin"
    );
    // Wrong password, unknown user and disabled user all get the same answer.
    let a = app
        .post(
            "/api/auth/login",
            &Auth::None,
            json!({"username": "admin", "password": "nope nope"}),
        )
        .await
        .expect_error(401, "unauthorized");
    let b = app
        .post(
            "/api/auth/login",
            &Auth::None,
            json!({"username": "ghost", "password": "nope nope"}),
        )
        .await
        .expect_error(401, "unauthorized");
    assert_eq!(a, b);
    // A NUL, which PostgreSQL text cannot hold, is just another unknown name.
    let c = app
        .post(
            "/api/auth/login",
            &Auth::None,
            json!({"username": "ad\u{0}min", "password": "nope nope"}),
        )
        .await
        .expect_error(401, "unauthorized");
    assert_eq!(a, c);
});

#[tokio::test]
async fn cookie_is_secure_behind_https() {
    let config = klaxon_core::Config {
        public_url: "https://klaxon.example".into(),
        ..Default::default()
    };
    let app = TestApp::spawn_with(Backend::Sqlite, config).await;
    app.bootstrap().await;
    let r = app
        .post(
            "/api/auth/login",
            &Auth::None,
            json!({"username": "admin", "password": "admin password"}),
        )
        .await;
    assert!(r.cookie().unwrap().contains("; Secure"));
}

both!(ten_failures_lock_the_username_for_the_window, |app| {
    app.bootstrap().await;
    for _ in 0..10 {
        app.post(
            "/api/auth/login",
            &Auth::None,
            json!({"username": "admin", "password": "wrong one"}),
        )
        .await
        .expect_error(401, "unauthorized");
    }
    let r = app
        .post(
            "/api/auth/login",
            &Auth::None,
            json!({"username": "admin", "password": "admin password"}),
        )
        .await;
    let retry: i64 = r.headers["retry-after"].to_str().unwrap().parse().unwrap();
    assert!(retry > 0 && retry <= 900, "{retry}");
    r.expect_error(429, "rate_limited");
    // Another username from elsewhere is unaffected.
    app.clock.advance(14 * 60);
    app.post(
        "/api/auth/login",
        &Auth::None,
        json!({"username": "admin", "password": "admin password"}),
    )
    .await
    .expect_error(429, "rate_limited");
    app.clock.advance(61);
    app.login("admin", "admin password").await;
});

// The address limit's reading of `X-Forwarded-For` (only from trusted proxies) is tested in
// security.rs.

both!(sessions_slide_and_expire, |app| {
    app.bootstrap().await;
    let s = app.login("admin", "admin password").await;
    app.clock.advance(29 * 86_400);
    app.get("/api/me", &s).await.expect(200);
    app.clock.advance(29 * 86_400);
    app.get("/api/me", &s).await.expect(200);
    app.clock.advance(31 * 86_400);
    app.get("/api/me", &s)
        .await
        .expect_error(401, "unauthorized");
});

both!(logout_ends_the_session, |app| {
    app.bootstrap().await;
    let s = app.login("admin", "admin password").await;
    let r = app.post("/api/auth/logout", &s, json!({})).await;
    assert!(r.cookie().unwrap().contains("Max-Age=0"));
    r.expect(204);
    app.get("/api/me", &s)
        .await
        .expect_error(401, "unauthorized");
});

both!(bad_credentials_are_401, |app| {
    let key = app.bootstrap().await;
    let Auth::Key(k) = &key else { unreachable!() };
    let tampered = format!("{}{}", &k[..63], if k.ends_with('A') { 'B' } else { 'A' });
    for auth in [
        Auth::None,
        Auth::Key("short".into()),
        Auth::Key(tampered.clone()),
        Auth::Cookie(tampered),
        Auth::Cookie("x".repeat(5000)),
    ] {
        app.get("/api/me", &auth)
            .await
            .expect_error(401, "unauthorized");
    }
    let r = app
        .raw(
            Method::GET,
            "/api/me",
            &[("authorization", "Basic YWRtaW46YWRtaW4=")],
            vec![],
        )
        .await;
    r.expect_error(401, "unauthorized");
});

both!(an_authorization_header_is_judged_alone, |app| {
    app.bootstrap().await;
    let Auth::Cookie(token) = app.login("admin", "admin password").await else {
        unreachable!()
    };
    let cookie = format!("klaxon_session={token}");
    let r = app
        .raw(
            Method::GET,
            "/api/me",
            &[("cookie", &cookie), ("authorization", "Bearer nonsense")],
            vec![],
        )
        .await;
    r.expect_error(401, "unauthorized");
    app.raw(Method::GET, "/api/me", &[("cookie", &cookie)], vec![])
        .await
        .expect(200);
});

both!(
    cookie_requests_that_change_state_must_be_same_origin,
    |app| {
        let key = app.bootstrap().await;
        let Auth::Cookie(token) = app.login("admin", "admin password").await else {
            unreachable!()
        };
        let cookie = format!("klaxon_session={token}");
        let ct = ("content-type", "application/json");
        let body = || json!({"name": "from-a-page"}).to_string().into_bytes();
        for hostile in [
            vec![("origin", "https://evil.example")],
            vec![("sec-fetch-site", "cross-site")],
            vec![("sec-fetch-site", "same-site")],
        ] {
            let mut h = vec![("cookie", cookie.as_str()), ct];
            h.extend(hostile);
            app.raw(Method::POST, "/api/teams", &h, body())
                .await
                .expect_error(403, "forbidden");
        }
        let (n,): (i64,) = sqlx::query_as("SELECT COUNT(*) FROM teams")
            .fetch_one(&app.core.db.pool)
            .await
            .unwrap();
        assert_eq!(n, 0, "refused requests wrote nothing");
        let own = app.url.clone();
        app.raw(
            Method::POST,
            "/api/teams",
            &[("cookie", &cookie), ct, ("origin", &own)],
            body(),
        )
        .await
        .expect(201);
        app.raw(
            Method::GET,
            "/api/teams",
            &[("cookie", &cookie), ("sec-fetch-site", "cross-site")],
            vec![],
        )
        .await
        .expect(200);
        // Bearer requests carry no ambient authority, so no origin check applies.
        let Auth::Key(k) = key else { unreachable!() };
        let bearer = format!("Bearer {k}");
        let b2 = json!({"name": "by-key"}).to_string().into_bytes();
        app.raw(
            Method::POST,
            "/api/teams",
            &[
                ("authorization", &bearer),
                ct,
                ("origin", "https://evil.example"),
            ],
            b2,
        )
        .await
        .expect(201);
    }
);

both!(api_keys_self_service_last_used_and_delete, |app| {
    let admin = app.bootstrap().await;
    let (bob_id, bob) = app.user(&admin, "bob").await;
    let (carol_id, carol) = app.user(&admin, "carol").await;
    let k = app
        .post(
            &format!("/api/users/{bob_id}/api-keys"),
            &bob,
            json!({"name": "laptop"}),
        )
        .await
        .expect(201);
    let key = Auth::Key(k["key"].as_str().unwrap().to_string());
    let listed = app
        .get(&format!("/api/users/{bob_id}/api-keys"), &bob)
        .await
        .expect(200);
    let laptop = listed
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["name"] == "laptop")
        .unwrap()
        .clone();
    assert!(laptop["last_used_at"].is_null());
    app.clock.advance(60);
    app.get("/api/me", &key).await.expect(200);
    let listed = app
        .get(&format!("/api/users/{bob_id}/api-keys"), &bob)
        .await
        .expect(200);
    let laptop = listed
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["name"] == "laptop")
        .unwrap()
        .clone();
    assert_eq!(laptop["last_used_at"], "2026-11-22T00:01:00Z");
    // Someone else's keys: not for carol; fine for an administrator.
    app.get(&format!("/api/users/{bob_id}/api-keys"), &carol)
        .await
        .expect_error(403, "forbidden");
    app.post(
        &format!("/api/users/{bob_id}/api-keys"),
        &carol,
        json!({"name": "x"}),
    )
    .await
    .expect_error(403, "forbidden");
    app.get(&format!("/api/users/{bob_id}/api-keys"), &admin)
        .await
        .expect(200);
    app.delete(
        &format!("/api/users/{carol_id}/api-keys/{}", k["id"]),
        &carol,
    )
    .await
    .expect_error(404, "not_found");
    app.delete(&format!("/api/users/{bob_id}/api-keys/{}", k["id"]), &bob)
        .await
        .expect(204);
    app.get("/api/me", &key)
        .await
        .expect_error(401, "unauthorized");
    app.post(
        &format!("/api/users/{bob_id}/api-keys"),
        &bob,
        json!({"name": ""}),
    )
    .await
    .expect_error(400, "invalid");
});

both!(user_administration_is_for_human_administrators, |app| {
    let admin = app.bootstrap().await;
    let (bob_id, bob) = app.user(&admin, "bob").await;
    app.post("/api/users", &bob, json!({"username": "eve"}))
        .await
        .expect_error(403, "forbidden");
    app.delete(&format!("/api/users/{bob_id}"), &bob)
        .await
        .expect_error(403, "forbidden");
    app.post("/api/users", &admin, json!({"username": "bob"}))
        .await
        .expect_error(409, "conflict");
    app.post("/api/users", &admin, json!({"username": "bad name"}))
        .await
        .expect_error(400, "invalid");
    // The roster is open to everyone signed in: a person in no team sees themselves.
    let roster = app.get("/api/users", &bob).await.expect(200);
    assert_eq!(roster.as_array().unwrap().len(), 1);
    assert!(roster
        .as_array()
        .unwrap()
        .iter()
        .all(|u| u["is_admin"].is_boolean()));
    assert_eq!(
        app.get("/api/users?username=BOB", &bob).await.expect(200)[0]["id"],
        bob_id
    );
    app.get("/api/admin/users", &bob)
        .await
        .expect_error(403, "forbidden");
    app.get("/api/admin/users", &admin).await.expect(200);
    app.delete(&format!("/api/users/{bob_id}"), &admin)
        .await
        .expect(204);
    app.get("/api/me", &bob)
        .await
        .expect_error(401, "unauthorized");
});

both!(
    service_accounts_are_refused_on_human_only_endpoints,
    |app| {
        let admin = app.bootstrap().await;
        // Service accounts get their own endpoints later; the Actor already knows the kind.
        let (id,): (i64,) = sqlx::query_as("INSERT INTO users (username, kind, is_admin, created_at) VALUES ('robot', 'service', 1, 0) RETURNING id")
        .fetch_one(&app.core.db.pool)
        .await
        .unwrap();
        let k = app
            .post(
                &format!("/api/service-accounts/{id}/api-keys"),
                &admin,
                json!({"name": "ci"}),
            )
            .await
            .expect(201);
        let robot = Auth::Key(k["key"].as_str().unwrap().to_string());
        let msg = app
            .get("/api/me", &robot)
            .await
            .expect_error(403, "forbidden");
        assert!(msg.contains("human"), "{msg}");
        app.post("/api/me/onboarding/dismiss", &robot, json!({}))
            .await
            .expect_error(403, "forbidden");
        app.post("/api/users", &robot, json!({"username": "x"}))
            .await
            .expect_error(403, "forbidden");
        app.put(
            &format!("/api/users/{id}/admin"),
            &admin,
            json!({"is_admin": false}),
        )
        .await
        .expect(200);
    }
);

both!(disabling_kills_sessions_and_keys_at_once, |app| {
    let admin = app.bootstrap().await;
    let (bob_id, bob_key) = app.user(&admin, "bob").await;
    let bob_session = app.login("bob", "bob password").await;
    let u = app
        .put(
            &format!("/api/users/{bob_id}/disabled"),
            &admin,
            json!({"disabled": true}),
        )
        .await
        .expect(200);
    assert_eq!(u["disabled"], true);
    app.get("/api/me", &bob_session)
        .await
        .expect_error(401, "unauthorized");
    app.get("/api/me", &bob_key)
        .await
        .expect_error(401, "unauthorized");
    app.post(
        "/api/auth/login",
        &Auth::None,
        json!({"username": "bob", "password": "bob password"}),
    )
    .await
    .expect_error(401, "unauthorized");
    app.put(
        &format!("/api/users/{bob_id}/disabled"),
        &admin,
        json!({"disabled": false}),
    )
    .await
    .expect(200);
    app.get("/api/me", &bob_key).await.expect(200);
    app.get("/api/me", &bob_session)
        .await
        .expect_error(401, "unauthorized");
});

both!(admin_flag_and_the_last_admin_and_self_guards, |app| {
    let admin = app.bootstrap().await;
    let admin_id = app.get("/api/me", &admin).await.expect(200)["id"]
        .as_i64()
        .unwrap();
    let (bob_id, bob) = app.user(&admin, "bob").await;
    for (method, path, body) in [
        (Method::DELETE, format!("/api/users/{admin_id}"), None),
        (
            Method::PUT,
            format!("/api/users/{admin_id}/admin"),
            Some(json!({"is_admin": false})),
        ),
        (
            Method::PUT,
            format!("/api/users/{admin_id}/disabled"),
            Some(json!({"disabled": true})),
        ),
    ] {
        app.send(method, &path, &admin, body)
            .await
            .expect_error(409, "conflict");
    }
    assert_eq!(
        app.put(
            &format!("/api/users/{bob_id}/admin"),
            &admin,
            json!({"is_admin": true})
        )
        .await
        .expect(200)["is_admin"],
        true
    );
    // Two administrators demoting each other at once: one stays.
    let (bob_path, admin_path) = (
        format!("/api/users/{bob_id}/admin"),
        format!("/api/users/{admin_id}/admin"),
    );
    let a = app.put(&bob_path, &admin, json!({"is_admin": false}));
    let b = app.put(&admin_path, &bob, json!({"is_admin": false}));
    let (a, b) = tokio::join!(a, b);
    let ok = [a.status.as_u16(), b.status.as_u16()];
    let (n,): (i64,) = sqlx::query_as("SELECT COUNT(*) FROM users WHERE is_admin = 1")
        .fetch_one(&app.core.db.pool)
        .await
        .unwrap();
    assert_eq!(n, 1, "statuses {ok:?}");
});

both!(
    own_password_change_needs_the_current_one_and_ends_other_sessions,
    |app| {
        let admin = app.bootstrap().await;
        let (bob_id, _) = app.user(&admin, "bob").await;
        let phone = app.login("bob", "bob password").await;
        let laptop = app.login("bob", "bob password").await;
        let path = format!("/api/users/{bob_id}/password");
        app.put(&path, &laptop, json!({"password": "new password"}))
            .await
            .expect_error(400, "invalid");
        app.put(
            &path,
            &laptop,
            json!({"password": "new password", "current_password": "wrong"}),
        )
        .await
        .expect_error(400, "invalid");
        app.put(
            &path,
            &laptop,
            json!({"password": "new password", "current_password": "bob password"}),
        )
        .await
        .expect(204);
        app.get("/api/me", &laptop).await.expect(200);
        app.get("/api/me", &phone)
            .await
            .expect_error(401, "unauthorized");
        app.login("bob", "new password").await;
        // An administrator resets it without the current one; every session of bob ends.
        app.put(&path, &admin, json!({"password": "reset password"}))
            .await
            .expect(204);
        app.get("/api/me", &laptop)
            .await
            .expect_error(401, "unauthorized");
        let (carol_id, carol) = app.user(&admin, "carol").await;
        app.put(&path, &carol, json!({"password": "hijacked!!"}))
            .await
            .expect_error(403, "forbidden");
        let _ = carol_id;
    }
);

both!(push_topic_and_onboarding, |app| {
    let admin = app.bootstrap().await;
    let (bob_id, bob) = app.user(&admin, "bob").await;
    let (_, carol) = app.user(&admin, "carol").await;
    let path = format!("/api/users/{bob_id}/push-topic");
    assert_eq!(
        app.put(&path, &bob, json!({"push_topic": "bob-pager"}))
            .await
            .expect(200)["push_topic"],
        "bob-pager"
    );
    app.put(&path, &carol, json!({"push_topic": "stolen"}))
        .await
        .expect_error(403, "forbidden");
    app.put(&path, &bob, json!({"push_topic": "has spaces/slash"}))
        .await
        .expect_error(400, "invalid");
    app.put(&path, &admin, json!({"push_topic": ""}))
        .await
        .expect(200);
    assert!(app.get("/api/me", &bob).await.expect(200)["push_topic"].is_null());
    assert!(app.get("/api/me", &bob).await.expect(200)["onboarding_dismissed_at"].is_null());
    app.post("/api/me/onboarding/dismiss", &bob, json!({}))
        .await
        .expect(204);
    assert_eq!(
        app.get("/api/me", &bob).await.expect(200)["onboarding_dismissed_at"],
        "2026-11-22T00:00:00Z"
    );
});
