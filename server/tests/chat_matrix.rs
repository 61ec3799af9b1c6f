//! Acting from Matrix, against a real Synapse: people whose Matrix accounts are verified
//! contact methods type `!ack 42`, reply to the bot's announcement or react ✅ to it, and the
//! incident moves as that person did it; the bot answers in the message's thread, and the
//! announcement is edited to show the incident as it is now, whoever moved it and wherever.

use crate::common;
use common::process::until;
use common::synapse::{matrix_config, prove, synapse, Person};
use common::{Auth, TestApp};
use serde_json::{json, Value};
use std::time::Duration;

/// Adds `person` as `who`'s Matrix contact method and enters the code the bot sent them.
async fn verify_matrix(app: &TestApp, who: &(i64, Auth), person: &Person) {
    let s = synapse();
    let path = format!("/api/users/{}/contact-methods", who.0);
    let m = app
        .post(
            &path,
            &who.1,
            json!({"name": "Element", "kind": "matrix", "user": person.id}),
        )
        .await
        .expect(201);
    let rooms = s.accept_invites(person).await;
    let got = s.messages(person, &rooms[0], &s.bot_user).await;
    let body = got[0]["body"].as_str().unwrap();
    let at = body.find("Code: ").expect("the code") + 6;
    app.post(
        &format!("{path}/{}/verify", m["id"]),
        &who.1,
        json!({ "code": &body[at..at + 6] }),
    )
    .await
    .expect(200);
}

/// Reads the bot's rooms until something in them was for Klaxon.
async fn heard(app: &TestApp) {
    until("the bot acts on what was said", || async {
        let n = app.core.matrix_listen(Duration::ZERO).await.unwrap();
        (n > 0).then_some(())
    })
    .await;
}

/// The bot's message in `room` announcing incident `id` first: its event.
async fn announcement(reader: &Person, room: &str, id: i64) -> Value {
    let s = synapse();
    let events = s.events(reader, room).await;
    events
        .into_iter()
        .find(|e| {
            e["sender"] == s.bot_user.as_str()
                && e["content"]["m.relates_to"].is_null()
                && e["content"]["formatted_body"]
                    .as_str()
                    .is_some_and(|b| b.contains(&format!("/incidents/{id}\"")))
        })
        .expect("the announcement")
}

/// The bot's last answer in `room`, and the thread it is in.
async fn last_answer(reader: &Person, room: &str) -> (String, String) {
    let s = synapse();
    let events = s.events(reader, room).await;
    let answer = events
        .iter()
        .rev()
        .find(|e| e["sender"] == s.bot_user.as_str() && e["content"]["msgtype"] == "m.notice")
        .expect("an answer");
    let rel = &answer["content"]["m.relates_to"];
    assert_eq!(rel["rel_type"], "m.thread", "{answer}");
    (
        answer["content"]["body"].as_str().unwrap().to_string(),
        rel["event_id"].as_str().unwrap().to_string(),
    )
}

/// The latest text the bot's edits gave `event_id`.
async fn edited(reader: &Person, room: &str, event_id: &str) -> Option<String> {
    let s = synapse();
    let events = s.events(reader, room).await;
    events
        .iter()
        .rev()
        .find(|e| {
            e["sender"] == s.bot_user.as_str()
                && e["content"]["m.relates_to"]["rel_type"] == "m.replace"
                && e["content"]["m.relates_to"]["event_id"] == event_id
        })
        .map(|e| {
            e["content"]["m.new_content"]["body"]
                .as_str()
                .unwrap()
                .to_string()
        })
}

both_with!(
    commands_replies_and_reactions_act_as_the_person_and_the_announcement_keeps_up,
    matrix_config(),
    |app| {
        let w = app.paging_world().await;
        let s = synapse();
        let (alice, bob) = (s.person("alice").await, s.person("bob").await);
        verify_matrix(&app, &w.alice, &alice).await;
        verify_matrix(&app, &w.bob, &bob).await;
        let room = s.room(&alice, &[&s.bot_user]).await;
        let path = format!("/api/teams/{}/channels", w.team);
        let c = app
            .post(
                &path,
                &w.admin,
                json!({"name": "ops room", "kind": "matrix", "target": room}),
            )
            .await
            .expect(201);
        prove(&app, &w.admin, &path, &c, &alice, &room).await;
        s.bring(&alice, &room, &bob).await;
        let stranger = s.person("stranger").await;
        s.bring(&alice, &room, &stranger).await;
        // Reading starts here: what was said before is not acted on.
        app.core.matrix_listen(Duration::ZERO).await.unwrap();

        let id = app.fire(&w.key, "db-down").await;
        app.announce().await;
        let first = announcement(&alice, &room, id).await;
        let first_id = first["event_id"].as_str().unwrap().to_string();
        assert!(
            first["content"]["body"]
                .as_str()
                .unwrap()
                .contains("Reply ack, resolve, snooze or take"),
            "{first}"
        );

        // Someone Klaxon does not know changes nothing and is told how to be known.
        s.say(&stranger, &room, &format!("!ack {id}")).await;
        heard(&app).await;
        assert_eq!(app.detail(&w.admin, id).await["state"], "triggered");
        let (said, _) = last_answer(&alice, &room).await;
        assert!(said.contains("does not know this Matrix account"), "{said}");

        // Alice's command acknowledges as her; the bot answers in the command's thread, and the
        // announcement now says who has it.
        let command = s
            .send(
                &alice,
                &room,
                "m.room.message",
                json!({"msgtype": "m.text", "body": format!("!ack {id}")}),
            )
            .await;
        heard(&app).await;
        let d = app.detail(&w.admin, id).await;
        assert_eq!(
            (d["state"].as_str(), d["acknowledged_by"].as_str()),
            (Some("acknowledged"), Some("alice"))
        );
        let (said, thread) = last_answer(&alice, &room).await;
        assert_eq!(said, format!("#{id}: Acknowledged: it is yours."));
        assert_eq!(thread, command);
        let now = edited(&alice, &room, &first_id).await.expect("an edit");
        assert!(now.contains("acknowledged by alice"), "{now}");

        // Bob's ✅ on the announcement: already Alice's, and nothing changes.
        s.send(
            &bob,
            &room,
            "m.reaction",
            json!({"m.relates_to": {"rel_type": "m.annotation", "event_id": first_id, "key": "✅"}}),
        )
        .await;
        heard(&app).await;
        let (said, thread) = last_answer(&alice, &room).await;
        assert_eq!(said, format!("#{id}: Already acknowledged by alice."));
        assert_eq!(thread, first_id, "answered under the announcement");

        // Bob's reply to the announcement resolves it, his words its resolution note.
        s.send(
            &bob,
            &room,
            "m.room.message",
            json!({"msgtype": "m.text",
                   "body": format!("> <{}> Critical incident opened\n\nresolve rolled back", s.bot_user),
                   "m.relates_to": {"m.in_reply_to": {"event_id": first_id}}}),
        )
        .await;
        heard(&app).await;
        let d = app.detail(&w.admin, id).await;
        assert_eq!(d["state"], "resolved");
        let notes = d["notes"].as_array().unwrap();
        assert_eq!(
            (notes[0]["text"].as_str(), notes[0]["resolution"].as_bool()),
            (Some("rolled back"), Some(true)),
            "{d}"
        );
        let now = edited(&alice, &room, &first_id).await.unwrap();
        assert!(now.contains("resolved by bob"), "{now}");
        assert!(!now.contains("Reply ack"), "nothing left to answer: {now}");

        // A second incident, a while later (the room has heard five messages this minute, and a
        // sixth would wait for a storm's summary), acknowledged in the app: its announcement is
        // edited when the channel hears of it. Then someone not in the team changes nothing.
        app.clock.advance(2 * 60);
        let second = app.fire(&w.key, "api-down").await;
        app.announce().await;
        let second_first = announcement(&alice, &room, second).await;
        let second_id = second_first["event_id"].as_str().unwrap().to_string();
        app.post(
            &format!("/api/incidents/{second}/acknowledge"),
            &w.bob.1,
            json!({}),
        )
        .await
        .expect(200);
        app.announce().await;
        let now = edited(&alice, &room, &second_id).await.expect("an edit");
        assert!(now.contains("acknowledged by bob"), "{now}");

        let (dave_id, dave_auth) = app.user(&w.admin, "dave").await;
        let dave = s.person("dave").await;
        verify_matrix(&app, &(dave_id, dave_auth), &dave).await;
        s.bring(&alice, &room, &dave).await;
        s.say(&dave, &room, &format!("!resolve {second}")).await;
        heard(&app).await;
        let (said, _) = last_answer(&alice, &room).await;
        assert!(said.contains("not in this incident's team"), "{said}");
        assert_eq!(app.detail(&w.admin, second).await["state"], "acknowledged");

        // Help, and talk that is not for Klaxon goes unanswered.
        s.say(&alice, &room, "we should look at the disk").await;
        s.say(&alice, &room, "!help").await;
        heard(&app).await;
        let (said, _) = last_answer(&alice, &room).await;
        assert!(
            said.starts_with("Klaxon acts on incidents as you"),
            "{said}"
        );
    }
);
