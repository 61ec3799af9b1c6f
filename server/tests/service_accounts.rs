//! Service accounts: the seed's rights table, scope by scope. Instance-scoped accounts create
//! teams and manage every team's service accounts; team-scoped ones are owners of their team
//! and see nothing else; no service account touches users or the human-only endpoints.

use crate::common;
use common::*;
use serde_json::json;

/// Mints a key for the service account `id` as `auth` and returns it.
async fn key_for(app: &TestApp, auth: &Auth, id: i64) -> Auth {
    let k = app
        .post(
            &format!("/api/service-accounts/{id}/api-keys"),
            auth,
            json!({"name": "ci"}),
        )
        .await
        .expect(201);
    assert_eq!(k["name"], "ci");
    Auth::Key(k["key"].as_str().unwrap().to_string())
}

both!(
    an_instance_account_manages_teams_accounts_and_nothing_of_users,
    |app| {
        let admin = app.bootstrap().await;
        let operator = app
            .post("/api/service-accounts", &admin, json!({"name": "operator"}))
            .await
            .expect(201);
        assert_eq!(operator["kind"], "service");
        assert_eq!(operator["scope"], "instance");
        assert!(operator.get("team_id").is_none());
        let op = key_for(&app, &admin, operator["id"].as_i64().unwrap()).await;
        // It may create teams, and team-scoped accounts for any team, and their keys.
        let team = app.team(&op, "payments").await;
        let other = app.team(&admin, "search").await;
        // It finds any team by name (to adopt one it made before); a person finds only theirs.
        let found = app.get("/api/teams?name=search", &op).await.expect(200);
        assert_eq!(found[0]["id"], other);
        let (_, dora) = app.user(&admin, "dora").await;
        let none = app.get("/api/teams?name=search", &dora).await.expect(200);
        assert_eq!(none, json!([]));
        let bot = app
            .post(
                &format!("/api/teams/{other}/service-accounts"),
                &op,
                json!({"name": "search-bot"}),
            )
            .await
            .expect(201);
        assert_eq!(bot["scope"], "team");
        assert_eq!(bot["team_id"], other);
        let bot_id = bot["id"].as_i64().unwrap();
        let made = app
            .post(
                &format!("/api/service-accounts/{bot_id}/api-keys"),
                &op,
                json!({}),
            )
            .await
            .expect(201);
        assert_eq!(made["name"], "default");
        app.delete(
            &format!("/api/service-accounts/{bot_id}/api-keys/{}", made["id"]),
            &op,
        )
        .await
        .expect(204);
        let listed = app
            .get(&format!("/api/teams/{other}/service-accounts"), &op)
            .await
            .expect(200);
        assert_eq!(listed[0]["username"], "search-bot");
        // A team that does not exist is not found.
        app.post(
            "/api/teams/999999/service-accounts",
            &op,
            json!({"name": "ghost"}),
        )
        .await
        .expect_error(404, "not_found");
        // Nothing of users, of administration, or of other instance accounts.
        app.post(
            "/api/users",
            &op,
            json!({"username": "eve", "password": "eve password"}),
        )
        .await
        .expect_error(403, "forbidden");
        let (carol, _) = app.user(&admin, "carol").await;
        app.delete(&format!("/api/users/{carol}"), &op)
            .await
            .expect_error(403, "forbidden");
        app.put(
            &format!("/api/users/{carol}/admin"),
            &op,
            json!({"is_admin": true}),
        )
        .await
        .expect_error(403, "forbidden");
        app.post("/api/service-accounts", &op, json!({"name": "op2"}))
            .await
            .expect_error(403, "forbidden");
        app.post(
            &format!("/api/service-accounts/{}/api-keys", operator["id"]),
            &op,
            json!({}),
        )
        .await
        .expect_error(403, "forbidden");
        // Human-only endpoints say so.
        for (method, path) in [
            (reqwest::Method::GET, "/api/me"),
            (reqwest::Method::POST, "/api/me/notify/test"),
            (reqwest::Method::POST, "/api/me/onboarding/dismiss"),
        ] {
            let body = (method == reqwest::Method::POST).then(|| json!({}));
            let message = app
                .send(method, path, &op, body)
                .await
                .expect_error(403, "forbidden");
            assert!(message.contains("human accounts only"), "{path}: {message}");
        }
        // Adopted by name through the roster.
        let found = app
            .get("/api/users?username=search-bot", &op)
            .await
            .expect(200);
        assert_eq!(found[0]["kind"], "service");
        assert_eq!(found[0]["team_id"], other);
        let _ = team;
    }
);

both!(a_team_account_owns_its_team_and_sees_no_other, |app| {
    let admin = app.bootstrap().await;
    let team = app.team(&admin, "payments").await;
    let other = app.team(&admin, "search").await;
    let bot = app
        .post(
            &format!("/api/teams/{team}/service-accounts"),
            &admin,
            json!({"name": "payments-bot"}),
        )
        .await
        .expect(201);
    let bot_auth = key_for(&app, &admin, bot["id"].as_i64().unwrap()).await;
    let (carol, _) = app.user(&admin, "carol").await;
    // Owner-equivalent over its own team.
    app.post(
        &format!("/api/teams/{team}/members"),
        &bot_auth,
        json!({"user_id": carol}),
    )
    .await
    .expect(201);
    let link = app
        .post(
            &format!("/api/teams/{team}/invites"),
            &bot_auth,
            json!({"max_uses": 2}),
        )
        .await
        .expect(201);
    assert_eq!(
        link["created_by"],
        serde_json::Value::Null,
        "a service account's link is nobody's"
    );
    app.post(
        &format!("/api/teams/{team}/integrations"),
        &bot_auth,
        json!({"name": "prod"}),
    )
    .await
    .expect(201);
    app.put(
        &format!("/api/teams/{team}/escalation"),
        &bot_auth,
        json!({"levels": [], "repeat": 0, "fallback_topic": "payments-all"}),
    )
    .await
    .expect(200);
    app.post(
        &format!("/api/teams/{team}/deadman/switches"),
        &bot_auth,
        json!({"name": "watchdog", "matcher": "{alertname=\"Watchdog\"}", "timeout": "10m", "severity": "critical"}),
    )
    .await
    .expect(201);
    app.put(
        &format!("/api/teams/{team}/oidc"),
        &bot_auth,
        json!({"member_groups": ["payments"], "owner_groups": []}),
    )
    .await
    .expect(200);
    // It may mint another account for its own team, and that account's keys.
    let second = app
        .post(
            &format!("/api/teams/{team}/service-accounts"),
            &bot_auth,
            json!({"name": "payments-bot-2"}),
        )
        .await
        .expect(201);
    key_for(&app, &bot_auth, second["id"].as_i64().unwrap()).await;
    // Other teams do not exist for it.
    for (method, path) in [
        (reqwest::Method::GET, format!("/api/teams/{other}")),
        (reqwest::Method::GET, format!("/api/teams/{other}/invites")),
        (reqwest::Method::POST, format!("/api/teams/{other}/invites")),
        (
            reqwest::Method::POST,
            format!("/api/teams/{other}/service-accounts"),
        ),
    ] {
        let body = (method == reqwest::Method::POST).then(|| json!({"name": "x"}));
        let body = if path.ends_with("invites") {
            body.map(|_| json!({}))
        } else {
            body
        };
        app.send(method, &path, &bot_auth, body)
            .await
            .expect_error(404, "not_found");
    }
    let others_bot = app
        .post(
            &format!("/api/teams/{other}/service-accounts"),
            &admin,
            json!({"name": "search-bot"}),
        )
        .await
        .expect(201);
    app.post(
        &format!("/api/service-accounts/{}/api-keys", others_bot["id"]),
        &bot_auth,
        json!({}),
    )
    .await
    .expect_error(404, "not_found");
    // No teams, no users, no instance accounts.
    app.post("/api/teams", &bot_auth, json!({"name": "rogue"}))
        .await
        .expect_error(403, "forbidden");
    app.post(
        "/api/users",
        &bot_auth,
        json!({"username": "eve", "password": "eve password"}),
    )
    .await
    .expect_error(403, "forbidden");
    app.post("/api/service-accounts", &bot_auth, json!({"name": "op"}))
        .await
        .expect_error(403, "forbidden");
    app.get("/api/me", &bot_auth)
        .await
        .expect_error(403, "forbidden");
});

both!(
    owners_manage_their_teams_accounts_and_members_may_not,
    |app| {
        let admin = app.bootstrap().await;
        let team = app.team(&admin, "payments").await;
        let (carol, carol_auth) = app.user(&admin, "carol").await;
        app.post(
            &format!("/api/teams/{team}/members"),
            &admin,
            json!({"user_id": carol}),
        )
        .await
        .expect(201);
        app.post(
            &format!("/api/teams/{team}/service-accounts"),
            &carol_auth,
            json!({"name": "mine"}),
        )
        .await
        .expect_error(403, "forbidden");
        app.get(&format!("/api/teams/{team}/service-accounts"), &carol_auth)
            .await
            .expect_error(403, "forbidden");
        let bot = app
            .post(
                &format!("/api/teams/{team}/service-accounts"),
                &admin,
                json!({"name": "payments-bot"}),
            )
            .await
            .expect(201);
        let id = bot["id"].as_i64().unwrap();
        app.post(
            &format!("/api/service-accounts/{id}/api-keys"),
            &carol_auth,
            json!({}),
        )
        .await
        .expect_error(403, "forbidden");
        // A key works until it is revoked.
        let k = app
            .post(
                &format!("/api/service-accounts/{id}/api-keys"),
                &admin,
                json!({}),
            )
            .await
            .expect(201);
        let bot_auth = Auth::Key(k["key"].as_str().unwrap().to_string());
        app.get(&format!("/api/teams/{team}"), &bot_auth)
            .await
            .expect(200);
        app.delete(
            &format!("/api/service-accounts/{id}/api-keys/{}", k["id"]),
            &admin,
        )
        .await
        .expect(204);
        app.get(&format!("/api/teams/{team}"), &bot_auth)
            .await
            .expect_error(401, "unauthorized");
        app.delete(
            &format!("/api/service-accounts/{id}/api-keys/{}", k["id"]),
            &admin,
        )
        .await
        .expect_error(404, "not_found");
        // A person is not a service account here; bad names and taken names are refused.
        app.post(
            &format!("/api/service-accounts/{carol}/api-keys"),
            &admin,
            json!({}),
        )
        .await
        .expect_error(404, "not_found");
        for name in ["", "Bad Name", &"x".repeat(65)] {
            app.post(
                &format!("/api/teams/{team}/service-accounts"),
                &admin,
                json!({"name": name}),
            )
            .await
            .expect_error(400, "invalid");
        }
        app.post(
            &format!("/api/teams/{team}/service-accounts"),
            &admin,
            json!({"name": "carol"}),
        )
        .await
        .expect_error(409, "conflict");
    }
);

both!(owners_replace_the_sign_on_group_mapping, |app| {
    let admin = app.bootstrap().await;
    let team = app.team(&admin, "payments").await;
    let (carol, carol_auth) = app.user(&admin, "carol").await;
    app.post(
        &format!("/api/teams/{team}/members"),
        &admin,
        json!({"user_id": carol}),
    )
    .await
    .expect(201);
    let t = app
        .get(&format!("/api/teams/{team}"), &admin)
        .await
        .expect(200);
    assert_eq!(t["oidc"], json!({"member_groups": [], "owner_groups": []}));
    let t = app
        .put(
            &format!("/api/teams/{team}/oidc"),
            &admin,
            json!({"member_groups": [" eng ", "eng", "payments"], "owner_groups": ["payments-leads"]}),
        )
        .await
        .expect(200);
    assert_eq!(
        t["oidc"],
        json!({"member_groups": ["eng", "payments"], "owner_groups": ["payments-leads"]})
    );
    app.put(
        &format!("/api/teams/{team}/oidc"),
        &carol_auth,
        json!({"member_groups": []}),
    )
    .await
    .expect_error(403, "forbidden");
    let many: Vec<String> = (0..51).map(|i| format!("g{i}")).collect();
    for body in [
        json!({"member_groups": [""]}),
        json!({"member_groups": ["a\u{7}b"]}),
        json!({"owner_groups": ["x".repeat(257)]}),
        json!({"owner_groups": many}),
        json!({"member_groups": "eng"}),
        json!({"admins": ["eng"]}),
    ] {
        app.put(&format!("/api/teams/{team}/oidc"), &admin, body)
            .await
            .expect_error(400, "invalid");
    }
    let t = app
        .get(&format!("/api/teams/{team}"), &carol_auth)
        .await
        .expect(200);
    assert_eq!(
        t["oidc"]["owner_groups"],
        json!(["payments-leads"]),
        "refusals changed nothing"
    );
});
