//! Acting from Mattermost: an announcement's buttons carry a context Klaxon signed with the slash
//! command's token; a press, posted as the Mattermost server posts it (the context taken from
//! the message the recording service received), acts as the Mattermost account's linked person
//! and is answered with the message as it is now. A context changed or signed with another key,
//! and a command without the token, change nothing.

use crate::common::chat::{Chat, Post};
use crate::common::slack::form;
use crate::common::{test_config, Auth, TestApp};
use serde_json::{json, Value};

const TOKEN: &str = "mm-slash-command-token-4xq9";

fn config() -> klaxon_core::Config {
    let mut c = test_config();
    c.roads.mattermost_token = Some(TOKEN.into());
    c
}

/// What Mattermost shows the user after they typed `/klaxon {text}` (the token in the form).
async fn command(app: &TestApp, user: &str, text: &str, token: &str) -> (u16, Value) {
    let body = form(&[
        ("token", token),
        ("team_id", "t0acme"),
        ("team_domain", "acme"),
        ("channel_id", "c0pages"),
        ("user_id", user),
        ("user_name", user),
        ("command", "/klaxon"),
        ("text", text),
    ]);
    let res = app
        .client
        .post(format!("{}/api/chat/mattermost/commands", app.url))
        .header("content-type", "application/x-www-form-urlencoded")
        .body(body)
        .send()
        .await
        .unwrap();
    let status = res.status().as_u16();
    (status, res.json().await.unwrap_or(Value::Null))
}

/// Links the Mattermost user `user` to the Klaxon person `auth`.
async fn link(app: &TestApp, auth: &Auth, user: &str) -> String {
    let made = app.post("/api/me/chat-link-code", auth, json!({})).await;
    let code = made.expect(201)["code"].as_str().unwrap().to_string();
    let (status, said) = command(app, user, &format!("link {code}"), TOKEN).await;
    assert_eq!(status, 200, "{said}");
    assert_eq!(said["response_type"], "ephemeral");
    said["text"].as_str().unwrap().to_string()
}

/// The buttons of a message: (id, name, integration).
fn buttons(message: &Value) -> Vec<(String, String, Value)> {
    message["attachments"][0]["actions"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|a| {
            (
                a["id"].as_str().unwrap().to_string(),
                a["name"].as_str().unwrap().to_string(),
                a["integration"].clone(),
            )
        })
        .collect()
}

/// `user` presses the button `id` of `message`, as the Mattermost server posts it: the answer.
async fn press_with(app: &TestApp, integration: &Value, user: &str) -> (u16, Value) {
    let url = integration["url"].as_str().unwrap();
    let path = &url[url.find("/api/").unwrap()..];
    let res = app
        .client
        .post(format!("{}{path}", app.url))
        .json(&json!({
            "user_id": user, "user_name": user, "channel_id": "c0pages", "channel_name": "pages",
            "team_id": "t0acme", "team_domain": "acme", "post_id": "p0announcement",
            "trigger_id": "trigger", "type": "", "data_source": "",
            "context": integration["context"],
        }))
        .send()
        .await
        .unwrap();
    let status = res.status().as_u16();
    (status, res.json().await.unwrap_or(Value::Null))
}

async fn press(app: &TestApp, message: &Value, id: &str, user: &str) -> (u16, Value) {
    let (_, _, integration) = buttons(message)
        .into_iter()
        .find(|(b, _, _)| b == id)
        .unwrap_or_else(|| panic!("a button {id} in {message}"));
    press_with(app, &integration, user).await
}

both_with!(
    buttons_act_as_the_linked_person_and_the_post_is_replaced_by_the_incident_now,
    config(),
    |app| {
        let w = app.paging_world().await;
        let chat = Chat::start().await;
        app.post(
            &format!("/api/teams/{}/channels", w.team),
            &w.admin,
            json!({"name": "pages", "kind": "mattermost", "target": format!("{}/mattermost/hooks/xyz", chat.url)}),
        )
        .await
        .expect(201);
        let id = app.fire(&w.key, "db-down").await;
        app.announce().await;
        let posts: Vec<Post> = chat.posts("/mattermost/hooks/xyz");
        let opened = posts[0].body.clone();
        let names: Vec<String> = buttons(&opened).into_iter().map(|b| b.1).collect();
        assert_eq!(names, ["Acknowledge", "Resolve", "Snooze 1 h", "Take it"]);
        assert!(opened["attachments"][0]["title_link"]
            .as_str()
            .unwrap()
            .ends_with(&format!("/incidents/{id}")));

        // Nobody is linked yet: a press says how to link, and changes nothing.
        let (status, answer) = press(&app, &opened, "ack", "u0alice").await;
        assert_eq!(status, 200);
        assert!(
            answer["ephemeral_text"]
                .as_str()
                .unwrap()
                .contains("not linked"),
            "{answer}"
        );
        assert!(answer["update"].is_null(), "{answer}");
        assert_eq!(app.detail(&w.admin, id).await["state"], "triggered");

        // A command without the command's token is refused; with it, Alice links her account.
        let (status, _) = command(&app, "u0alice", "link 123456", "not-the-token").await;
        assert_eq!(status, 401);
        let said = link(&app, &w.alice.1, "u0alice").await;
        assert!(said.contains("acts as alice"), "{said}");

        // Her press acknowledges as her; the post becomes the incident as it is now.
        let (status, answer) = press(&app, &opened, "ack", "u0alice").await;
        assert_eq!(status, 200, "{answer}");
        assert_eq!(answer["ephemeral_text"], "Acknowledged: it is yours.");
        let d = app.detail(&w.admin, id).await;
        assert_eq!(d["acknowledged_by"], "alice");
        let now = &answer["update"]["props"];
        let names: Vec<String> = buttons(now).into_iter().map(|b| b.1).collect();
        assert_eq!(names, ["Resolve", "Snooze 1 h", "Take it"]);
        assert!(now["attachments"][0]["title"]
            .as_str()
            .unwrap()
            .contains("acknowledged by alice"));

        // Bob's press on the old message: already hers, nothing changes.
        link(&app, &w.bob.1, "u0bob").await;
        let (_, answer) = press(&app, &opened, "ack", "u0bob").await;
        assert_eq!(answer["ephemeral_text"], "Already acknowledged by alice.");

        // A context changed to another incident, or to another action, fails its signature.
        let (_, _, ack) = buttons(&opened).remove(0);
        let mut other = ack.clone();
        other["context"]["incident"] = json!(id + 1);
        assert_eq!(press_with(&app, &other, "u0alice").await.0, 401);
        let mut resolve = ack.clone();
        resolve["context"]["action"] = json!("resolve");
        assert_eq!(press_with(&app, &resolve, "u0alice").await.0, 401);
        let mut unsigned = ack.clone();
        unsigned["context"].as_object_mut().unwrap().remove("sig");
        assert_eq!(press_with(&app, &unsigned, "u0alice").await.0, 400);

        // Someone outside the team is told so, and nothing changes.
        let (_, dave) = app.user(&w.admin, "dave").await;
        link(&app, &dave, "u0dave").await;
        let (_, answer) = press(&app, &opened, "resolve", "u0dave").await;
        assert!(
            answer["ephemeral_text"]
                .as_str()
                .unwrap()
                .contains("not in this incident's team"),
            "{answer}"
        );
        assert!(answer["update"].is_null());
        assert_eq!(app.detail(&w.admin, id).await["state"], "acknowledged");

        // Alice resolves it: the post keeps no button.
        let (_, answer) = press(&app, &opened, "resolve", "u0alice").await;
        assert_eq!(answer["ephemeral_text"], "Resolved.");
        assert!(buttons(&answer["update"]["props"]).is_empty(), "{answer}");
        assert_eq!(app.detail(&w.admin, id).await["state"], "resolved");

        // Unlinking from Mattermost: her presses act as nobody again.
        let (_, said) = command(&app, "u0alice", "unlink", TOKEN).await;
        assert!(said["text"].as_str().unwrap().starts_with("Unlinked"));
    }
);

both_with!(
    without_the_token_messages_link_to_the_app_and_presses_are_not_taken,
    test_config(),
    |app| {
        let w = app.paging_world().await;
        let chat = Chat::start().await;
        app.post(
            &format!("/api/teams/{}/channels", w.team),
            &w.admin,
            json!({"name": "pages", "kind": "mattermost", "target": format!("{}/mattermost/hooks/xyz", chat.url)}),
        )
        .await
        .expect(201);
        let id = app.fire(&w.key, "db-down").await;
        app.announce().await;
        let opened = &chat.posts("/mattermost/hooks/xyz")[0].body;
        assert!(buttons(opened).is_empty(), "{opened}");
        let text = opened["attachments"][0]["text"].as_str().unwrap();
        assert!(
            text.contains(&format!(
                "[Acknowledge]({}/incidents/{id}#acknowledge)",
                app.config.public_url
            )),
            "{text}"
        );
        let signed = json!({"url": format!("{}/api/chat/mattermost/actions", app.url),
                            "context": {"action": "ack", "incident": id, "sig": "00"}});
        assert_eq!(press_with(&app, &signed, "u0alice").await.0, 404);
        assert_eq!(command(&app, "u0alice", "help", TOKEN).await.0, 404);
    }
);
