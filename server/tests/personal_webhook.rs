//! A signed webhook as a person's own road: added with a secret shown once, verified by a code
//! posted to it, then paged by the person's rules with signed `PersonalWebhook` bodies (checked
//! by Python's hmac, not Klaxon's code), acknowledged by a program through the POST it names,
//! and retried after the wait a 429 asked for.

use crate::common;
use common::chat::{verify_signature, Chat};
use klaxon_core::Clock;
use serde_json::json;

both!(
    a_webhook_is_verified_by_a_code_posted_to_it_and_then_paged_signed,
    |app| {
        let w = app.paging_world().await;
        let chat = Chat::start().await;
        let alice = &w.alice;
        let path = format!("/api/users/{}/contact-methods", alice.0);

        // What cannot be a webhook is refused, and nothing is added.
        for url in [
            "ftp://gateway.example/x",
            "https://user@gateway.example/x",
            "https://gateway.example/a b",
            "http://169.254.169.254/latest/meta-data",
        ] {
            let why = app
                .post(
                    &path,
                    &alice.1,
                    json!({"name": "SMS", "kind": "webhook", "url": url}),
                )
                .await
                .expect_error(400, "invalid");
            assert!(why.starts_with("url: "), "{url}: {why}");
        }
        // A URL that does not take the code is refused as input too (nothing listens on port 1).
        let why = app
            .post(
                &path,
                &alice.1,
                json!({"name": "SMS", "kind": "webhook", "url": "http://127.0.0.1:1/hook"}),
            )
            .await
            .expect_error(400, "invalid");
        assert!(why.starts_with("url: the webhook"), "{why}");
        assert_eq!(app.get(&path, &alice.1).await.expect(200), json!([]));

        let url = format!("{}/hook/alice?token=gateway-secret", chat.url);
        let m = app
            .post(
                &path,
                &alice.1,
                json!({"name": "SMS gateway", "kind": "webhook", "url": url}),
            )
            .await
            .expect(201);
        let id = m["id"].as_i64().unwrap();
        assert_eq!(m["verified"], false);
        // The URL may carry a credential: only its origin is shown, now and later.
        assert_eq!(m["target"], chat.url.as_str());
        let secret = m["signing_secret"].as_str().unwrap().to_string();
        assert!(secret.len() >= 32, "{secret}");
        let listed = app.get(&path, &alice.1).await.expect(200).to_string();
        assert!(!listed.contains("gateway-secret") && !listed.contains(&secret));
        assert!(!listed.contains("signing_secret"), "shown once: {listed}");

        // The code came by the road itself, signed.
        let posts = chat.posts("/hook/alice");
        assert_eq!(posts.len(), 1);
        let code_post = &posts[0];
        assert_eq!(code_post.header("klaxon-event").as_deref(), Some("verify"));
        assert_eq!(verify_signature(&secret, code_post, app.clock.now()), "ok");
        assert_eq!(code_post.body["version"], 1);
        assert_eq!(code_post.body["event"], "verify");
        assert_eq!(code_post.body["to"], "alice");
        let code = code_post.body["code"].as_str().unwrap().to_string();
        assert_eq!(code.len(), 6);
        assert!(code_post.body["message"].as_str().unwrap().contains(&code));

        // Not paged, nor testable, before it is verified.
        app.post(&format!("{path}/{id}/test"), &alice.1, json!({}))
            .await
            .expect_error(409, "conflict");
        app.post(
            &format!("{path}/{id}/verify"),
            &alice.1,
            json!({ "code": code }),
        )
        .await
        .expect(200);
        app.post(&format!("{path}/{id}/test"), &alice.1, json!({}))
            .await
            .expect(204);
        let test = &chat.posts("/hook/alice")[1];
        assert_eq!(test.body["event"], "test");
        assert_eq!(verify_signature(&secret, test, app.clock.now()), "ok");

        // Her rules send high-urgency pages to the webhook only.
        app.put(
            &format!("/api/users/{}/notification-rules", alice.0),
            &alice.1,
            json!({"high": [{"after_minutes": 0, "method_id": id}]}),
        )
        .await
        .expect(200);
        let incident = app.fire(&w.key, "db-down").await;
        app.tick().await;
        assert!(
            app.ntfy.published().is_empty(),
            "the push topic is not a step"
        );
        let posts = chat.posts("/hook/alice");
        assert_eq!(posts.len(), 3);
        let page = &posts[2];
        assert_eq!(page.header("klaxon-event").as_deref(), Some("page"));
        assert!(page.header("klaxon-delivery").unwrap().starts_with("page-"));
        assert_eq!(verify_signature(&secret, page, app.clock.now()), "ok");
        assert_eq!(page.body["kind"], "opening");
        assert_eq!(page.body["to"], "alice");
        let public = &app.config.public_url;
        assert_eq!(
            page.body["url"],
            format!("{public}/incidents/{incident}").as_str()
        );
        let title = page.body["title"].as_str().unwrap();
        assert!(title.starts_with("[CRITICAL]"), "{title}");
        assert!(page.body["acknowledge_url"]
            .as_str()
            .unwrap()
            .starts_with(&format!("{public}/ack/")));
        let detail = app.detail(&w.admin, incident).await;
        let road: Vec<_> = detail["pages"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|p| p["recipient"] == "alice")
            .map(|p| (p["road"].clone(), p["via"].clone(), p["status"].clone()))
            .collect();
        assert_eq!(
            road,
            vec![(json!("webhook"), json!("SMS gateway"), json!("sent"))]
        );

        // A program acknowledges with the POST the body names, no session needed.
        let ack = page.body["acknowledge_post_url"].as_str().unwrap();
        let ack = ack.replace(public.as_str(), &app.url);
        let done = app.client.post(&ack).send().await.unwrap();
        assert_eq!(done.status(), 200);
        let d = app.detail(&w.admin, incident).await;
        assert_eq!(d["acknowledged_by"], "alice");

        // The all-clear meets a 429: nothing is tried again before the wait it asked for, then
        // it arrives once.
        chat.fail_next(429, Some(30));
        app.post(
            &format!("/api/incidents/{incident}/resolve"),
            &w.alice.1,
            json!({}),
        )
        .await
        .expect(200);
        app.tick().await;
        let attempts = chat.attempts();
        assert_eq!(chat.posts("/hook/alice").len(), 3);
        app.clock.advance(10);
        app.tick().await;
        assert_eq!(chat.attempts(), attempts, "the wait is honoured");
        app.clock.advance(25);
        app.tick().await;
        let posts = chat.posts("/hook/alice");
        assert_eq!(posts.len(), 4);
        assert_eq!(posts[3].body["kind"], "all_clear");
        assert!(posts[3].body["acknowledge_url"].is_null());
        assert_eq!(verify_signature(&secret, &posts[3], app.clock.now()), "ok");
        app.tick().await;
        assert_eq!(chat.posts("/hook/alice").len(), 4, "sent once");
    }
);

both!(a_matrix_account_needs_the_installs_bot, |app| {
    let admin = app.bootstrap().await;
    let (bob_id, bob) = app.user(&admin, "bob").await;
    let path = format!("/api/users/{bob_id}/contact-methods");
    let why = app
        .post(
            &path,
            &bob,
            json!({"name": "Matrix", "kind": "matrix", "user": "@bob:example.org"}),
        )
        .await
        .expect_error(409, "conflict");
    assert!(why.contains("KLAXON_MATRIX_HOMESERVER"), "{why}");
    for user in [
        "bob:example.org",
        "@bob",
        "@:example.org",
        "@bo b:example.org",
    ] {
        app.post(
            &path,
            &bob,
            json!({"name": "Matrix", "kind": "matrix", "user": user}),
        )
        .await
        .expect_error(400, "invalid");
    }
    assert_eq!(app.get(&path, &bob).await.expect(200), json!([]));
});
