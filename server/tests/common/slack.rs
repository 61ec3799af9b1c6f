//! Slack's side of a Slack app's requests to Klaxon: a slash command's form and a button's
//! `block_actions` interaction, signed as Slack signs them (`slack_sign.py`, Python's hmac
//! written from Slack's documentation). Shapes:
//! <https://api.slack.com/interactivity/slash-commands#app_command_handling> (the command's
//! form fields) and <https://api.slack.com/reference/interaction-payloads/block-actions> (the
//! interaction's `payload`: `type`, `user`, `team`, `response_url`, `actions`).

use super::{into_res, Res, TestApp};
use klaxon_core::Clock;
use reqwest::Method;
use serde_json::{json, Value};

pub const SECRET: &str = "8f742231b10e8888abcd99yyyzzz85a5";

/// The `X-Slack-Signature` Slack would send with `body` at `timestamp`.
pub fn sign(secret: &str, timestamp: i64, body: &[u8]) -> String {
    use std::io::Write;
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/common/slack_sign.py");
    let mut child = std::process::Command::new("python3")
        .args([script, secret, &timestamp.to_string()])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("python3 runs");
    child.stdin.take().unwrap().write_all(body).unwrap();
    let out = child.wait_with_output().unwrap();
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

/// A form as Slack posts it.
pub fn form(fields: &[(&str, &str)]) -> String {
    url::form_urlencoded::Serializer::new(String::new())
        .extend_pairs(fields)
        .finish()
}

/// A person in the workspace `T0ACME`.
pub struct SlackUser {
    pub id: &'static str,
    pub name: &'static str,
}

impl SlackUser {
    /// The `/klaxon` command with `text`, as this person types it.
    pub fn command(&self, text: &str) -> String {
        form(&[
            ("token", "deprecated-verification-token"),
            ("team_id", "T0ACME"),
            ("team_domain", "acme"),
            ("channel_id", "C0PAGES"),
            ("user_id", self.id),
            ("user_name", self.name),
            ("command", "/klaxon"),
            ("text", text),
            (
                "response_url",
                "https://hooks.slack.com/commands/T0ACME/1/x",
            ),
            ("trigger_id", "13345224609.738474920.8088930838d88f008e0"),
            ("api_app_id", "A0KLAXON"),
        ])
    }

    /// This person pressing the button `action_id` (value `value`) on a message; Slack's
    /// answers to it go to `response_url`.
    pub fn press(&self, action_id: &str, value: &str, response_url: &str) -> String {
        let payload = json!({
            "type": "block_actions",
            "user": {"id": self.id, "username": self.name, "name": self.name, "team_id": "T0ACME"},
            "api_app_id": "A0KLAXON",
            "token": "deprecated-verification-token",
            "container": {"type": "message", "message_ts": "1548261231.000200", "channel_id": "C0PAGES", "is_ephemeral": false},
            "trigger_id": "12321423423.333649436676.d8c1bb837935619ccad0f624c448ffb3",
            "team": {"id": "T0ACME", "domain": "acme"},
            "channel": {"id": "C0PAGES", "name": "pages"},
            "response_url": response_url,
            "actions": [{
                "action_id": action_id,
                "block_id": "actions",
                "text": {"type": "plain_text", "text": "button", "emoji": true},
                "value": value,
                "type": "button",
                "action_ts": "1548426417.840180"
            }]
        });
        form(&[("payload", &payload.to_string())])
    }
}

impl TestApp {
    /// POSTs `body` to `path` signed with `secret` as Slack would at `at` (the app's clock's
    /// now when `None`).
    pub async fn signed_by_slack(
        &self,
        path: &str,
        body: &str,
        secret: &str,
        at: Option<i64>,
    ) -> Res {
        let at = at.unwrap_or_else(|| self.clock.now());
        let req = self
            .client
            .request(Method::POST, format!("{}{path}", self.url))
            .header("content-type", "application/x-www-form-urlencoded")
            .header("x-slack-request-timestamp", at.to_string())
            .header("x-slack-signature", sign(secret, at, body.as_bytes()))
            .body(body.to_string());
        into_res(req.send().await.expect("request sent")).await
    }
}

/// The `text` of a command's answer.
pub fn said(answer: &Value) -> String {
    answer["text"].as_str().unwrap_or_default().to_string()
}
