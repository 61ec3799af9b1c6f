//! What a hostile client may try: markup in stored text, reading other people's push topics,
//! forged forwarding headers, oversized group data, unreadable credentials, cross-site
//! sign-in, password guessing through a stolen session, and probing intake without a key.

use crate::common;
use common::*;
use klaxon_core::client::TrustedProxies;
use reqwest::Method;
use serde_json::{json, Value};

/// Markup that would redirect the page if it reached the HTML unescaped (95 characters, so it
/// fits every free-text field, the 100-character names included).
const HOSTILE: &str = r#"</title><meta http-equiv="refresh" content="0;url=//evil.example/"><img src=x onerror=alert(1)>"#;

/// Checks one rendered page: the hostile text is present (so the check is not vacuous) but only
/// escaped, in the title and everywhere else.
#[track_caller]
fn assert_inert(path: &str, html: &str) {
    let lower = html.to_lowercase();
    let title = lower
        .split_once("<title>")
        .and_then(|(_, rest)| rest.split_once("</title>"))
        .map(|(t, _)| t)
        .unwrap_or_else(|| panic!("{path}: no <title>"));
    assert!(
        !title.contains('<'),
        "{path}: markup inside <title>: {title}"
    );
    for raw in ["<meta http-equiv", "<img src=x", "href=\"javascript:"] {
        assert!(!lower.contains(raw), "{path}: `{raw}` reached the page");
    }
    assert!(
        lower.contains("&lt;meta http-equiv="),
        "{path}: the hostile text is not on the page at all"
    );
}

both!(hostile_text_never_becomes_markup, |app| {
    let admin = app.bootstrap().await;
    let session = app.login("admin", "admin password").await;
    let team = app
        .post(
            "/api/teams",
            &admin,
            json!({"name": "ops", "display_name": HOSTILE}),
        )
        .await
        .expect(201)["id"]
        .as_i64()
        .unwrap();
    let key = app
        .post(
            &format!("/api/teams/{team}/integrations"),
            &admin,
            json!({"name": HOSTILE, "kind": "alertmanager"}),
        )
        .await
        .expect(201)["key"]
        .as_str()
        .unwrap()
        .to_string();
    app.post(
        &format!("/api/teams/{team}/deadman/switches"),
        &admin,
        json!({"name": HOSTILE, "matcher": "{alertname=\"Watchdog\"}", "timeout": "10m", "severity": "critical"}),
    )
    .await
    .expect(201);
    app.post("/api/users/1/api-keys", &admin, json!({"name": HOSTILE}))
        .await
        .expect(201);
    let mut payload = Payload::new(HOSTILE).alert(
        "f1",
        "firing",
        0,
        None,
        json!({"alertname": HOSTILE, "severity": "critical", "service": HOSTILE}),
    );
    payload.alerts[0]["annotations"] = json!({
        "summary": HOSTILE,
        "description": format!("{HOSTILE} and more"),
        "runbook_url": "javascript:alert(document.cookie)",
    });
    app.webhook(&key, &payload).await.expect(200);
    let incident = app.incidents(&admin, team).await[0]["id"].as_i64().unwrap();
    app.post(
        &format!("/api/incidents/{incident}/notes"),
        &admin,
        json!({"text": HOSTILE}),
    )
    .await
    .expect(201);

    for path in [
        "/".to_string(),
        format!("/incidents/{incident}"),
        "/teams".to_string(),
        format!("/teams/{team}"),
        format!("/teams/{team}/escalation"),
        "/schedule".to_string(),
        "/me".to_string(),
    ] {
        let page = app.get(&path, &session).await;
        assert_eq!(page.status.as_u16(), 200, "{path}");
        if path == "/schedule" {
            // Pages without the hostile text in them: only the title and links are checked.
            assert!(
                !page.text.to_lowercase().contains("<meta http-equiv"),
                "{path}"
            );
            continue;
        }
        assert_inert(&path, &page.text);
    }
    let page = app.get(&format!("/incidents/{incident}"), &session).await;
    assert!(
        !page.text.contains("Runbook"),
        "a javascript: runbook_url must not become a link"
    );
    // The admin console lists the team; an invite link's page names it to a signed-out visitor.
    let admin_page = app.get("/admin", &session).await;
    assert_inert("/admin", &admin_page.text);
    let link = app
        .post(&format!("/api/teams/{team}/invites"), &admin, json!({}))
        .await
        .expect(201);
    let signup = app
        .get(
            &format!("/signup?invite={}", link["token"].as_str().unwrap()),
            &Auth::None,
        )
        .await;
    assert_eq!(signup.status.as_u16(), 200);
    assert_inert("/signup", &signup.text);
    // A code in the device page's address is shown only as a field's escaped value.
    let device = app
        .get(
            "/device?code=%22%3E%3Cmeta%20http-equiv%3Drefresh%3E",
            &session,
        )
        .await;
    assert_eq!(device.status.as_u16(), 200);
    assert!(
        !device.text.to_lowercase().contains("<meta http-equiv"),
        "/device: the code became markup"
    );
});

both!(
    push_topics_are_shown_to_their_user_and_administrators_only,
    |app| {
        let admin = app.bootstrap().await;
        let (bob_id, bob) = app.user(&admin, "bob").await;
        let (carol_id, carol) = app.user(&admin, "carol").await;
        for (id, who, topic) in [
            (bob_id, &bob, "bob-pager"),
            (carol_id, &carol, "carol-pager"),
        ] {
            app.put(
                &format!("/api/users/{id}/push-topic"),
                who,
                json!({"push_topic": topic}),
            )
            .await
            .expect(200);
        }
        // A team-scoped service account of a team bob is not in.
        let other = app.team(&admin, "other").await;
        let (robot_id,): (i64,) = sqlx::query_as(
        "INSERT INTO users (username, kind, team_id, created_at) VALUES ('robot', 'service', $1, 0) RETURNING id",
    )
    .bind(other)
    .fetch_one(&app.core.db.pool)
    .await
    .unwrap();
        let k = app
            .post(
                &format!("/api/service-accounts/{robot_id}/api-keys"),
                &admin,
                json!({"name": "ci"}),
            )
            .await
            .expect(201);
        let robot = Auth::Key(k["key"].as_str().unwrap().to_string());
        // The roster shows the caller's teams: carol shares one with bob, and bob is in the
        // robot's team too.
        let shared = app.team(&admin, "shared").await;
        for (team, user) in [(shared, bob_id), (shared, carol_id), (other, bob_id)] {
            app.post(
                &format!("/api/teams/{team}/members"),
                &admin,
                json!({"user_id": user}),
            )
            .await
            .expect(201);
        }

        let topic_of = |roster: &Value, id: i64| -> Value {
            let row = roster
                .as_array()
                .unwrap()
                .iter()
                .find(|u| u["id"] == id)
                .expect("listed")
                .clone();
            assert!(
                row["username"].is_string() && row["kind"].is_string() && row["source"].is_string()
            );
            assert!(row["is_admin"].is_boolean() && row["disabled"].is_boolean());
            row.get("push_topic").cloned().unwrap_or(Value::Null)
        };
        for stranger in [&carol, &robot] {
            let roster = app.get("/api/users", stranger).await.expect(200);
            assert!(
                topic_of(&roster, bob_id).is_null(),
                "the roster shows bob's topic"
            );
            let one = app
                .get(&format!("/api/users/{bob_id}"), stranger)
                .await
                .expect(200);
            assert!(one.get("push_topic").is_none(), "{one}");
            let by_name = app
                .get("/api/users?username=bob", stranger)
                .await
                .expect(200);
            assert!(topic_of(&by_name, bob_id).is_null());
        }
        let roster = app.get("/api/users", &carol).await.expect(200);
        assert_eq!(
            topic_of(&roster, carol_id),
            "carol-pager",
            "one's own topic"
        );
        let roster = app.get("/api/users", &admin).await.expect(200);
        assert_eq!(topic_of(&roster, bob_id), "bob-pager");
        assert_eq!(topic_of(&roster, carol_id), "carol-pager");
        assert_eq!(
            app.get(&format!("/api/users/{bob_id}"), &bob)
                .await
                .expect(200)["push_topic"],
            "bob-pager"
        );
    }
);

/// Fails `n` sign-ins with the given `X-Forwarded-For`, each for a different username.
async fn fail_logins(app: &TestApp, n: usize, forwarded: &str) {
    for i in 0..n {
        let body = json!({"username": format!("nobody{i}-{forwarded}"), "password": "wrong one"});
        let r = app
            .raw(
                Method::POST,
                "/api/auth/login",
                &[
                    ("content-type", "application/json"),
                    ("x-forwarded-for", forwarded),
                ],
                body.to_string().into_bytes(),
            )
            .await;
        assert_eq!(r.status.as_u16(), 401);
    }
}

async fn admin_login_from(app: &TestApp, forwarded: &str) -> u16 {
    let body = json!({"username": "admin", "password": "admin password"});
    app.raw(
        Method::POST,
        "/api/auth/login",
        &[
            ("content-type", "application/json"),
            ("x-forwarded-for", forwarded),
        ],
        body.to_string().into_bytes(),
    )
    .await
    .status
    .as_u16()
}

both!(forwarded_for_from_an_untrusted_peer_is_ignored, |app| {
    app.bootstrap().await;
    // Rotating the header does not dodge the address limit: the peer is the client.
    for i in 0..50 {
        fail_logins(&app, 1, &format!("198.51.100.{i}")).await;
    }
    assert_eq!(admin_login_from(&app, "203.0.113.77").await, 429);
});

async fn behind_a_proxy(backend: Backend) -> TestApp {
    let config = klaxon_core::Config {
        trusted_proxies: TrustedProxies::parse("127.0.0.1/32").unwrap(),
        ..Default::default()
    };
    TestApp::spawn_with(backend, config).await
}

#[tokio::test]
async fn behind_a_trusted_proxy_the_right_most_untrusted_hop_is_the_client() {
    for app in [
        Some(behind_a_proxy(Backend::Sqlite).await),
        if cfg!(postgres_tests) {
            Some(behind_a_proxy(Backend::Postgres(postgres_schema().await)).await)
        } else {
            None
        },
    ]
    .into_iter()
    .flatten()
    {
        app.bootstrap().await;
        // The proxy appends what it saw; the client wrote the left part.
        fail_logins(&app, 50, "6.6.6.6, 203.0.113.9").await;
        assert_eq!(
            admin_login_from(&app, "198.51.100.7, 203.0.113.9").await,
            429
        );
        // Naming the locked address on the left neither locks a victim nor unlocks the attacker.
        assert_eq!(
            admin_login_from(&app, "203.0.113.9, 198.51.100.7").await,
            200
        );
        // The sign-in form's server function counts the same address.
        let html = app.get("/login", &Auth::None).await.text;
        let action = form_action(&html, "/rpc/login");
        let r = app
            .raw(
                Method::POST,
                &action,
                &[
                    ("content-type", "application/x-www-form-urlencoded"),
                    ("accept", "application/json"),
                    ("x-forwarded-for", "203.0.113.9"),
                ],
                b"username=admin&password=admin+password".to_vec(),
            )
            .await;
        assert_eq!(r.status.as_u16(), 429, "{}", r.text);
        assert!(r.headers.get("retry-after").is_some());
    }
}

both!(group_data_is_bounded, |app| {
    let admin = app.bootstrap().await;
    let team = app.team(&admin, "ops").await;
    let key = app.integration(&admin, team).await;
    let path = format!("/api/alertmanager/webhook/{key}");
    let alert = |fp: &str| Payload::new("g").alert(fp, "firing", 0, None, json!({}));

    // A huge group key still correlates, stored as its hash.
    let mut p = alert("f1").json();
    p["groupKey"] = json!("k".repeat(2 * 1024 * 1024));
    app.post(&path, &Auth::None, p.clone()).await.expect(200);
    p["alerts"][0]["fingerprint"] = json!("f2");
    app.post(&path, &Auth::None, p).await.expect(200);
    let list = app
        .get(&format!("/api/incidents?team_id={team}"), &admin)
        .await;
    assert!(
        list.text.len() < 8 * 1024,
        "incident list is {} bytes",
        list.text.len()
    );
    let incidents = list.body.as_array().unwrap();
    assert_eq!(incidents.len(), 1, "both alerts joined one incident");
    let stored = incidents[0]["group_key"].as_str().unwrap();
    assert!(
        stored.starts_with("sha256:") && stored.len() == 71,
        "{stored}"
    );

    // Oversized group-level fields refuse the payload and store nothing.
    let big: Value = json!({"k": "v".repeat(17 * 1024)});
    for (field, value) in [
        ("groupLabels", big.clone()),
        ("commonLabels", big.clone()),
        ("commonAnnotations", big),
        ("externalURL", json!("http://am/".repeat(300))),
    ] {
        let mut p = alert("f3").json();
        p[field] = value;
        let msg = app
            .post(&path, &Auth::None, p)
            .await
            .expect_error(400, "invalid");
        assert!(msg.contains(field), "{msg}");
    }
    let alerts = app.get("/api/alerts", &admin).await.expect(200);
    assert_eq!(alerts.as_array().unwrap().len(), 2, "f3 was never stored");
});

both!(an_unreadable_authorization_header_is_not_absent, |app| {
    app.bootstrap().await;
    let Auth::Cookie(token) = app.login("admin", "admin password").await else {
        unreachable!()
    };
    let cookie = format!("klaxon_session={token}");
    app.raw(Method::GET, "/api/me", &[("cookie", &cookie)], vec![])
        .await
        .expect(200);
    app.raw(
        Method::GET,
        "/api/me",
        &[("cookie", &cookie), ("authorization", "Bearer clé")],
        vec![],
    )
    .await
    .expect_error(401, "unauthorized");
});

both!(server_function_refusals_carry_their_status, |app| {
    let admin = app.bootstrap().await;
    let team = app.team(&admin, "ops").await;
    let key = app.integration(&admin, team).await;
    app.webhook(
        &key,
        &Payload::new("g").alert("f1", "firing", 0, None, json!({})),
    )
    .await
    .expect(200);
    let incident = app.incidents(&admin, team).await[0]["id"].as_i64().unwrap();
    let (_, _) = app.user(&admin, "bob").await;
    let admin_session = app.login("admin", "admin password").await;
    let Auth::Cookie(bob) = app.login("bob", "bob password").await else {
        unreachable!()
    };
    let bob_cookie = format!("klaxon_session={bob}");
    let html = app
        .get(&format!("/incidents/{incident}"), &admin_session)
        .await
        .text;
    let unsnooze = form_action(&html, "/rpc/unsnooze");
    let login = form_action(&app.get("/login", &Auth::None).await.text, "/rpc/login");
    let call = |path: String, cookie: Option<String>, body: String| {
        let app = &app;
        async move {
            let mut h = vec![
                (
                    "content-type",
                    "application/x-www-form-urlencoded".to_string(),
                ),
                ("accept", "application/json".to_string()),
            ];
            if let Some(c) = cookie {
                h.push(("cookie", c));
            }
            let h: Vec<(&str, &str)> = h.iter().map(|(k, v)| (*k, v.as_str())).collect();
            app.raw(Method::POST, &path, &h, body.as_bytes().to_vec())
                .await
        }
    };
    // Bob is in no team: the incident is not found for him.
    let r = call(unsnooze.clone(), Some(bob_cookie), format!("id={incident}")).await;
    assert_eq!(r.status.as_u16(), 404, "{}", r.text);
    // Nobody signed in.
    let r = call(unsnooze.clone(), None, format!("id={incident}")).await;
    assert_eq!(r.status.as_u16(), 401, "{}", r.text);
    // Wrong password, then the lockout.
    for _ in 0..10 {
        let r = call(
            login.clone(),
            None,
            "username=admin&password=wrong+one".into(),
        )
        .await;
        assert_eq!(r.status.as_u16(), 401, "{}", r.text);
    }
    let r = call(
        login.clone(),
        None,
        "username=admin&password=admin+password".into(),
    )
    .await;
    assert_eq!(r.status.as_u16(), 429, "{}", r.text);
    assert!(r.headers.get("retry-after").is_some());

    // A plain form post (no JavaScript) still goes back to its page with the sentence.
    let referer = format!("{}/login", app.url);
    let r = app
        .raw(
            Method::POST,
            &login,
            &[
                ("content-type", "application/x-www-form-urlencoded"),
                ("accept", "text/html,application/xhtml+xml"),
                ("referer", &referer),
            ],
            b"username=admin&password=admin+password".to_vec(),
        )
        .await;
    assert_eq!(r.status.as_u16(), 302, "{}", r.text);
    let to = r.headers["location"].to_str().unwrap();
    assert!(to.starts_with(&referer) && to.contains("__err"), "{to}");
});

both!(cross_site_sign_in_is_refused, |app| {
    app.bootstrap().await;
    let login = form_action(&app.get("/login", &Auth::None).await.text, "/rpc/login");
    let body = b"username=admin&password=admin+password".to_vec();
    for hostile in [
        vec![("sec-fetch-site", "cross-site")],
        vec![("origin", "https://evil.example")],
    ] {
        let mut h = vec![
            ("content-type", "application/x-www-form-urlencoded"),
            ("accept", "text/html"),
            ("referer", "https://evil.example/form"),
        ];
        h.extend(hostile.clone());
        let r = app.raw(Method::POST, &login, &h, body.clone()).await;
        assert!(r.cookie().is_none(), "a cross-site form post signed in");
        let mut h = vec![("content-type", "application/json")];
        h.extend(hostile);
        app.raw(
            Method::POST,
            "/api/auth/login",
            &h,
            json!({"username": "admin", "password": "admin password"})
                .to_string()
                .into_bytes(),
        )
        .await
        .expect_error(403, "forbidden");
    }
    // The sign-in page itself still works.
    let r = app
        .raw(
            Method::POST,
            &login,
            &[
                ("content-type", "application/x-www-form-urlencoded"),
                ("sec-fetch-site", "same-origin"),
            ],
            body,
        )
        .await;
    assert!(r.cookie().is_some(), "{} {}", r.status, r.text);
});

both!(current_password_guesses_count_as_failed_sign_ins, |app| {
    let admin = app.bootstrap().await;
    let (bob_id, _) = app.user(&admin, "bob").await;
    let bob = app.login("bob", "bob password").await;
    let path = format!("/api/users/{bob_id}/password");
    for i in 0..10 {
        app.put(
            &path,
            &bob,
            json!({"password": "a new password", "current_password": format!("guess {i}")}),
        )
        .await
        .expect_error(400, "invalid");
    }
    // The right current password is refused now, and so is signing in as bob.
    app.put(
        &path,
        &bob,
        json!({"password": "a new password", "current_password": "bob password"}),
    )
    .await
    .expect_error(429, "rate_limited");
    app.post(
        "/api/auth/login",
        &Auth::None,
        json!({"username": "bob", "password": "bob password"}),
    )
    .await
    .expect_error(429, "rate_limited");
    app.clock.advance(15 * 60 + 1);
    app.put(
        &path,
        &bob,
        json!({"password": "a new password", "current_password": "bob password"}),
    )
    .await
    .expect(204);
});

both!(intake_checks_the_key_before_the_body, |app| {
    let admin = app.bootstrap().await;
    app.team(&admin, "ops").await;
    let bogus = "k".repeat(64);
    let path = format!("/api/alertmanager/webhook/{bogus}");
    app.raw(
        Method::POST,
        &path,
        &[("content-type", "application/json")],
        b"{not json".to_vec(),
    )
    .await
    .expect_error(401, "unauthorized");
    // Not even read: a body past the limit is still a 401, not a 413.
    let huge = vec![b' '; 6 * 1024 * 1024];
    app.raw(
        Method::POST,
        &path,
        &[("content-type", "application/json")],
        huge,
    )
    .await
    .expect_error(401, "unauthorized");
});

both!(wrong_methods_answer_in_the_error_shape, |app| {
    let r = app.get("/api/auth/login", &Auth::None).await;
    assert!(r.headers["allow"].to_str().unwrap().contains("POST"));
    r.expect_error(405, "method_not_allowed");
    app.send(Method::PATCH, "/api/teams", &Auth::None, None)
        .await
        .expect_error(405, "method_not_allowed");
    assert!(
        app.get("/healthz", &Auth::None)
            .await
            .headers
            .get("strict-transport-security")
            .is_none(),
        "no HSTS over plain http"
    );
});

#[tokio::test]
async fn https_deployments_send_strict_transport_security() {
    let config = klaxon_core::Config {
        public_url: "https://klaxon.example".into(),
        ..Default::default()
    };
    let app = TestApp::spawn_with(Backend::Sqlite, config).await;
    for path in ["/healthz", "/login", "/api/version"] {
        let r = app.get(path, &Auth::None).await;
        let hsts = r.headers["strict-transport-security"].to_str().unwrap();
        assert!(hsts.starts_with("max-age="), "{path}: {hsts}");
    }
}

#[cfg(unix)]
#[tokio::test]
async fn the_data_directory_and_database_are_private() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let db = klaxon_core::Db::connect(None, &data).await.unwrap();
    db.migrate().await.unwrap();
    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&data), 0o700);
    for entry in std::fs::read_dir(&data).unwrap() {
        let path = entry.unwrap().path();
        assert_eq!(mode(&path), 0o600, "{}", path.display());
    }
    assert!(data.join("klaxon.db").exists());
}

both!(
    pages_name_their_session_and_sign_out_clears_the_cache,
    |app| {
        app.bootstrap().await;
        let Auth::Cookie(first) = app.login("admin", "admin password").await else {
            unreachable!()
        };
        let Auth::Cookie(second) = app.login("admin", "admin password").await else {
            unreachable!()
        };
        let tag = |cookie: &str| {
            let app = &app;
            let cookie = cookie.to_string();
            async move {
                let r = app
                    .raw(
                        reqwest::Method::GET,
                        "/",
                        &[("cookie", &format!("klaxon_session={cookie}"))],
                        vec![],
                    )
                    .await;
                assert_eq!(r.status.as_u16(), 200);
                r.headers
                    .get("x-klaxon-account")
                    .map(|v| v.to_str().unwrap().to_string())
            }
        };
        let a = tag(&first)
            .await
            .expect("a signed-in page names its session");
        let b = tag(&second)
            .await
            .expect("a signed-in page names its session");
        assert_ne!(a, b, "two sessions, two names");
        assert!(
            !a.contains(&first) && !first.contains(&a),
            "the tag is not the token"
        );
        assert_eq!(
            tag(&first).await.unwrap(),
            a,
            "the same session, the same name"
        );
        let signed_out = app.get("/login", &Auth::None).await;
        assert!(signed_out.headers.get("x-klaxon-account").is_none());
        let out = app
            .post("/api/auth/logout", &Auth::Cookie(first.clone()), json!({}))
            .await;
        assert_eq!(out.status.as_u16(), 204);
        assert_eq!(out.headers["clear-site-data"], "\"cache\"");
    }
);

both!(
    an_acknowledge_button_lapses_when_its_person_leaves_the_team,
    |app| {
        let w = app.paging_world().await;
        let incident = app.fire(&w.key, "g1").await;
        app.tick().await;
        let ack = app.ntfy.published()[0]
            .ack_url()
            .expect("an Acknowledge button");
        app.delete(
            &format!("/api/teams/{}/members/{}", w.team, w.alice.0),
            &w.admin,
        )
        .await
        .expect(204);
        app.press_ack(&ack).await.expect_error(404, "not_found");
        let d = app.detail(&w.admin, incident).await;
        assert_eq!(d["state"], "triggered", "the leaver acknowledged nothing");
    }
);
