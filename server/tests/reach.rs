//! Reaching a person by several roads: notification rules with delays per urgency, quiet hours on
//! the person's clock, failing over to the next road, email pages through a real SMTP server,
//! Web Push checked by an independent implementation, and the paging history per person and road.

use crate::common;
use common::smtp::{mail_config, smtp, verified_email};
use common::webpush::push_service;
use common::*;
use serde_json::{json, Value};

/// A unique address at the test SMTP server.
fn address(who: &str) -> String {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    format!("{who}-reach-{n}@example.org")
}

/// Adds an ntfy method (a second topic) for `user`: its id.
async fn ntfy_method(app: &TestApp, user: &(i64, Auth), topic: &str) -> i64 {
    app.post(
        &format!("/api/users/{}/contact-methods", user.0),
        &user.1,
        json!({"name": "Backup phone", "kind": "ntfy", "topic": topic}),
    )
    .await
    .expect(201)["id"]
        .as_i64()
        .unwrap()
}

async fn set_rules(app: &TestApp, user: &(i64, Auth), rules: Value) -> Value {
    app.put(
        &format!("/api/users/{}/notification-rules", user.0),
        &user.1,
        rules,
    )
    .await
    .expect(200)
}

/// The incident's pages to `user`, as its history shows them.
fn pages_of(detail: &Value, user: &str) -> Vec<Value> {
    detail["pages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["recipient"] == user)
        .cloned()
        .collect()
}

/// Fires one alert of `severity` in its own group; the incident it opened.
async fn fire_with(app: &TestApp, key: &str, group: &str, severity: &str) -> i64 {
    let payload =
        Payload::new(group).alert(group, "firing", 0, None, json!({ "severity": severity }));
    app.webhook(key, &payload).await.expect(200);
    app.incident_of(group).await
}

/// A part of a raw message from its `Content-Type: <kind>` line on, quoted-printable decoded (as
/// a mail client reads it: soft line breaks joined, `=XX` as the byte).
fn part(message: &str, kind: &str) -> String {
    let at = message
        .find(&format!("Content-Type: {kind}"))
        .unwrap_or_else(|| panic!("no {kind} part in {message}"));
    let raw = message[at..].replace("=\r\n", "").replace("=\n", "");
    let mut out = Vec::new();
    let bytes = raw.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok());
        match (bytes[i], hex.and_then(|h| u8::from_str_radix(h, 16).ok())) {
            (b'=', Some(b)) => {
                out.push(b);
                i += 3;
            }
            (b, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8(out).unwrap()
}

both_with!(
    each_step_pages_its_road_at_its_delay_and_email_acknowledges_through_a_confirmation_page,
    mail_config(),
    |app| {
        let w = app.paging_world().await;
        let to = address("alice");
        let email = verified_email(&app, &w.alice, &to).await;
        set_rules(
            &app,
            &w.alice,
            json!({"high": [{"after_minutes": 0}, {"after_minutes": 5, "method_id": email}]}),
        )
        .await;
        let incident = app.fire(&w.key, "g1").await;
        app.tick().await;
        assert_eq!(app.ntfy.published().len(), 1);
        assert_eq!(smtp().messages_to(&to).len(), 1, "only the code so far");
        let d = app.detail(&w.admin, incident).await;
        let pages = pages_of(&d, "alice");
        assert_eq!(pages.len(), 2);
        assert_eq!(
            (&pages[0]["road"], &pages[0]["via"], &pages[0]["status"]),
            (&json!("ntfy"), &json!("push topic"), &json!("sent"))
        );
        assert_eq!(
            (&pages[1]["road"], &pages[1]["via"], &pages[1]["status"]),
            (&json!("email"), &json!("Work mail"), &json!("pending"))
        );

        // Five minutes on, the email step goes.
        app.clock.advance(5 * 60);
        app.tick().await;
        let mail = smtp().wait_for(&to, 2).await;
        assert!(
            mail.contains("Subject: [CRITICAL] payments: HighErrorRate: Error rate above 5%"),
            "{mail}"
        );
        let link = format!("{}/incidents/{incident}", app.config.public_url);
        let text = part(&mail, "text/plain");
        let html = part(&mail, "text/html");
        assert!(text.contains(&link) && html.contains(&link), "{mail}");
        let ack_prefix = format!("{}/ack/", app.config.public_url);
        let at = text.find(&ack_prefix).expect("an acknowledge link") + ack_prefix.len();
        let token: String = text[at..]
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_')
            .collect();
        assert!(html.contains(&format!("{ack_prefix}{token}")), "{mail}");

        // Following the link (as a mail scanner does) shows a page and acknowledges nothing.
        let page = app
            .client
            .get(format!("{}/ack/{token}", app.url))
            .send()
            .await
            .unwrap();
        assert_eq!(page.status(), 200);
        let body = page.text().await.unwrap();
        assert!(
            body.contains("HighErrorRate") && body.contains("<button"),
            "{body}"
        );
        assert_eq!(app.detail(&w.admin, incident).await["state"], "triggered");
        // Its one button does.
        let done = app
            .client
            .post(format!("{}/ack/{token}", app.url))
            .send()
            .await
            .unwrap();
        assert_eq!(done.status(), 200);
        let d = app.detail(&w.admin, incident).await;
        assert_eq!(d["state"], "acknowledged");
        assert_eq!(d["acknowledged_by"], "alice");
        let again = app
            .client
            .post(format!("{}/ack/{token}", app.url))
            .send()
            .await
            .unwrap();
        assert_eq!(again.status(), 409);
        assert!(again
            .text()
            .await
            .unwrap()
            .contains("already acknowledged by alice"));

        // The all-clear goes by both roads that reached her.
        app.post(
            &format!("/api/incidents/{incident}/resolve"),
            &w.admin,
            json!({}),
        )
        .await
        .expect(200);
        app.tick().await;
        let clear = smtp().wait_for(&to, 3).await;
        assert!(
            clear.contains("Subject: [RESOLVED] payments: HighErrorRate"),
            "{clear}"
        );
        let published = app.ntfy.published();
        assert_eq!(published.len(), 2);
        assert!(published[1].title.starts_with("[RESOLVED]"));
    }
);

both!(an_acknowledgement_cancels_the_steps_still_waiting, |app| {
    let w = app.paging_world().await;
    let backup = ntfy_method(&app, &w.alice, "alice-backup").await;
    set_rules(
        &app,
        &w.alice,
        json!({"high": [{"after_minutes": 0}, {"after_minutes": 10, "method_id": backup}]}),
    )
    .await;
    let incident = app.fire(&w.key, "g1").await;
    app.tick().await;
    let ack = app.ntfy.published()[0].ack_url().unwrap();
    app.press_ack(&ack).await.expect(200);
    let pages = pages_of(&app.detail(&w.admin, incident).await, "alice");
    assert_eq!(pages[1]["via"], "Backup phone");
    assert_eq!(pages[1]["status"], "cancelled");
    assert_eq!(pages[1]["last_error"], "not sent: acknowledged first");
    app.clock.advance(10 * 60);
    app.tick().await;
    assert_eq!(
        app.ntfy.published().len(),
        1,
        "the backup topic was never paged"
    );
});

both!(leaving_the_team_cancels_the_steps_still_waiting, |app| {
    let w = app.paging_world().await;
    let backup = ntfy_method(&app, &w.alice, "alice-backup").await;
    set_rules(
        &app,
        &w.alice,
        json!({"high": [{"after_minutes": 0}, {"after_minutes": 10, "method_id": backup}]}),
    )
    .await;
    let incident = app.fire(&w.key, "g1").await;
    app.tick().await;
    app.delete(
        &format!("/api/teams/{}/members/{}", w.team, w.alice.0),
        &w.admin,
    )
    .await
    .expect(204);
    let pages = pages_of(&app.detail(&w.admin, incident).await, "alice");
    assert_eq!(pages[1]["status"], "cancelled");
    assert_eq!(pages[1]["last_error"], "not sent: left the team");
    app.clock.advance(10 * 60);
    app.tick().await;
    assert_eq!(app.ntfy.published().len(), 1);
});

both_with!(
    a_road_that_fails_for_good_brings_the_next_step_forward,
    mail_config(),
    |app| {
        let w = app.paging_world().await;
        let to = address("alice");
        let email = verified_email(&app, &w.alice, &to).await;
        set_rules(
            &app,
            &w.alice,
            json!({"high": [{"after_minutes": 0}, {"after_minutes": 30, "method_id": email}]}),
        )
        .await;
        app.ntfy.fail_next(1, 403, None);
        let incident = app.fire(&w.key, "g1").await;
        app.tick().await;
        app.tick().await;
        // Not thirty minutes later: now.
        let mail = smtp().wait_for(&to, 2).await;
        assert!(mail.contains("Subject: [CRITICAL]"), "{mail}");
        let d = app.detail(&w.admin, incident).await;
        let failed = timeline_texts(&d, "push_failed");
        assert!(
            failed
                .iter()
                .any(|t| t.starts_with("ntfy failed: ntfy answered 403")
                    && t.ends_with("; email tried next")),
            "{failed:?}"
        );
        let pages = pages_of(&d, "alice");
        assert_eq!(pages[0]["status"], "failed");
        assert!(pages[0]["last_error"]
            .as_str()
            .unwrap()
            .starts_with("ntfy answered 403"));
        assert_eq!(pages[1]["status"], "sent");
        // A failure for good is not retried.
        app.clock.advance(600);
        app.tick().await;
        assert_eq!(app.ntfy.attempts(), 1);
    }
);

both_with!(
    a_road_retried_for_two_minutes_hands_the_page_to_the_next_while_it_keeps_trying,
    mail_config(),
    |app| {
        let w = app.paging_world().await;
        let to = address("alice");
        let email = verified_email(&app, &w.alice, &to).await;
        set_rules(
            &app,
            &w.alice,
            json!({"high": [{"after_minutes": 0}, {"after_minutes": 60, "method_id": email}]}),
        )
        .await;
        app.ntfy.fail_all(503, None);
        let incident = app.fire(&w.key, "g1").await;
        app.tick().await;
        // Retried at its backoff, still under two minutes: the email waits.
        app.clock.advance(60);
        app.tick().await;
        assert_eq!(smtp().messages_to(&to).len(), 1);
        app.clock.advance(61);
        app.tick().await;
        app.tick().await;
        smtp().wait_for(&to, 2).await;
        let d = app.detail(&w.admin, incident).await;
        assert!(timeline_texts(&d, "push_failed")
            .iter()
            .any(|t| t.contains("ntfy answered 503") && t.ends_with("; email tried next")));
        // The ntfy page is still retried, and goes when ntfy is back.
        app.ntfy.heal();
        app.clock.advance(600);
        app.tick().await;
        assert_eq!(app.ntfy.published().len(), 1);
    }
);

both!(
    a_person_no_road_reaches_is_nobody_reachable_and_the_fallback_topic_is_paged,
    |app| {
        let w = app.paging_world().await;
        app.put(
            &format!("/api/teams/{}/escalation", w.team),
            &w.admin,
            json!({"levels": [], "fallback_topic": "payments-fallback"}),
        )
        .await
        .expect(200);
        app.ntfy.fail_next(1, 403, None);
        let incident = app.fire(&w.key, "g1").await;
        app.tick().await;
        app.tick().await;
        let published = app.ntfy.published();
        assert_eq!(published.len(), 1);
        assert_eq!(published[0].topic, "payments-fallback");
        let d = app.detail(&w.admin, incident).await;
        let why = timeline_texts(&d, "nobody_reachable");
        assert_eq!(why.len(), 1, "{why:?}");
        assert!(
            why[0].starts_with(
                "alice could not be reached by any road (ntfy failed: ntfy answered 403"
            ) && why[0].ends_with(": paging the fallback topic payments-fallback"),
            "{why:?}"
        );
    }
);

both!(
    a_low_urgency_page_waits_out_quiet_hours_on_the_persons_clock_and_a_high_one_never_waits,
    |app| {
        let w = app.paging_world().await;
        app.put(
            &format!("/api/teams/{}/escalation", w.team),
            &w.admin,
            json!({"levels": [], "low_urgency": ["warning", "info"]}),
        )
        .await
        .expect(200);
        // 00:00 UTC is 01:00 in Berlin: inside 22:00 to 07:00.
        set_rules(
            &app,
            &w.alice,
            json!({"time_zone": "Europe/Berlin", "quiet_hours": {"start": "22:00", "end": "07:00"}}),
        )
        .await;
        let low = fire_with(&app, &w.key, "g-low", "warning").await;
        app.tick().await;
        assert!(app.ntfy.published().is_empty());
        let d = app.detail(&w.admin, low).await;
        assert_eq!(
            timeline_texts(&d, "held"),
            vec!["low-urgency opening page to alice waits for the end of their quiet hours at 07:00 Europe/Berlin (2026-11-22T06:00:00Z)"]
        );
        let high = fire_with(&app, &w.key, "g-high", "critical").await;
        app.tick().await;
        let published = app.ntfy.published();
        assert_eq!(published.len(), 1);
        assert!(published[0]
            .click
            .as_deref()
            .unwrap()
            .ends_with(&format!("/incidents/{high}")));
        app.post(
            &format!("/api/incidents/{high}/acknowledge"),
            &w.admin,
            json!({}),
        )
        .await
        .expect(200);
        // 07:00 in Berlin.
        app.clock.set(T0 + 6 * 3600);
        app.tick().await;
        let published = app.ntfy.published();
        assert_eq!(published.len(), 2);
        assert!(published[1].title.starts_with("[WARNING]"));
    }
);

both!(
    rules_are_checked_and_name_only_the_persons_own_methods,
    |app| {
        let w = app.paging_world().await;
        let bobs = ntfy_method(&app, &w.bob, "bob-backup").await;
        let alices = ntfy_method(&app, &w.alice, "alice-backup").await;
        let path = format!("/api/users/{}/notification-rules", w.alice.0);
        // The default: no steps, UTC, no quiet hours.
        assert_eq!(
            app.get(&path, &w.alice.1).await.expect(200),
            json!({"high": [], "low": [], "time_zone": null, "quiet_hours": null})
        );
        let step = |after: u32| json!({"after_minutes": after, "method_id": alices});
        for (body, why) in [
            (json!({"high": vec![step(0); 21]}), "at most 20"),
            (json!({"low": [step(1441)]}), "after_minutes"),
            (
                json!({"high": [{"after_minutes": 0, "method_id": bobs}]}),
                "not one of this person's contact methods",
            ),
            (
                json!({"time_zone": "Mars/Olympus_Mons"}),
                "time zone database",
            ),
            (json!({"time_zone": "../etc/passwd"}), "IANA"),
            (
                json!({"quiet_hours": {"start": "07:00", "end": "07:00"}}),
                "differ",
            ),
            (
                json!({"quiet_hours": {"start": "25:00", "end": "07:00"}}),
                "HH:MM",
            ),
        ] {
            let got = app
                .put(&path, &w.alice.1, body)
                .await
                .expect_error(400, "invalid");
            assert!(got.contains(why), "{got} should say {why}");
        }
        assert_eq!(
            app.get(&path, &w.alice.1).await.expect(200)["high"],
            json!([])
        );
        // Someone else's rules are not theirs to see or change; an administrator's are.
        app.get(&path, &w.bob.1)
            .await
            .expect_error(403, "forbidden");
        app.put(&path, &w.bob.1, json!({}))
            .await
            .expect_error(403, "forbidden");
        let saved = app
        .put(
            &path,
            &w.admin,
            json!({"high": [step(5), {"after_minutes": 0}], "low": [step(30)],
                   "time_zone": "America/New_York", "quiet_hours": {"start": "22:30", "end": "06:45"}}),
        )
        .await
        .expect(200);
        assert_eq!(
            saved["high"][1],
            json!({"after_minutes": 0, "method_id": null})
        );
        assert_eq!(saved["low"][0]["after_minutes"], 30);
        assert_eq!(saved["time_zone"], "America/New_York");
        assert_eq!(app.get(&path, &w.alice.1).await.expect(200), saved);
        // Removing a method removes the steps that name it.
        app.delete(
            &format!("/api/users/{}/contact-methods/{alices}", w.alice.0),
            &w.alice.1,
        )
        .await
        .expect(204);
        let now = app.get(&path, &w.alice.1).await.expect(200);
        assert_eq!(
            now["high"],
            json!([{"after_minutes": 0, "method_id": null}])
        );
        assert_eq!(now["low"], json!([]));
    }
);

both!(
    web_push_pages_are_encrypted_signed_acknowledged_and_replaced_by_the_all_clear,
    |app| {
        let w = app.paging_world().await;
        let service = push_service();
        let sub = service.subscribe().await;
        app.post(
            &format!("/api/users/{}/contact-methods", w.alice.0),
            &w.alice.1,
            json!({"name": "Pixel", "kind": "webpush", "subscription": sub.json.clone()}),
        )
        .await
        .expect(201);
        // The key browsers subscribe with is the install's, kept in the database for every replica.
        let key = app.get("/api/webpush/key", &w.alice.1).await.expect(200);
        let again = klaxon_core::roads::webpush::Vapid::load_or_make(&app.core.db, 0)
            .await
            .unwrap();
        assert_eq!(key["public_key"], again.public_key.as_str());

        // Without rules, every road at once: the push topic and the phone.
        let incident = app.fire(&w.key, "g1").await;
        app.tick().await;
        let push = service.wait_for(&sub, 1).await;
        assert_eq!(push["ok"], true, "{push}");
        assert_eq!(push["headers"]["Urgency"], "high");
        assert_eq!(push["headers"]["TTL"], "3600");
        let payload = &push["payload"];
        assert_eq!(
            payload["title"],
            "[CRITICAL] HighErrorRate: Error rate above 5%"
        );
        assert_eq!(payload["tag"], format!("klaxon-incident-{incident}"));
        assert_eq!(
            payload["url"],
            format!("{}/incidents/{incident}", app.config.public_url)
        );
        assert_eq!(app.ntfy.published().len(), 1);
        // Its Acknowledge posts the delivery's own token.
        let ack = payload["ack_url"].as_str().unwrap();
        assert_ne!(Some(ack.to_string()), app.ntfy.published()[0].ack_url());
        app.press_ack(ack).await.expect(200);
        assert_eq!(
            app.detail(&w.admin, incident).await["acknowledged_by"],
            "alice"
        );

        app.post(
            &format!("/api/incidents/{incident}/resolve"),
            &w.admin,
            json!({}),
        )
        .await
        .expect(200);
        app.tick().await;
        let clear = service.wait_for(&sub, 2).await;
        assert_eq!(clear["payload"]["kind"], "all_clear");
        assert_eq!(clear["payload"]["tag"], payload["tag"], "replaces the page");
        assert_eq!(clear["payload"]["ack_url"], Value::Null);
    }
);

both!(
    a_subscription_the_push_service_says_is_gone_is_removed_and_the_next_road_goes,
    |app| {
        let w = app.paging_world().await;
        let service = push_service();
        let sub = service.subscribe().await;
        let path = format!("/api/users/{}/contact-methods", w.alice.0);
        let m = app
            .post(
                &path,
                &w.alice.1,
                json!({"name": "Old phone", "kind": "webpush", "subscription": sub.json.clone()}),
            )
            .await
            .expect(201);
        set_rules(
            &app,
            &w.alice,
            json!({"high": [{"after_minutes": 0, "method_id": m["id"]}, {"after_minutes": 15}]}),
        )
        .await;
        service.answer(&sub, 410, None).await;
        let incident = app.fire(&w.key, "g1").await;
        app.tick().await;
        app.tick().await;
        assert_eq!(app.ntfy.published().len(), 1, "the push topic, now");
        assert_eq!(app.get(&path, &w.alice.1).await.expect(200), json!([]));
        let d = app.detail(&w.admin, incident).await;
        assert!(timeline_texts(&d, "push_failed")
            .iter()
            .any(|t| t.starts_with("Web Push failed:")
                && t.contains("410")
                && t.ends_with("; ntfy tried next")));
    }
);

both!(a_rate_limited_push_service_is_honoured, |app| {
    let w = app.paging_world().await;
    let service = push_service();
    let sub = service.subscribe().await;
    app.post(
        &format!("/api/users/{}/contact-methods", w.alice.0),
        &w.alice.1,
        json!({"name": "Pixel", "kind": "webpush", "subscription": sub.json.clone()}),
    )
    .await
    .expect(201);
    service.answer(&sub, 429, Some(90)).await;
    app.fire(&w.key, "g1").await;
    app.tick().await;
    service.wait_for(&sub, 1).await;
    service.answer(&sub, 201, None).await;
    app.clock.advance(60);
    app.tick().await;
    assert_eq!(
        service.received(&sub).await.len(),
        1,
        "waits for Retry-After"
    );
    app.clock.advance(31);
    app.tick().await;
    service.wait_for(&sub, 2).await;
});

both_with!(
    a_failing_web_push_hands_over_after_two_minutes_however_busy_the_install,
    klaxon_core::Config {
        page_bundle_after: 0,
        ..mail_config()
    },
    |app| {
        let w = app.paging_world().await;
        let to = address("alice");
        let email = verified_email(&app, &w.alice, &to).await;
        let service = push_service();
        let sub = service.subscribe().await;
        let phone = app
            .post(
                &format!("/api/users/{}/contact-methods", w.alice.0),
                &w.alice.1,
                json!({"name": "Pixel", "kind": "webpush", "subscription": sub.json.clone()}),
            )
            .await
            .expect(201)["id"]
            .as_i64()
            .unwrap();
        set_rules(
            &app,
            &w.alice,
            json!({"high": [{"after_minutes": 0, "method_id": phone}, {"after_minutes": 60, "method_id": email}]}),
        )
        .await;
        service.answer(&sub, 503, None).await;
        // Another team, whose pages to bob keep going out while alice's phone fails.
        let ops = app.team(&w.admin, "ops").await;
        app.post(
            &format!("/api/teams/{ops}/members"),
            &w.admin,
            json!({"user_id": w.bob.0}),
        )
        .await
        .expect(201);
        app.post(
            &format!("/api/teams/{ops}/schedule"),
            &w.admin,
            json!({"user_id": w.bob.0, "dates": ["2026-11-22"]}),
        )
        .await
        .expect(201);
        let ops_key = app.integration(&w.admin, ops).await;
        let incident = app.fire(&w.key, "g1").await;
        app.tick().await;
        for i in 0..12 {
            app.clock.advance(5);
            app.fire(&ops_key, &format!("ops-{i}")).await;
            app.tick().await;
        }
        // bob's pages went, and did not spend alice's retries.
        assert!(app.ntfy.published().len() >= 12);
        let tried = service.received(&sub).await.len();
        assert!(
            tried <= 6,
            "alice's phone was tried {tried} times in a minute"
        );
        // Her retries back off (the one at 75 s would wait 80 s more)...
        app.clock.advance(20);
        app.tick().await;
        // ...but two minutes after her page was first due, her next road goes.
        app.clock.advance(41);
        app.tick().await;
        app.tick().await;
        smtp().wait_for(&to, 2).await;
        let d = app.detail(&w.admin, incident).await;
        let failed = timeline_texts(&d, "push_failed");
        assert!(
            failed
                .iter()
                .any(|t| t.starts_with("Web Push failed:") && t.ends_with("; email tried next")),
            "{failed:?}"
        );
    }
);

both_with!(
    a_mail_servers_refusal_reaches_the_timeline_as_its_code_not_its_words,
    mail_config(),
    |app| {
        let w = app.paging_world().await;
        let to = address("bounce-alice");
        let path = format!("/api/users/{}/contact-methods", w.alice.0);
        let m = app
            .post(
                &path,
                &w.alice.1,
                json!({"name": "Work mail", "kind": "email", "address": to}),
            )
            .await
            .expect(201);
        let message = smtp().wait_for(&to, 1).await;
        let at = message.find("verification code is ").unwrap() + 21;
        app.post(
            &format!("{path}/{}/verify", m["id"]),
            &w.alice.1,
            json!({ "code": &message[at..at + 6] }),
        )
        .await
        .expect(200);
        set_rules(
            &app,
            &w.alice,
            json!({"high": [{"after_minutes": 0, "method_id": m["id"]}]}),
        )
        .await;
        let incident = app.fire(&w.key, "g1").await;
        app.tick().await;
        let d = app.detail(&w.admin, incident).await;
        let failed = timeline_texts(&d, "push_failed").join("\n");
        assert!(
            failed.contains("the mail server refused the message (SMTP 550)"),
            "{failed}"
        );
        assert!(
            !failed.contains("Jane") && !failed.contains("4711"),
            "{failed}"
        );
    }
);
