//! A person's contact methods over REST: who may see and change them, what each road accepts,
//! and what a listing shows of a Web Push subscription.

use crate::common;
use serde_json::json;

// RFC 8291 Appendix A's subscription keys.
const P256DH: &str =
    "BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4";
const AUTH: &str = "BTBZMqHH6r4Tts7J_aSIgg";

fn webpush(endpoint: &str) -> serde_json::Value {
    json!({"name": "Phone", "kind": "webpush",
           "subscription": {"endpoint": endpoint, "keys": {"p256dh": P256DH, "auth": AUTH}}})
}

both!(a_person_adds_lists_and_removes_their_roads, |app| {
    let admin = app.bootstrap().await;
    let (bob_id, bob) = app.user(&admin, "bob").await;
    let path = format!("/api/users/{bob_id}/contact-methods");
    assert_eq!(app.get(&path, &bob).await.expect(200), json!([]));

    let ntfy = app
        .post(
            &path,
            &bob,
            json!({"name": "ntfy on the phone", "kind": "ntfy", "topic": " bob-pager "}),
        )
        .await
        .expect(201);
    assert_eq!(ntfy["kind"], "ntfy");
    assert_eq!(ntfy["target"], "bob-pager");
    assert_eq!(ntfy["verified"], true);

    let endpoint = "https://push.example.net/wpush/v2/gAAAAABsecret";
    let push = app.post(&path, &bob, webpush(endpoint)).await.expect(201);
    // The endpoint is a capability: a listing shows only the push service.
    assert_eq!(push["target"], "https://push.example.net");
    let listed = app.get(&path, &bob).await.expect(200);
    assert_eq!(listed.as_array().unwrap().len(), 2);
    assert!(!listed.to_string().contains("secret"));
    assert_eq!(listed[0]["id"], ntfy["id"]);

    // The same road twice is refused, and nothing is added.
    app.post(&path, &bob, webpush(endpoint))
        .await
        .expect_error(409, "conflict");
    assert_eq!(
        app.get(&path, &bob)
            .await
            .expect(200)
            .as_array()
            .unwrap()
            .len(),
        2
    );

    // An administrator sees and removes them too; removing twice is a 404.
    let by_admin = app.get(&path, &admin).await.expect(200);
    assert_eq!(by_admin, listed);
    let one = format!("{path}/{}", push["id"]);
    app.delete(&one, &admin).await.expect(204);
    app.delete(&one, &bob).await.expect_error(404, "not_found");
    assert_eq!(
        app.get(&path, &bob)
            .await
            .expect(200)
            .as_array()
            .unwrap()
            .len(),
        1
    );
});

both!(someone_elses_roads_are_not_theirs_to_see_or_change, |app| {
    let admin = app.bootstrap().await;
    let (bob_id, bob) = app.user(&admin, "bob").await;
    let (carol_id, carol) = app.user(&admin, "carol").await;
    let bobs = format!("/api/users/{bob_id}/contact-methods");
    let m = app
        .post(
            &bobs,
            &bob,
            json!({"name": "ntfy", "kind": "ntfy", "topic": "bob-pager"}),
        )
        .await
        .expect(201);
    app.get(&bobs, &carol).await.expect_error(403, "forbidden");
    app.post(
        &bobs,
        &carol,
        json!({"name": "x", "kind": "ntfy", "topic": "carols"}),
    )
    .await
    .expect_error(403, "forbidden");
    app.delete(&format!("{bobs}/{}", m["id"]), &carol)
        .await
        .expect_error(403, "forbidden");
    // Carol cannot reach Bob's method through her own path either.
    app.delete(
        &format!("/api/users/{carol_id}/contact-methods/{}", m["id"]),
        &carol,
    )
    .await
    .expect_error(404, "not_found");
    assert_eq!(
        app.get(&bobs, &bob)
            .await
            .expect(200)
            .as_array()
            .unwrap()
            .len(),
        1
    );
    app.get("/api/users/999999/contact-methods", &admin)
        .await
        .expect_error(404, "not_found");
});

both!(
    a_road_that_cannot_carry_a_page_is_refused_and_nothing_changes,
    |app| {
        let admin = app.bootstrap().await;
        let (bob_id, bob) = app.user(&admin, "bob").await;
        let path = format!("/api/users/{bob_id}/contact-methods");
        let refused = [
            json!({"name": "x", "kind": "ntfy", "topic": ""}),
            json!({"name": "x", "kind": "ntfy", "topic": "no spaces inside"}),
            json!({"name": "", "kind": "ntfy", "topic": "bob"}),
            json!({"name": "x", "kind": "pigeon", "number": "+15555550100"}),
            json!({"name": "x", "kind": "sms", "number": "5555550100"}),
            json!({"name": "x", "kind": "email", "address": "not-an-address"}),
            webpush("http://push.example.net/plain-http"),
            webpush("https://user:pw@push.example.net/a"),
            json!({"name": "x", "kind": "webpush", "subscription": {"endpoint": "https://p.example/a",
               "keys": {"p256dh": &P256DH[..80], "auth": AUTH}}}),
            json!({"name": "x", "kind": "webpush", "subscription": {"endpoint": "https://p.example/a",
               "keys": {"p256dh": P256DH, "auth": "c2hvcnQ"}}}),
        ];
        for body in refused {
            let why = app
                .post(&path, &bob, body.clone())
                .await
                .expect_error(400, "invalid");
            assert!(!why.is_empty(), "{body}");
        }
        // Email waits for the server's mail settings, which this one has none of.
        let why = app
            .post(
                &path,
                &bob,
                json!({"name": "Mail", "kind": "email", "address": "bob@example.org"}),
            )
            .await
            .expect_error(409, "conflict");
        assert!(why.contains("KLAXON_SMTP_URL"), "{why}");
        // So do texts and calls, for a phone provider.
        for kind in ["sms", "voice"] {
            let why = app
                .post(
                    &path,
                    &bob,
                    json!({"name": "P", "kind": kind, "number": "+14155552671"}),
                )
                .await
                .expect_error(409, "conflict");
            assert!(why.contains("KLAXON_TWILIO_"), "{why}");
        }
        assert_eq!(app.get(&path, &bob).await.expect(200), json!([]));
        // Loopback http is allowed, for a push service on this machine.
        app.post(&path, &bob, webpush("http://127.0.0.1:9/notify/a"))
            .await
            .expect(201);
    }
);

both!(a_person_has_at_most_twenty_roads, |app| {
    let admin = app.bootstrap().await;
    let (bob_id, bob) = app.user(&admin, "bob").await;
    let path = format!("/api/users/{bob_id}/contact-methods");
    for i in 0..20 {
        app.post(
            &path,
            &bob,
            json!({"name": format!("t{i}"), "kind": "ntfy", "topic": format!("bob-{i}")}),
        )
        .await
        .expect(201);
    }
    let why = app
        .post(
            &path,
            &bob,
            json!({"name": "one more", "kind": "ntfy", "topic": "bob-20"}),
        )
        .await
        .expect_error(409, "conflict");
    assert!(why.contains("20"), "{why}");
    assert_eq!(
        app.get(&path, &bob)
            .await
            .expect(200)
            .as_array()
            .unwrap()
            .len(),
        20
    );
});

both!(a_service_account_has_no_roads, |app| {
    let admin = app.bootstrap().await;
    let sa = app
        .post("/api/service-accounts", &admin, json!({"name": "ci"}))
        .await
        .expect(201);
    let id = sa["id"].as_i64().unwrap();
    app.get(&format!("/api/users/{id}/contact-methods"), &admin)
        .await
        .expect_error(403, "forbidden");
});

/// An address no other test of this binary mails: they share one SMTP server.
fn address(who: &str) -> String {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    format!("{who}-{n}@example.org")
}

/// The six digits after "verification code is" in a message's plain-text part.
fn code_in(message: &str) -> String {
    let at = message
        .find("verification code is ")
        .expect("the code's sentence")
        + 21;
    message[at..at + 6].to_string()
}

both_with!(
    an_address_is_paged_only_after_the_code_mailed_to_it_is_entered,
    common::smtp::mail_config(),
    |app| {
        let smtp = common::smtp::smtp();
        let admin = app.bootstrap().await;
        let (bob_id, bob) = app.user(&admin, "bob").await;
        let path = format!("/api/users/{bob_id}/contact-methods");
        let to = address("bob");
        let m = app
            .post(
                &path,
                &bob,
                json!({"name": "Work mail", "kind": "email", "address": to.to_uppercase()}),
            )
            .await
            .expect(201);
        assert_eq!(m["target"], to);
        assert_eq!(m["verified"], false);

        // The message went through STARTTLS and a login to the real server, in both forms.
        let message = smtp.wait_for(&to, 1).await;
        assert!(
            message.contains("Subject: Your Klaxon verification code"),
            "{message}"
        );
        assert!(
            message.contains("From: Klaxon <klaxon@example.org>"),
            "{message}"
        );
        assert!(message.contains("multipart/alternative"), "{message}");
        assert!(
            message.contains("text/plain") && message.contains("text/html"),
            "{message}"
        );
        let code = code_in(&message);
        assert!(code.bytes().all(|b| b.is_ascii_digit()), "{code}");
        assert!(message.contains(&format!("<b>{code}</b>")), "{message}");

        let verify = format!("{path}/{}/verify", m["id"]);
        let wrong = if code == "000000" { "111111" } else { "000000" };
        let why = app
            .post(&verify, &bob, json!({"code": wrong}))
            .await
            .expect_error(400, "invalid");
        assert!(why.contains("4 tries left"), "{why}");
        // Spaces as a phone keyboard adds them are fine.
        let spaced = format!("{} {}", &code[..3], &code[3..]);
        let verified = app
            .post(&verify, &bob, json!({"code": spaced}))
            .await
            .expect(200);
        assert_eq!(verified["verified"], true);
        assert_eq!(app.get(&path, &bob).await.expect(200)[0]["verified"], true);
        // Verified: there is nothing left to verify or resend.
        app.post(&verify, &bob, json!({"code": code}))
            .await
            .expect_error(409, "conflict");
        app.post(&format!("{path}/{}/code", m["id"]), &bob, json!({}))
            .await
            .expect_error(409, "conflict");
    }
);

both_with!(
    five_wrong_guesses_use_up_a_code_and_a_new_one_waits_a_minute,
    common::smtp::mail_config(),
    |app| {
        let smtp = common::smtp::smtp();
        let admin = app.bootstrap().await;
        let (bob_id, bob) = app.user(&admin, "bob").await;
        let path = format!("/api/users/{bob_id}/contact-methods");
        let to = address("guess");
        let m = app
            .post(
                &path,
                &bob,
                json!({"name": "Mail", "kind": "email", "address": to}),
            )
            .await
            .expect(201);
        let code = code_in(&smtp.wait_for(&to, 1).await);
        let verify = format!("{path}/{}/verify", m["id"]);
        let wrong = if code == "000000" { "111111" } else { "000000" };
        for left in (0..5).rev() {
            let why = app
                .post(&verify, &bob, json!({"code": wrong}))
                .await
                .expect_error(400, "invalid");
            if left > 0 {
                assert!(why.contains(&format!("{left} tries left")), "{why}");
            } else {
                assert!(why.contains("last try"), "{why}");
            }
        }
        // The right code no longer works: the guesses used it up.
        app.post(&verify, &bob, json!({"code": code}))
            .await
            .expect_error(409, "conflict");
        app.post(&verify, &bob, json!({"code": "12"}))
            .await
            .expect_error(409, "conflict");

        // A new code, once a minute has passed since the last.
        let resend = format!("{path}/{}/code", m["id"]);
        app.post(&resend, &bob, json!({}))
            .await
            .expect_error(429, "rate_limited");
        app.clock.advance(60);
        app.post(&resend, &bob, json!({})).await.expect(204);
        let second = code_in(&smtp.wait_for(&to, 2).await);
        // The first code is gone with its guesses; the new one verifies.
        if second != code {
            app.post(&verify, &bob, json!({"code": code}))
                .await
                .expect_error(400, "invalid");
        }
        app.post(&verify, &bob, json!({"code": second}))
            .await
            .expect(200);

        // A code lapses after 15 minutes.
        let to2 = address("late");
        let late = app
            .post(
                &path,
                &bob,
                json!({"name": "Late", "kind": "email", "address": to2}),
            )
            .await
            .expect(201);
        let code = code_in(&smtp.wait_for(&to2, 1).await);
        app.clock.advance(15 * 60);
        app.post(
            &format!("{path}/{}/verify", late["id"]),
            &bob,
            json!({"code": code}),
        )
        .await
        .expect_error(409, "conflict");
    }
);

both_with!(
    an_address_the_mail_server_refuses_is_not_added,
    common::smtp::mail_config(),
    |app| {
        let admin = app.bootstrap().await;
        let (bob_id, bob) = app.user(&admin, "bob").await;
        let path = format!("/api/users/{bob_id}/contact-methods");
        let why = app
            .post(
                &path,
                &bob,
                json!({"name": "Mail", "kind": "email", "address": "refused@example.org"}),
            )
            .await
            .expect_error(502, "push_failed");
        assert!(
            why.contains("550") || why.contains("no such mailbox"),
            "{why}"
        );
        assert_eq!(app.get(&path, &bob).await.expect(200), json!([]));
    }
);

both_with!(
    a_mail_server_that_refuses_klaxons_login_is_the_error,
    klaxon_core::Config {
        roads: klaxon_core::roads::RoadSettings {
            smtp: Some(klaxon_core::roads::email::SmtpConfig {
                url: format!(
                    "smtp://klaxon:wrong@127.0.0.1:{}",
                    common::smtp::smtp().port
                ),
                ..common::smtp::smtp().config()
            }),
            ..Default::default()
        },
        ..common::test_config()
    },
    |app| {
        let admin = app.bootstrap().await;
        let (bob_id, bob) = app.user(&admin, "bob").await;
        let path = format!("/api/users/{bob_id}/contact-methods");
        let to = address("login");
        app.post(
            &path,
            &bob,
            json!({"name": "Mail", "kind": "email", "address": to}),
        )
        .await
        .expect_error(502, "push_failed");
        assert!(common::smtp::smtp().messages_to(&to).is_empty());
        assert_eq!(app.get(&path, &bob).await.expect(200), json!([]));
    }
);

both_with!(
    a_test_message_goes_by_the_road_chosen_and_its_refusal_is_the_answer,
    common::smtp::mail_config(),
    |app| {
        let smtp = common::smtp::smtp();
        let admin = app.bootstrap().await;
        let (bob_id, bob) = app.user(&admin, "bob").await;
        let path = format!("/api/users/{bob_id}/contact-methods");
        let ntfy = app
            .post(
                &path,
                &bob,
                json!({"name": "Phone", "kind": "ntfy", "topic": "bob-second-phone"}),
            )
            .await
            .expect(201);
        app.post(&format!("{path}/{}/test", ntfy["id"]), &bob, json!({}))
            .await
            .expect(204);
        let sent = app.ntfy.take();
        assert_eq!(sent.len(), 1);
        assert_eq!(sent[0].topic, "bob-second-phone");
        app.ntfy.fail_next(1, 500, None);
        let why = app
            .post(&format!("{path}/{}/test", ntfy["id"]), &bob, json!({}))
            .await
            .expect_error(502, "push_failed");
        assert!(why.contains("500"), "{why}");

        // An address is tested once verified.
        let to = address("test");
        let mail = app
            .post(
                &path,
                &bob,
                json!({"name": "Mail", "kind": "email", "address": to}),
            )
            .await
            .expect(201);
        let test = format!("{path}/{}/test", mail["id"]);
        app.post(&test, &bob, json!({}))
            .await
            .expect_error(409, "conflict");
        assert_eq!(smtp.messages_to(&to).len(), 1, "only the code");
        let code = code_in(&smtp.wait_for(&to, 1).await);
        app.post(
            &format!("{path}/{}/verify", mail["id"]),
            &bob,
            json!({"code": code}),
        )
        .await
        .expect(200);
        app.post(&test, &bob, json!({})).await.expect(204);
        let message = smtp.wait_for(&to, 2).await;
        assert!(message.contains("Subject: Klaxon test page"), "{message}");

        // Web Push goes to the subscription's push service, encrypted and signed (checked there).
        let service = common::webpush::push_service();
        let sub = service.subscribe().await;
        let push = app
            .post(
                &path,
                &bob,
                json!({"name": "Phone", "kind": "webpush", "subscription": sub.json}),
            )
            .await
            .expect(201);
        let test = format!("{path}/{}/test", push["id"]);
        app.post(&test, &bob, json!({})).await.expect(204);
        let got = service.wait_for(&sub, 1).await;
        assert_eq!(got["ok"], true, "{got}");
        assert_eq!(got["payload"]["title"], "Klaxon test page");
        // A subscription its push service says is gone: the service's answer, and it is removed.
        service.answer(&sub, 410, None).await;
        let why = app
            .post(&test, &bob, json!({}))
            .await
            .expect_error(502, "push_failed");
        assert!(why.contains("410"), "{why}");
        let listed = app.get(&path, &bob).await.expect(200);
        assert!(listed
            .as_array()
            .unwrap()
            .iter()
            .all(|m| m["id"] != push["id"]));
    }
);

both_with!(
    removing_and_adding_an_address_again_cannot_flood_its_inbox,
    common::smtp::mail_config(),
    |app| {
        let smtp = common::smtp::smtp();
        let admin = app.bootstrap().await;
        let (bob_id, bob) = app.user(&admin, "bob").await;
        let path = format!("/api/users/{bob_id}/contact-methods");
        let to = address("stranger");
        let add = json!({"name": "Mail", "kind": "email", "address": to});
        for _ in 0..3 {
            let m = app.post(&path, &bob, add.clone()).await.expect(201);
            app.delete(&format!("{path}/{}", m["id"]), &bob)
                .await
                .expect(204);
        }
        let why = app
            .post(&path, &bob, add.clone())
            .await
            .expect_error(429, "rate_limited");
        assert!(why.contains("this address"), "{why}");
        assert_eq!(smtp.messages_to(&to).len(), 3);
        assert_eq!(app.get(&path, &bob).await.expect(200), json!([]));
        // The window passes, and the address may be mailed again.
        app.clock.advance(15 * 60);
        app.post(&path, &bob, add).await.expect(201);
        assert!(!smtp.wait_for(&to, 4).await.is_empty());
    }
);
