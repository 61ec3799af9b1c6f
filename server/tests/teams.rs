//! Teams: creation and names, visibility (404 outside), owner checks, members and the last-owner guard.

use serde_json::json;

both!(create_list_get_rename_delete, |app| {
    let admin = app.bootstrap().await;
    let (_, bob) = app.user(&admin, "bob").await;
    let t = app
        .post(
            "/api/teams",
            &bob,
            json!({"name": "Payments", "display_name": "Payments EU"}),
        )
        .await
        .expect(201);
    assert_eq!(t["name"], "payments");
    assert_eq!(t["display_name"], "Payments EU");
    let id = t["id"].as_i64().unwrap();
    app.post("/api/teams", &admin, json!({"name": "payments"}))
        .await
        .expect_error(409, "conflict");
    app.post("/api/teams", &bob, json!({"name": "has space"}))
        .await
        .expect_error(400, "invalid");
    app.post(
        "/api/teams",
        &bob,
        json!({"name": "ok", "display_name": "x".repeat(101)}),
    )
    .await
    .expect_error(400, "invalid");
    let members = app
        .get(&format!("/api/teams/{id}/members"), &bob)
        .await
        .expect(200);
    assert_eq!(members[0]["username"], "bob");
    assert_eq!(members[0]["role"], "owner");
    assert_eq!(
        app.get("/api/teams", &bob)
            .await
            .expect(200)
            .as_array()
            .unwrap()
            .len(),
        1
    );
    assert_eq!(
        app.get("/api/teams?name=PAYMENTS", &bob).await.expect(200)[0]["id"],
        id
    );
    assert_eq!(
        app.get("/api/teams?name=other", &bob)
            .await
            .expect(200)
            .as_array()
            .unwrap()
            .len(),
        0
    );
    let renamed = app
        .put(
            &format!("/api/teams/{id}"),
            &bob,
            json!({"display_name": "Payments (EU)"}),
        )
        .await
        .expect(200);
    assert_eq!(renamed["display_name"], "Payments (EU)");
    assert_eq!(renamed["name"], "payments");
    // A blank display name shows the team by its name, as at creation.
    let blank = app
        .put(
            &format!("/api/teams/{id}"),
            &bob,
            json!({"display_name": "  "}),
        )
        .await
        .expect(200);
    assert_eq!(blank["display_name"], "payments");
    let me = app.get("/api/me", &bob).await.expect(200);
    assert_eq!(me["teams"][0]["role"], "owner");
    app.delete(&format!("/api/teams/{id}"), &bob)
        .await
        .expect(204);
    app.get(&format!("/api/teams/{id}"), &bob)
        .await
        .expect_error(404, "not_found");
});

both!(outsiders_get_404_and_members_403_on_owner_actions, |app| {
    let admin = app.bootstrap().await;
    let (_, bob) = app.user(&admin, "bob").await;
    let (carol_id, carol) = app.user(&admin, "carol").await;
    let (_, dave) = app.user(&admin, "dave").await;
    let id = app.team(&bob, "db").await;
    for path in [
        format!("/api/teams/{id}"),
        format!("/api/teams/{id}/members"),
    ] {
        app.get(&path, &carol).await.expect_error(404, "not_found");
    }
    app.put(
        &format!("/api/teams/{id}"),
        &carol,
        json!({"display_name": "mine"}),
    )
    .await
    .expect_error(404, "not_found");
    app.delete(&format!("/api/teams/{id}"), &carol)
        .await
        .expect_error(404, "not_found");
    app.get("/api/teams/999999", &carol)
        .await
        .expect_error(404, "not_found");
    // As a member, carol sees the team but cannot configure it.
    app.post(
        &format!("/api/teams/{id}/members"),
        &bob,
        json!({"user_id": carol_id}),
    )
    .await
    .expect(201);
    app.get(&format!("/api/teams/{id}"), &carol)
        .await
        .expect(200);
    app.put(
        &format!("/api/teams/{id}"),
        &carol,
        json!({"display_name": "mine"}),
    )
    .await
    .expect_error(403, "forbidden");
    app.post(
        &format!("/api/teams/{id}/members"),
        &carol,
        json!({"user_id": 1}),
    )
    .await
    .expect_error(403, "forbidden");
    // The team does not appear in an outsider's list.
    assert_eq!(
        app.get("/api/teams", &dave)
            .await
            .expect(200)
            .as_array()
            .unwrap()
            .len(),
        0
    );
});

both!(
    an_administrator_passes_owner_checks_without_membership,
    |app| {
        let admin = app.bootstrap().await;
        let (_, bob) = app.user(&admin, "bob").await;
        let id = app.team(&bob, "ops").await;
        assert_eq!(
            app.get("/api/teams", &admin)
                .await
                .expect(200)
                .as_array()
                .unwrap()
                .len(),
            0
        );
        app.put(
            &format!("/api/teams/{id}"),
            &admin,
            json!({"display_name": "Ops"}),
        )
        .await
        .expect(200);
        let admins = app.get("/api/admin/teams", &admin).await.expect(200);
        assert_eq!(admins[0]["member_count"], 1);
        assert_eq!(admins[0]["open_incidents"], 0);
    }
);

both!(members_roles_and_the_last_owner_guard, |app| {
    let admin = app.bootstrap().await;
    let (bob_id, bob) = app.user(&admin, "bob").await;
    let (carol_id, carol) = app.user(&admin, "carol").await;
    let id = app.team(&bob, "web").await;
    let members = format!("/api/teams/{id}/members");
    app.post(&members, &bob, json!({"user_id": 424242}))
        .await
        .expect_error(400, "invalid");
    app.post(&members, &bob, json!({"user_id": carol_id, "role": "boss"}))
        .await
        .expect_error(400, "invalid");
    app.post(&members, &bob, json!({"user_id": carol_id}))
        .await
        .expect(201);
    app.post(&members, &bob, json!({"user_id": carol_id}))
        .await
        .expect_error(409, "conflict");
    // The only owner can neither step down nor leave.
    app.put(
        &format!("{members}/{bob_id}"),
        &bob,
        json!({"role": "member"}),
    )
    .await
    .expect_error(409, "conflict");
    app.delete(&format!("{members}/{bob_id}"), &bob)
        .await
        .expect_error(409, "conflict");
    assert_eq!(
        app.put(
            &format!("{members}/{carol_id}"),
            &bob,
            json!({"role": "owner"})
        )
        .await
        .expect(200)["role"],
        "owner"
    );
    app.put(
        &format!("{members}/{bob_id}"),
        &bob,
        json!({"role": "member"}),
    )
    .await
    .expect(200);
    // Two owners removing each other at once: one owner remains.
    app.put(
        &format!("{members}/{bob_id}"),
        &carol,
        json!({"role": "owner"}),
    )
    .await
    .expect(200);
    let (carol_path, bob_path) = (
        format!("{members}/{carol_id}"),
        format!("{members}/{bob_id}"),
    );
    let (a, b) = tokio::join!(app.delete(&carol_path, &bob), app.delete(&bob_path, &carol));
    let statuses = [a.status.as_u16(), b.status.as_u16()];
    let list = app.get(&members, &admin).await.expect(200);
    let owners = list
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "owner")
        .count();
    assert_eq!(owners, 1, "{statuses:?}");
    app.delete(&format!("{members}/999"), &admin)
        .await
        .expect_error(404, "not_found");
});

both!(a_member_may_leave, |app| {
    let admin = app.bootstrap().await;
    let (_, bob) = app.user(&admin, "bob").await;
    let (carol_id, carol) = app.user(&admin, "carol").await;
    let id = app.team(&bob, "api").await;
    app.post(
        &format!("/api/teams/{id}/members"),
        &bob,
        json!({"user_id": carol_id}),
    )
    .await
    .expect(201);
    app.delete(&format!("/api/teams/{id}/members/{carol_id}"), &carol)
        .await
        .expect(204);
    app.get(&format!("/api/teams/{id}"), &carol)
        .await
        .expect_error(404, "not_found");
});
