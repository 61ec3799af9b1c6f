//! Team channels in Matrix rooms, against a real Synapse: the bot joins the room it was invited
//! to and posts HTML with a plain-text body, a second account reads the messages back through
//! the client-server API, and the homeserver's rate limit (`M_LIMIT_EXCEEDED`, `retry_after_ms`)
//! holds the channel without losing a message. A room is a team's only once a moderator of it
//! has posted the channel's code there, and one team's at most. A person's own Matrix account is verified by a
//! code the bot sends in a direct room it opens with them, and then paged there.

use crate::common;
use common::process::until;
use common::synapse::{enc, limited_matrix_config, matrix_config, prove, synapse};
use serde_json::json;

both_with!(
    a_matrix_room_hears_the_team_in_html_and_plain_text,
    matrix_config(),
    |app| {
        let w = app.paging_world().await;
        let s = synapse();
        let reader = s.person("reader").await;
        let room = s.room(&reader, &[&s.bot_user]).await;
        let path = format!("/api/teams/{}/channels", w.team);
        let c = app
            .post(
                &path,
                &w.admin,
                json!({"name": "ops room", "kind": "matrix", "target": room}),
            )
            .await
            .expect(201);
        assert_eq!(
            c["target"],
            room.as_str(),
            "a room is not a secret: it is shown"
        );
        let c = prove(&app, &w.admin, &path, &c, &reader, &room).await;
        assert_eq!(c["state"], "new", "{c}");
        assert!(c["proof_code"].is_null(), "the code is spent: {c}");
        app.post(&format!("{path}/{}/test", c["id"]), &w.admin, json!({}))
            .await
            .expect(204);
        let id = app.fire(&w.key, "db-down").await;
        let title = app.detail(&w.admin, id).await["title"]
            .as_str()
            .unwrap()
            .to_string();
        app.announce().await;
        app.post(
            &format!("/api/incidents/{id}/acknowledge"),
            &w.alice.1,
            json!({}),
        )
        .await
        .expect(200);
        app.announce().await;

        let got = s.messages(&reader, &room, &s.bot_user).await;
        assert_eq!(got.len(), 3, "{got:?}");
        assert!(got[0]["body"]
            .as_str()
            .unwrap()
            .starts_with("Test from Klaxon: team payments"));
        let public = &app.config.public_url;
        let opened = &got[1];
        assert_eq!(opened["msgtype"], "m.text");
        assert_eq!(opened["format"], "org.matrix.custom.html");
        let body = opened["body"].as_str().unwrap();
        assert!(
        body.starts_with(&format!("Critical incident opened: {title}\nTeam payments · with alice, not acknowledged yet")),
        "{body}"
    );
        assert!(
            body.contains(&format!("Acknowledge: {public}/incidents/{id}#acknowledge")),
            "{body}"
        );
        let html = opened["formatted_body"].as_str().unwrap();
        assert!(
            html.contains(&format!(
                "<strong>Critical incident opened: {title}</strong>"
            )),
            "{html}"
        );
        assert!(
            html.contains(&format!(
                "<a href=\"{public}/incidents/{id}#acknowledge\">Acknowledge</a>"
            )),
            "{html}"
        );
        assert!(
            html.contains(&format!(
                "<a href=\"{public}/incidents/{id}\">Open incident</a>"
            )),
            "{html}"
        );
        assert!(got[2]["body"]
            .as_str()
            .unwrap()
            .starts_with(&format!("Critical incident acknowledged by alice: {title}")));

        // A room's alias works as well as its id: the room it names is proven, and posted to.
        let second = s.room(&reader, &[&s.bot_user]).await;
        let alias = format!("#ops-{}:localhost", &second[1..9].to_lowercase());
        s.call(
            reqwest::Method::PUT,
            &format!("/_matrix/client/v3/directory/room/{}", enc(&alias)),
            &reader.token,
            Some(json!({"room_id": second})),
        )
        .await;
        let by_alias = app
            .post(
                &path,
                &w.admin,
                json!({"name": "by alias", "kind": "matrix", "target": alias, "events": ["resolved"]}),
            )
            .await
            .expect(201);
        prove(&app, &w.admin, &path, &by_alias, &reader, &second).await;
        app.post(
            &format!("/api/incidents/{id}/resolve"),
            &w.alice.1,
            json!({}),
        )
        .await
        .expect(200);
        app.announce().await;
        for r in [&room, &second] {
            let got = s.messages(&reader, r, &s.bot_user).await;
            let resolved: Vec<_> = got
                .iter()
                .filter(|m| {
                    m["body"]
                        .as_str()
                        .unwrap()
                        .starts_with("Critical incident resolved by alice")
                })
                .collect();
            assert_eq!(resolved.len(), 1, "once in each room: {got:?}");
        }
        let listed = app.get(&path, &w.admin).await.expect(200);
        assert!(
            listed
                .as_array()
                .unwrap()
                .iter()
                .all(|c| c["state"] == "ok"),
            "{listed}"
        );
    }
);

both_with!(
    the_homeservers_rate_limit_holds_the_channel_and_loses_nothing,
    limited_matrix_config(),
    |app| {
        let w = app.paging_world().await;
        let s = synapse();
        let bot = s.bot_of(&app.config);
        let reader = s.person("reader").await;
        let room = s.room(&reader, &[&bot]).await;
        let path = format!("/api/teams/{}/channels", w.team);
        let c = app
            .post(
                &path,
                &w.admin,
                json!({"name": "ops room", "kind": "matrix", "target": room, "events": ["opened"]}),
            )
            .await
            .expect(201);
        prove(&app, &w.admin, &path, &c, &reader, &room).await;
        let mut ids = Vec::new();
        for n in 0..6 {
            ids.push(app.fire(&w.key, &format!("node-{n}")).await);
        }
        // Four alone and a summary of two are due; the homeserver takes a burst of three events (the
        // bot's join, as it proved the room, among them) and refuses the next.
        let first = app.announce().await;
        assert!(first.sent >= 1 && first.failed == 1, "{first:?}");
        let c = &app.get(&path, &w.admin).await.expect(200)[0];
        assert_eq!(c["state"], "failing");
        let error = c["last_error"].as_str().unwrap();
        assert!(
            error.ends_with("answered 429 Too Many Requests (M_LIMIT_EXCEEDED)"),
            "{error}"
        );
        assert!(!error.contains("syt_"), "never the token");
        // Nothing is tried again before the wait the homeserver asked for.
        let again = app.announce().await;
        assert!(again.is_idle(), "{again:?}");
        // Then the rest arrives, in order, as the homeserver's own limiter lets it through.
        until("the rest of the messages posted", || async {
            app.clock.advance(2);
            app.announce().await;
            let waiting = app.get(&path, &w.admin).await.expect(200)[0]["waiting"]
                .as_i64()
                .unwrap();
            (waiting == 0).then_some(())
        })
        .await;
        let got = s.messages(&reader, &room, &bot).await;
        let bodies: Vec<&str> = got.iter().map(|m| m["body"].as_str().unwrap()).collect();
        assert_eq!(bodies.len(), 5, "{bodies:?}");
        for (b, id) in bodies[..4].iter().zip(&ids) {
            assert!(b.starts_with("Critical incident opened: "), "{b}");
            assert!(b.contains(&format!("/incidents/{id}\n")), "in order: {b}");
        }
        assert!(
            bodies[4].starts_with("2 incident events for team payments"),
            "{}",
            bodies[4]
        );
        assert_eq!(app.get(&path, &w.admin).await.expect(200)[0]["state"], "ok");
    }
);

both_with!(
    a_person_is_paged_in_the_direct_room_the_bot_opened_with_them,
    matrix_config(),
    |app| {
        let w = app.paging_world().await;
        let s = synapse();
        let phone = s.person("alice").await;
        let path = format!("/api/users/{}/contact-methods", w.alice.0);
        let m = app
            .post(
                &path,
                &w.alice.1,
                json!({"name": "Element", "kind": "matrix", "user": phone.id}),
            )
            .await
            .expect(201);
        assert_eq!(m["target"], phone.id.as_str());
        assert_eq!(m["verified"], false);
        let id = m["id"].as_i64().unwrap();

        // The bot invited her to a direct room and sent the code there.
        let rooms = s.accept_invites(&phone).await;
        assert_eq!(rooms.len(), 1, "{rooms:?}");
        let room = &rooms[0];
        let got = s.messages(&phone, room, &s.bot_user).await;
        assert_eq!(got.len(), 1, "{got:?}");
        let body = got[0]["body"].as_str().unwrap();
        let at = body.find("Code: ").expect("the code") + 6;
        let code = &body[at..at + 6];
        assert!(got[0]["formatted_body"]
            .as_str()
            .unwrap()
            .contains(&format!("<code>{code}</code>")));
        app.post(
            &format!("{path}/{id}/verify"),
            &w.alice.1,
            json!({ "code": code }),
        )
        .await
        .expect(200);

        // Her rules page her there first, her push topic five minutes later.
        app.put(
            &format!("/api/users/{}/notification-rules", w.alice.0),
            &w.alice.1,
            json!({"high": [{"after_minutes": 0, "method_id": id}, {"after_minutes": 5}]}),
        )
        .await
        .expect(200);
        let incident = app.fire(&w.key, "db-down").await;
        app.tick().await;
        assert!(app.ntfy.published().is_empty());
        let got = s.messages(&phone, room, &s.bot_user).await;
        assert_eq!(got.len(), 2, "{got:?}");
        let page = &got[1];
        assert_eq!(page["msgtype"], "m.text");
        assert_eq!(page["format"], "org.matrix.custom.html");
        let public = &app.config.public_url;
        let body = page["body"].as_str().unwrap();
        assert!(body.starts_with("[CRITICAL]"), "{body}");
        assert!(
            body.contains(&format!("Open: {public}/incidents/{incident}")),
            "{body}"
        );
        let ack = format!("{public}/ack/");
        let at = body.find(&ack).expect("an acknowledge link") + ack.len();
        let token: String = body[at..]
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_')
            .collect();
        let html = page["formatted_body"].as_str().unwrap();
        assert!(
            html.contains(&format!("<a href=\"{ack}{token}\">Acknowledge</a>")),
            "{html}"
        );

        // The link shows a confirmation; its button acknowledges, and the next step is not sent.
        let shown = app
            .client
            .get(format!("{}/ack/{token}", app.url))
            .send()
            .await
            .unwrap();
        assert_eq!(shown.status(), 200);
        assert_eq!(app.detail(&w.admin, incident).await["state"], "triggered");
        let done = app
            .client
            .post(format!("{}/ack/{token}", app.url))
            .send()
            .await
            .unwrap();
        assert_eq!(done.status(), 200);
        app.clock.advance(5 * 60);
        app.tick().await;
        assert!(app.ntfy.published().is_empty(), "acknowledged: no push");
        let d = app.detail(&w.admin, incident).await;
        assert_eq!(d["acknowledged_by"], "alice");
        let via: Vec<_> = d["pages"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|p| p["recipient"] == "alice" && p["status"] == "sent")
            .map(|p| p["road"].clone())
            .collect();
        assert_eq!(via, vec![json!("matrix")]);

        // She leaves the room; the next page invites her back to it rather than post where
        // nobody reads, and she finds it there.
        s.call(
            reqwest::Method::POST,
            &format!("/_matrix/client/v3/rooms/{}/leave", enc(room)),
            &phone.token,
            Some(json!({})),
        )
        .await;
        let next = app.fire(&w.key, "cache-down").await;
        app.tick().await;
        assert_eq!(s.accept_invites(&phone).await, vec![room.clone()]);
        let got = s.messages(&phone, room, &s.bot_user).await;
        let last = got.last().unwrap()["body"].as_str().unwrap();
        assert!(
            last.contains(&format!("Open: {public}/incidents/{next}")),
            "{last}"
        );
    }
);

both_with!(
    a_room_hears_a_team_only_once_a_moderator_of_it_proves_it,
    matrix_config(),
    |app| {
        let w = app.paging_world().await;
        let s = synapse();
        // The room's creator (power 100) and a plain member (power 0); the bot is invited.
        let owner = s.person("room-owner").await;
        let member = s.person("room-member").await;
        let room = s.room(&owner, &[&s.bot_user]).await;
        s.bring(&owner, &room, &member).await;
        let path = format!("/api/teams/{}/channels", w.team);
        let c = app
            .post(
                &path,
                &w.admin,
                json!({"name": "ops room", "kind": "matrix", "target": room}),
            )
            .await
            .expect(201);
        assert_eq!(c["state"], "unproven");
        let code = c["proof_code"].as_str().unwrap().to_string();
        let check = format!("{path}/{}/verify", c["id"]);
        // Unproven, it hears nothing and cannot be tested.
        let e = app
            .post(&format!("{path}/{}/test", c["id"]), &w.admin, json!({}))
            .await
            .expect_error(409, "conflict");
        assert!(e.contains("not proven"), "{e}");
        app.fire(&w.key, "before-proof").await;
        assert_eq!(app.announce().await.sent, 0);
        // No code in the room, then the code from someone without power: not proven.
        let e = app
            .post(&check, &w.admin, json!({}))
            .await
            .expect_error(409, "conflict");
        assert!(e.contains(&code) && e.contains("moderator"), "{e}");
        s.say(&member, &room, &code).await;
        app.post(&check, &w.admin, json!({}))
            .await
            .expect_error(409, "conflict");
        // A team member who is not an owner cannot have it checked.
        app.post(&check, &w.alice.1, json!({}))
            .await
            .expect_error(403, "forbidden");
        s.say(&owner, &room, &format!("ok: {code}")).await;
        let proven = app.post(&check, &w.admin, json!({})).await.expect(200);
        assert_eq!(proven["state"], "new");
        // Checking again changes nothing.
        assert_eq!(
            app.post(&check, &w.admin, json!({})).await.expect(200),
            proven
        );
        let id = app.fire(&w.key, "after-proof").await;
        app.announce().await;
        let got = s.messages(&owner, &room, &s.bot_user).await;
        assert_eq!(
            got.len(),
            1,
            "only what happened once it was proven: {got:?}"
        );
        assert!(got[0]["body"]
            .as_str()
            .unwrap()
            .contains(&format!("/incidents/{id}\n")));

        // Another team names the same room: the bot is in it, but nobody there proves it for
        // them, so that team's incidents never reach it.
        let other = app.team(&w.admin, "intruders").await;
        let other_path = format!("/api/teams/{other}/channels");
        let theirs = app
            .post(
                &other_path,
                &w.admin,
                json!({"name": "their room", "kind": "matrix", "target": room}),
            )
            .await
            .expect(201);
        let their_check = format!("{other_path}/{}/verify", theirs["id"]);
        app.post(&their_check, &w.admin, json!({}))
            .await
            .expect_error(409, "conflict");
        // Even a moderator of the room cannot give it to a second channel.
        s.say(&owner, &room, theirs["proof_code"].as_str().unwrap())
            .await;
        let e = app
            .post(&their_check, &w.admin, json!({}))
            .await
            .expect_error(409, "conflict");
        assert!(e.contains("already another channel"), "{e}");
        assert_eq!(
            app.get(&other_path, &w.admin).await.expect(200)[0]["state"],
            "unproven"
        );

        // A room the bot is not invited to cannot be joined: the answer says what to do.
        let closed = s.room(&owner, &[]).await;
        let elsewhere = app
            .post(
                &path,
                &w.admin,
                json!({"name": "closed", "kind": "matrix", "target": closed}),
            )
            .await
            .expect(201);
        let e = app
            .post(
                &format!("{path}/{}/verify", elsewhere["id"]),
                &w.admin,
                json!({}),
            )
            .await
            .expect_error(409, "conflict");
        assert!(e.contains("invite it"), "{e}");
        // Pointing a proven channel at another room makes it unproven, with a new code.
        let moved = app
            .send(
                reqwest::Method::PATCH,
                &format!("{path}/{}", c["id"]),
                &w.admin,
                Some(json!({"target": closed})),
            )
            .await
            .expect(200);
        assert_eq!(moved["state"], "unproven");
        assert_ne!(moved["proof_code"], json!(code));
        // Not a Matrix channel: nothing to prove.
        let hook = app
            .post(
                &path,
                &w.admin,
                json!({"name": "hook", "kind": "webhook", "target": "https://hooks.example.org/x"}),
            )
            .await
            .expect(201);
        app.post(
            &format!("{path}/{}/verify", hook["id"]),
            &w.admin,
            json!({}),
        )
        .await
        .expect_error(400, "invalid");
    }
);
