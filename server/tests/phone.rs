//! Phone numbers as roads: a number is added and verified by the code its own road sends (a
//! text or a call), paged by text with reply codes and by call with a keypress menu, and told
//! by the provider when a call or a text did not reach its person. The provider is a stand-in
//! carrier speaking Twilio's REST API and SMS Gateway for Android's (`common::carrier`); every
//! callback it makes is signed by PyPI `twilio`'s RequestValidator or Python's hmac, and the
//! menu's TwiML is compared with what Twilio's own library writes.

use crate::common::carrier::{said, Carrier, FROM};
use crate::common::{test_config, timeline_texts, Backend, TestApp};
use klaxon_core::Clock;
use serde_json::{json, Value};

/// Runs `$body` on SQLite and on PostgreSQL with a carrier, Twilio and (when `$gateway`) the
/// SMS gateway configured, and at most `$limit` texts and calls an hour (100 unless given).
macro_rules! phone_test {
    ($name:ident, $gateway:expr, |$app:ident, $carrier:ident| $body:block) => {
        phone_test!($name, $gateway, 100, |$app, $carrier| $body);
    };
    ($name:ident, $gateway:expr, $limit:expr, |$app:ident, $carrier:ident| $body:block) => {
        mod $name {
            use super::*;
            async fn run(backend: Backend) {
                let $carrier = Carrier::start("http://127.0.0.1:8080");
                let config = klaxon_core::Config {
                    roads: klaxon_core::roads::RoadSettings {
                        phone_hourly_limit: $limit,
                        ..$carrier.roads($gateway)
                    },
                    ..test_config()
                };
                let $app = TestApp::spawn_with(backend, config).await;
                $body
            }
            #[tokio::test]
            async fn sqlite() {
                run(Backend::Sqlite).await
            }
            #[tokio::test]
            #[cfg_attr(
                not(postgres_tests),
                ignore = "needs KLAXON_TEST_DATABASE_URL at build time"
            )]
            async fn postgres() {
                run(Backend::Postgres(crate::common::postgres_schema().await)).await
            }
        }
    };
}

/// The six digits after `lead` in `text`.
fn code_in(text: &str, lead: &str) -> String {
    let at = text.find(lead).expect("the code's words") + lead.len();
    text[at..]
        .chars()
        .filter(char::is_ascii_digit)
        .take(6)
        .collect()
}

/// Adds `kind` with `number` for the user and verifies it with the code `read` finds in what
/// the carrier got; returns the method.
async fn add_number(
    app: &TestApp,
    carrier: &Carrier,
    user: &(i64, crate::common::Auth),
    kind: &str,
    number: &str,
) -> Value {
    let path = format!("/api/users/{}/contact-methods", user.0);
    let m = app
        .post(
            &path,
            &user.1,
            json!({"name": "Phone", "kind": kind, "number": number}),
        )
        .await
        .expect(201);
    assert_eq!(m["verified"], false);
    let e164: String = number
        .chars()
        .filter(|c| *c == '+' || c.is_ascii_digit())
        .collect();
    let (api, field, lead) = match kind {
        "sms" => ("messages", "Body", "Klaxon code: "),
        _ => ("calls", "Twiml", "code is "),
    };
    let sent = carrier.sent(api, &e164).await;
    let code = code_in(sent.last().unwrap()["form"][field].as_str().unwrap(), lead);
    let id = m["id"].as_i64().unwrap();
    app.post(
        &format!("{path}/{id}/verify"),
        &user.1,
        json!({"code": code}),
    )
    .await
    .expect(200)
}

phone_test!(
    a_call_says_what_broke_and_a_keypress_acknowledges_as_the_person_called,
    false,
    |app, carrier| {
        let w = app.paging_world().await;
        let path = format!("/api/users/{}/contact-methods", w.alice.0);
        // Numbers Klaxon may not call are refused before anything is sent.
        for (number, why) in [
            ("+1 900 555 0199", "premium-rate"),
            ("+44 4 1234 5678", "not a number in use"),
        ] {
            let e = app
                .post(
                    &path,
                    &w.alice.1,
                    json!({"name": "P", "kind": "voice", "number": number}),
                )
                .await
                .expect_error(400, "invalid");
            assert!(e.contains(why), "{number}: {e}");
        }
        app.post(
            &path,
            &w.alice.1,
            json!({"name": "P", "kind": "voice", "number": "4155552671"}),
        )
        .await
        .expect_error(400, "invalid");
        let e = app
            .post(
                &path,
                &w.alice.1,
                json!({"name": "P", "kind": "voice", "number": "+14155552671", "provider": "sms-gateway"}),
            )
            .await
            .expect_error(400, "invalid");
        assert!(e.starts_with("provider: "), "{e}");
        assert!(carrier.records().await.is_empty());

        // The code is said by a call, digit by digit; a wrong guess uses up a try.
        let m = app
            .post(
                &path,
                &w.alice.1,
                json!({"name": "Phone", "kind": "voice", "number": "+1 (415) 555-2671"}),
            )
            .await
            .expect(201);
        let id = m["id"].as_i64().unwrap();
        let call = &carrier.sent("calls", "+14155552671").await[0];
        assert_eq!(call["form"]["From"], FROM);
        let code = code_in(call["form"]["Twiml"].as_str().unwrap(), "code is ");
        let wrong = if code == "000000" { "111111" } else { "000000" };
        let e = app
            .post(
                &format!("{path}/{id}/verify"),
                &w.alice.1,
                json!({"code": wrong}),
            )
            .await
            .expect_error(400, "invalid");
        assert!(e.contains("4 tries left"), "{e}");
        let m = app
            .post(
                &format!("{path}/{id}/verify"),
                &w.alice.1,
                json!({"code": code}),
            )
            .await
            .expect(200);
        assert_eq!(m["verified"], true);
        assert_eq!(m["target"], "+1 415-555-2671");
        // An administrator sees the number masked.
        let listed = app.get(&path, &w.admin).await.expect(200);
        assert_eq!(listed[0]["target"], "+1 ••• 71");

        // A page rings with the menu's URL, and says what broke when answered.
        let incident = app.fire(&w.key, "disk").await;
        app.tick().await;
        let calls = carrier.sent("calls", "+14155552671").await;
        assert_eq!(calls.len(), 2);
        let url = calls[1]["form"]["Url"].as_str().unwrap().to_string();
        assert!(
            url.starts_with("http://127.0.0.1:8080/api/phone/twilio/voice/"),
            "{url}"
        );
        assert_eq!(calls[1]["form"]["MachineDetection"], "Enable");
        let status = calls[1]["form"]["StatusCallback"].as_str().unwrap();
        assert!(
            status.contains("/api/phone/twilio/status/page-"),
            "{status}"
        );
        let answered = json!({"CallSid": "CA1", "CallStatus": "in-progress", "From": FROM,
                              "To": "+14155552671", "AnsweredBy": "human"});

        // Unsigned, or signed with another token, is refused and changes nothing.
        let unsigned = carrier
            .twilio(&app.url, &url, answered.clone(), Some(""))
            .await;
        assert_eq!(unsigned.status, 403, "{}", unsigned.body);
        let forged = carrier
            .twilio(
                &app.url,
                &url,
                answered.clone(),
                Some("0/KCTR6DLpKmkAf8muzZqo1nDgQ="),
            )
            .await;
        assert_eq!(forged.status, 403);
        let pressed = json!({"CallSid": "CA1", "Digits": "4", "From": FROM, "To": "+14155552671"});
        let forged_key = carrier
            .twilio(&app.url, &url, pressed.clone(), Some(""))
            .await;
        assert_eq!(forged_key.status, 403);
        assert_eq!(app.detail(&w.alice.1, incident).await["state"], "triggered");

        let menu = carrier.twilio(&app.url, &url, answered.clone(), None).await;
        assert_eq!(menu.status, 200, "{}", menu.body);
        let words = said(&menu.xml);
        assert!(
            words[0].starts_with("Critical alert, for team payments: "),
            "{words:?}"
        );
        assert!(
            words[0].ends_with("This is Klaxon, calling alice."),
            "{words:?}"
        );
        assert_eq!(
            words[1],
            "Press 4 to acknowledge, 6 to resolve, 5 to escalate now, 1 to hear it again."
        );
        let action = menu.xml[3][0][1]["action"].as_str().unwrap().to_string();
        assert_eq!(action, url);
        // The same menu as Twilio's own library writes it.
        assert_eq!(
            menu.xml,
            carrier.menu_reference(&words[0], &words[1], &action).await
        );

        // 1 repeats; another key says it does nothing; a voicemail is hung up on.
        let key =
            |k: &str| json!({"CallSid": "CA1", "Digits": k, "From": FROM, "To": "+14155552671"});
        let again = carrier.twilio(&app.url, &action, key("1"), None).await;
        assert_eq!(said(&again.xml), words);
        let other = carrier.twilio(&app.url, &action, key("9"), None).await;
        assert!(said(&other.xml)[1].starts_with("That key does nothing. Press 4"));
        let machine =
            json!({"CallSid": "CA2", "CallStatus": "in-progress", "AnsweredBy": "machine_start"});
        let hung = carrier.twilio(&app.url, &url, machine, None).await;
        assert_eq!(hung.xml[3][0][0], "Hangup");
        assert_eq!(app.detail(&w.alice.1, incident).await["state"], "triggered");

        // 4 acknowledges as alice; a second 4 says who did.
        let ack = carrier.twilio(&app.url, &action, key("4"), None).await;
        assert_eq!(said(&ack.xml), vec!["Acknowledged. Goodbye."]);
        let detail = app.detail(&w.alice.1, incident).await;
        assert_eq!(detail["state"], "acknowledged");
        assert_eq!(detail["acknowledged_by"], "alice");
        let twice = carrier.twilio(&app.url, &action, key("4"), None).await;
        assert_eq!(
            said(&twice.xml),
            vec!["This incident was already acknowledged by alice. Goodbye."]
        );
    }
);

phone_test!(
    a_text_carries_reply_codes_that_act_only_from_the_number_paged,
    false,
    |app, carrier| {
        let w = app.paging_world().await;
        let m = add_number(&app, &carrier, &w.alice, "sms", "+1 415 555 2672").await;
        assert_eq!(m["verified"], true);
        let sms_url = "http://127.0.0.1:8080/api/phone/twilio/sms";
        let text = |from: &str, body: &str, sid: &str| json!({"From": from, "To": FROM, "Body": body, "MessageSid": sid, "AccountSid": crate::common::carrier::SID});

        let incident = app.fire(&w.key, "disk").await;
        app.tick().await;
        let texts = carrier.sent("messages", "+14155552672").await;
        assert_eq!(texts.len(), 2, "the code, then the page");
        let body = texts[1]["form"]["Body"].as_str().unwrap();
        assert!(
            body.contains("[CRITICAL]") && body.contains("/incidents/"),
            "{body}"
        );
        let code = body
            .rsplit("Reply 4 ")
            .next()
            .unwrap()
            .split(' ')
            .next()
            .unwrap()
            .to_string();
        assert!(
            body.ends_with(&format!(
                "Reply 4 {code} to acknowledge, 6 {code} to resolve"
            )),
            "{body}"
        );

        // The same words from another number act on nothing.
        let stranger = carrier
            .twilio(
                &app.url,
                sms_url,
                text("+14155550000", &format!("6 {code}"), "SM1"),
                None,
            )
            .await;
        assert_eq!(stranger.status, 200);
        assert!(said(&stranger.xml)[0].starts_with(&format!(
            "Klaxon: no page to this number has the code {code}."
        )));
        assert_eq!(app.detail(&w.alice.1, incident).await["state"], "triggered");
        // Unsigned: refused.
        let unsigned = carrier
            .twilio(
                &app.url,
                sms_url,
                text("+14155552672", &format!("6 {code}"), "SM2"),
                Some(""),
            )
            .await;
        assert_eq!(unsigned.status, 403);
        assert_eq!(app.detail(&w.alice.1, incident).await["state"], "triggered");

        // From the number paged, 6 resolves as alice; the same message again does nothing more.
        let reply = text("+14155552672", &format!("6 {}", code.to_uppercase()), "SM3");
        let resolved = carrier.twilio(&app.url, sms_url, reply.clone(), None).await;
        assert_eq!(said(&resolved.xml), vec!["Klaxon: Resolved."]);
        let detail = app.detail(&w.alice.1, incident).await;
        assert_eq!(detail["state"], "resolved");
        assert!(timeline_texts(&detail, "resolved")
            .iter()
            .any(|t| t == "resolved by hand"));
        let replayed = carrier.twilio(&app.url, sms_url, reply, None).await;
        assert_eq!(replayed.status, 200);
        assert!(said(&replayed.xml).is_empty(), "{}", replayed.body);
        let help = carrier
            .twilio(
                &app.url,
                sms_url,
                text("+14155552672", "what?", "SM4"),
                None,
            )
            .await;
        assert!(said(&help.xml)[0].starts_with("Klaxon: reply 4 and a page's code"));

        // STOP: no text goes to the number, and the page says why; START: texts again.
        let stop = carrier
            .twilio(&app.url, sms_url, text("+14155552672", "STOP", "SM5"), None)
            .await;
        assert!(said(&stop.xml)[0].contains("no more texts"));
        app.clock.advance(120);
        let second = app.fire(&w.key, "cpu").await;
        app.tick().await;
        assert_eq!(carrier.sent("messages", "+14155552672").await.len(), 2);
        let failed = timeline_texts(&app.detail(&w.alice.1, second).await, "push_failed");
        assert!(
            failed.iter().any(|t| t.contains("texted STOP")),
            "{failed:?}"
        );
        carrier
            .twilio(
                &app.url,
                sms_url,
                text("+14155552672", "start", "SM6"),
                None,
            )
            .await;
        app.clock.advance(120);
        app.fire(&w.key, "memory").await;
        app.tick().await;
        assert_eq!(carrier.sent("messages", "+14155552672").await.len(), 3);

        // The provider's 429 (Twilio error 20429) holds the page for a retry; it is not failed.
        carrier.refuse("+14155552672", 429, 20429).await;
        app.clock.advance(120);
        let limited = app.fire(&w.key, "swap").await;
        app.tick().await;
        assert_eq!(carrier.sent("messages", "+14155552672").await.len(), 3);
        let detail = app.detail(&w.alice.1, limited).await;
        let page = detail["pages"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["road"] == "sms")
            .unwrap()
            .clone();
        assert_eq!(page["status"], "pending", "{page}");
        let error = page["last_error"].as_str().unwrap();
        assert!(error.contains("answered 429 (error 20429"), "{error}");
    }
);

phone_test!(
    an_unanswered_call_hands_the_page_to_the_next_road_at_once,
    false,
    |app, carrier| {
        let w = app.paging_world().await;
        let voice = add_number(&app, &carrier, &w.alice, "voice", "+1 415 555 2673").await;
        let sms = add_number(&app, &carrier, &w.alice, "sms", "+1 415 555 2674").await;
        app.put(
            &format!("/api/users/{}/notification-rules", w.alice.0),
            &w.alice.1,
            json!({"high": [{"after_minutes": 0, "method_id": voice["id"]},
                            {"after_minutes": 10, "method_id": sms["id"]}], "low": []}),
        )
        .await
        .expect(200);
        let incident = app.fire(&w.key, "disk").await;
        app.tick().await;
        let calls = carrier.sent("calls", "+14155552673").await;
        assert_eq!(calls.len(), 2, "the code, then the page");
        assert_eq!(
            carrier.sent("messages", "+14155552674").await.len(),
            1,
            "the code only"
        );
        let status = calls[1]["form"]["StatusCallback"]
            .as_str()
            .unwrap()
            .to_string();

        // Ringing is not an answer; no answer is, and the text goes now, not in ten minutes.
        let report = |s: &str| json!({"CallSid": "CA9", "CallStatus": s, "From": FROM, "To": "+14155552673"});
        assert_eq!(
            carrier
                .twilio(&app.url, &status, report("ringing"), None)
                .await
                .status,
            204
        );
        assert_eq!(
            carrier
                .twilio(&app.url, &status, report("no-answer"), Some(""))
                .await
                .status,
            403
        );
        app.tick().await;
        assert_eq!(carrier.sent("messages", "+14155552674").await.len(), 1);
        assert_eq!(
            carrier
                .twilio(&app.url, &status, report("no-answer"), None)
                .await
                .status,
            204
        );
        app.tick().await;
        let texts = carrier.sent("messages", "+14155552674").await;
        assert_eq!(texts.len(), 2, "the next road went at once");
        let failed = timeline_texts(&app.detail(&w.alice.1, incident).await, "push_failed");
        assert!(
            failed
                .iter()
                .any(|t| t == "Phone call failed: the call was not answered; SMS tried next"),
            "{failed:?}"
        );
        // A report that comes before the call's own answer is recorded is kept, and acted on
        // once the page is recorded as sent (a busy line answers in milliseconds).
        app.clock.advance(120);
        let early = app.fire(&w.key, "cpu").await;
        let detail = app.detail(&w.alice.1, early).await;
        let pending = detail["pages"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["road"] == "voice")
            .unwrap()["id"]
            .as_i64()
            .unwrap();
        let url = format!("http://127.0.0.1:8080/api/phone/twilio/status/page-{pending}");
        assert_eq!(
            carrier
                .twilio(&app.url, &url, report("busy"), None)
                .await
                .status,
            204
        );
        app.tick().await;
        app.tick().await;
        assert_eq!(carrier.sent("calls", "+14155552673").await.len(), 3);
        assert_eq!(carrier.sent("messages", "+14155552674").await.len(), 3);
        let failed = timeline_texts(&app.detail(&w.alice.1, early).await, "push_failed");
        assert!(
            failed
                .iter()
                .any(|t| t == "Phone call failed: the line was busy; SMS tried next"),
            "{failed:?}"
        );
        // A second report of the same call changes nothing more.
        assert_eq!(
            carrier
                .twilio(&app.url, &status, report("no-answer"), None)
                .await
                .status,
            204
        );
        app.tick().await;
        assert_eq!(carrier.sent("messages", "+14155552674").await.len(), 3);
    }
);

phone_test!(
    a_teams_own_phone_texts_pages_and_its_signed_webhooks_act,
    true,
    |app, carrier| {
        let w = app.paging_world().await;
        let path = format!("/api/users/{}/contact-methods", w.alice.0);
        let m = app
            .post(
                &path,
                &w.alice.1,
                json!({"name": "Own phone", "kind": "sms", "number": "+1 415 555 2675", "provider": "sms-gateway"}),
            )
            .await
            .expect(201);
        let sent = carrier.sent("gateway", "+14155552675").await;
        assert_eq!(sent.len(), 1);
        let code = code_in(
            sent[0]["json"]["textMessage"]["text"].as_str().unwrap(),
            "Klaxon code: ",
        );
        let id = m["id"].as_i64().unwrap();
        app.post(
            &format!("{path}/{id}/verify"),
            &w.alice.1,
            json!({"code": code}),
        )
        .await
        .expect(200);
        assert!(
            carrier.sent("messages", "+14155552675").await.is_empty(),
            "not by Twilio"
        );

        let incident = app.fire(&w.key, "disk").await;
        app.tick().await;
        let sent = carrier.sent("gateway", "+14155552675").await;
        assert_eq!(sent.len(), 2);
        assert_eq!(sent[1]["json"]["priority"], 100);
        let text = sent[1]["json"]["textMessage"]["text"].as_str().unwrap();
        let reply_code = text
            .rsplit("Reply 4 ")
            .next()
            .unwrap()
            .split(' ')
            .next()
            .unwrap();
        let now = app.clock.now();
        let received = |id: &str, from: &str| {
            json!({"deviceId": "d1", "event": "sms:received", "id": id, "webhookId": "w1",
                   "payload": {"messageId": "m", "message": format!("4 {reply_code}"),
                               "phoneNumber": from, "simNumber": 1, "receivedAt": "2026-11-22T10:00:00.000+00:00"}})
        };
        // Signed with another key, or six minutes old: refused, nothing changes.
        assert_eq!(
            carrier
                .gateway(&app.url, received("e1", "+14155552675"), now, Some("other"))
                .await,
            403
        );
        assert_eq!(
            carrier
                .gateway(&app.url, received("e1", "+14155552675"), now - 360, None)
                .await,
            403
        );
        assert_eq!(app.detail(&w.alice.1, incident).await["state"], "triggered");
        assert_eq!(
            carrier
                .gateway(&app.url, received("e1", "+14155552675"), now, None)
                .await,
            204
        );
        let detail = app.detail(&w.alice.1, incident).await;
        assert_eq!(detail["state"], "acknowledged");
        assert_eq!(detail["acknowledged_by"], "alice");
        // The answer went back by the same phone.
        let sent = carrier.sent("gateway", "+14155552675").await;
        assert_eq!(
            sent.last().unwrap()["json"]["textMessage"]["text"],
            "Klaxon: Acknowledged."
        );

        // The phone reports a page's text failed: the page is failed, and says why.
        app.clock.advance(120);
        let second = app.fire(&w.key, "cpu").await;
        app.tick().await;
        let page = carrier
            .sent("gateway", "+14155552675")
            .await
            .last()
            .unwrap()["json"]["id"]
            .as_str()
            .unwrap()
            .to_string();
        let failed = json!({"deviceId": "d1", "event": "sms:failed", "id": "e2", "webhookId": "w2",
                            "payload": {"messageId": page, "phoneNumber": "+14155552675",
                                        "failedAt": "2026-11-22T10:00:00.000+00:00", "reason": "RESULT_ERROR_NO_SERVICE"}});
        assert_eq!(
            carrier
                .gateway(&app.url, failed, app.clock.now(), None)
                .await,
            204
        );
        let texts = timeline_texts(&app.detail(&w.alice.1, second).await, "push_failed");
        assert!(
            texts.iter().any(|t| t.contains("RESULT_ERROR_NO_SERVICE")),
            "{texts:?}"
        );
    }
);

phone_test!(
    a_storm_is_one_text_and_one_call_within_the_installs_ceiling,
    false,
    6,
    |app, carrier| {
        let w = app.paging_world().await;
        add_number(&app, &carrier, &w.alice, "sms", "+1 415 555 2676").await;
        add_number(&app, &carrier, &w.alice, "voice", "+1 415 555 2677").await;
        // Three incidents at once: one text and one call carry them all.
        let storm = [
            app.fire(&w.key, "a").await,
            app.fire(&w.key, "b").await,
            app.fire(&w.key, "c").await,
        ];
        app.tick().await;
        let texts = carrier.sent("messages", "+14155552676").await;
        assert_eq!(texts.len(), 2, "the code, then one summary");
        let body = texts[1]["form"]["Body"].as_str().unwrap();
        assert!(
            body.starts_with("[CRITICAL] 3 incidents in payments\n"),
            "{body}"
        );
        assert!(body.contains(" to acknowledge all, "), "{body}");
        let calls = carrier.sent("calls", "+14155552677").await;
        assert_eq!(calls.len(), 2, "the code, then one call");
        let url = calls[1]["form"]["Url"].as_str().unwrap().to_string();
        let answered =
            json!({"CallSid": "CA5", "CallStatus": "in-progress", "AnsweredBy": "human"});
        let menu = carrier.twilio(&app.url, &url, answered, None).await;
        let words = said(&menu.xml);
        assert_eq!(
            words[0],
            "This is Klaxon, calling alice. You have 3 open incidents for team payments."
        );
        assert!(
            words[1].starts_with("Press 4 to acknowledge all, 6 to resolve all"),
            "{words:?}"
        );
        let ack = carrier
            .twilio(
                &app.url,
                &url,
                json!({"CallSid": "CA5", "Digits": "4"}),
                None,
            )
            .await;
        assert_eq!(said(&ack.xml), vec!["Acknowledged 3 incidents. Goodbye."]);
        for id in storm {
            assert_eq!(app.detail(&w.alice.1, id).await["state"], "acknowledged");
        }

        // Within the minute a number gets nothing more; after it, the waiting page goes.
        let fourth = app.fire(&w.key, "d").await;
        app.tick().await;
        assert_eq!(carrier.sent("messages", "+14155552676").await.len(), 2);
        assert_eq!(carrier.sent("calls", "+14155552677").await.len(), 2);
        app.clock.advance(61);
        app.tick().await;
        assert_eq!(carrier.sent("messages", "+14155552676").await.len(), 3);
        assert_eq!(carrier.sent("calls", "+14155552677").await.len(), 3);
        assert_eq!(app.detail(&w.alice.1, fourth).await["state"], "triggered");

        // Six texts and calls this hour (two codes, two storms of each): the next page fails with
        // the install's ceiling, and nothing is sent.
        app.clock.advance(120);
        let fifth = app.fire(&w.key, "e").await;
        app.tick().await;
        assert_eq!(carrier.records().await.len(), 6);
        let failed = timeline_texts(&app.detail(&w.alice.1, fifth).await, "push_failed");
        assert!(
            failed
                .iter()
                .any(|t| t.contains("ceiling of 6 texts and calls an hour")),
            "{failed:?}"
        );
        // What went, counted for the operator and the bill: three texts and three calls.
        let metrics = app.get("/metrics", &crate::common::Auth::None).await.text;
        for line in [
            "klaxon_phone_sends_total{provider=\"twilio\",kind=\"text\",outcome=\"sent\"} 3",
            "klaxon_phone_sends_total{provider=\"twilio\",kind=\"call\",outcome=\"sent\"} 3",
            "klaxon_phone_units_total{provider=\"twilio\",kind=\"call\"} 3",
        ] {
            assert!(metrics.contains(line), "{line} in:\n{metrics}");
        }
        // The ceiling counts a clock hour: in the next, a page goes again.
        for group in ["a", "b", "c", "d", "e"] {
            app.clear(&w.key, group).await;
        }
        app.tick().await;
        app.clock.advance(3600);
        let sixth = app.fire(&w.key, "f").await;
        app.tick().await;
        let path = format!("/incidents/{sixth}");
        let texts = carrier.sent("messages", "+14155552676").await;
        assert!(
            texts
                .iter()
                .any(|t| t["form"]["Body"].as_str().unwrap().contains(&path)),
            "{texts:?}"
        );
    }
);
