//! Team channels in Matrix rooms, against a real Synapse: the bot joins the room it was invited
//! to and posts HTML with a plain-text body, a second account reads the messages back through
//! the client-server API, and the homeserver's rate limit (`M_LIMIT_EXCEEDED`, `retry_after_ms`)
//! holds the channel without losing a message. A person's own Matrix account is verified by a
//! code the bot sends in a direct room it opens with them, and then paged there.

use crate::common;
use common::process::until;
use common::synapse::{enc, limited_matrix_config, matrix_config, synapse};
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

        // A room's alias works as well as its id.
        let alias = format!("#ops-{}:localhost", &room[1..9].to_lowercase());
        s.call(
            reqwest::Method::PUT,
            &format!("/_matrix/client/v3/directory/room/{}", enc(&alias)),
            &reader.token,
            Some(json!({"room_id": room})),
        )
        .await;
        app.post(
            &path,
            &w.admin,
            json!({"name": "by alias", "kind": "matrix", "target": alias, "events": ["resolved"]}),
        )
        .await
        .expect(201);
        app.post(
            &format!("/api/incidents/{id}/resolve"),
            &w.alice.1,
            json!({}),
        )
        .await
        .expect(200);
        app.announce().await;
        let got = s.messages(&reader, &room, &s.bot_user).await;
        let resolved: Vec<_> = got
            .iter()
            .filter(|m| {
                m["body"]
                    .as_str()
                    .unwrap()
                    .starts_with("Critical incident resolved by alice")
            })
            .collect();
        assert_eq!(resolved.len(), 2, "once for each channel: {got:?}");
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
        app.post(
            &path,
            &w.admin,
            json!({"name": "ops room", "kind": "matrix", "target": room, "events": ["opened"]}),
        )
        .await
        .expect(201);
        let mut ids = Vec::new();
        for n in 0..6 {
            ids.push(app.fire(&w.key, &format!("node-{n}")).await);
        }
        // Four alone and a summary of two are due; the homeserver takes a burst of three events (the
        // bot's join among them) and refuses the next.
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
            assert!(b.ends_with(&format!("/incidents/{id}")), "in order: {b}");
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
