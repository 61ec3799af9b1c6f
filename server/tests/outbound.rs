//! The outbound policy on a URL a team owner gives (an integration's Alertmanager): where Klaxon
//! may be sent, what it reads of the answer, what it says about a failure, and that stored
//! credentials never follow the URL elsewhere. The other side is a hostile stand-in on loopback.

use crate::common;
use axum::body::{Body, Bytes};
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::any;
use common::*;
use serde_json::{json, Value};
use std::sync::{Arc, Mutex};

/// What the stand-in was asked: (path, Authorization header).
type Seen = Arc<Mutex<Vec<(String, Option<String>)>>>;

/// A server that misbehaves by the first segment of the path: `echo` answers 500 with a secret
/// in the body, `huge` 8 MiB, `redirect` a 302 to `landed`, `ok` a silence id.
struct Hostile {
    url: String,
    port: u16,
    seen: Seen,
}

async fn hostile_answer(
    State((seen, port)): State<(Seen, u16)>,
    Path(path): Path<String>,
    headers: HeaderMap,
) -> Response {
    let auth = headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    seen.lock().unwrap().push((path.clone(), auth));
    match path.split('/').next().unwrap_or_default() {
        "echo" => (
            StatusCode::INTERNAL_SERVER_ERROR,
            "SECRET-INTERNAL-TOKEN 42",
        )
            .into_response(),
        "huge" => {
            let chunk = Bytes::from(vec![b'x'; 64 * 1024]);
            let chunks = futures::stream::iter(
                (0..128).map(move |_| Ok::<_, std::io::Error>(chunk.clone())),
            );
            Response::new(Body::from_stream(chunks))
        }
        "redirect" => (
            StatusCode::FOUND,
            [(
                "location",
                format!("http://127.0.0.1:{port}/landed/api/v2/silences"),
            )],
        )
            .into_response(),
        _ => {
            axum::Json(json!({"silenceID": "4b1d0e3c-8c5e-4a8e-9a53-0d0c5f6e7a01"})).into_response()
        }
    }
}

impl Hostile {
    async fn start() -> Hostile {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let seen = Seen::default();
        let router = axum::Router::new()
            .route("/{*path}", any(hostile_answer))
            .with_state((seen.clone(), port));
        tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
        Hostile {
            url: format!("http://127.0.0.1:{port}"),
            port,
            seen,
        }
    }

    fn hits(&self, prefix: &str) -> Vec<Option<String>> {
        self.seen
            .lock()
            .unwrap()
            .iter()
            .filter(|(p, _)| p.starts_with(prefix))
            .map(|(_, a)| a.clone())
            .collect()
    }
}

struct Setup {
    admin: Auth,
    member: Auth,
    integration: String,
    silence: String,
}

async fn setup(app: &TestApp) -> Setup {
    let w = app.paging_world().await;
    app.clock
        .set(time::OffsetDateTime::now_utc().unix_timestamp());
    let id = app
        .get(&format!("/api/teams/{}/integrations", w.team), &w.admin)
        .await
        .expect(200)[0]["id"]
        .as_i64()
        .unwrap();
    let payload = Payload::new("disk").alert(
        "d1",
        "firing",
        0,
        None,
        json!({"alertname": "DiskFull", "job": "node"}),
    );
    app.webhook(&w.key, &payload).await.expect(200);
    let incident = app.incident_of("disk").await;
    Setup {
        admin: w.admin,
        member: w.bob.1,
        integration: format!("/api/teams/{}/integrations/{id}", w.team),
        silence: format!("/api/incidents/{incident}/silence"),
    }
}

impl Setup {
    async fn patch(&self, app: &TestApp, body: Value) -> Res {
        app.send(
            reqwest::Method::PATCH,
            &self.integration,
            &self.admin,
            Some(body),
        )
        .await
    }

    /// Tries to silence; the 502's sentence.
    async fn refused(&self, app: &TestApp) -> String {
        app.post(&self.silence, &self.member, json!({"duration": "1h"}))
            .await
            .expect_error(502, "upstream_failed")
    }
}

both!(upstream_failures_are_named_never_echoed, |app| {
    let s = setup(&app).await;
    let hostile = Hostile::start().await;

    s.patch(
        &app,
        json!({"alertmanager_url": format!("{}/echo", hostile.url)}),
    )
    .await
    .expect(200);
    let why = s.refused(&app).await;
    assert!(why.contains("500"), "{why}");
    assert!(
        !why.contains("SECRET"),
        "the upstream's body reached the caller: {why}"
    );

    // An endless answer is not read past the cap.
    s.patch(
        &app,
        json!({"alertmanager_url": format!("{}/huge", hostile.url)}),
    )
    .await
    .expect(200);
    let why = s.refused(&app).await;
    assert!(why.contains("64 KiB"), "{why}");

    // A redirect is not followed.
    s.patch(
        &app,
        json!({"alertmanager_url": format!("{}/redirect", hostile.url)}),
    )
    .await
    .expect(200);
    let why = s.refused(&app).await;
    assert!(why.contains("302"), "{why}");
    assert!(
        hostile.hits("landed").is_empty(),
        "the redirect was followed"
    );

    // Nothing is listening: the kind of failure, not the socket's words.
    let closed = process::free_port();
    s.patch(
        &app,
        json!({"alertmanager_url": format!("http://127.0.0.1:{closed}")}),
    )
    .await
    .expect(200);
    let why = s.refused(&app).await;
    assert!(why.contains("refused the connection"), "{why}");
    assert!(!why.contains("os error"), "{why}");
    let detail = app.detail(&s.member, app.incident_of("disk").await).await;
    assert_eq!(detail["silence"], Value::Null, "nothing was recorded");
});

both!(addresses_outside_the_policy_are_refused_when_saved, |app| {
    let s = setup(&app).await;
    // Link-local and metadata addresses are refused whatever is allowed; a private network
    // only when allowed (this server allows loopback only).
    for url in [
        "http://169.254.169.254/latest",
        "http://[fe80::1]:9093",
        "http://100.100.100.200",
        "http://10.1.2.3:9093",
        "http://192.168.0.10:9093",
        "http://[::1]:9093",
    ] {
        let why = s
            .patch(&app, json!({"alertmanager_url": url}))
            .await
            .expect_error(400, "invalid");
        assert!(why.contains("alertmanager_url"), "{why}");
    }
    let listed = app
        .get(s.integration.rsplit_once('/').unwrap().0, &s.admin)
        .await
        .expect(200);
    assert_eq!(
        listed[0]["alertmanager_url"],
        Value::Null,
        "nothing was stored"
    );
});

both!(credentials_never_follow_the_url_to_another_origin, |app| {
    let s = setup(&app).await;
    let hostile = Hostile::start().await;
    let basic = json!({"type": "basic", "username": "klaxon", "password": "am-secret"});
    let i = s
        .patch(
            &app,
            json!({"alertmanager_url": format!("{}/ok", hostile.url), "alertmanager_auth": basic}),
        )
        .await
        .expect(200);
    assert_eq!(i["alertmanager_auth_set"], true);
    app.post(&s.silence, &s.member, json!({"duration": "1h"}))
        .await
        .expect(200);
    assert!(hostile.hits("ok")[0]
        .as_deref()
        .unwrap()
        .starts_with("Basic "));

    // Another path on the same origin keeps them.
    let i = s
        .patch(
            &app,
            json!({"alertmanager_url": format!("{}/ok/am", hostile.url)}),
        )
        .await
        .expect(200);
    assert_eq!(i["alertmanager_auth_set"], true);

    // Another origin (a name instead of the address is another origin too) forgets them, so
    // an owner pointing the URL at a listener of theirs receives no password.
    let moved = format!("http://localhost:{}/ok/elsewhere", hostile.port);
    let i = s
        .patch(&app, json!({"alertmanager_url": moved}))
        .await
        .expect(200);
    assert_eq!(i["alertmanager_auth_set"], false);
    app.post(&s.silence, &s.member, json!({"duration": "1h"}))
        .await
        .expect(200);
    assert_eq!(
        hostile.hits("ok/elsewhere"),
        vec![None],
        "the password followed the URL"
    );

    // Moving the URL and giving credentials in one change keeps the new ones.
    let i = s
        .patch(
            &app,
            json!({"alertmanager_url": format!("{}/ok/again", hostile.url), "alertmanager_auth": basic}),
        )
        .await
        .expect(200);
    assert_eq!(i["alertmanager_auth_set"], true);
});

#[tokio::test]
async fn loopback_is_refused_unless_the_administrator_allows_it() {
    // Nothing allowed, as `KLAXON_OUTBOUND_ALLOW` unset.
    let app = TestApp::spawn_with(Backend::Sqlite, klaxon_core::Config::default()).await;
    let s = setup(&app).await;
    let hostile = Hostile::start().await;
    s.patch(
        &app,
        json!({"alertmanager_url": format!("{}/ok", hostile.url)}),
    )
    .await
    .expect_error(400, "invalid");
    // A name is checked where it is resolved, by the connection itself.
    s.patch(
        &app,
        json!({"alertmanager_url": format!("http://localhost:{}/ok", hostile.port)}),
    )
    .await
    .expect(200);
    let why = s.refused(&app).await;
    assert!(
        why.contains("localhost is not an address Klaxon calls"),
        "{why}"
    );
    assert!(why.contains("KLAXON_OUTBOUND_ALLOW"), "{why}");
    assert!(
        hostile.hits("").is_empty(),
        "a loopback service was reached"
    );
}

/// Internal networks opened for team channels and Alertmanager only.
fn channels_allowed_only() -> klaxon_core::Config {
    klaxon_core::Config {
        outbound_allow: klaxon_core::outbound::OutboundAllow::parse("127.0.0.0/8").unwrap(),
        ..klaxon_core::Config::default()
    }
}

both_with!(
    a_network_opened_for_team_channels_stays_closed_to_personal_roads,
    channels_allowed_only(),
    |app| {
        let w = app.paging_world().await;
        let hostile = Hostile::start().await;
        let methods = format!("/api/users/{}/contact-methods", w.alice.0);
        // A personal webhook on the network the administrator opened for channels is refused,
        // in the one sentence every refused address gets, naming the personal setting.
        let why = app
            .post(
                &methods,
                &w.alice.1,
                json!({"name": "probe", "kind": "webhook", "url": format!("{}/x", hostile.url)}),
            )
            .await
            .expect_error(400, "invalid");
        assert!(
            why.contains("is not an address Klaxon calls on a user's behalf (an administrator can allow a network with KLAXON_OUTBOUND_ALLOW_PERSONAL)"),
            "{why}"
        );
        // A Web Push subscription is not checked when added (the browser gives it), but its
        // test push never leaves.
        let sub = common::webpush::push_service().subscribe().await;
        let m = app
            .post(
                &methods,
                &w.alice.1,
                json!({"name": "Pixel", "kind": "webpush", "subscription": sub.json.clone()}),
            )
            .await
            .expect(201);
        let why = app
            .post(
                &format!("{methods}/{}/test", m["id"]),
                &w.alice.1,
                json!({}),
            )
            .await
            .expect_error(502, "push_failed");
        assert!(why.contains("KLAXON_OUTBOUND_ALLOW_PERSONAL"), "{why}");
        assert!(
            common::webpush::push_service()
                .received(&sub)
                .await
                .is_empty(),
            "the push service on the internal network was reached"
        );
        assert!(hostile.hits("").is_empty());
    }
);
