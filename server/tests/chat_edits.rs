//! Slack and Mattermost channels given by id: the install's Slack app and Mattermost bot post
//! there through their APIs (stand-ins in `common::chat` that check the documented shapes), and
//! an incident's first message is edited in place as the incident moves, whoever moved it, so
//! the channel never shows a stale "opened" with an Acknowledge button nobody needs.

use crate::common::chat::{Chat, Post, MATTERMOST_BOT_TOKEN, SLACK_BOT_TOKEN};
use crate::common::{test_config, TestApp};
use klaxon_core::roads::mattermost::api::MattermostBot;
use klaxon_core::roads::slack::api::SlackBot;
use serde_json::{json, Value};

const SLACK_CHANNEL: &str = "C0123ABCD";
const MM_CHANNEL: &str = "4xp9fdt77pncbef59f4k1qe83o";

fn config(chat: &Chat) -> klaxon_core::Config {
    let mut c = test_config();
    c.roads.slack_signing_secret = Some("slack-signing-secret".into());
    c.roads.slack_bot = Some(SlackBot {
        api_url: format!("{}/slack-api", chat.url),
        token: SLACK_BOT_TOKEN.into(),
    });
    c.roads.mattermost_token = Some("mm-slash-command-token".into());
    c.roads.mattermost_bot = Some(MattermostBot {
        url: format!("{}/mm", chat.url),
        token: MATTERMOST_BOT_TOKEN.into(),
    });
    c
}

#[tokio::test]
async fn slack_and_mattermost_messages_are_edited_as_the_incident_moves() {
    let chat = Chat::start().await;
    let app = TestApp::spawn_with(crate::common::Backend::Sqlite, config(&chat)).await;
    edits(&app, &chat).await;
}

#[tokio::test]
#[cfg_attr(
    not(postgres_tests),
    ignore = "needs KLAXON_TEST_DATABASE_URL at build time"
)]
async fn slack_and_mattermost_messages_are_edited_as_the_incident_moves_postgres() {
    let chat = Chat::start().await;
    let backend = crate::common::Backend::Postgres(crate::common::postgres_schema().await);
    let app = TestApp::spawn_with(backend, config(&chat)).await;
    edits(&app, &chat).await;
}

/// The action ids of a Slack message's buttons.
fn slack_actions(body: &Value) -> Vec<String> {
    body["blocks"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|b| b["elements"].as_array().cloned().unwrap_or_default())
        .filter_map(|e| e["action_id"].as_str().map(str::to_string))
        .collect()
}

/// The ids of a Mattermost attachment's buttons.
fn mm_actions(props: &Value) -> Vec<String> {
    props["attachments"][0]["actions"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|a| a["id"].as_str().map(str::to_string))
        .collect()
}

fn bodies(posts: Vec<Post>) -> Vec<Value> {
    posts.into_iter().map(|p| p.body).collect()
}

async fn edits(app: &TestApp, chat: &Chat) {
    let w = app.paging_world().await;
    let path = format!("/api/teams/{}/channels", w.team);
    for (kind, target) in [("slack", SLACK_CHANNEL), ("mattermost", MM_CHANNEL)] {
        let made = app
            .post(
                &path,
                &w.admin,
                json!({"name": kind, "kind": kind, "target": target}),
            )
            .await
            .expect(201);
        assert_eq!(made["target"], target, "an id is no secret: shown as it is");
    }
    let id = app.fire(&w.key, "db-down").await;
    app.announce().await;
    let slack = bodies(chat.posts("/slack-api/chat.postMessage"));
    assert_eq!(slack.len(), 1);
    assert_eq!(slack[0]["channel"], SLACK_CHANNEL);
    assert_eq!(
        slack_actions(&slack[0]),
        [
            "klaxon_ack",
            "klaxon_resolve",
            "klaxon_snooze",
            "klaxon_take",
            "klaxon_open"
        ]
    );
    let mm = bodies(chat.posts("/mm/api/v4/posts"));
    assert_eq!(mm.len(), 1);
    assert_eq!(mm[0]["channel_id"], MM_CHANNEL);
    assert_eq!(
        mm_actions(&mm[0]["props"]),
        ["ack", "resolve", "snooze", "take"]
    );
    assert!(chat.posts("/slack-api/chat.update").is_empty());

    // Alice acknowledges in the app: each channel hears it, and its first message is edited to
    // show who has it, without the Acknowledge button.
    app.post(
        &format!("/api/incidents/{id}/acknowledge"),
        &w.alice.1,
        json!({}),
    )
    .await
    .expect(200);
    app.announce().await;
    assert_eq!(chat.posts("/slack-api/chat.postMessage").len(), 2);
    let updates = bodies(chat.posts("/slack-api/chat.update"));
    assert_eq!(updates.len(), 1, "{updates:?}");
    assert_eq!(
        (updates[0]["channel"].as_str(), updates[0]["ts"].as_str()),
        (Some(SLACK_CHANNEL), Some("1764000000.000001"))
    );
    let text = updates[0]["text"].as_str().unwrap();
    assert!(text.contains("acknowledged by alice"), "{text}");
    assert_eq!(
        slack_actions(&updates[0]),
        [
            "klaxon_resolve",
            "klaxon_snooze",
            "klaxon_take",
            "klaxon_open"
        ]
    );
    let patches = chat.posts("/mm/api/v4/posts/");
    assert_eq!(patches.len(), 1, "{patches:?}");
    assert_eq!(
        patches[0].path,
        format!("/mm/api/v4/posts/{:0>26}/patch", "post1")
    );
    let props = &patches[0].body["props"];
    assert!(
        props["attachments"][0]["fallback"]
            .as_str()
            .unwrap()
            .contains("acknowledged by alice"),
        "{props}"
    );
    assert_eq!(mm_actions(props), ["resolve", "snooze", "take"]);

    // Resolved: the first messages keep no buttons that act.
    app.clear(&w.key, "db-down").await;
    app.announce().await;
    let updates = bodies(chat.posts("/slack-api/chat.update"));
    assert_eq!(updates.len(), 2);
    assert_eq!(updates[1]["ts"], "1764000000.000001");
    assert_eq!(slack_actions(&updates[1]), ["klaxon_open"]);
    let patches = chat.posts("/mm/api/v4/posts/");
    assert_eq!(patches.len(), 2);
    assert!(mm_actions(&patches[1].body["props"]).is_empty());
}

#[tokio::test]
async fn a_channel_id_needs_the_app_or_bot_that_posts_there() {
    let app = TestApp::spawn_with(crate::common::Backend::Sqlite, test_config()).await;
    let w = app.paging_world().await;
    let path = format!("/api/teams/{}/channels", w.team);
    let said = app
        .post(
            &path,
            &w.admin,
            json!({"name": "s", "kind": "slack", "target": SLACK_CHANNEL}),
        )
        .await
        .expect_error(400, "invalid");
    assert!(said.contains("KLAXON_SLACK_BOT_TOKEN"), "{said}");
    let said = app
        .post(
            &path,
            &w.admin,
            json!({"name": "m", "kind": "mattermost", "target": MM_CHANNEL}),
        )
        .await
        .expect_error(400, "invalid");
    assert!(said.contains("KLAXON_MATTERMOST_BOT_TOKEN"), "{said}");
}

#[tokio::test]
async fn a_channel_that_hears_only_openings_still_shows_who_has_the_incident() {
    let chat = Chat::start().await;
    let app = TestApp::spawn_with(crate::common::Backend::Sqlite, config(&chat)).await;
    quiet_edits(&app, &chat).await;
}

#[tokio::test]
#[cfg_attr(
    not(postgres_tests),
    ignore = "needs KLAXON_TEST_DATABASE_URL at build time"
)]
async fn a_channel_that_hears_only_openings_still_shows_who_has_the_incident_postgres() {
    let chat = Chat::start().await;
    let backend = crate::common::Backend::Postgres(crate::common::postgres_schema().await);
    let app = TestApp::spawn_with(backend, config(&chat)).await;
    quiet_edits(&app, &chat).await;
}

async fn quiet_edits(app: &TestApp, chat: &Chat) {
    let w = app.paging_world().await;
    let path = format!("/api/teams/{}/channels", w.team);
    app.post(
        &path,
        &w.admin,
        json!({"name": "s", "kind": "slack", "target": SLACK_CHANNEL, "events": ["opened"]}),
    )
    .await
    .expect(201);
    // A webhook channel cannot edit: it hears only what it chose, and nothing more is queued.
    app.post(
        &path,
        &w.admin,
        json!({"name": "h", "kind": "slack", "target": format!("{}/slack/ops", chat.url), "events": ["opened"]}),
    )
    .await
    .expect(201);
    let id = app.fire(&w.key, "db-down").await;
    app.announce().await;
    assert_eq!(chat.posts("/slack-api/chat.postMessage").len(), 1);
    assert_eq!(chat.posts("/slack/ops").len(), 1);

    app.post(
        &format!("/api/incidents/{id}/acknowledge"),
        &w.alice.1,
        json!({}),
    )
    .await
    .expect(200);
    app.announce().await;
    // Nothing new is posted anywhere; the app's message is edited.
    assert_eq!(chat.posts("/slack-api/chat.postMessage").len(), 1);
    assert_eq!(chat.posts("/slack/ops").len(), 1);
    let updates = bodies(chat.posts("/slack-api/chat.update"));
    assert_eq!(updates.len(), 1, "{updates:?}");
    assert_eq!(updates[0]["ts"], "1764000000.000001");
    let text = updates[0]["text"].as_str().unwrap();
    assert!(text.contains("acknowledged by alice"), "{text}");

    // A second incident opens while the first resolves: one message for the opening, one edit
    // for the resolve, and the opening's message does not wait behind the edit.
    let second = app.fire(&w.key, "api-down").await;
    app.clear(&w.key, "db-down").await;
    let report = app.announce().await;
    assert_eq!(report.failed, 0);
    let posted = bodies(chat.posts("/slack-api/chat.postMessage"));
    assert_eq!(posted.len(), 2);
    assert!(slack_actions(&posted[1]).contains(&"klaxon_ack".to_string()));
    let updates = bodies(chat.posts("/slack-api/chat.update"));
    assert_eq!(updates.len(), 2, "{updates:?}");
    assert_eq!(updates[1]["ts"], "1764000000.000001");
    assert_eq!(slack_actions(&updates[1]), ["klaxon_open"]);
    assert_ne!(second, id);

    // The channel's listing never shows a quiet post as waiting.
    let listed = app.get(&path, &w.admin).await.expect(200);
    assert!(
        listed.as_array().unwrap().iter().all(|c| c["waiting"] == 0),
        "{listed}"
    );
}

#[tokio::test]
async fn a_storm_summary_still_edits_the_messages_of_its_incidents() {
    let chat = Chat::start().await;
    let app = TestApp::spawn_with(crate::common::Backend::Sqlite, config(&chat)).await;
    let w = app.paging_world().await;
    let path = format!("/api/teams/{}/channels", w.team);
    app.post(
        &path,
        &w.admin,
        json!({"name": "s", "kind": "slack", "target": SLACK_CHANNEL}),
    )
    .await
    .expect(201);
    let id = app.fire(&w.key, "db-down").await;
    app.announce().await;
    for n in 1..=4 {
        app.fire(&w.key, &format!("storm-{n}")).await;
    }
    app.announce().await;
    assert_eq!(chat.posts("/slack-api/chat.postMessage").len(), 5);

    // The channel had its five messages this minute: what comes next waits for one summary.
    app.post(
        &format!("/api/incidents/{id}/acknowledge"),
        &w.alice.1,
        json!({}),
    )
    .await
    .expect(200);
    app.fire(&w.key, "storm-5").await;
    assert_eq!(app.announce().await.waiting, 2);
    app.clock.advance(60);
    let report = app.announce().await;
    assert_eq!((report.sent, report.summarised), (1, 2));
    let posted = bodies(chat.posts("/slack-api/chat.postMessage"));
    assert_eq!(posted.len(), 6);
    let updates = bodies(chat.posts("/slack-api/chat.update"));
    assert_eq!(updates.len(), 1, "{updates:?}");
    assert_eq!(updates[0]["ts"], "1764000000.000001");
    let text = updates[0]["text"].as_str().unwrap();
    assert!(text.contains("acknowledged by alice"), "{text}");
}
