//! Discord, against a stand-in of its REST API (`common::discord`): a team's channel hears its
//! incidents as an embed with buttons; interactions signed by the application's key (PyPI
//! `cryptography`) act as the linked person and are answered to them alone, and the
//! announcement is edited; unsigned, wrongly signed or stale interactions change nothing.

use crate::common::discord::{public_key, sign, Discord, TOKEN};
use crate::common::process::until;
use crate::common::{test_config, TestApp};
use klaxon_core::roads::discord::DiscordConfig;
use klaxon_core::Clock;
use serde_json::{json, Value};

const CHANNEL: &str = "1234567890123456789";

fn config(api: &str) -> klaxon_core::Config {
    let mut c = test_config();
    let key = hex::decode(public_key()).unwrap();
    c.roads.discord = Some(DiscordConfig {
        api_url: api.to_string(),
        bot_token: TOKEN.into(),
        public_key: Some(key.try_into().unwrap()),
    });
    c
}

/// Sends `interaction` signed at `at` (or with `sig`): the status and the answer.
async fn interact(app: &TestApp, interaction: &Value, at: i64, sig: Option<&str>) -> (u16, Value) {
    let body = interaction.to_string();
    let sig = sig.map_or_else(|| sign(&at.to_string(), body.as_bytes()), str::to_string);
    let res = app
        .client
        .post(format!("{}/api/chat/discord/interactions", app.url))
        .header("content-type", "application/json")
        .header("X-Signature-Ed25519", sig)
        .header("X-Signature-Timestamp", at.to_string())
        .body(body)
        .send()
        .await
        .unwrap();
    let status = res.status().as_u16();
    (status, res.json().await.unwrap_or(Value::Null))
}

fn press(user: &str, custom_id: &str) -> Value {
    json!({"type": 3, "id": "i1", "application_id": "a1", "token": "t",
           "member": {"user": {"id": user, "username": format!("u{user}")}},
           "channel_id": CHANNEL, "message": {"id": "m"},
           "data": {"custom_id": custom_id, "component_type": 2}})
}

fn link(user: &str, code: &str) -> Value {
    json!({"type": 2, "id": "i2", "application_id": "a1", "token": "t",
           "member": {"user": {"id": user, "username": format!("u{user}")}},
           "data": {"name": "klaxon", "type": 1,
                    "options": [{"name": "link", "type": 1, "options": [{"name": "code", "type": 3, "value": code}]}]}})
}

fn said(answer: &Value) -> String {
    assert_eq!(answer["type"], 4, "{answer}");
    assert_eq!(
        answer["data"]["flags"], 64,
        "only the one who acted sees it"
    );
    answer["data"]["content"].as_str().unwrap().to_string()
}

fn custom_ids(body: &Value) -> Vec<String> {
    body["components"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|row| row["components"].as_array().unwrap().clone())
        .filter_map(|b| b["custom_id"].as_str().map(str::to_string))
        .collect()
}

#[tokio::test]
async fn interactions_signed_by_the_application_act_and_the_announcement_is_edited() {
    let discord = Discord::start().await;
    let app = TestApp::spawn_with(crate::common::Backend::Sqlite, config(&discord.url)).await;
    interactions_act(&app, &discord).await;
}

#[tokio::test]
#[cfg_attr(
    not(postgres_tests),
    ignore = "needs KLAXON_TEST_DATABASE_URL at build time"
)]
async fn interactions_signed_by_the_application_act_and_the_announcement_is_edited_postgres() {
    let discord = Discord::start().await;
    let backend = crate::common::Backend::Postgres(crate::common::postgres_schema().await);
    let app = TestApp::spawn_with(backend, config(&discord.url)).await;
    interactions_act(&app, &discord).await;
}

async fn interactions_act(app: &TestApp, discord: &Discord) {
    let w = app.paging_world().await;
    app.post(
        &format!("/api/teams/{}/channels", w.team),
        &w.admin,
        json!({"name": "ops", "kind": "discord", "target": CHANNEL}),
    )
    .await
    .expect(201);
    let id = app.fire(&w.key, "db-down").await;
    app.announce().await;
    let (path, sent) = discord.calls("POST").remove(0);
    assert_eq!(path, CHANNEL);
    assert_eq!(sent["allowed_mentions"]["parse"], json!([]));
    let ack = format!("klaxon:ack:{id}");
    assert_eq!(
        custom_ids(&sent),
        [
            ack.clone(),
            format!("klaxon:resolve:{id}"),
            format!("klaxon:snooze:{id}"),
            format!("klaxon:take:{id}")
        ]
    );

    // A ping is answered pong; unsigned, wrongly signed and stale requests are refused.
    let now = app.clock.now();
    assert_eq!(
        interact(app, &json!({"type": 1}), now, None).await.1,
        json!({"type": 1})
    );
    assert_eq!(
        interact(app, &press("501", &ack), now, Some("00")).await.0,
        401
    );
    let other = sign(
        &(now + 1).to_string(),
        press("501", &ack).to_string().as_bytes(),
    );
    assert_eq!(
        interact(app, &press("501", &ack), now, Some(&other))
            .await
            .0,
        401
    );
    assert_eq!(
        interact(app, &press("501", &ack), now - 6 * 60, None)
            .await
            .0,
        401
    );
    assert_eq!(app.detail(&w.admin, id).await["state"], "triggered");

    // Unlinked: told how to link. Linked by `/klaxon link`: the press acts as her.
    let (_, answer) = interact(app, &press("501", &ack), now, None).await;
    assert!(said(&answer).contains("not linked"), "{answer}");
    let made = app
        .post("/api/me/chat-link-code", &w.alice.1, json!({}))
        .await;
    let code = made.expect(201)["code"].as_str().unwrap().to_string();
    let (_, answer) = interact(app, &link("501", &code), now, None).await;
    assert!(said(&answer).contains("acts as alice"), "{answer}");
    let (status, answer) = interact(app, &press("501", &ack), now, None).await;
    assert_eq!(status, 200);
    assert_eq!(said(&answer), format!("#{id}: Acknowledged: it is yours."));
    assert_eq!(app.detail(&w.admin, id).await["acknowledged_by"], "alice");
    let (path, edit) = until("the announcement edited", || async {
        discord.calls("PATCH").first().cloned()
    })
    .await;
    assert_eq!(path, format!("{CHANNEL}/{}", 1_300_000_000_000_000_001u64));
    assert!(edit["embeds"][0]["title"]
        .as_str()
        .unwrap()
        .contains("acknowledged by alice"));
    assert_eq!(
        custom_ids(&edit),
        [
            format!("klaxon:resolve:{id}"),
            format!("klaxon:snooze:{id}"),
            format!("klaxon:take:{id}")
        ]
    );

    // A second press is harmless.
    let (_, answer) = interact(app, &press("501", &ack), now, None).await;
    assert_eq!(
        said(&answer),
        format!("#{id}: Already acknowledged by alice.")
    );
}
