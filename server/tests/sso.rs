//! Single sign-on against a real OpenID Connect provider: identity, linking, group sync, hand
//! edits, the session ceiling, and every refusal leaving nothing behind.

use crate::common;

use common::oidc::{Browser, Provider};
use common::process::free_port;
use common::{postgres_schema, Auth, Backend, TestApp};
use klaxon_core::sso::OidcConfig;
use klaxon_core::Config;
use serde_json::{json, Value};

/// Runs a test body on SQLite and PostgreSQL with a fresh provider and a Klaxon configured
/// for it by `$tune` (a `fn(&mut OidcConfig)`).
macro_rules! sso_test {
    ($name:ident, $tune:expr, |$app:ident, $idp:ident| $body:block) => {
        mod $name {
            #[allow(unused_imports)]
            use super::*;
            #[tokio::test]
            async fn sqlite() {
                let ($app, $idp) = setup(Backend::Sqlite, $tune).await;
                $body
            }
            #[tokio::test]
            #[cfg_attr(
                not(postgres_tests),
                ignore = "needs KLAXON_TEST_DATABASE_URL at build time"
            )]
            async fn postgres() {
                let ($app, $idp) = setup(Backend::Postgres(postgres_schema().await), $tune).await;
                $body
            }
        }
    };
}

fn no_change(_: &mut OidcConfig) {}

/// Allowed group `klaxon`, admin group `klaxon-admins`.
fn company(c: &mut OidcConfig) {
    c.allowed_groups = vec!["klaxon".into()];
    c.admin_groups = vec!["klaxon-admins".into()];
}

async fn setup(backend: Backend, tune: fn(&mut OidcConfig)) -> (TestApp, Provider) {
    let idp = Provider::start(json!({}));
    let mut oidc = idp.config();
    tune(&mut oidc);
    let app = TestApp::spawn_with(
        backend,
        Config {
            oidc: Some(oidc),
            ..Config::default()
        },
    )
    .await;
    // ID tokens carry the provider's real time; Klaxon checks them against its clock.
    app.clock
        .set(klaxon_core::Clock::now(&klaxon_core::SystemClock));
    (app, idp)
}

fn person(groups: Value) -> Value {
    json!({"email": "alice@example.com", "email_verified": true, "preferred_username": "alice", "groups": groups})
}

async fn me(app: &TestApp, token: &str) -> Value {
    app.get("/api/me", &Auth::Cookie(token.to_string()))
        .await
        .expect(200)
}

async fn user_count(app: &TestApp, admin: &Auth) -> usize {
    app.get("/api/users", admin)
        .await
        .expect(200)
        .as_array()
        .unwrap()
        .len()
}

/// Creates team `name` as `admin` with a provider mapping.
async fn mapped_team(
    app: &TestApp,
    admin: &Auth,
    name: &str,
    members: &[&str],
    owners: &[&str],
) -> i64 {
    let id = app.team(admin, name).await;
    app.put(
        &format!("/api/teams/{id}/oidc"),
        admin,
        json!({"member_groups": members, "owner_groups": owners}),
    )
    .await
    .expect(200);
    id
}

sso_test!(
    first_sign_in_creates_the_user_with_the_grants_of_their_groups,
    company,
    |app, idp| {
        let admin = app.bootstrap().await;
        let payments =
            mapped_team(&app, &admin, "payments", &["payments"], &["payments-leads"]).await;
        let search = mapped_team(&app, &admin, "search", &["search"], &[]).await;
        idp.set_account(
            "alice",
            person(json!([
                "klaxon",
                "klaxon-admins",
                "payments-leads",
                "search"
            ])),
        );

        let done = Browser::new(&app)
            .sign_in("alice", Some("/incidents/7?tab=notes"))
            .await;
        assert_eq!(done.status, 302);
        assert_eq!(done.location, "/incidents/7?tab=notes");
        let cookie = done.session_cookie.clone().expect("a session cookie");
        assert!(
            cookie.contains("Max-Age=43200"),
            "12 h ceiling in the cookie: {cookie}"
        );
        assert!(cookie.contains("HttpOnly"));

        let me = me(&app, done.session.as_deref().unwrap()).await;
        assert_eq!(me["username"], "alice");
        assert_eq!(me["is_admin"], true);
        assert_eq!(me["source"], "oidc");
        assert_eq!(me["sso"], true);
        assert_eq!(me["email"], "alice@example.com");
        let teams = me["teams"].as_array().unwrap();
        assert_eq!(teams.len(), 2);
        let of = |id: i64| teams.iter().find(|t| t["id"] == id).unwrap().clone();
        assert_eq!(of(payments)["role"], "owner");
        assert_eq!(of(payments)["source"], "oidc");
        assert_eq!(of(search)["role"], "member");
        // The team's member list says where the grant comes from too.
        let members = app
            .get(&format!("/api/teams/{search}/members"), &admin)
            .await
            .expect(200);
        let alice = members
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["username"] == "alice")
            .unwrap();
        assert_eq!(alice["source"], "oidc");
    }
);

sso_test!(
    groups_are_read_again_at_every_sign_in_and_only_provider_grants_change,
    company,
    |app, idp| {
        let admin = app.bootstrap().await;
        let payments =
            mapped_team(&app, &admin, "payments", &["payments"], &["payments-leads"]).await;
        let ops = app.team(&admin, "ops").await;
        idp.set_account(
            "alice",
            person(json!(["klaxon", "klaxon-admins", "payments-leads"])),
        );
        let browser = Browser::new(&app);
        let first = browser.sign_in("alice", None).await;
        let alice_id = me(&app, first.session.as_deref().unwrap()).await["id"]
            .as_i64()
            .unwrap();
        // A hand-made membership beside the provider's.
        app.post(
            &format!("/api/teams/{ops}/members"),
            &admin,
            json!({"user_id": alice_id}),
        )
        .await
        .expect(201);

        // The provider drops her from the admin and leads groups: she is the last owner of
        // payments, and the provider still decides.
        idp.set_account("alice", person(json!(["klaxon", "payments"])));
        let second = browser.sign_in("alice", None).await;
        let me2 = me(&app, second.session.as_deref().unwrap()).await;
        assert_eq!(me2["id"], alice_id, "the same person");
        assert_eq!(me2["is_admin"], false);
        assert_eq!(me2["source"], "manual");
        let teams = me2["teams"].as_array().unwrap();
        let role_in = |id: i64| {
            teams
                .iter()
                .find(|t| t["id"] == id)
                .map(|t| (t["role"].clone(), t["source"].clone()))
        };
        assert_eq!(role_in(payments), Some((json!("member"), json!("oidc"))));
        assert_eq!(role_in(ops), Some((json!("member"), json!("manual"))));

        // An administrator made by hand stays one whatever the groups say.
        app.put(
            &format!("/api/users/{alice_id}/admin"),
            &admin,
            json!({"is_admin": true}),
        )
        .await
        .expect(200);
        idp.set_account("alice", person(json!(["klaxon"])));
        let third = browser.sign_in("alice", None).await;
        let me3 = me(&app, third.session.as_deref().unwrap()).await;
        assert_eq!(me3["is_admin"], true);
        assert_eq!(me3["source"], "manual");
        let teams: Vec<i64> = me3["teams"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["id"].as_i64().unwrap())
            .collect();
        assert_eq!(
            teams,
            vec![ops],
            "the provider's membership went, the hand-made one stayed"
        );
    }
);

sso_test!(
    hand_edits_of_provider_grants_are_refused_and_disabling_wins,
    company,
    |app, idp| {
        let admin = app.bootstrap().await;
        let payments = mapped_team(&app, &admin, "payments", &["payments"], &[]).await;
        idp.set_account(
            "alice",
            person(json!(["klaxon", "klaxon-admins", "payments"])),
        );
        let browser = Browser::new(&app);
        let done = browser.sign_in("alice", None).await;
        let alice = Auth::Cookie(done.session.clone().unwrap());
        let alice_id = me(&app, done.session.as_deref().unwrap()).await["id"]
            .as_i64()
            .unwrap();

        let path = format!("/api/teams/{payments}/members/{alice_id}");
        let m = app
            .put(&path, &admin, json!({"role": "owner"}))
            .await
            .expect_error(409, "conflict");
        assert!(m.contains("identity provider"), "{m}");
        app.delete(&path, &admin)
            .await
            .expect_error(409, "conflict");
        app.delete(&path, &alice)
            .await
            .expect_error(409, "conflict");
        let m = app
            .put(
                &format!("/api/users/{alice_id}/admin"),
                &admin,
                json!({"is_admin": false}),
            )
            .await
            .expect_error(409, "conflict");
        assert!(m.contains("identity provider"), "{m}");
        let me_now = me(&app, done.session.as_deref().unwrap()).await;
        assert_eq!(me_now["is_admin"], true);
        assert_eq!(me_now["teams"].as_array().unwrap().len(), 1);

        // Disabling is the administrator's own decision: her session ends, and the provider's
        // groups do not let her back in.
        app.put(
            &format!("/api/users/{alice_id}/disabled"),
            &admin,
            json!({"disabled": true}),
        )
        .await
        .expect(200);
        app.get("/api/me", &alice)
            .await
            .expect_error(401, "unauthorized");
        let again = browser.sign_in("alice", None).await;
        assert_eq!(again.refusal(), Some("disabled"));
        assert!(again.session.is_none());
    }
);

sso_test!(
    a_person_outside_the_allowed_groups_is_refused_and_nothing_is_created,
    company,
    |app, idp| {
        let admin = app.bootstrap().await;
        let before = user_count(&app, &admin).await;
        idp.set_account(
            "mallory",
            json!({"email": "m@example.com", "email_verified": true, "groups": ["contractors"]}),
        );
        let done = Browser::new(&app).sign_in("mallory", Some("/teams")).await;
        assert_eq!(done.status, 302);
        assert_eq!(done.refusal(), Some("not_allowed"));
        assert!(done.session.is_none());
        assert_eq!(user_count(&app, &admin).await, before);
        // The sign-in page shows a sentence for it.
        let page = app
            .client
            .get(format!("{}{}", app.url, done.location))
            .send()
            .await
            .unwrap();
        let html = page.text().await.unwrap();
        assert!(
            html.contains("not in a group allowed to use Klaxon"),
            "the sentence is on the page"
        );
    }
);

sso_test!(groups_may_come_as_one_string, company, |app, idp| {
    idp.set_account(
        "solo",
        json!({"email": "solo@example.com", "email_verified": true, "groups": "klaxon"}),
    );
    let done = Browser::new(&app).sign_in("solo", None).await;
    assert!(done.session.is_some(), "refused: {}", done.location);
});

sso_test!(
    identity_is_issuer_and_subject_not_email_or_name,
    no_change,
    |app, idp| {
        let admin = app.bootstrap().await;
        idp.set_account("alice", json!({"sub": "s-1", "email": "alice@example.com", "email_verified": true, "preferred_username": "alice"}));
        let browser = Browser::new(&app);
        let first = browser.sign_in("alice", None).await;
        let id = me(&app, first.session.as_deref().unwrap()).await["id"].clone();

        // New email and name at the provider: the same Klaxon user, email kept current.
        idp.set_account("alice", json!({"sub": "s-1", "email": "alice.new@example.com", "email_verified": true, "preferred_username": "alice.new"}));
        let second = browser.sign_in("alice", None).await;
        let me2 = me(&app, second.session.as_deref().unwrap()).await;
        assert_eq!(me2["id"], id);
        assert_eq!(me2["username"], "alice");

        // Another subject claiming the same name and an unverified copy of the old email is
        // someone else, with a name made unique.
        idp.set_account("imposter", json!({"sub": "s-2", "email": "alice@example.com", "email_verified": false, "preferred_username": "alice"}));
        let third = browser.sign_in("imposter", None).await;
        let me3 = me(&app, third.session.as_deref().unwrap()).await;
        assert_ne!(me3["id"], id);
        assert_eq!(me3["username"], "alice-2");
        assert_eq!(user_count(&app, &admin).await, 3);
    }
);

sso_test!(
    a_hand_made_user_is_linked_by_a_verified_email_only,
    no_change,
    |app, idp| {
        let admin = app.bootstrap().await;
        let dave = app
        .post("/api/users", &admin, json!({"username": "dave", "password": "dave password", "email": "Dave@Example.com"}))
        .await
        .expect(201);
        assert_eq!(dave["email"], "dave@example.com");
        let browser = Browser::new(&app);

        idp.set_account(
            "unverified",
            json!({"sub": "u-1", "email": "dave@example.com", "email_verified": false}),
        );
        let separate = browser.sign_in("unverified", None).await;
        let other = me(&app, separate.session.as_deref().unwrap()).await;
        assert_ne!(other["id"], dave["id"]);
        assert_eq!(other["username"], "dave-2");

        idp.set_account(
            "verified",
            json!({"sub": "v-1", "email": "dave@example.com", "email_verified": true}),
        );
        let linked = browser.sign_in("verified", None).await;
        let me_linked = me(&app, linked.session.as_deref().unwrap()).await;
        assert_eq!(me_linked["id"], dave["id"]);
        assert_eq!(me_linked["sso"], true);
        // The password still works too: linking adds a way in.
        app.login("dave", "dave password").await;
    }
);

fn trusting(c: &mut OidcConfig) {
    c.trust_email = true;
}

sso_test!(
    trust_email_links_without_the_verified_flag,
    trusting,
    |app, idp| {
        let admin = app.bootstrap().await;
        let erin = app
            .post(
                "/api/users",
                &admin,
                json!({"username": "erin", "email": "erin@example.com"}),
            )
            .await
            .expect(201);
        idp.set_account("erin", json!({"email": "erin@example.com"}));
        let done = Browser::new(&app).sign_in("erin", None).await;
        assert_eq!(
            me(&app, done.session.as_deref().unwrap()).await["id"],
            erin["id"]
        );
    }
);

fn one_hour(c: &mut OidcConfig) {
    c.session_ttl = 3600;
}

sso_test!(
    single_sign_on_sessions_end_at_their_ceiling,
    one_hour,
    |app, idp| {
        idp.set_account("alice", person(json!([])));
        let browser = Browser::new(&app);
        let done = browser.sign_in("alice", None).await;
        assert!(done
            .session_cookie
            .as_deref()
            .unwrap()
            .contains("Max-Age=3600"));
        let token = done.session.unwrap();
        // Used all along, the session would slide for 30 days; the ceiling holds.
        for _ in 0..3 {
            app.clock.advance(1190);
            me(&app, &token).await;
        }
        app.clock.advance(40);
        app.get("/api/me", &Auth::Cookie(token.clone()))
            .await
            .expect_error(401, "unauthorized");

        // A terminal approved from such a session gets the same ceiling.
        app.clock
            .set(klaxon_core::Clock::now(&klaxon_core::SystemClock));
        let fresh = browser.sign_in("alice", None).await;
        let browser_auth = Auth::Cookie(fresh.session.unwrap());
        let start = app
            .post("/api/oidc/device", &Auth::None, json!({}))
            .await
            .expect(200);
        app.post(
            "/api/oidc/device/approve",
            &browser_auth,
            json!({"user_code": start["user_code"], "approve": true}),
        )
        .await
        .expect(204);
        let polled = app
            .post(
                "/api/oidc/device/token",
                &Auth::None,
                json!({"device_code": start["device_code"]}),
            )
            .await;
        let cookie = polled.cookie().unwrap();
        assert!(cookie.contains("Max-Age=3600"), "{cookie}");
        let terminal = polled.expect(200)["session_token"]
            .as_str()
            .unwrap()
            .to_string();
        app.clock.advance(3601);
        app.get("/api/me", &Auth::Cookie(terminal))
            .await
            .expect_error(401, "unauthorized");
    }
);

sso_test!(
    a_wrong_or_reused_state_and_a_replayed_code_are_refused,
    no_change,
    |app, idp| {
        let admin = app.bootstrap().await;
        idp.set_account("alice", person(json!([])));
        let browser = Browser::new(&app);

        // A state that is not this browser's.
        let (_, to_provider) = browser.start(None).await;
        let back = browser.at_provider(&to_provider, "alice").await;
        let forged = back.replace("state=", "state=x");
        let refused = browser.callback(&forged).await;
        assert_eq!(refused.refusal(), Some("failed"));
        assert!(refused.session.is_none());

        // The same callback from another browser (no state cookie).
        let elsewhere = Browser::new(&app).callback(&back).await;
        assert_eq!(elsewhere.refusal(), Some("failed"));

        // A sign-in that worked, then its callback again.
        let (_, to_provider) = browser.start(None).await;
        let back = browser.at_provider(&to_provider, "alice").await;
        assert!(browser.callback(&back).await.session.is_some());
        let replayed = browser.callback(&back).await;
        assert_eq!(replayed.refusal(), Some("failed"));
        assert!(replayed.session.is_none());

        // A code brought back with a later sign-in's state: its PKCE verifier does not match.
        let (_, first) = browser.start(None).await;
        let code_of_first = browser.at_provider(&first, "alice").await;
        let (_, second) = browser.start(None).await;
        let second_back = browser.at_provider(&second, "alice").await;
        let state_of_second = second_back
            .split("state=")
            .nth(1)
            .unwrap()
            .split('&')
            .next()
            .unwrap();
        let code = code_of_first
            .split("code=")
            .nth(1)
            .unwrap()
            .split('&')
            .next()
            .unwrap();
        let mixed = format!(
            "{}/api/oidc/callback?code={code}&state={state_of_second}",
            app.url
        );
        let refused = browser.callback(&mixed).await;
        assert_eq!(refused.refusal(), Some("failed"));
        assert!(refused.session.is_none());
        assert_eq!(user_count(&app, &admin).await, 2, "admin and alice only");
    }
);

sso_test!(
    a_token_signed_by_another_key_is_refused,
    no_change,
    |app, idp| {
        let admin = app.bootstrap().await;
        idp.publish_other_key();
        idp.set_account("alice", person(json!([])));
        let done = Browser::new(&app).sign_in("alice", None).await;
        assert_eq!(done.refusal(), Some("failed"));
        assert!(done.session.is_none());
        assert_eq!(user_count(&app, &admin).await, 1);
    }
);

sso_test!(
    next_goes_only_to_paths_on_this_site,
    no_change,
    |app, idp| {
        idp.set_account("alice", person(json!([])));
        let browser = Browser::new(&app);
        for hostile in [
            "https://evil.example/",
            "//evil.example/x",
            "/\\evil.example",
            "javascript:alert(1)",
        ] {
            let done = browser.sign_in("alice", Some(hostile)).await;
            assert_eq!(done.location, "/", "next={hostile}");
            assert!(done.session.is_some());
        }
    }
);

sso_test!(
    a_provider_without_an_email_cannot_create_an_account,
    no_change,
    |app, idp| {
        let admin = app.bootstrap().await;
        idp.set_account("nomail", json!({"preferred_username": "nomail"}));
        let done = Browser::new(&app).sign_in("nomail", None).await;
        assert_eq!(done.refusal(), Some("no_email"));
        assert!(done.session.is_none());
        assert_eq!(user_count(&app, &admin).await, 1);
    }
);

sso_test!(a_cancelled_sign_in_says_so, no_change, |app, _idp| {
    let browser = Browser::new(&app);
    let (_, to_provider) = browser.start(None).await;
    let state = to_provider
        .split("state=")
        .nth(1)
        .unwrap()
        .split('&')
        .next()
        .unwrap();
    let done = browser
        .callback(&format!(
            "{}/api/oidc/callback?error=access_denied&state={state}",
            app.url
        ))
        .await;
    assert_eq!(done.refusal(), Some("cancelled"));
    assert!(done.session.is_none());
});

#[tokio::test]
async fn a_provider_that_is_down_at_start_leaves_passwords_working_and_is_retried() {
    let port = free_port();
    let mut oidc = Provider::start(json!({})).config();
    oidc.issuer = format!("http://127.0.0.1:{port}");
    let app = TestApp::spawn_with(
        Backend::Sqlite,
        Config {
            oidc: Some(oidc),
            ..Config::default()
        },
    )
    .await;
    app.clock
        .set(klaxon_core::Clock::now(&klaxon_core::SystemClock));
    app.bootstrap().await;
    let config = app.get("/api/auth/config", &Auth::None).await.expect(200);
    assert_eq!(config["oidc"], true);
    assert_eq!(config["oidc_available"], false);
    let browser = Browser::new(&app);
    let (status, location) = browser.start(Some("/teams")).await;
    assert_eq!(status, 302);
    assert_eq!(location, "/login?sso_error=unavailable&next=/teams");
    app.login("admin", "admin password").await;

    let idp = Provider::start_on(json!({}), Some(port));
    idp.set_account("alice", person(json!([])));
    let done = browser.sign_in("alice", None).await;
    assert!(done.session.is_some(), "{}", done.location);
    let config = app.get("/api/auth/config", &Auth::None).await.expect(200);
    assert_eq!(config["oidc_available"], true);
    assert_eq!(config["oidc_name"], "Test IdP");
}

#[tokio::test]
async fn password_login_can_be_turned_off_when_single_sign_on_is_on() {
    let idp = Provider::start(json!({}));
    let app = TestApp::spawn_with(
        Backend::Sqlite,
        Config {
            oidc: Some(idp.config()),
            password_login: false,
            ..Config::default()
        },
    )
    .await;
    app.bootstrap().await;
    let config = app.get("/api/auth/config", &Auth::None).await.expect(200);
    assert_eq!(config["password_login"], false);
    let m = app
        .post(
            "/api/auth/login",
            &Auth::None,
            json!({"username": "admin", "password": "admin password"}),
        )
        .await
        .expect_error(403, "forbidden");
    assert!(m.contains("single sign-on"), "{m}");
    // Nor can a password account be made by signing up.
    app.post(
        "/api/signup",
        &Auth::None,
        json!({"username": "eve", "password": "eve password"}),
    )
    .await
    .expect_error(403, "forbidden");
    // The sign-in page offers only the provider.
    let html = app
        .client
        .get(format!("{}/login", app.url))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(html.contains("Sign in with Test IdP"));
    assert!(!html.contains("id=\"password\""));
}

#[tokio::test]
async fn without_single_sign_on_its_routes_are_not_found() {
    let app = TestApp::spawn(Backend::Sqlite).await;
    app.get("/api/oidc/login", &Auth::None)
        .await
        .expect_error(404, "not_found");
    app.get("/api/oidc/callback?code=x&state=y", &Auth::None)
        .await
        .expect_error(404, "not_found");
    let config = app.get("/api/auth/config", &Auth::None).await.expect(200);
    assert_eq!(config["oidc"], false);
    assert_eq!(config["oidc_available"], false);
}
