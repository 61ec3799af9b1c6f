//! Who may do what, where an attacker's review found the line drawn too loosely: the rota,
//! per-person endpoints for service accounts, the roster, an instance account's lists, and invite
//! links whose maker lost the right to make them.

use crate::common;
use common::*;
use serde_json::{json, Value};

fn id(v: &Value) -> i64 {
    v["id"].as_i64().unwrap()
}

async fn member(app: &TestApp, owner: &Auth, team: i64, user: i64, role: &str) {
    app.post(
        &format!("/api/teams/{team}/members"),
        owner,
        json!({"user_id": user, "role": role}),
    )
    .await
    .expect(201);
}

both!(
    members_change_only_their_own_dates_and_every_change_is_logged,
    |app| {
        let admin = app.bootstrap().await;
        let (alice_id, alice) = app.user(&admin, "alice").await;
        let (bob_id, bob) = app.user(&admin, "bob").await;
        let (carol_id, _) = app.user(&admin, "carol").await;
        let team = app.team(&alice, "ops").await;
        member(&app, &alice, team, bob_id, "member").await;
        member(&app, &alice, team, carol_id, "member").await;
        let schedule = format!("/api/teams/{team}/schedule");

        // A member gives dates to nobody but themselves.
        app.post(
            &schedule,
            &bob,
            json!({"user_id": carol_id, "dates": ["2026-11-23"]}),
        )
        .await
        .expect_error(403, "forbidden");
        app.post(
            &schedule,
            &bob,
            json!({"user_id": bob_id, "dates": ["2026-11-24", "2026-11-25"]}),
        )
        .await
        .expect(201);
        // The owner gives them to anyone, today's included.
        app.post(
            &schedule,
            &alice,
            json!({"user_id": carol_id, "dates": ["2026-11-22"]}),
        )
        .await
        .expect(201);
        // A member cannot remove someone else's date, today's least of all.
        app.delete(&format!("{schedule}/2026-11-22"), &bob)
            .await
            .expect_error(403, "forbidden");
        let today = app.get("/api/schedule/current", &bob).await.expect(200);
        assert_eq!(today[0]["user_id"], carol_id, "carol is still on call");
        // Their own, yes; anyone's for the owner.
        app.delete(&format!("{schedule}/2026-11-25"), &bob)
            .await
            .expect(204);
        app.delete(&format!("{schedule}/2026-11-24"), &alice)
            .await
            .expect(204);

        let log = app
            .get(&format!("{schedule}/changes"), &alice)
            .await
            .expect(200);
        let entries: Vec<(String, String, String)> = log
            .as_array()
            .unwrap()
            .iter()
            .map(|c| {
                (
                    c["kind"].as_str().unwrap().to_string(),
                    c["date"].as_str().unwrap().to_string(),
                    c["actor"].as_str().unwrap_or_default().to_string(),
                )
            })
            .collect();
        let expect = |k: &str, d: &str, a: &str| (k.to_string(), d.to_string(), a.to_string());
        assert_eq!(
            entries,
            vec![
                expect("removed", "2026-11-24", "alice"),
                expect("removed", "2026-11-25", "bob"),
                expect("assigned", "2026-11-22", "alice"),
                expect("assigned", "2026-11-24", "bob"),
            ],
            "newest first, each with who did it: {log}"
        );
        let _ = alice_id;
    }
);

both!(service_accounts_are_no_person_and_no_member, |app| {
    let admin = app.bootstrap().await;
    let (_, alice) = app.user(&admin, "alice").await;
    let team = app.team(&alice, "ops").await;
    let instance = app
        .post("/api/service-accounts", &admin, json!({"name": "operator"}))
        .await
        .expect(201);
    let op = app.service_key(&admin, id(&instance)).await;
    let bot = app
        .post(
            &format!("/api/teams/{team}/service-accounts"),
            &alice,
            json!({"name": "ops-bot"}),
        )
        .await
        .expect(201);
    let bot_auth = app.service_key(&alice, id(&bot)).await;

    // The per-person endpoints refuse a service account acting on itself...
    for (who, account) in [(&op, &instance), (&bot_auth, &bot)] {
        let me = id(account);
        app.post(
            &format!("/api/users/{me}/api-keys"),
            who,
            json!({"name": "more"}),
        )
        .await
        .expect_error(403, "forbidden");
        app.get(&format!("/api/users/{me}/api-keys"), who)
            .await
            .expect_error(403, "forbidden");
        app.put(
            &format!("/api/users/{me}/push-topic"),
            who,
            json!({"push_topic": "bots-read-pages"}),
        )
        .await
        .expect_error(403, "forbidden");
        // ...and an administrator acting on one.
        app.put(
            &format!("/api/users/{me}/push-topic"),
            &admin,
            json!({"push_topic": "bots-read-pages"}),
        )
        .await
        .expect_error(403, "forbidden");
        app.put(
            &format!("/api/users/{me}/password"),
            &admin,
            json!({"password": "a password for a bot"}),
        )
        .await
        .expect_error(403, "forbidden");
        // Neither becomes a member or an owner of a team.
        for role in ["member", "owner"] {
            app.post(
                &format!("/api/teams/{team}/members"),
                &alice,
                json!({"user_id": me, "role": role}),
            )
            .await
            .expect_error(400, "invalid");
        }
    }
    let members = app
        .get(&format!("/api/teams/{team}/members"), &alice)
        .await
        .expect(200);
    assert_eq!(members.as_array().unwrap().len(), 1, "{members}");
    let keys = app
        .get(
            &format!("/api/service-accounts/{}/api-keys", id(&bot)),
            &alice,
        )
        .await
        .expect(200);
    assert_eq!(
        keys.as_array().unwrap().len(),
        1,
        "no key was minted the wrong way"
    );
});

both!(the_roster_shows_the_callers_teams_only, |app| {
    let admin = app.bootstrap().await;
    app.open_signups(&admin).await;
    let (_, alice) = app.user(&admin, "alice").await;
    let (bob_id, _) = app.user(&admin, "bob").await;
    let (_, zed) = app.user(&admin, "zed").await;
    let ops = app.team(&alice, "ops").await;
    let search = app.team(&zed, "search").await;
    member(&app, &alice, ops, bob_id, "member").await;
    let ops_bot = app
        .post(
            &format!("/api/teams/{ops}/service-accounts"),
            &alice,
            json!({"name": "ops-bot"}),
        )
        .await
        .expect(201);
    app.post(
        &format!("/api/teams/{search}/service-accounts"),
        &zed,
        json!({"name": "search-bot"}),
    )
    .await
    .expect(201);
    let ops_bot_key = app.service_key(&alice, id(&ops_bot)).await;
    let names = |v: Value| -> Vec<String> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|u| u["username"].as_str().unwrap().to_string())
            .collect()
    };

    // A team-scoped account sees its team's people and accounts, no other team's.
    let seen = names(app.get("/api/users", &ops_bot_key).await.expect(200));
    assert_eq!(seen, vec!["alice", "bob", "ops-bot"], "{seen:?}");
    // A member sees their teams' people and accounts and themselves.
    let seen = names(app.get("/api/users", &alice).await.expect(200));
    assert_eq!(seen, vec!["alice", "bob", "ops-bot"], "{seen:?}");
    // A stranger who signed up sees only themselves, even the administrator's flag stays hidden.
    let stranger = app
        .post(
            "/api/signup",
            &Auth::None,
            json!({"username": "mallory", "password": "a long password"}),
        )
        .await;
    let mallory = stranger.session().unwrap();
    stranger.expect(201);
    let seen = names(app.get("/api/users", &mallory).await.expect(200));
    assert_eq!(seen, vec!["mallory"], "{seen:?}");
    app.get("/api/users/1", &mallory)
        .await
        .expect_error(404, "not_found");
    // By exact name a person can be found (so an owner can add them), never another team's account.
    let found = names(app.get("/api/users?username=zed", &alice).await.expect(200));
    assert_eq!(found, vec!["zed"]);
    let found = names(
        app.get("/api/users?username=search-bot", &alice)
            .await
            .expect(200),
    );
    assert!(found.is_empty(), "{found:?}");
    // Administrators see everyone.
    let all = names(app.get("/api/users", &admin).await.expect(200));
    assert_eq!(all.len(), 7, "{all:?}");
});

both!(an_instance_account_lists_what_it_may_read, |app| {
    let admin = app.bootstrap().await;
    let (_, alice) = app.user(&admin, "alice").await;
    let team = app.team(&alice, "ops").await;
    let key = app.integration(&alice, team).await;
    app.webhook(
        &key,
        &Payload::new("g").alert("f", "firing", 0, None, json!({"alertname": "Down"})),
    )
    .await
    .expect(200);
    let incident = app.incidents(&alice, team).await[0]["id"].as_i64().unwrap();
    let instance = app
        .post("/api/service-accounts", &admin, json!({"name": "operator"}))
        .await
        .expect(201);
    let op = app.service_key(&admin, id(&instance)).await;
    // It finds the team by name (to adopt it), but reads none of its incidents or alerts:
    // the lists agree with the single reads.
    assert_eq!(
        app.get("/api/teams?name=ops", &op).await.expect(200)[0]["id"],
        team
    );
    app.get(&format!("/api/incidents/{incident}"), &op)
        .await
        .expect_error(404, "not_found");
    assert_eq!(app.get("/api/incidents", &op).await.expect(200), json!([]));
    assert_eq!(app.get("/api/alerts", &op).await.expect(200), json!([]));
    app.get(&format!("/api/incidents?team_id={team}"), &op)
        .await
        .expect_error(404, "not_found");
    // Its member-made team's incidents stay visible to the members.
    assert_eq!(
        app.get("/api/incidents", &alice).await.expect(200)[0]["id"],
        incident
    );
});

/// The state of each of `team`'s links, oldest first.
async fn link_states(app: &TestApp, owner: &Auth, team: i64) -> Vec<String> {
    let mut links: Vec<Value> = app
        .get(&format!("/api/teams/{team}/invites"), owner)
        .await
        .expect(200)
        .as_array()
        .unwrap()
        .clone();
    links.sort_by_key(id);
    links
        .iter()
        .map(|l| l["state"].as_str().unwrap().to_string())
        .collect()
}

both!(links_die_with_their_makers_right_to_make_them, |app| {
    let admin = app.bootstrap().await;
    let (_, alice) = app.user(&admin, "alice").await;
    let (bob_id, bob) = app.user(&admin, "bob").await;
    let (carol_id, carol) = app.user(&admin, "carol").await;
    let (dave_id, dave) = app.user(&admin, "dave").await;
    let team = app.team(&alice, "ops").await;
    let other = app.team(&alice, "search").await;
    for (user, t) in [
        (bob_id, team),
        (carol_id, team),
        (dave_id, team),
        (dave_id, other),
    ] {
        member(&app, &alice, t, user, "owner").await;
    }
    let invite = |who: Auth, t: i64| {
        let app = &app;
        async move {
            app.post(
                &format!("/api/teams/{t}/invites"),
                &who,
                json!({"role": "owner", "max_uses": 100}),
            )
            .await
            .expect(201)["token"]
                .as_str()
                .unwrap()
                .to_string()
        }
    };
    let bobs = invite(bob.clone(), team).await;
    let carols = invite(carol.clone(), team).await;
    let daves = invite(dave.clone(), team).await;
    let daves_other = invite(dave.clone(), other).await;
    let alices = invite(alice.clone(), team).await;

    // Bob is made a plain member, carol leaves, dave is disabled.
    app.put(
        &format!("/api/teams/{team}/members/{bob_id}"),
        &alice,
        json!({"role": "member"}),
    )
    .await
    .expect(200);
    app.delete(&format!("/api/teams/{team}/members/{carol_id}"), &carol)
        .await
        .expect(204);
    app.put(
        &format!("/api/users/{dave_id}/disabled"),
        &admin,
        json!({"disabled": true}),
    )
    .await
    .expect(200);
    assert_eq!(
        link_states(&app, &alice, team).await,
        vec!["revoked", "revoked", "revoked", "usable"],
        "bob's, carol's and dave's links are revoked; alice's stays"
    );
    assert_eq!(link_states(&app, &alice, other).await, vec!["revoked"]);
    for dead in [&bobs, &carols, &daves, &daves_other] {
        app.post(
            "/api/signup",
            &Auth::None,
            json!({"username": format!("new{}", &dead[..6].to_lowercase()), "password": "a long password", "invite": dead}),
        )
        .await
        .expect_error(400, "invite_unusable");
    }
    app.post(
        "/api/signup",
        &Auth::None,
        json!({"username": "newcomer", "password": "a long password", "invite": alices}),
    )
    .await
    .expect(201);
});
