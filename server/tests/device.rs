//! Klaxon's device flow: a terminal starts, polls (pending, slow down), a person approves from a
//! browser session (never with an API key), and the next poll gets a session once; denial,
//! expiry, unknown and guessed codes are refused.

use crate::common;
use common::*;
use serde_json::{json, Value};

async fn start(app: &TestApp) -> Value {
    app.post("/api/oidc/device", &Auth::None, json!({}))
        .await
        .expect(200)
}

async fn poll(app: &TestApp, device: &Value) -> Res {
    app.post(
        "/api/oidc/device/token",
        &Auth::None,
        json!({"device_code": device["device_code"]}),
    )
    .await
}

async fn approve(app: &TestApp, auth: &Auth, code: &str, yes: bool) -> Res {
    app.post(
        "/api/oidc/device/approve",
        auth,
        json!({"user_code": code, "approve": yes}),
    )
    .await
}

/// `admin` and a password session of `carol`.
async fn people(app: &TestApp) -> (Auth, Auth) {
    let admin = app.bootstrap().await;
    let (_, carol_key) = app.user(&admin, "carol").await;
    let _ = carol_key;
    (admin, app.login("carol", "carol password").await)
}

both!(a_browser_session_lets_a_terminal_in_once, |app| {
    let (_, carol) = people(&app).await;
    let d = start(&app).await;
    let code = d["user_code"].as_str().unwrap().to_string();
    assert!(
        code.len() == 9 && code.as_bytes()[4] == b'-' && !code.contains(['0', 'O', '1', 'I']),
        "{code}"
    );
    assert_eq!(d["device_code"].as_str().unwrap().len(), 64);
    assert_eq!(
        d["verification_uri"],
        format!("{}/device", app.config.public_url)
    );
    assert_eq!(
        d["verification_uri_complete"],
        format!("{}/device?code={code}", app.config.public_url)
    );
    assert_eq!(
        (d["interval"].as_i64(), d["expires_in"].as_i64()),
        (Some(5), Some(600))
    );

    poll(&app, &d)
        .await
        .expect_error(400, "authorization_pending");
    // Polling again at once is too fast; after the interval it is merely pending.
    poll(&app, &d).await.expect_error(400, "slow_down");
    app.clock.advance(5);
    poll(&app, &d)
        .await
        .expect_error(400, "authorization_pending");

    // Typed loosely by a person, approved from carol's browser session.
    let typed = code.to_lowercase().replace('-', " ");
    assert_eq!(approve(&app, &carol, &typed, true).await.status, 204);
    app.clock.advance(5);
    let r = poll(&app, &d).await;
    assert!(r.cookie().is_some(), "the session also comes as a cookie");
    let s = r.expect(200);
    assert_eq!(s["user"]["username"], "carol");
    let terminal = Auth::Cookie(s["session_token"].as_str().unwrap().to_string());
    let me = app.get("/api/me", &terminal).await.expect(200);
    assert_eq!(me["username"], "carol");
    // Once only: the code is spent, and cannot be approved again.
    app.clock.advance(5);
    poll(&app, &d).await.expect_error(400, "expired_token");
    approve(&app, &carol, &code, true)
        .await
        .expect_error(400, "invalid");
});

both!(only_a_browser_session_may_approve, |app| {
    let (admin, carol) = people(&app).await;
    let d = start(&app).await;
    let code = d["user_code"].as_str().unwrap();
    let message = approve(&app, &admin, code, true)
        .await
        .expect_error(403, "forbidden");
    assert!(message.contains("browser"), "{message}");
    app.get("/api/me", &carol).await.expect(200);
    approve(&app, &Auth::None, code, true)
        .await
        .expect_error(401, "unauthorized");
    // Still pending: nothing was approved by the refused calls.
    poll(&app, &d)
        .await
        .expect_error(400, "authorization_pending");
});

both!(
    denied_expired_unknown_and_guessed_codes_are_refused,
    |app| {
        let (_, carol) = people(&app).await;
        let denied = start(&app).await;
        assert_eq!(
            approve(&app, &carol, denied["user_code"].as_str().unwrap(), false)
                .await
                .status,
            204
        );
        poll(&app, &denied).await.expect_error(400, "access_denied");

        let late = start(&app).await;
        app.clock.advance(601);
        poll(&app, &late).await.expect_error(400, "expired_token");
        approve(&app, &carol, late["user_code"].as_str().unwrap(), true)
            .await
            .expect_error(400, "invalid");

        for device_code in [json!("x".repeat(64)), json!("short"), json!("")] {
            app.post(
                "/api/oidc/device/token",
                &Auth::None,
                json!({"device_code": device_code}),
            )
            .await
            .expect_error(400, "expired_token");
        }
        app.post("/api/oidc/device/token", &Auth::None, json!({}))
            .await
            .expect_error(400, "invalid");

        // Guessing codes counts as failed sign-ins of the guesser: ten, and they are stopped.
        let live = start(&app).await;
        for guess in 0..8 {
            approve(
                &app,
                &carol,
                &format!("ABCD-EFG{}", (b'2' + guess) as char),
                true,
            )
            .await
            .expect_error(400, "invalid");
        }
        approve(&app, &carol, "not a code", true)
            .await
            .expect_error(400, "invalid");
        let r = approve(&app, &carol, live["user_code"].as_str().unwrap(), true).await;
        assert_eq!(r.status, 429, "{}", r.text);
        poll(&app, &live)
            .await
            .expect_error(400, "authorization_pending");
    }
);

both!(
    a_terminal_session_keeps_the_approving_sessions_ceiling,
    |app| {
        let (_, carol) = people(&app).await;
        let Auth::Cookie(token) = &carol else {
            unreachable!()
        };
        let ceiling = app.core.now() + 3_600;
        sqlx::query("UPDATE sessions SET max_expires_at = $1 WHERE token_hash = $2")
            .bind(ceiling)
            .bind(klaxon_core::secrets::hash_token(token))
            .execute(&app.core.db.pool)
            .await
            .unwrap();
        let d = start(&app).await;
        approve(&app, &carol, d["user_code"].as_str().unwrap(), true)
            .await
            .expect(204);
        let s = poll(&app, &d).await.expect(200);
        let terminal = klaxon_core::secrets::hash_token(s["session_token"].as_str().unwrap());
        let (max,): (Option<i64>,) =
            sqlx::query_as("SELECT max_expires_at FROM sessions WHERE token_hash = $1")
                .bind(terminal)
                .fetch_one(&app.core.db.pool)
                .await
                .unwrap();
        assert_eq!(max, Some(ceiling));
    }
);

both!(
    guessing_device_codes_and_starting_many_are_limited_per_address,
    |app| {
        let (_, carol) = people(&app).await;
        let window = klaxon_core::throttle::WINDOW;
        let limit = klaxon_core::throttle::UNKNOWN_DEVICE_CODES_PER_ADDRESS;
        let real = start(&app).await;
        for i in 0..limit {
            app.post(
                "/api/oidc/device/token",
                &Auth::None,
                json!({"device_code": format!("{:0>64}", i)}),
            )
            .await
            .expect_error(400, "expired_token");
        }
        let r = poll(&app, &real).await;
        assert!(r.headers.contains_key("retry-after"));
        r.expect_error(429, "rate_limited");
        // Polling a real code is not counted against anyone: after the window it works again.
        app.clock.advance(window + 1);
        let real = start(&app).await;
        approve(&app, &carol, real["user_code"].as_str().unwrap(), true)
            .await
            .expect(204);
        poll(&app, &real).await.expect(200);

        app.clock.advance(window + 1);
        for _ in 0..klaxon_core::throttle::DEVICE_STARTS_PER_ADDRESS {
            start(&app).await;
        }
        app.post("/api/oidc/device", &Auth::None, json!({}))
            .await
            .expect_error(429, "rate_limited");
    }
);
