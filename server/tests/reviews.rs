//! Post-incident reviews: a resolved incident's record with its figures, similar incidents and
//! follow-up items, as JSON and Markdown; the items listed on the team until they are done; and
//! bad input refused with nothing stored.

use crate::common;
use common::*;
use serde_json::{json, Value};

both!(
    a_resolved_incident_has_a_review_with_follow_up_items,
    |app| {
        let w = app.paging_world().await;
        // An earlier incident of the same alert, fixed the same way.
        let earlier = app.fire(&w.key, "disk").await;
        app.post(
            &format!("/api/incidents/{earlier}/resolve"),
            &w.bob.1,
            json!({"resolution": "grew the volume by 20 GB"}),
        )
        .await
        .expect(200);

        app.clock.advance(3600);
        let payload = Payload::new("disk").alert(
            "disk",
            "firing",
            3600,
            None,
            json!({"severity": "critical"}),
        );
        app.webhook(&w.key, &payload).await.expect(200);
        let id = app.incident_of("disk").await;
        assert_ne!(id, earlier);
        app.tick().await;
        let review = format!("/api/incidents/{id}/review");
        // Not while it is open.
        app.get(&review, &w.alice.1)
            .await
            .expect_error(409, "conflict");
        app.clock.advance(90);
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
            json!({"text": "db-1 at 97%"}),
        )
        .await
        .expect(201);
        app.clock.advance(200);
        app.post(
            &format!("/api/incidents/{id}/resolve"),
            &w.alice.1,
            json!({"resolution": "rotated the logs | freed 30 GB"}),
        )
        .await
        .expect(200);

        let r = app.get(&review, &w.carol.1).await.expect(200);
        assert_eq!(r["team_name"], "payments");
        assert_eq!(r["seconds_to_acknowledge"], 90);
        assert_eq!(r["seconds_to_resolve"], 290);
        let pages = r["detail"]["pages"].as_array().unwrap();
        assert!(
            pages
                .iter()
                .any(|p| p["recipient"] == "alice" && p["road"] == "ntfy" && p["status"] == "sent"),
            "{pages:?}"
        );
        assert_eq!(r["similar"][0]["id"], earlier);
        assert_eq!(r["follow_ups"], json!([]));

        // Follow-up items: any member adds one, with an owner from the team.
        let add = format!("/api/incidents/{id}/follow-ups");
        let item = app
            .post(
                &add,
                &w.carol.1,
                json!({"text": "  Alert on disk at 80%  ", "owner_id": w.bob.0}),
            )
            .await
            .expect(201);
        assert_eq!(
            (item["text"].clone(), item["owner"].clone()),
            (json!("Alert on disk at 80%"), json!("bob"))
        );
        assert!(item["done_at"].is_null());
        let second = app
            .post(
                &add,
                &w.alice.1,
                json!({"text": "Move logs to their own volume"}),
            )
            .await
            .expect(201);
        let (dave_id, dave) = app.user(&w.admin, "dave").await;
        for (body, needle) in [
            (json!({"text": "   "}), "text"),
            (json!({"text": "x".repeat(501)}), "500"),
            (json!({"text": "ok", "owner_id": dave_id}), "owner_id"),
            (json!({"text": "ok", "due": "tomorrow"}), "due"),
        ] {
            let m = app
                .post(&add, &w.alice.1, body.clone())
                .await
                .expect_error(400, "invalid");
            assert!(m.contains(needle), "{body}: {m}");
        }
        let open = format!("/api/teams/{}/follow-ups", w.team);
        let listed = app.get(&open, &w.bob.1).await.expect(200);
        let texts: Vec<&str> = listed
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["text"].as_str().unwrap())
            .collect();
        assert_eq!(
            texts,
            ["Alert on disk at 80%", "Move logs to their own volume"]
        );
        assert_eq!(
            listed[0]["incident_title"],
            "HighErrorRate: Error rate above 5%"
        );

        // Ticked off, it leaves the team's list and shows as done in the review.
        let done = app
            .patch(
                &format!("/api/follow-ups/{}", item["id"]),
                &w.bob.1,
                json!({"done": true}),
            )
            .await
            .expect(200);
        assert!(done["done_at"].is_string());
        let listed = app.get(&open, &w.bob.1).await.expect(200);
        assert_eq!(listed.as_array().unwrap().len(), 1);

        // Markdown for a wiki: the figures, who was paged, what fixed it, the checklist.
        let md = app
            .get(&format!("{review}?format=markdown"), &w.alice.1)
            .await;
        assert_eq!(md.status, 200);
        assert!(md.headers["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/markdown"));
        let md = md.text;
        assert!(
            md.starts_with(&format!(
                "# Incident #{id}: HighErrorRate: Error rate above 5%\n"
            )),
            "{md}"
        );
        assert!(
            md.contains("- Acknowledged: 2026-11-22T01:01:30Z by alice, after 1 min 30 s"),
            "{md}"
        );
        assert!(md.contains("after 4 min 50 s"), "{md}");
        assert!(
            md.contains("## What fixed it\n\nrotated the logs | freed 30 GB"),
            "{md}"
        );
        assert!(md.contains("| alice | ntfy | opening | sent |"), "{md}");
        assert!(
            md.contains("**note** (alice): db-1 at 97%") || md.contains("alice: db-1 at 97%"),
            "{md}"
        );
        assert!(md.contains(&format!("- #{earlier} ")), "{md}");
        assert!(
            md.contains("- [x] Alert on disk at 80% (bob)\n- [ ] Move logs to their own volume\n"),
            "{md}"
        );

        // Removed; then it is gone. Outsiders see nothing.
        let path = format!("/api/follow-ups/{}", second["id"]);
        app.delete(&path, &w.alice.1).await.expect(204);
        app.patch(&path, &w.alice.1, json!({"done": true}))
            .await
            .expect_error(404, "not_found");
        app.get(&review, &dave).await.expect_error(404, "not_found");
        app.get(&open, &dave).await.expect_error(404, "not_found");
        app.post(&add, &dave, json!({"text": "x"}))
            .await
            .expect_error(404, "not_found");
        let item_path = format!("/api/follow-ups/{}", item["id"]);
        app.delete(&item_path, &dave)
            .await
            .expect_error(404, "not_found");
        let kept: Value = app.get(&review, &w.alice.1).await.expect(200);
        assert_eq!(kept["follow_ups"].as_array().unwrap().len(), 1);
    }
);
