//! Acting from Slack: a Slack account links itself to a person with a code from the profile
//! (`/klaxon link`), the buttons of an announcement act as that person with their rights, the
//! message is replaced by the incident as it is now, a second press says who has it, and
//! requests not signed by the install's Slack app change nothing. Slack's requests are signed
//! by Python's hmac from Slack's documentation (`common::slack`); its answers are received by
//! the recording chat service, which checks their Block Kit shape.

use crate::common::chat::{Chat, Post};
use crate::common::process::until;
use crate::common::slack::{said, SlackUser, SECRET};
use crate::common::{test_config, Auth, TestApp};
use klaxon_core::Clock;
use serde_json::{json, Value};

fn config() -> klaxon_core::Config {
    let mut c = test_config();
    c.roads.slack_signing_secret = Some(SECRET.into());
    c
}

const ALICE: SlackUser = SlackUser {
    id: "U0ALICE",
    name: "alice.s",
};
const BOB: SlackUser = SlackUser {
    id: "U0BOB",
    name: "bob",
};
const DAVE: SlackUser = SlackUser {
    id: "U0DAVE",
    name: "dave",
};
const MALLORY: SlackUser = SlackUser {
    id: "U0MALLORY",
    name: "mallory",
};

const COMMANDS: &str = "/api/chat/slack/commands";
const INTERACTIONS: &str = "/api/chat/slack/interactions";

/// A fresh link code of the Klaxon person `auth`.
async fn code_of(app: &TestApp, auth: &Auth) -> String {
    let made = app.post("/api/me/chat-link-code", auth, json!({})).await;
    made.expect(201)["code"].as_str().unwrap().to_string()
}

/// Links `who` to the Klaxon person `auth` with a fresh code; answers what Slack was told.
async fn link(app: &TestApp, auth: &Auth, who: &SlackUser) -> String {
    let code = code_of(app, auth).await;
    command(app, who, &format!("link {code}")).await
}

/// What Slack shows `who` after they typed `/klaxon {text}`.
async fn command(app: &TestApp, who: &SlackUser, text: &str) -> String {
    let answer = app
        .signed_by_slack(COMMANDS, &who.command(text), SECRET, None)
        .await
        .expect(200);
    assert_eq!(answer["response_type"], "ephemeral");
    said(&answer)
}

/// `who` presses the button `act` of incident `id`; Slack's answers go to `respond`.
async fn press(app: &TestApp, who: &SlackUser, act: &str, id: i64, respond: &str) {
    let body = who.press(&format!("klaxon_{act}"), &id.to_string(), respond);
    app.signed_by_slack(INTERACTIONS, &body, SECRET, None)
        .await
        .expect(200);
}

/// The answers Slack's `response_url` `path` has had, once there are `n`.
async fn answers(chat: &Chat, path: &str, n: usize) -> Vec<Post> {
    until(&format!("{n} answers at {path}"), || async {
        let posts = chat.posts(path);
        (posts.len() >= n).then_some(posts)
    })
    .await
}

/// The labels of a message's buttons.
fn buttons(message: &Value) -> Vec<String> {
    message["blocks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|b| b["type"] == "actions")
        .flat_map(|b| b["elements"].as_array().unwrap().clone())
        .map(|e| e["text"]["text"].as_str().unwrap().to_string())
        .collect()
}

both_with!(
    buttons_act_as_the_linked_person_and_the_message_shows_the_incident_now,
    config(),
    |app| {
        let w = app.paging_world().await;
        let chat = Chat::start().await;
        app.post(
            &format!("/api/teams/{}/channels", w.team),
            &w.admin,
            json!({"name": "pages", "kind": "slack", "target": format!("{}/slack/T0ACME/B0/XXXX", chat.url)}),
        )
        .await
        .expect(201);
        let id = app.fire(&w.key, "db-down").await;
        app.announce().await;
        // The announcement's buttons act in Klaxon: each names its action and the incident.
        let opened = &chat.posts("/slack/T0ACME")[0].body;
        assert_eq!(
            buttons(opened),
            [
                "Acknowledge",
                "Resolve",
                "Snooze 1 h",
                "Take it",
                "Open incident"
            ]
        );
        let ack = &opened["blocks"][1]["elements"][0];
        assert_eq!(
            (ack["action_id"].as_str(), ack["value"].as_str()),
            (Some("klaxon_ack"), Some(id.to_string().as_str()))
        );

        // Someone not linked yet is told how to link, and nothing changes.
        let respond = format!("{}/slack/respond/1", chat.url);
        press(&app, &MALLORY, "ack", id, &respond).await;
        let told = answers(&chat, "/slack/respond/1", 1).await;
        assert_eq!(told[0].body["response_type"], "ephemeral");
        assert!(
            said(&told[0].body).contains("`/klaxon link`"),
            "{}",
            told[0].body
        );
        assert_eq!(app.detail(&w.admin, id).await["state"], "triggered");

        // Alice links her Slack account and presses Acknowledge: it is hers.
        assert_eq!(
            link(&app, &w.alice.1, &ALICE).await,
            "Linked: what you press or type here acts as alice in Klaxon."
        );
        let respond = format!("{}/slack/respond/2", chat.url);
        press(&app, &ALICE, "ack", id, &respond).await;
        let done = answers(&chat, "/slack/respond/2", 2).await;
        let detail = app.detail(&w.admin, id).await;
        assert_eq!(
            (detail["state"].as_str(), detail["acknowledged_by"].as_str()),
            (Some("acknowledged"), Some("alice"))
        );
        // The message now shows who has it and the buttons that still apply.
        let replaced = &done[0].body;
        assert_eq!(replaced["replace_original"], true);
        assert!(
            said(replaced).contains("acknowledged by alice"),
            "{replaced}"
        );
        assert_eq!(
            buttons(replaced),
            ["Resolve", "Snooze 1 h", "Take it", "Open incident"]
        );
        assert_eq!(said(&done[1].body), "Acknowledged: it is yours.");
        assert_eq!(done[1].body["replace_original"], false);

        // Bob presses Acknowledge too: he is told who has it, and nothing changes.
        link(&app, &w.bob.1, &BOB).await;
        let respond = format!("{}/slack/respond/3", chat.url);
        press(&app, &BOB, "ack", id, &respond).await;
        let told = answers(&chat, "/slack/respond/3", 2).await;
        assert_eq!(said(&told[1].body), "Already acknowledged by alice.");
        assert_eq!(app.detail(&w.admin, id).await["acknowledged_by"], "alice");

        // Dave is linked but not in the team: told so privately, nothing changes.
        let (_, dave) = app.user(&w.admin, "dave").await;
        link(&app, &dave, &DAVE).await;
        let respond = format!("{}/slack/respond/4", chat.url);
        press(&app, &DAVE, "resolve", id, &respond).await;
        let told = answers(&chat, "/slack/respond/4", 1).await;
        assert_eq!(
            said(&told[0].body),
            "You are not in this incident's team, dave: nothing changed."
        );
        assert_eq!(
            told.len(),
            1,
            "no message to replace for someone outside the team"
        );

        // Bob takes it, then resolves it: the message ends with no button but Open.
        let respond = format!("{}/slack/respond/5", chat.url);
        press(&app, &BOB, "take", id, &respond).await;
        answers(&chat, "/slack/respond/5", 2).await;
        assert_eq!(app.detail(&w.admin, id).await["assignee"], "bob");
        let respond = format!("{}/slack/respond/6", chat.url);
        press(&app, &BOB, "resolve", id, &respond).await;
        let done = answers(&chat, "/slack/respond/6", 2).await;
        assert_eq!(app.detail(&w.admin, id).await["state"], "resolved");
        assert!(
            said(&done[0].body).contains("resolved by bob"),
            "{}",
            done[0].body
        );
        assert_eq!(buttons(&done[0].body), ["Open incident"]);
        // "Open incident" is a link: pressing it does nothing here.
        press(&app, &BOB, "open", id, &respond).await;
    }
);

both_with!(
    requests_not_signed_by_the_app_change_nothing_and_codes_cannot_be_guessed,
    config(),
    |app| {
        let w = app.paging_world().await;
        let id = app.fire(&w.key, "db-down").await;
        link(&app, &w.alice.1, &ALICE).await;
        let press = ALICE.press("klaxon_ack", &id.to_string(), "http://127.0.0.1:9/x");
        // Another secret, a timestamp six minutes old, no signature: 401, and nothing changes.
        app.signed_by_slack(INTERACTIONS, &press, "not-the-secret", None)
            .await
            .expect_error(401, "unauthorized");
        let old = app.clock.now() - 6 * 60;
        app.signed_by_slack(INTERACTIONS, &press, SECRET, Some(old))
            .await
            .expect_error(401, "unauthorized");
        let unsigned = app
            .client
            .post(format!("{}{INTERACTIONS}", app.url))
            .header("content-type", "application/x-www-form-urlencoded")
            .body(press.clone())
            .send()
            .await
            .unwrap();
        assert_eq!(unsigned.status().as_u16(), 401);
        // A signed body changed on the way fails too.
        let at = app.clock.now();
        let sig = crate::common::slack::sign(SECRET, at, press.as_bytes());
        let tampered = app
            .client
            .post(format!("{}{INTERACTIONS}", app.url))
            .header("x-slack-request-timestamp", at.to_string())
            .header("x-slack-signature", sig)
            .body(press.replace("klaxon_ack", "klaxon_resolve"))
            .send()
            .await
            .unwrap();
        assert_eq!(tampered.status().as_u16(), 401);
        assert_eq!(app.detail(&w.admin, id).await["state"], "triggered");

        // Wrong codes: five are told so, the sixth is refused for a while even when right.
        let code = code_of(&app, &w.bob.1).await;
        let wrong = if code == "000000" { "000001" } else { "000000" };
        for _ in 0..5 {
            let answer = command(&app, &BOB, &format!("link {wrong}")).await;
            assert!(
                answer.starts_with("Not linked: that is not a live code"),
                "{answer}"
            );
        }
        let answer = command(&app, &BOB, &format!("link {code}")).await;
        assert!(answer.contains("too many wrong link codes"), "{answer}");
        // A code lives ten minutes.
        app.clock.advance(16 * 60);
        let code = code_of(&app, &w.bob.1).await;
        app.clock.advance(11 * 60);
        let answer = command(&app, &BOB, &format!("link {code}")).await;
        assert!(answer.starts_with("Not linked"), "{answer}");

        // An account links to one person; unlinking from Slack or from the profile ends it.
        let (_, carol) = (w.carol.0, &w.carol.1);
        let code = code_of(&app, carol).await;
        let answer = command(&app, &ALICE, &format!("link {code}")).await;
        assert_eq!(
            answer,
            "Not linked: this account is linked to alice. Unlink it first (`/klaxon unlink`)."
        );
        let links = app.get("/api/me/chat-links", &w.alice.1).await.expect(200);
        assert_eq!(links[0]["platform"], "slack");
        assert_eq!(links[0]["shown"], "@alice.s in acme");
        let answer = command(&app, &ALICE, "unlink").await;
        assert_eq!(answer, "Unlinked: this account no longer acts in Klaxon.");
        assert_eq!(
            app.get("/api/me/chat-links", &w.alice.1).await.expect(200),
            json!([])
        );
        link(&app, &w.carol.1, &ALICE).await;
        let links = app.get("/api/me/chat-links", &w.carol.1).await.expect(200);
        let path = format!("/api/me/chat-links/{}", links[0]["id"]);
        // Only its person may unlink it from Klaxon.
        app.delete(&path, &w.alice.1)
            .await
            .expect_error(404, "not_found");
        app.delete(&path, &w.carol.1).await.expect(204);
        // Help for anything else.
        let answer = command(&app, &ALICE, "what").await;
        assert!(answer.starts_with("Type `/klaxon link`"), "{answer}");
    }
);

both!(without_a_signing_secret_there_is_no_slack_app, |app| {
    app.signed_by_slack(COMMANDS, &ALICE.command("unlink"), SECRET, None)
        .await
        .expect_error(404, "not_found");
});
