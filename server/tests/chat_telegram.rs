//! Telegram, against a stand-in of the Bot API (`common::telegram`): a team's chat hears its
//! incidents with buttons; the bot's webhook takes updates only with the secret given to
//! `setWebhook`; a press acts as the linked person, is answered to the presser alone and edits
//! the announcement; `/link` links an account, and a reply to the announcement acts on it.

use crate::common::process::until;
use crate::common::telegram::{update_message, update_press, Telegram, SECRET, TOKEN};
use crate::common::{test_config, TestApp};
use klaxon_core::roads::telegram::TelegramConfig;
use serde_json::{json, Value};

const CHAT: i64 = -1_001_234_567_890;
const ALICE: i64 = 7001;
const DAVE: i64 = 7004;

fn config(api: &str) -> klaxon_core::Config {
    let mut c = test_config();
    c.roads.telegram = Some(TelegramConfig {
        api_url: api.to_string(),
        bot_token: TOKEN.into(),
        webhook_secret: Some(SECRET.into()),
    });
    c
}

/// Sends `update` to the webhook with `secret`: the status.
async fn deliver(app: &TestApp, update: &Value, secret: Option<&str>) -> u16 {
    let mut req = app
        .client
        .post(format!("{}/api/chat/telegram/webhook", app.url))
        .json(update);
    if let Some(s) = secret {
        req = req.header("X-Telegram-Bot-Api-Secret-Token", s);
    }
    req.send().await.unwrap().status().as_u16()
}

/// The `n`th call of `method` the bot made, once it has.
async fn nth(tg: &Telegram, method: &str, n: usize) -> Value {
    until(&format!("{method} #{n}"), || async {
        tg.calls(method).get(n - 1).cloned()
    })
    .await
}

/// The callback data of a message's buttons.
fn buttons(body: &Value) -> Vec<String> {
    body["reply_markup"]["inline_keyboard"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|row| row.as_array().unwrap().clone())
        .filter_map(|b| b["callback_data"].as_str().map(str::to_string))
        .collect()
}

#[tokio::test]
async fn a_telegram_chat_hears_the_team_and_its_buttons_act_as_the_linked_person() {
    let tg = Telegram::start().await;
    let app = TestApp::spawn_with(crate::common::Backend::Sqlite, config(&tg.url)).await;
    the_chat_acts(&app, &tg).await;
}

#[tokio::test]
#[cfg_attr(
    not(postgres_tests),
    ignore = "needs KLAXON_TEST_DATABASE_URL at build time"
)]
async fn a_telegram_chat_hears_the_team_and_its_buttons_act_as_the_linked_person_postgres() {
    let tg = Telegram::start().await;
    let backend = crate::common::Backend::Postgres(crate::common::postgres_schema().await);
    let app = TestApp::spawn_with(backend, config(&tg.url)).await;
    the_chat_acts(&app, &tg).await;
}

async fn the_chat_acts(app: &TestApp, tg: &Telegram) {
    let w = app.paging_world().await;
    let path = format!("/api/teams/{}/channels", w.team);
    app.post(
        &path,
        &w.admin,
        json!({"name": "ops", "kind": "telegram", "target": "https://t.me/ops"}),
    )
    .await
    .expect_error(400, "invalid");
    app.post(
        &path,
        &w.admin,
        json!({"name": "ops", "kind": "telegram", "target": CHAT.to_string()}),
    )
    .await
    .expect(201);
    let id = app.fire(&w.key, "db-down").await;
    app.announce().await;
    let sent = nth(tg, "sendMessage", 1).await;
    assert_eq!(sent["chat_id"], CHAT.to_string());
    assert_eq!(sent["parse_mode"], "HTML");
    assert!(sent["text"]
        .as_str()
        .unwrap()
        .contains("<b>Critical incident opened"));
    let data = |act: &str| format!("{act}:{id}");
    assert_eq!(
        buttons(&sent),
        [data("ack"), data("resolve"), data("snooze"), data("take")]
    );

    // Updates without the webhook's secret are refused and change nothing.
    let press = update_press(1, ALICE, CHAT, 1, &data("ack"));
    assert_eq!(deliver(app, &press, None).await, 401);
    assert_eq!(deliver(app, &press, Some("guess")).await, 401);

    // Not linked yet: the press is answered with how to link, and nothing changes.
    assert_eq!(deliver(app, &press, Some(SECRET)).await, 200);
    let answer = nth(tg, "answerCallbackQuery", 1).await;
    assert_eq!(answer["callback_query_id"], "q1");
    assert!(
        answer["text"].as_str().unwrap().contains("not linked"),
        "{answer}"
    );
    assert_eq!(app.detail(&w.admin, id).await["state"], "triggered");

    // Alice links her account by a message to the bot with her code.
    let made = app
        .post("/api/me/chat-link-code", &w.alice.1, json!({}))
        .await;
    let code = made.expect(201)["code"].as_str().unwrap().to_string();
    let link = update_message(2, ALICE, ALICE, &format!("/link {code}"), None);
    assert_eq!(deliver(app, &link, Some(SECRET)).await, 200);
    let reply = nth(tg, "sendMessage", 2).await;
    assert!(
        reply["text"].as_str().unwrap().contains("acts as alice"),
        "{reply}"
    );

    // Her press acknowledges as her; she alone is told, and the announcement is edited.
    let press = update_press(3, ALICE, CHAT, 1, &data("ack"));
    assert_eq!(deliver(app, &press, Some(SECRET)).await, 200);
    let answer = nth(tg, "answerCallbackQuery", 2).await;
    assert_eq!(answer["text"], format!("#{id}: Acknowledged: it is yours."));
    assert_eq!(app.detail(&w.admin, id).await["acknowledged_by"], "alice");
    let edit = nth(tg, "editMessageText", 1).await;
    assert_eq!(
        (edit["chat_id"].clone(), edit["message_id"].clone()),
        (json!(CHAT.to_string()), json!(1))
    );
    assert!(
        edit["text"]
            .as_str()
            .unwrap()
            .contains("acknowledged by alice"),
        "{edit}"
    );
    assert_eq!(
        buttons(&edit),
        [data("resolve"), data("snooze"), data("take")]
    );

    // Someone linked but outside the team is told so.
    let (_, dave) = app.user(&w.admin, "dave").await;
    let made = app.post("/api/me/chat-link-code", &dave, json!({})).await;
    let code = made.expect(201)["code"].as_str().unwrap().to_string();
    deliver(
        app,
        &update_message(4, DAVE, DAVE, &format!("/link@klaxon_bot {code}"), None),
        Some(SECRET),
    )
    .await;
    nth(tg, "sendMessage", 3).await;
    deliver(
        app,
        &update_press(5, DAVE, CHAT, 1, &data("resolve")),
        Some(SECRET),
    )
    .await;
    let answer = nth(tg, "answerCallbackQuery", 3).await;
    assert!(
        answer["text"]
            .as_str()
            .unwrap()
            .contains("not in this incident's team"),
        "{answer}"
    );

    // Alice's reply to the announcement resolves it with her words as the fix.
    let reply = update_message(6, ALICE, CHAT, "resolve rolled back", Some(1));
    deliver(app, &reply, Some(SECRET)).await;
    let said = nth(tg, "sendMessage", 4).await;
    assert_eq!(said["text"], format!("#{id}: Resolved."));
    assert_eq!(said["reply_parameters"]["message_id"], 1006);
    let d = app.detail(&w.admin, id).await;
    assert_eq!(d["state"], "resolved");
    assert_eq!(d["notes"][0]["text"], "rolled back");
    let edit = nth(tg, "editMessageText", 2).await;
    assert!(buttons(&edit).is_empty(), "nothing left to press: {edit}");
}

#[tokio::test]
async fn linking_telegram_in_a_private_chat_makes_it_a_road_that_pages_with_a_button() {
    let tg = Telegram::start().await;
    let app = TestApp::spawn_with(crate::common::Backend::Sqlite, config(&tg.url)).await;
    the_private_chat_pages(&app, &tg).await;
}

#[tokio::test]
#[cfg_attr(
    not(postgres_tests),
    ignore = "needs KLAXON_TEST_DATABASE_URL at build time"
)]
async fn linking_telegram_in_a_private_chat_makes_it_a_road_that_pages_with_a_button_postgres() {
    let tg = Telegram::start().await;
    let backend = crate::common::Backend::Postgres(crate::common::postgres_schema().await);
    let app = TestApp::spawn_with(backend, config(&tg.url)).await;
    the_private_chat_pages(&app, &tg).await;
}

/// The person's Telegram methods, as their profile lists them.
async fn telegram_methods(app: &TestApp, user: &(i64, crate::common::Auth)) -> Vec<Value> {
    let path = format!("/api/users/{}/contact-methods", user.0);
    let listed = app.get(&path, &user.1).await.expect(200);
    listed
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["kind"] == "telegram")
        .cloned()
        .collect()
}

async fn the_private_chat_pages(app: &TestApp, tg: &Telegram) {
    let w = app.paging_world().await;
    // The API takes no Telegram method: only a link in a private chat makes one.
    let path = format!("/api/users/{}/contact-methods", w.alice.0);
    app.post(
        &path,
        &w.alice.1,
        json!({"name": "T", "kind": "telegram", "target": ALICE.to_string()}),
    )
    .await
    .expect_error(400, "invalid");

    // Bob links in the team's group: his account acts, but the group is nobody's road.
    let (_, bob) = &w.bob;
    let code = app.post("/api/me/chat-link-code", bob, json!({})).await;
    let code = code.expect(201)["code"].as_str().unwrap().to_string();
    let link = update_message(1, 7002, CHAT, &format!("/link {code}"), None);
    assert_eq!(deliver(app, &link, Some(SECRET)).await, 200);
    let said = nth(tg, "sendMessage", 1).await;
    assert!(
        !said["text"].as_str().unwrap().contains("page you"),
        "{said}"
    );
    assert!(telegram_methods(app, &w.bob).await.is_empty());

    // Alice opens the bot's link with her code (`/start 123456`) in her private chat.
    let code = app
        .post("/api/me/chat-link-code", &w.alice.1, json!({}))
        .await;
    let code = code.expect(201)["code"].as_str().unwrap().to_string();
    let start = update_message(2, ALICE, ALICE, &format!("/start {code}"), None);
    assert_eq!(deliver(app, &start, Some(SECRET)).await, 200);
    let said = nth(tg, "sendMessage", 2).await;
    assert!(
        said["text"]
            .as_str()
            .unwrap()
            .contains("page you in this chat"),
        "{said}"
    );
    let methods = telegram_methods(app, &w.alice).await;
    assert_eq!(methods.len(), 1, "{methods:?}");
    assert_eq!(methods[0]["verified"], true);
    app.put(
        &format!("/api/users/{}/notification-rules", w.alice.0),
        &w.alice.1,
        json!({"high": [{"after_minutes": 0, "method_id": methods[0]["id"]}], "low": []}),
    )
    .await
    .expect(200);

    // Her page comes to her chat with a button that acknowledges as her.
    let id = app.fire(&w.key, "db-down").await;
    app.tick().await;
    let page = nth(tg, "sendMessage", 3).await;
    assert_eq!(page["chat_id"], ALICE.to_string());
    assert!(page["text"].as_str().unwrap().starts_with("<b>"), "{page}");
    assert_eq!(buttons(&page), [format!("ack:{id}")]);
    let press = update_press(3, ALICE, ALICE, 3, &format!("ack:{id}"));
    assert_eq!(deliver(app, &press, Some(SECRET)).await, 200);
    let answer = nth(tg, "answerCallbackQuery", 1).await;
    assert_eq!(answer["text"], format!("#{id}: Acknowledged: it is yours."));
    assert_eq!(app.detail(&w.admin, id).await["acknowledged_by"], "alice");

    // A reply to the page acts on its incident.
    let reply = update_message(4, ALICE, ALICE, "resolve restarted it", Some(3));
    deliver(app, &reply, Some(SECRET)).await;
    let said = nth(tg, "sendMessage", 4).await;
    assert_eq!(said["text"], format!("#{id}: Resolved."));

    // Unlinking from Telegram takes the road away with the link.
    let unlink = update_message(5, ALICE, ALICE, "/unlink", None);
    deliver(app, &unlink, Some(SECRET)).await;
    nth(tg, "sendMessage", 5).await;
    assert!(telegram_methods(app, &w.alice).await.is_empty());
}
