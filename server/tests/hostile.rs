//! What a hostile client may do to the server itself: flood password checks, race the limits
//! with concurrent attempts, invent HTTP methods, hold connections open half-sent or silent,
//! open live streams without end, and point pages and channels at destinations that never
//! answer. Each bounds what the client can cost, and no one's pages wait on another's.

use crate::common;
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
    let health: serde_json::Value = health.json().await.unwrap();
    assert_eq!(health["status"], "degraded", "{health}");
    assert!(
        health["reasons"][0]
            .as_str()
            .unwrap()
            .contains("every connection place is taken"),
        "{health}"
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
    let health: serde_json::Value = fresh
        .get(format!("{}/healthz", app.url))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(health["status"], "ok", "{health}");
}

/// The client preface of HTTP/2 over cleartext (RFC 9113, 3.4).
const H2_PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
/// An empty SETTINGS frame: length 0, type 4, no flags, stream 0 (RFC 9113, 6.5).
const H2_SETTINGS: &[u8] = &[0, 0, 0, 4, 0, 0, 0, 0, 0];

#[tokio::test]
async fn a_connection_that_asks_nothing_is_closed_whatever_it_speaks() {
    let app = limited(klaxon_server::listen::Limits {
        max_connections: 8,
        header_timeout: std::time::Duration::from_secs(1),
    })
    .await;
    let addr = app.url.trim_start_matches("http://").to_string();
    let openings: [(&str, Vec<u8>); 3] = [
        ("nothing at all", Vec::new()),
        ("only the HTTP/2 preface", H2_PREFACE.to_vec()),
        (
            "the HTTP/2 preface and SETTINGS",
            [H2_PREFACE, H2_SETTINGS].concat(),
        ),
    ];
    for (what, sent) in openings {
        let mut s = tokio::net::TcpStream::connect(&addr).await.unwrap();
        s.write_all(&sent).await.unwrap();
        // HTTP/2 answers with its own SETTINGS (and a GOAWAY when it closes); then the end.
        let mut buf = Vec::new();
        let closed = tokio::time::timeout(LIMIT, s.read_to_end(&mut buf)).await;
        assert!(
            closed.is_ok(),
            "a connection that sent {what} was held open"
        );
    }
    // Eight silent sockets take every place; they are closed and the places come back.
    let mut silent = Vec::new();
    for _ in 0..8 {
        silent.push(tokio::net::TcpStream::connect(&addr).await.unwrap());
    }
    let fresh = reqwest::Client::builder()
        .pool_max_idle_per_host(0)
        .timeout(LIMIT)
        .build()
        .unwrap();
    until("the silent sockets being closed", || async {
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

/// Deployed timing for how long a pass waits for its destinations (`lanes`): the slow ones are
/// left to finish alone.
fn deployed_lanes() -> klaxon_core::Config {
    klaxon_core::Config {
        lane_wait: klaxon_core::lanes::WAIT_FOR_LANES,
        page_bundle_after: 0,
        ..test_config()
    }
}

both_with!(
    destinations_that_never_answer_hold_up_no_one_elses_pages,
    deployed_lanes(),
    |app| {
        let w = app.paging_world().await;
        let chat = common::chat::Chat::start().await;
        app.post(
            &format!("/api/teams/{}/channels", w.team),
            &w.admin,
            json!({"name": "ops", "kind": "webhook", "target": format!("{}/hook/payments", chat.url)}),
        )
        .await
        .expect(201);
        // A signed-in stranger with a team of their own, on call, whose every road and channel
        // leads to a destination that never answers.
        let tarpit = common::tarpit::Tarpit::start().await;
        let (mallory_id, mallory) = app.user(&w.admin, "mallory").await;
        let team = app.team(&mallory, "tarpits").await;
        app.post(
            &format!("/api/teams/{team}/schedule"),
            &mallory,
            json!({"user_id": mallory_id, "dates": ["2026-11-22"]}),
        )
        .await
        .expect(201);
        let sub = common::webpush::push_service().subscribe().await;
        for i in 0..20 {
            let mut subscription = sub.json.clone();
            subscription["endpoint"] = json!(format!("{}/push/{i}", tarpit.url));
            app.post(
                &format!("/api/users/{mallory_id}/contact-methods"),
                &mallory,
                json!({"name": format!("phone {i}"), "kind": "webpush", "subscription": subscription}),
            )
            .await
            .expect(201);
            app.post(
                &format!("/api/teams/{team}/channels"),
                &mallory,
                json!({"name": format!("tarpit {i}"), "kind": "webhook", "target": format!("{}/hook/{i}", tarpit.url)}),
            )
            .await
            .expect(201);
        }
        let key = app.integration(&mallory, team).await;
        let theirs = app.fire(&key, "tarpit").await;
        app.tick().await;
        app.announce().await;
        // Every one of those sends is waiting on the tarpit...
        until("the stranger's sends reaching the tarpit", || async {
            (tarpit.open() == 40).then_some(())
        })
        .await;
        // ...while another team's page and channel message go at once.
        app.fire(&w.key, "payments-down").await;
        app.tick().await;
        app.announce().await;
        assert_eq!(app.ntfy.published().len(), 1, "alice's page went");
        assert!(
            !chat.posts("/hook/payments").is_empty(),
            "the team's channel heard it"
        );
        assert_eq!(tarpit.open(), 40, "still waiting on the tarpit meanwhile");
        // When the tarpit's sends time out they are failures of their own destinations.
        app.core.deliveries_settled().await;
        assert_eq!(tarpit.open(), 0);
        let d = app.detail(&w.admin, theirs).await;
        let failed = timeline_texts(&d, "push_failed");
        assert_eq!(failed.len(), 20, "{failed:?}");
        assert!(failed.iter().all(|t| t.contains("retrying")), "{failed:?}");
    }
);

both_with!(
    verification_codes_guessed_at_once_are_counted_before_any_is_compared,
    common::smtp::mail_config(),
    |app| {
        let admin = app.bootstrap().await;
        let (id, dora) = app.user(&admin, "dora").await;
        let to = format!("dora-{}@example.org", std::process::id());
        let path = format!("/api/users/{id}/contact-methods");
        let m = app
            .post(
                &path,
                &dora,
                json!({"name": "Mail", "kind": "email", "address": to}),
            )
            .await
            .expect(201);
        let mail = common::smtp::smtp().wait_for(&to, 1).await;
        let at = mail.find("verification code is ").unwrap() + 21;
        let code = mail[at..at + 6].to_string();
        let verify = format!("{path}/{}/verify", m["id"]);
        // Forty guesses at once, the right code among them.
        let statuses = at_once(40, |i| {
            let guess = if i == 39 {
                code.clone()
            } else {
                format!(
                    "{:06}",
                    (code.parse::<u32>().unwrap() + 1 + i as u32) % 1_000_000
                )
            };
            app.post(&verify, &dora, json!({ "code": guess }))
        })
        .await;
        let judged = count(&statuses, &[200, 400]);
        assert!(judged <= 5, "{judged} guesses were compared: {statuses:?}");
        assert_eq!(count(&statuses, &[409]), 40 - judged, "{statuses:?}");
    }
);

both_with!(
    code_mails_are_counted_per_mailbox_however_the_address_is_written,
    common::smtp::mail_config(),
    |app| {
        let admin = app.bootstrap().await;
        let (id, erin) = app.user(&admin, "erin").await;
        let path = format!("/api/users/{id}/contact-methods");
        let written = [
            "victim@example.org",
            "\"victim\"@example.org",
            "victim+1@example.org",
            "Victim+2@example.org",
        ];
        let mut statuses = Vec::new();
        for (i, address) in written.iter().enumerate() {
            let res = app
                .post(
                    &path,
                    &erin,
                    json!({"name": format!("mail {i}"), "kind": "email", "address": address}),
                )
                .await;
            statuses.push(res.status.as_u16());
        }
        assert_eq!(statuses, [201, 201, 201, 429], "{written:?}");
    }
);

both!(test_sends_are_bounded_per_target_and_per_person, |app| {
    let w = app.paging_world().await;
    // Ten test pages at once to one topic: five go, the rest are refused before any is sent.
    let statuses = at_once(10, |_| {
        app.post("/api/me/notify/test", &w.alice.1, json!({}))
    })
    .await;
    assert_eq!(count(&statuses, &[429]), 5, "{statuses:?}");
    assert_eq!(app.ntfy.published().len(), 5);
    // Other topics of the same person: twenty tests in all, then none.
    let mut last = 0;
    for i in 0..4 {
        let topic = format!("alice-spare-{i}");
        let m = app
            .post(
                &format!("/api/users/{}/contact-methods", w.alice.0),
                &w.alice.1,
                json!({"name": format!("spare {i}"), "kind": "ntfy", "topic": topic}),
            )
            .await
            .expect(201);
        for _ in 0..5 {
            last = app
                .post(
                    &format!("/api/users/{}/contact-methods/{}/test", w.alice.0, m["id"]),
                    &w.alice.1,
                    json!({}),
                )
                .await
                .status
                .as_u16();
        }
    }
    assert_eq!(last, 429, "the person's twentieth test is the last");
    assert_eq!(app.ntfy.published().len(), 20);
});
