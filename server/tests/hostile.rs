//! What a hostile client may do to the server itself: flood password checks, race the limits
//! with concurrent attempts, invent HTTP methods, hold connections open half-sent, and open live
//! streams without end. Each bounds what the client can cost.

mod common;
use common::process::{until, Replica, LIMIT};
use common::*;
use futures::future::join_all;
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// The statuses of `n` requests sent at once.
async fn at_once<F, Fut>(n: usize, send: F) -> Vec<u16>
where
    F: Fn(usize) -> Fut,
    Fut: std::future::Future<Output = Res>,
{
    join_all((0..n).map(send))
        .await
        .into_iter()
        .map(|r| r.status.as_u16())
        .collect()
}

fn count(statuses: &[u16], wanted: &[u16]) -> usize {
    statuses.iter().filter(|s| wanted.contains(s)).count()
}

both!(
    concurrent_guesses_are_counted_before_any_is_checked,
    |app| {
        let admin = app.bootstrap().await;
        app.user(&admin, "carol").await;
        // 59 wrong passwords and the right one, all at once: the lock is 10 per username.
        let statuses = at_once(60, |i| {
            let password = if i == 30 {
                "carol password".to_string()
            } else {
                format!("guess number {i}")
            };
            app.post(
                "/api/auth/login",
                &Auth::None,
                json!({"username": "carol", "password": password}),
            )
        })
        .await;
        let checked = count(&statuses, &[200, 401, 503]);
        assert!(
            checked <= 10,
            "{checked} passwords were checked past a limit of 10: {statuses:?}"
        );
        assert_eq!(count(&statuses, &[429]), 60 - checked, "{statuses:?}");
    }
);

both!(concurrent_device_starts_stop_exactly_at_the_limit, |app| {
    let statuses = at_once(45, |_| app.post("/api/oidc/device", &Auth::None, json!({}))).await;
    assert_eq!(count(&statuses, &[200]), 30, "{statuses:?}");
    assert_eq!(count(&statuses, &[429]), 15, "{statuses:?}");
});

both!(a_burst_of_open_sign_ups_stops_at_the_address_limit, |app| {
    let admin = app.bootstrap().await;
    app.open_signups(&admin).await;
    let statuses = at_once(80, |i| {
        app.post(
            "/api/signup",
            &Auth::None,
            json!({"username": format!("stranger{i}"), "password": "a long password"}),
        )
    })
    .await;
    // Past the limit nothing is hashed or stored; within it a sign-up may still be told that
    // the server is busy hashing (503).
    assert_eq!(count(&statuses, &[429]), 30, "{statuses:?}");
    assert_eq!(count(&statuses, &[201, 503]), 50, "{statuses:?}");
    let users = app.get("/api/admin/users", &admin).await.expect(200);
    assert_eq!(
        users.as_array().unwrap().len(),
        1 + count(&statuses, &[201]),
        "only the sign-ups answered 201 made accounts"
    );
});

both!(
    wrong_current_passwords_are_counted_before_they_are_checked,
    |app| {
        let admin = app.bootstrap().await;
        let (id, _) = app.user(&admin, "dora").await;
        let dora = app.login("dora", "dora password").await;
        let path = format!("/api/users/{id}/password");
        let statuses = at_once(30, |i| {
            app.put(
                &path,
                &dora,
                json!({"password": "a new password", "current_password": format!("guess {i}")}),
            )
        })
        .await;
        assert!(count(&statuses, &[400, 503]) <= 10, "{statuses:?}");
        assert!(count(&statuses, &[429]) >= 20, "{statuses:?}");
    }
);

/// Peak resident memory of a process, from `/proc`.
fn peak_rss_mb(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let kb: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmHWM in /proc status");
    kb / 1024
}

#[tokio::test]
async fn a_flood_of_sign_ins_is_answered_within_bounded_memory() {
    // Every request seems to come from an address of its own (a botnet behind a trusted proxy),
    // and names a user of its own, so no limit stops them before hashing.
    let server = Replica::start(&[("KLAXON_TRUSTED_PROXIES", "127.0.0.1")]).await;
    let client = reqwest::Client::builder().timeout(LIMIT).build().unwrap();
    let url = server.url.clone();
    client
        .post(format!("{url}/api/bootstrap"))
        .json(&json!({"username": "admin", "password": "admin password"}))
        .send()
        .await
        .unwrap();
    let pid = server.child.id().unwrap();
    let before = peak_rss_mb(pid);
    let answers = join_all((0..500).map(|i| {
        let client = client.clone();
        let url = url.clone();
        async move {
            let r = client
                .post(format!("{url}/api/auth/login"))
                .header(
                    "x-forwarded-for",
                    format!("203.0.113.{}, 10.9.{}.{}", i % 250, i / 250, i % 250),
                )
                .json(&json!({"username": format!("nobody{i}"), "password": "not the password"}))
                .send()
                .await
                .unwrap();
            (
                r.status().as_u16(),
                r.headers().get("retry-after").is_some(),
            )
        }
    }))
    .await;
    let peak = peak_rss_mb(pid);
    let refused: Vec<_> = answers.iter().filter(|(s, _)| *s == 503).collect();
    assert!(
        answers.iter().all(|(s, _)| matches!(s, 401 | 503)),
        "{answers:?}"
    );
    assert!(
        !refused.is_empty(),
        "500 at once must overflow the hashing queue"
    );
    assert!(
        refused.iter().all(|(_, retry)| *retry),
        "503 carries Retry-After"
    );
    println!(
        "login flood: peak resident memory {before} MB before, {peak} MB after 500 concurrent sign-ins \
         ({} checked, {} told to retry)",
        500 - refused.len(),
        refused.len()
    );
    assert!(peak < 200, "peak resident memory {peak} MB");
    // The server is still there for the right password.
    let ok = client
        .post(format!("{url}/api/auth/login"))
        .json(&json!({"username": "admin", "password": "admin password"}))
        .send()
        .await
        .unwrap();
    assert_eq!(ok.status().as_u16(), 200);
}

both!(made_up_methods_are_refused_and_counted_as_other, |app| {
    for i in 0..40 {
        let method = reqwest::Method::from_bytes(format!("BREW{i}").as_bytes()).unwrap();
        let r = app.raw(method, "/api/incidents", &[], vec![]).await;
        r.expect_error(405, "method_not_allowed");
    }
    let long = reqwest::Method::from_bytes("X".repeat(4000).as_bytes()).unwrap();
    let r = app.raw(long, "/healthz", &[], vec![]).await;
    assert!(!r.text.contains("XXXX"), "the method is not repeated back");
    let metrics = app.get("/metrics", &Auth::None).await.text;
    assert!(!metrics.contains("BREW"), "a made-up method became a label");
    assert!(!metrics.contains("XXXX"), "a made-up method became a label");
    let other: f64 = metrics
        .lines()
        .filter(|l| l.starts_with("klaxon_http_requests_total{") && l.contains("method=\"other\""))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum();
    // The 4000-character method may be refused by the HTTP parser before it reaches the
    // router; either way it is no label.
    assert!((40.0..=41.0).contains(&other), "{metrics}");
});

/// A connection that sent half a request line and then nothing.
async fn half_request(url: &str) -> tokio::net::TcpStream {
    let addr = url.trim_start_matches("http://");
    let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
    s.write_all(b"GET /api/version HT").await.unwrap();
    s
}

/// A server on a fresh SQLite file with the listener's limits given.
async fn limited(limits: klaxon_server::listen::Limits) -> TestApp {
    let dir = tempfile::tempdir().unwrap();
    let url = format!(
        "sqlite://{}?mode=rwc",
        dir.path().join("klaxon.db").display()
    );
    TestApp::spawn_limited(dir, url, test_config(), Some(limits)).await
}

#[tokio::test]
async fn past_the_connection_cap_only_health_checks_are_served() {
    let app = limited(klaxon_server::listen::Limits {
        max_connections: 8,
        header_timeout: LIMIT,
    })
    .await;
    let mut held = Vec::new();
    for _ in 0..8 {
        held.push(half_request(&app.url).await);
    }
    // Every place is taken by a client that sends nothing more; a new connection each time.
    let fresh = reqwest::Client::builder()
        .pool_max_idle_per_host(0)
        .timeout(LIMIT)
        .build()
        .unwrap();
    let busy = until("the cap being reached", || async {
        let r = fresh
            .get(format!("{}/api/version", app.url))
            .send()
            .await
            .ok()?;
        (r.status().as_u16() == 503).then_some(r)
    })
    .await;
    assert_eq!(busy.headers()["retry-after"], "1");
    let body: serde_json::Value = busy.json().await.unwrap();
    assert_eq!(body["error"], "unavailable");
    let health = fresh
        .get(format!("{}/healthz", app.url))
        .send()
        .await
        .unwrap();
    assert_eq!(
        health.status().as_u16(),
        200,
        "health checks answer past the cap"
    );
    drop(held);
    until("a place being free again", || async {
        let r = fresh
            .get(format!("{}/api/version", app.url))
            .send()
            .await
            .ok()?;
        r.status().is_success().then_some(())
    })
    .await;
}

#[tokio::test]
async fn a_half_sent_request_is_cut_off() {
    let app = limited(klaxon_server::listen::Limits {
        max_connections: 8,
        header_timeout: std::time::Duration::from_secs(1),
    })
    .await;
    let mut slow = half_request(&app.url).await;
    // The server closes it once the head is overdue (the read ends at EOF or a reset: the
    // connection is gone either way).
    let mut buf = Vec::new();
    let closed = tokio::time::timeout(LIMIT, slow.read_to_end(&mut buf)).await;
    assert!(closed.is_ok(), "a half-sent request was held open");
    // A kept-alive connection that goes quiet after its answer is closed the same way.
    let addr = app.url.trim_start_matches("http://");
    let mut idle = tokio::net::TcpStream::connect(addr).await.unwrap();
    idle.write_all(b"GET /healthz HTTP/1.1\r\nhost: x\r\n\r\n")
        .await
        .unwrap();
    let mut answer = Vec::new();
    let ended = tokio::time::timeout(LIMIT, idle.read_to_end(&mut answer)).await;
    assert!(ended.is_ok(), "an idle kept-alive connection was held open");
    assert!(String::from_utf8_lossy(&answer).starts_with("HTTP/1.1 200"));
}

both!(an_account_holds_at_most_twenty_live_streams, |app| {
    let admin = app.bootstrap().await;
    let Auth::Key(key) = &admin else {
        unreachable!()
    };
    let open = || {
        app.client
            .get(format!("{}/api/events", app.url))
            .bearer_auth(key)
            .send()
    };
    let mut streams = Vec::new();
    for _ in 0..20 {
        let s = open().await.unwrap();
        assert_eq!(s.status().as_u16(), 200);
        streams.push(s);
    }
    let refused = open().await.unwrap();
    assert_eq!(refused.status().as_u16(), 429);
    assert!(refused.headers().contains_key("retry-after"));
    // Another account is not affected.
    let (_, other) = app.user(&admin, "olga").await;
    let Auth::Key(other_key) = &other else {
        unreachable!()
    };
    let theirs = app
        .client
        .get(format!("{}/api/events", app.url))
        .bearer_auth(other_key)
        .send()
        .await
        .unwrap();
    assert_eq!(theirs.status().as_u16(), 200);
    // A closed stream gives its place back.
    streams.pop();
    until("a closed stream's place coming back", || async {
        let s = open().await.ok()?;
        (s.status().as_u16() == 200).then_some(s)
    })
    .await;
});
