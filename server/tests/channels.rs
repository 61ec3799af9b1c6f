//! Team channels: an incident's events announced to Slack-format (Slack, Mattermost, Discord),
//! Teams and signed-webhook channels in each service's documented shape, in order, filtered by
//! event and severity, retried with backoff and `Retry-After`, summarised in a storm, through
//! the outbound policy, with webhook URLs and secrets never shown back.

use crate::common;
use common::chat::{shapes, verify_signature, Chat, Post};
use common::*;
use klaxon_core::Clock;
use serde_json::{json, Value};

fn channels_path(team: i64) -> String {
    format!("/api/teams/{team}/channels")
}

async fn add_channel(app: &TestApp, w: &Paging, kind: &str, target: &str, extra: Value) -> Value {
    let mut body = json!({"name": format!("{kind} channel"), "kind": kind, "target": target});
    for (k, v) in extra.as_object().unwrap() {
        body[k] = v.clone();
    }
    app.post(&channels_path(w.team), &w.admin, body)
        .await
        .expect(201)
}

async fn channel_list(app: &TestApp, w: &Paging) -> Vec<Value> {
    app.get(&channels_path(w.team), &w.admin)
        .await
        .expect(200)
        .as_array()
        .unwrap()
        .clone()
}

/// Slack's notification text of each post.
fn texts(posts: &[Post]) -> Vec<String> {
    posts
        .iter()
        .map(|p| p.body["text"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn the_shape_checks_accept_the_documented_examples() {
    let fixture = |name: &str| -> Value {
        let path = format!("{}/tests/fixtures/chat/{name}", env!("CARGO_MANIFEST_DIR"));
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
    };
    shapes::slack(&fixture("slack.json")).unwrap();
    shapes::teams(&fixture("teams.json")).unwrap();
    shapes::mattermost(&fixture("mattermost.json")).unwrap();
    let mut bad_id = fixture("mattermost.json");
    bad_id["attachments"][0]["actions"][0]["id"] = json!("klaxon_ack");
    assert!(shapes::mattermost(&bad_id).is_err(), "ids are alphanumeric");
    // And they refuse what the services refuse.
    assert!(
        shapes::slack(&json!({"blocks": []})).is_err(),
        "text is required"
    );
    let mut long = fixture("slack.json");
    long["blocks"][0]["text"]["text"] = json!("x".repeat(3001));
    assert!(shapes::slack(&long).is_err());
    let mut v16 = fixture("teams.json");
    v16["attachments"][0]["content"]["version"] = json!("1.6");
    assert!(shapes::teams(&v16).is_err());
}

both!(
    a_channel_hears_each_event_in_order_in_its_services_shape,
    |app| {
        let w = app.paging_world().await;
        let chat = Chat::start().await;
        let slack = add_channel(
            &app,
            &w,
            "slack",
            &format!("{}/slack/T000/B000/XXXXtokenpart", chat.url),
            json!({}),
        )
        .await;
        add_channel(
            &app,
            &w,
            "teams",
            &format!("{}/teams/workflows/abc?sig=XXXXsig", chat.url),
            json!({}),
        )
        .await;
        let hook = add_channel(
            &app,
            &w,
            "webhook",
            &format!("{}/hook/sms?key=XXXXkey", chat.url),
            json!({}),
        )
        .await;
        add_channel(
            &app,
            &w,
            "slack",
            &format!("{}/mattermost/hooks/XXXXmm", chat.url),
            json!({}),
        )
        .await;
        add_channel(
            &app,
            &w,
            "slack",
            &format!("{}/discord/1/XXXXdiscord/slack", chat.url),
            json!({}),
        )
        .await;
        let secret = hook["signing_secret"].as_str().unwrap().to_string();
        assert_eq!(slack["signing_secret"], Value::Null);
        assert_eq!(
            slack["target"], chat.url,
            "a webhook URL is shown as its origin"
        );
        assert_eq!(slack["state"], "new");
        assert_eq!(
            slack["events"].as_array().unwrap().len(),
            6,
            "every event by default"
        );
        // Listings never show a URL's path or query, nor the signing secret.
        let listed = serde_json::to_string(&channel_list(&app, &w).await).unwrap();
        assert!(
            !listed.contains("XXXX") && !listed.contains(&secret),
            "{listed}"
        );

        let id = app.fire(&w.key, "db-down").await;
        let title = app.detail(&w.admin, id).await["title"]
            .as_str()
            .unwrap()
            .to_string();
        let report = app.announce().await;
        assert_eq!(report.sent, 5, "{report:?}");
        // A GET of the Acknowledge link acts on nothing: it is the incident page.
        let opened = &chat.posts("/hook/")[0].body;
        let ack = opened["acknowledge_url"].as_str().unwrap().to_string();
        assert_eq!(
            ack,
            format!("{}/incidents/{id}#acknowledge", app.config.public_url)
        );
        let path = ack
            .strip_prefix(&app.config.public_url)
            .unwrap()
            .replace("#acknowledge", "");
        app.get(&path, &w.alice.1).await;
        assert_eq!(app.detail(&w.admin, id).await["state"], "triggered");

        app.post(
            &format!("/api/incidents/{id}/acknowledge"),
            &w.alice.1,
            json!({}),
        )
        .await
        .expect(200);
        app.post(
            &format!("/api/incidents/{id}/notes"),
            &w.alice.1,
            json!({"text": "restarted the primary", "resolution": true}),
        )
        .await
        .expect(201);
        app.post(&format!("/api/incidents/{id}/resolve"), &w.bob.1, json!({}))
            .await
            .expect(200);
        app.announce().await;

        for prefix in ["/slack/", "/mattermost/", "/discord/"] {
            let t = texts(&chat.posts(prefix));
            assert_eq!(t.len(), 4, "{prefix}: {t:?}");
            assert!(
                t[0].starts_with(&format!("Critical incident opened: {title}\n")),
                "{}",
                t[0]
            );
            assert!(
                t[0].contains("Team payments · with alice, not acknowledged yet"),
                "{}",
                t[0]
            );
            assert!(t[0].contains(&format!("Acknowledge: {ack}")), "{}", t[0]);
            assert!(t[0].contains(&format!("Open: {}/incidents/{id}", app.config.public_url)));
            assert!(
                t[1].starts_with(&format!("Critical incident acknowledged by alice: {title}")),
                "{}",
                t[1]
            );
            assert!(
                !t[1].contains("Acknowledge:"),
                "an owned incident offers no Acknowledge"
            );
            assert!(
                t[2].starts_with("Critical incident has a resolution note by alice"),
                "{}",
                t[2]
            );
            assert!(t[2].contains("Fix: restarted the primary"), "{}", t[2]);
            assert!(
                t[3].starts_with(&format!("Critical incident resolved by bob: {title}")),
                "{}",
                t[3]
            );
        }
        let slack_first = &chat.posts("/slack/")[0].body;
        assert_eq!(
            slack_first["blocks"][1]["elements"][0]["text"]["text"],
            "Acknowledge"
        );
        assert_eq!(slack_first["blocks"][1]["elements"][0]["url"], ack.as_str());

        let cards: Vec<Value> = chat
            .posts("/teams/")
            .iter()
            .map(|p| p.body["attachments"][0]["content"].clone())
            .collect();
        assert_eq!(cards.len(), 4);
        assert!(cards[0]["body"][0]["text"]
            .as_str()
            .unwrap()
            .starts_with("Critical incident opened"));
        assert_eq!(
            cards[0]["body"][2]["facts"][0],
            json!({"title": "Severity", "value": "Critical"})
        );
        assert_eq!(
            cards[0]["actions"][0],
            json!({"type": "Action.OpenUrl", "title": "Acknowledge", "url": ack})
        );
        assert_eq!(cards[3]["actions"][0]["title"], "Open incident");

        let hooks = chat.posts("/hook/");
        let events: Vec<&str> = hooks
            .iter()
            .map(|p| p.body["event"].as_str().unwrap())
            .collect();
        assert_eq!(
            events,
            ["opened", "acknowledged", "resolution_note", "resolved"]
        );
        for p in &hooks {
            assert_eq!(verify_signature(&secret, p, app.clock.now()), "ok");
            assert_eq!(
                p.header("klaxon-event").as_deref(),
                p.body["event"].as_str()
            );
            assert_eq!(
                p.header("klaxon-delivery"),
                Some(format!("klaxon-{}", p.body["delivery"]))
            );
            assert_eq!(p.body["version"], 1);
            assert_eq!(p.body["team"], json!({"id": w.team, "name": "payments"}));
            assert_eq!(p.body["incident"]["id"], id);
        }
        assert_eq!(hooks[0].body["actor"], Value::Null, "an alert opened it");
        assert_eq!(hooks[1].body["actor"], "alice");
        assert_eq!(hooks[0].body["incident"]["state"], "triggered");
        // The documented check refuses a changed body and an old delivery.
        let mut tampered = hooks[0].clone();
        tampered.raw = String::from_utf8(tampered.raw)
            .unwrap()
            .replace("opened", "resolved")
            .into_bytes();
        assert_eq!(
            verify_signature(&secret, &tampered, app.clock.now()),
            "mismatch"
        );
        assert_eq!(
            verify_signature(&secret, &hooks[0], app.clock.now() + 301),
            "stale"
        );

        let listed = channel_list(&app, &w).await;
        assert!(
            listed
                .iter()
                .all(|c| c["state"] == "ok" && c["waiting"] == 0),
            "{listed:?}"
        );
    }
);

both!(a_channel_hears_only_its_events_and_severities, |app| {
    let w = app.paging_world().await;
    let chat = Chat::start().await;
    let c = add_channel(
        &app,
        &w,
        "slack",
        &format!("{}/slack/only", chat.url),
        json!({"events": ["resolved", "opened", "resolved"], "severities": ["critical"]}),
    )
    .await;
    assert_eq!(c["events"], json!(["opened", "resolved"]));
    assert_eq!(c["severities"], json!(["critical"]));
    let warning =
        Payload::new("disk").alert("disk", "firing", 0, None, json!({"severity": "warning"}));
    app.webhook(&w.key, &warning).await.expect(200);
    let critical = app.fire(&w.key, "db-down").await;
    app.post(
        &format!("/api/incidents/{critical}/acknowledge"),
        &w.alice.1,
        json!({}),
    )
    .await
    .expect(200);
    app.clear(&w.key, "db-down").await;
    app.announce().await;
    let t = texts(&chat.posts("/slack/"));
    assert_eq!(t.len(), 2, "{t:?}");
    let title = app.detail(&w.admin, critical).await["title"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        t[0].starts_with(&format!("Critical incident opened: {title}")),
        "{}",
        t[0]
    );
    assert!(
        t[1].starts_with(&format!("Critical incident resolved: {title}")),
        "{}",
        t[1]
    );
    // A change takes effect for the next events.
    app.send(
        reqwest::Method::PATCH,
        &format!("{}/{}", channels_path(w.team), c["id"]),
        &w.admin,
        Some(json!({"severities": []})),
    )
    .await
    .expect(200);
    app.fire(&w.key, "cpu").await;
    let info = Payload::new("info").alert("info", "firing", 0, None, json!({"severity": "info"}));
    app.webhook(&w.key, &info).await.expect(200);
    app.announce().await;
    assert_eq!(chat.posts("/slack/").len(), 4);
    // Bad filters are refused and change nothing.
    for bad in [
        json!({"events": []}),
        json!({"events": ["exploded"]}),
        json!({"severities": ["page"]}),
    ] {
        app.send(
            reqwest::Method::PATCH,
            &format!("{}/{}", channels_path(w.team), c["id"]),
            &w.admin,
            Some(bad),
        )
        .await
        .expect_error(400, "invalid");
    }
});

both!(
    a_failing_channel_is_retried_in_order_and_shown_failing_while_pages_go_on,
    |app| {
        let w = app.paging_world().await;
        let chat = Chat::start().await;
        add_channel(
            &app,
            &w,
            "slack",
            &format!("{}/slack/T/B/XXXXsecret", chat.url),
            json!({}),
        )
        .await;
        chat.fail_next(500, None);
        let id = app.fire(&w.key, "db-down").await;
        // The page goes out whatever the channel does.
        app.tick().await;
        assert_eq!(app.ntfy.published().len(), 1);
        app.post(
            &format!("/api/incidents/{id}/acknowledge"),
            &w.alice.1,
            json!({}),
        )
        .await
        .expect(200);
        let report = app.announce().await;
        assert_eq!((report.sent, report.failed), (0, 1), "{report:?}");
        let c = &channel_list(&app, &w).await[0];
        assert_eq!(c["state"], "failing");
        let error = c["last_error"].as_str().unwrap();
        assert_eq!(
            error,
            format!(
                "the Slack-format webhook at {} answered 500 Internal Server Error",
                chat.url
            )
        );
        assert!(!error.contains("XXXX") && !error.contains("secret-upstream-words"));
        assert_eq!(
            c["waiting"], 2,
            "the acknowledgement waits behind the opening"
        );
        // Not before the backoff (5 s), then in order.
        app.announce().await;
        assert_eq!(chat.posts("/slack/").len(), 0);
        app.clock.advance(5);
        app.announce().await;
        let t = texts(&chat.posts("/slack/"));
        assert_eq!(t.len(), 2);
        assert!(
            t[0].starts_with("Critical incident opened")
                && t[1].starts_with("Critical incident acknowledged")
        );
        let c = &channel_list(&app, &w).await[0];
        assert_eq!(
            (c["state"].as_str(), c["last_error"].as_str()),
            (Some("ok"), None)
        );

        // A 429's Retry-After holds the channel for as long as it says.
        chat.fail_next(429, Some(30));
        app.post(
            &format!("/api/incidents/{id}/resolve"),
            &w.alice.1,
            json!({}),
        )
        .await
        .expect(200);
        app.announce().await;
        app.clock.advance(20);
        app.announce().await;
        assert_eq!(chat.posts("/slack/").len(), 2, "not before the Retry-After");
        app.clock.advance(10);
        app.announce().await;
        assert_eq!(chat.posts("/slack/").len(), 3);
        let metrics = app.get("/metrics", &Auth::None).await.text;
        assert!(
            metrics.contains("klaxon_channel_failures_total{kind=\"slack\"} 2"),
            "{metrics}"
        );
        assert!(metrics.contains("klaxon_channel_messages_sent_total{kind=\"slack\"} 3"));
        assert!(!metrics.contains("XXXX"));
    }
);

both!(a_storm_is_summarised_per_channel, |app| {
    let w = app.paging_world().await;
    let chat = Chat::start().await;
    add_channel(
        &app,
        &w,
        "slack",
        &format!("{}/slack/storm", chat.url),
        json!({"events": ["opened"]}),
    )
    .await;
    add_channel(
        &app,
        &w,
        "webhook",
        &format!("{}/hook/storm", chat.url),
        json!({"events": ["opened"]}),
    )
    .await;
    let mut payload = Payload::new("storm");
    for n in 0..12 {
        let group = format!("node-{n}");
        payload =
            Payload::new(&group).alert(&group, "firing", 0, None, json!({"severity": "critical"}));
        app.webhook(&w.key, &payload).await.expect(200);
    }
    let _ = payload;
    app.announce().await;
    let t = texts(&chat.posts("/slack/"));
    assert_eq!(t.len(), 5, "four alone and one summary: {t:?}");
    assert!(
        t[4].starts_with("8 incident events for team payments in a storm"),
        "{}",
        t[4]
    );
    assert_eq!(t[4].matches("\n- Critical incident opened").count(), 8);
    let hooks = chat.posts("/hook/");
    assert_eq!(hooks.len(), 5);
    assert_eq!(hooks[4].body["also"].as_array().unwrap().len(), 7);
    // The minute's five are spent: what follows waits, then goes as one summary.
    for n in 12..15 {
        app.fire(&w.key, &format!("node-{n}")).await;
    }
    app.announce().await;
    assert_eq!(chat.posts("/slack/").len(), 5);
    app.clock.advance(60);
    app.announce().await;
    let t = texts(&chat.posts("/slack/"));
    assert_eq!(t.len(), 6);
    assert!(t[5].starts_with("3 incident events"), "{}", t[5]);
    let listed = channel_list(&app, &w).await;
    assert!(listed.iter().all(|c| c["waiting"] == 0));
});

/// Without `KLAXON_OUTBOUND_ALLOW`: loopback and private addresses are refused.
fn no_allow() -> klaxon_core::Config {
    klaxon_core::Config::default()
}

both_with!(
    channel_urls_go_through_the_outbound_policy,
    no_allow(),
    |app| {
        let w = app.paging_world().await;
        let chat = Chat::start().await;
        let port = chat.url.rsplit(':').next().unwrap().to_string();
        for target in [
            format!("http://127.0.0.1:{port}/slack/x"),
            format!("http://[::1]:{port}/slack/x"),
            "http://169.254.169.254/latest/meta-data".to_string(),
            "http://10.1.2.3/hook".to_string(),
        ] {
            let e = app
                .post(
                    &channels_path(w.team),
                    &w.admin,
                    json!({"name": "x", "kind": "slack", "target": target}),
                )
                .await
                .expect_error(400, "invalid");
            // One sentence for every refused address: it tells a prober nothing.
            assert!(
                e.contains("is not an address Klaxon calls on a user's behalf (an administrator can allow a network with KLAXON_OUTBOUND_ALLOW)"),
                "{target}: {e}"
            );
        }
        // A name is checked when it is called: localhost resolves to loopback.
        let c = add_channel(
            &app,
            &w,
            "slack",
            &format!("http://localhost:{port}/slack/x"),
            json!({}),
        )
        .await;
        let e = app
            .post(
                &format!("{}/{}/test", channels_path(w.team), c["id"]),
                &w.admin,
                json!({}),
            )
            .await
            .expect_error(502, "upstream_failed");
        assert!(
            e.contains("localhost is not an address Klaxon calls on a user's behalf"),
            "{e}"
        );
        app.fire(&w.key, "db-down").await;
        app.announce().await;
        assert_eq!(chat.attempts(), 0, "nothing reached the loopback service");
        let listed = channel_list(&app, &w).await;
        assert!(listed[0]["last_error"]
            .as_str()
            .unwrap()
            .contains("is not an address Klaxon calls"));
    }
);

both!(
    allowed_networks_are_reached_but_redirects_are_not_followed,
    |app| {
        let w = app.paging_world().await;
        let chat = Chat::start().await;
        let c = add_channel(
            &app,
            &w,
            "teams",
            &format!(
                "http://localhost:{}/teams/x",
                chat.url.rsplit(':').next().unwrap()
            ),
            json!({}),
        )
        .await;
        let test = format!("{}/{}/test", channels_path(w.team), c["id"]);
        app.post(&test, &w.admin, json!({})).await.expect(204);
        let card = &chat.posts("/teams/")[0].body;
        assert!(card["attachments"][0]["content"]["body"][0]["text"]
            .as_str()
            .unwrap()
            .starts_with("Test from Klaxon"));
        // A redirect, even to an allowed address, is an answer, not a new request.
        chat.redirect_next(&format!("{}/teams/elsewhere", chat.url));
        let e = app
            .post(&test, &w.admin, json!({}))
            .await
            .expect_error(502, "upstream_failed");
        assert!(e.ends_with("answered 302 Found"), "{e}");
        assert_eq!(chat.posts("/teams/").len(), 1);
        // The signed webhook's test is documented as its own small body.
        let hook = add_channel(
            &app,
            &w,
            "webhook",
            &format!("{}/hook/t", chat.url),
            json!({}),
        )
        .await;
        app.post(
            &format!("{}/{}/test", channels_path(w.team), hook["id"]),
            &w.admin,
            json!({}),
        )
        .await
        .expect(204);
        let t = &chat.posts("/hook/")[0];
        assert_eq!(t.body["event"], "test");
        assert_eq!(t.body["team"], json!({"id": w.team, "name": "payments"}));
        assert_eq!(
            verify_signature(hook["signing_secret"].as_str().unwrap(), t, app.clock.now()),
            "ok"
        );
    }
);

both!(only_owners_manage_channels_and_members_see_them, |app| {
    let w = app.paging_world().await;
    let chat = Chat::start().await;
    let c = add_channel(
        &app,
        &w,
        "slack",
        &format!("{}/slack/x", chat.url),
        json!({}),
    )
    .await;
    let path = channels_path(w.team);
    let member = &w.alice.1;
    assert_eq!(
        app.get(&path, member)
            .await
            .expect(200)
            .as_array()
            .unwrap()
            .len(),
        1
    );
    app.post(
        &path,
        member,
        json!({"name": "x", "kind": "slack", "target": format!("{}/slack/y", chat.url)}),
    )
    .await
    .expect_error(403, "forbidden");
    app.delete(&format!("{path}/{}", c["id"]), member)
        .await
        .expect_error(403, "forbidden");
    app.post(&format!("{path}/{}/test", c["id"]), member, json!({}))
        .await
        .expect_error(403, "forbidden");
    // Another team's channel is not found from here.
    let other = app.team(&w.admin, "other").await;
    app.delete(&format!("{}/{}", channels_path(other), c["id"]), &w.admin)
        .await
        .expect_error(404, "not_found");
    // Matrix needs a homeserver; a bad target is refused in the error shape.
    let e = app
        .post(
            &path,
            &w.admin,
            json!({"name": "m", "kind": "matrix", "target": "!room:example.org"}),
        )
        .await
        .expect_error(400, "invalid");
    assert!(e.contains("KLAXON_MATRIX_HOMESERVER"), "{e}");
    for target in [
        "ftp://x.example/h",
        "https://user:pw@x.example/h",
        "not a url",
    ] {
        app.post(
            &path,
            &w.admin,
            json!({"name": "x", "kind": "webhook", "target": target}),
        )
        .await
        .expect_error(400, "invalid");
    }
    app.delete(&format!("{path}/{}", c["id"]), &w.admin)
        .await
        .expect(204);
    assert!(app
        .get(&path, &w.admin)
        .await
        .expect(200)
        .as_array()
        .unwrap()
        .is_empty());
});
