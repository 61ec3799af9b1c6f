//! A recording chat service for team channels, for the services that cannot run here: Slack's
//! incoming webhooks (`/slack/…`), Mattermost's (`/mattermost/hooks/…`, which takes Slack's
//! format), Discord's Slack-compatible endpoint (`/discord/…/slack`), Microsoft Teams workflow
//! webhooks (`/teams/…`), a receiver for Klaxon's signed webhook (`/hook/…`), and the two
//! calls each of Slack's Web API (`/slack-api/chat.postMessage`, `chat.update`, with the bot
//! token `SLACK_BOT_TOKEN`) and Mattermost's REST API (`/mm/api/v4/posts`, `…/{id}/patch`, with
//! `MATTERMOST_BOT_TOKEN`) Klaxon makes for messages it edits later. Each route
//! checks the body against the shape its service documents (`shapes`, with the fixtures in
//! `server/tests/fixtures/chat/` and where each comes from), answers as that service does, and
//! records what it accepted. It can be told to fail the next posts (500, or 429 with
//! `Retry-After`, as Slack rate-limits) or to redirect.

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::routing::any;
use axum::{Json, Router};
use serde_json::{json, Value};
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

/// One accepted post.
#[derive(Debug, Clone)]
pub struct Post {
    pub path: String,
    pub headers: HeaderMap,
    pub raw: Vec<u8>,
    pub body: Value,
}

impl Post {
    pub fn header(&self, name: &str) -> Option<String> {
        self.headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string)
    }
}

pub const SLACK_BOT_TOKEN: &str = "xoxb-1234-5678-test";
pub const MATTERMOST_BOT_TOKEN: &str = "mm-bot-token-9q7x";

#[derive(Default)]
struct Inner {
    posts: Vec<Post>,
    /// Messages posted through each API, numbering their ids.
    slack_made: u64,
    mm_made: u64,
    /// Scripted answers for the next posts: (status, Retry-After, Location).
    failures: VecDeque<(u16, Option<u64>, Option<String>)>,
    attempts: usize,
}

#[derive(Clone)]
pub struct Chat {
    pub url: String,
    inner: Arc<Mutex<Inner>>,
}

impl Chat {
    pub async fn start() -> Chat {
        let inner = Arc::new(Mutex::new(Inner::default()));
        let router = Router::new()
            .fallback(any(receive))
            .with_state(inner.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
        Chat { url, inner }
    }

    /// Posts accepted at paths starting with `prefix`, in order.
    pub fn posts(&self, prefix: &str) -> Vec<Post> {
        self.inner
            .lock()
            .unwrap()
            .posts
            .iter()
            .filter(|p| p.path.starts_with(prefix))
            .cloned()
            .collect()
    }

    pub fn attempts(&self) -> usize {
        self.inner.lock().unwrap().attempts
    }

    /// The next post is answered with `status` (and `Retry-After`), and not recorded.
    pub fn fail_next(&self, status: u16, retry_after: Option<u64>) {
        self.inner
            .lock()
            .unwrap()
            .failures
            .push_back((status, retry_after, None));
    }

    /// The next post is answered with a 302 to `location`.
    pub fn redirect_next(&self, location: &str) {
        self.inner
            .lock()
            .unwrap()
            .failures
            .push_back((302, None, Some(location.to_string())));
    }
}

async fn receive(
    State(inner): State<Arc<Mutex<Inner>>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    raw: Bytes,
) -> Response {
    let path = uri.path().to_string();
    if path.starts_with("/slack-api/") || path.starts_with("/mm/") {
        return api(&inner, &method, &path, headers, raw);
    }
    if method != Method::POST {
        return StatusCode::METHOD_NOT_ALLOWED.into_response();
    }
    let scripted = {
        let mut inner = inner.lock().unwrap();
        inner.attempts += 1;
        inner.failures.pop_front()
    };
    if let Some((status, retry_after, location)) = scripted {
        let mut r = (
            StatusCode::from_u16(status).unwrap(),
            "scripted failure: secret-upstream-words",
        )
            .into_response();
        if let Some(s) = retry_after {
            r.headers_mut()
                .insert("retry-after", s.to_string().parse().unwrap());
        }
        if let Some(l) = location {
            r.headers_mut().insert("location", l.parse().unwrap());
        }
        return r;
    }
    let body: Value = match serde_json::from_slice(&raw) {
        Ok(v) => v,
        Err(e) => {
            return (StatusCode::BAD_REQUEST, format!("invalid_payload: {e}")).into_response()
        }
    };
    let slack_format =
        path.starts_with("/slack/") || (path.starts_with("/discord/") && path.ends_with("/slack"));
    let checked = if path.starts_with("/mattermost/") {
        shapes::mattermost(&body)
    } else if slack_format {
        shapes::slack(&body)
    } else if path.starts_with("/teams/") {
        shapes::teams(&body)
    } else if path.starts_with("/hook/") {
        Ok(())
    } else {
        return StatusCode::NOT_FOUND.into_response();
    };
    if let Err(why) = checked {
        // Slack answers a malformed payload with 400 and a short code; the test fails on it.
        return (StatusCode::BAD_REQUEST, format!("invalid_blocks: {why}")).into_response();
    }
    inner.lock().unwrap().posts.push(Post {
        path: path.clone(),
        headers,
        raw: raw.to_vec(),
        body,
    });
    if path.starts_with("/teams/") {
        // A Teams workflow answers 202 Accepted.
        StatusCode::ACCEPTED.into_response()
    } else {
        (StatusCode::OK, "ok").into_response()
    }
}

/// Whether a signed delivery passes the documented check (Python's hmac, not Klaxon's code).
pub fn verify_signature(secret: &str, post: &Post, now: i64) -> String {
    use std::io::Write;
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/common/verify_signature.py"
    );
    let mut child = std::process::Command::new("python3")
        .args([
            script,
            secret,
            &post.header("klaxon-signature").unwrap(),
            &now.to_string(),
            "300",
        ])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("python3 runs");
    child.stdin.take().unwrap().write_all(&post.raw).unwrap();
    let out = child.wait_with_output().unwrap();
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

/// The shapes each service documents, as checks. Each check is also run on the documented
/// example it was written from (`fixtures/chat/*.json`), so the check cannot drift from it.
/// Slack's Web API (https://api.slack.com/methods/chat.postMessage, `chat.update`: a bearer
/// token, a `channel`, for an update its `ts`; HTTP 200 with `ok: false` and an error code for a
/// refusal) and Mattermost's (https://api.mattermost.com/#tag/posts: `POST /api/v4/posts` with a
/// `channel_id` and the attachments in `props`, answered 201 with the post and its 26-character
/// `id`; `PUT /api/v4/posts/{id}/patch`; 401 without the token).
fn api(
    inner: &Mutex<Inner>,
    method: &Method,
    path: &str,
    headers: HeaderMap,
    raw: Bytes,
) -> Response {
    let auth = headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_string();
    let body: Value = serde_json::from_slice(&raw).unwrap_or(Value::Null);
    let slack = path.starts_with("/slack-api/");
    let refused = |why: &str| -> Response {
        match slack {
            true => Json(json!({"ok": false, "error": why})).into_response(),
            false => (
                StatusCode::BAD_REQUEST,
                Json(json!({"id": why, "status_code": 400})),
            )
                .into_response(),
        }
    };
    let checked = match (slack, method.as_str(), path) {
        (true, _, _) if auth != format!("Bearer {SLACK_BOT_TOKEN}") => {
            return refused("invalid_auth")
        }
        (false, _, _) if auth != format!("Bearer {MATTERMOST_BOT_TOKEN}") => {
            return (
                StatusCode::UNAUTHORIZED,
                Json(json!({"id": "api.context.session_expired.app_error"})),
            )
                .into_response()
        }
        (true, "POST", "/slack-api/chat.postMessage") if body["channel"].is_string() => {
            shapes::slack(&body)
        }
        (true, "POST", "/slack-api/chat.update")
            if body["channel"].is_string() && body["ts"].is_string() =>
        {
            shapes::slack(&body)
        }
        (true, _, _) => return refused("invalid_arguments"),
        (false, "POST", "/mm/api/v4/posts")
            if body["channel_id"].as_str().is_some_and(|c| c.len() == 26) =>
        {
            shapes::mattermost(&body["props"])
        }
        (false, "PUT", p) if p.starts_with("/mm/api/v4/posts/") && p.ends_with("/patch") => {
            shapes::mattermost(&body["props"])
        }
        (false, _, _) => return (StatusCode::NOT_FOUND, "404 page not found").into_response(),
    };
    if let Err(why) = checked {
        return refused(&format!("invalid_blocks: {why}"));
    }
    let mut inner = inner.lock().unwrap();
    inner.posts.push(Post {
        path: path.to_string(),
        headers,
        raw: raw.to_vec(),
        body: body.clone(),
    });
    match path {
        "/slack-api/chat.postMessage" => {
            inner.slack_made += 1;
            let ts = format!("1764000000.{:06}", inner.slack_made);
            Json(json!({"ok": true, "channel": body["channel"], "ts": ts, "message": {"text": body["text"]}})).into_response()
        }
        "/slack-api/chat.update" => Json(
            json!({"ok": true, "channel": body["channel"], "ts": body["ts"], "text": body["text"]}),
        )
        .into_response(),
        "/mm/api/v4/posts" => {
            inner.mm_made += 1;
            let id = format!("{:0>26}", format!("post{}", inner.mm_made));
            let post = json!({"id": id, "channel_id": body["channel_id"], "message": body["message"], "props": body["props"]});
            (StatusCode::CREATED, Json(post)).into_response()
        }
        _ => Json(json!({"id": path.split('/').nth(5), "props": body["props"]})).into_response(),
    }
}

pub mod shapes {
    use serde_json::Value;

    fn string<'a>(v: &'a Value, what: &str, max: usize) -> Result<&'a str, String> {
        let s = v.as_str().ok_or(format!("{what} must be a string"))?;
        if s.is_empty() || s.chars().count() > max {
            return Err(format!("{what} must be 1 to {max} characters"));
        }
        Ok(s)
    }

    /// Slack incoming webhooks (https://api.slack.com/messaging/webhooks) with Block Kit
    /// (https://api.slack.com/reference/block-kit/blocks,
    /// https://api.slack.com/reference/block-kit/block-elements#button): `text` is the
    /// notification fallback, required when `blocks` are sent; at most 50 blocks; a `section`'s
    /// text object is `mrkdwn` or `plain_text`, at most 3000 characters; an `actions` block has
    /// at most 25 elements; a button has a `plain_text` label of at most 75 characters, a `url`
    /// of at most 3000, an `action_id` of at most 255 and a `value` of at most 2000 (what an
    /// app's interactivity request carries back), and a `style` of `primary` or `danger` if any.
    /// A `response_url` answer (https://api.slack.com/interactivity/handling#message_responses)
    /// is the same message with `replace_original` or `response_type`. Mattermost
    /// (https://developers.mattermost.com/integrate/webhooks/incoming/) and Discord's `/slack`
    /// endpoint read `text` (and attachments) of the same body.
    pub fn slack(body: &Value) -> Result<(), String> {
        let obj = body.as_object().ok_or("the body must be an object")?;
        string(obj.get("text").ok_or("text is required")?, "text", 40_000)?;
        let Some(blocks) = obj.get("blocks") else {
            return Ok(());
        };
        let blocks = blocks.as_array().ok_or("blocks must be an array")?;
        if blocks.len() > 50 {
            return Err("at most 50 blocks".into());
        }
        for b in blocks {
            match b["type"].as_str() {
                Some("section") => {
                    let t = &b["text"];
                    if t.is_null() && b["fields"].is_array() {
                        continue;
                    }
                    if !matches!(t["type"].as_str(), Some("mrkdwn" | "plain_text")) {
                        return Err("a section's text type must be mrkdwn or plain_text".into());
                    }
                    string(&t["text"], "a section's text", 3000)?;
                }
                Some("actions") => {
                    let elements = b["elements"].as_array().ok_or("actions need elements")?;
                    if elements.is_empty() || elements.len() > 25 {
                        return Err("an actions block has 1 to 25 elements".into());
                    }
                    for e in elements {
                        if e["type"] != "button" {
                            return Err("only buttons are expected".into());
                        }
                        if e["text"]["type"] != "plain_text" {
                            return Err("a button's text must be plain_text".into());
                        }
                        string(&e["text"]["text"], "a button's label", 75)?;
                        if let Some(url) = e.get("url") {
                            string(url, "a button's url", 3000)?;
                        }
                        if let Some(id) = e.get("action_id") {
                            string(id, "a button's action_id", 255)?;
                        }
                        if let Some(value) = e.get("value") {
                            string(value, "a button's value", 2000)?;
                        }
                        if let Some(style) = e.get("style") {
                            if !matches!(style.as_str(), Some("primary" | "danger")) {
                                return Err("a button's style is primary or danger".into());
                            }
                        }
                    }
                }
                Some("divider" | "context" | "header") => {}
                other => return Err(format!("unexpected block type {other:?}")),
            }
        }
        Ok(())
    }

    /// A Mattermost incoming webhook's body
    /// (https://developers.mattermost.com/integrate/webhooks/incoming/): Slack's `text`, or
    /// `attachments` (https://developers.mattermost.com/integrate/reference/message-attachments/)
    /// whose `color` is a hex colour, `title_link` a URL, and whose `actions` are message
    /// buttons (https://developers.mattermost.com/integrate/plugins/interactive-messages/): an
    /// alphanumeric `id`, a `name`, a `style` of Mattermost's, and an `integration` with an
    /// absolute `url` and an object `context`.
    pub fn mattermost(body: &Value) -> Result<(), String> {
        let obj = body.as_object().ok_or("the body must be an object")?;
        let Some(attachments) = obj.get("attachments") else {
            return slack(body);
        };
        let attachments = attachments
            .as_array()
            .ok_or("attachments must be an array")?;
        if attachments.is_empty() && obj.get("text").is_none() {
            return Err("text or attachments are required".into());
        }
        for a in attachments {
            for field in ["fallback", "title", "text", "pretext"] {
                if let Some(v) = a.get(field) {
                    string(v, field, 7_000)?;
                }
            }
            if let Some(c) = a.get("color") {
                let c = string(c, "color", 7)?;
                if !(c.len() == 7 && c.starts_with('#')) {
                    return Err(format!("color {c} is not #rrggbb"));
                }
            }
            if let Some(link) = a.get("title_link") {
                if !string(link, "title_link", 3000)?.starts_with("http") {
                    return Err("title_link must be a URL".into());
                }
            }
            for action in a["actions"].as_array().into_iter().flatten() {
                let id = string(&action["id"], "an action's id", 64)?;
                if !id.chars().all(|c| c.is_ascii_alphanumeric()) {
                    return Err(format!("an action's id must be alphanumeric: {id}"));
                }
                string(&action["name"], "an action's name", 100)?;
                if let Some(style) = action.get("style") {
                    let styles = ["default", "primary", "success", "good", "warning", "danger"];
                    if !styles.contains(&style.as_str().unwrap_or_default()) {
                        return Err(format!("an unknown style {style}"));
                    }
                }
                let integration = &action["integration"];
                if !string(&integration["url"], "an integration's url", 3000)?.starts_with("http") {
                    return Err("an integration's url must be absolute".into());
                }
                if !integration["context"].is_object() {
                    return Err("an integration's context must be an object".into());
                }
            }
        }
        Ok(())
    }

    /// A Teams workflow webhook's message with an Adaptive Card
    /// (https://learn.microsoft.com/en-us/microsoftteams/platform/webhooks-and-connectors/how-to/connectors-using#send-adaptive-cards-using-an-incoming-webhook,
    /// https://adaptivecards.io/explorer/): `type` `message`, one attachment of content type
    /// `application/vnd.microsoft.card.adaptive` whose `content` is an `AdaptiveCard` of version
    /// 1.0 to 1.5 (what Teams renders); `TextBlock`s with `text`, `FactSet`s of `title`/`value`
    /// strings, `Action.OpenUrl` actions with a `title` and an absolute `url`.
    pub fn teams(body: &Value) -> Result<(), String> {
        if body["type"] != "message" {
            return Err("type must be message".into());
        }
        let attachments = body["attachments"]
            .as_array()
            .ok_or("attachments is required")?;
        if attachments.len() != 1 {
            return Err("one attachment".into());
        }
        let a = &attachments[0];
        if a["contentType"] != "application/vnd.microsoft.card.adaptive" {
            return Err("the attachment must be an adaptive card".into());
        }
        let card = &a["content"];
        if card["type"] != "AdaptiveCard" {
            return Err("content.type must be AdaptiveCard".into());
        }
        let version = card["version"]
            .as_str()
            .ok_or("content.version is required")?;
        if !matches!(version, "1.0" | "1.1" | "1.2" | "1.3" | "1.4" | "1.5") {
            return Err(format!(
                "Teams renders card versions up to 1.5, not {version}"
            ));
        }
        for e in card["body"]
            .as_array()
            .ok_or("content.body must be an array")?
        {
            match e["type"].as_str() {
                Some("TextBlock") => {
                    string(&e["text"], "a TextBlock's text", 20_000)?;
                }
                Some("FactSet") => {
                    for f in e["facts"].as_array().ok_or("a FactSet needs facts")? {
                        string(&f["title"], "a fact's title", 1000)?;
                        string(&f["value"], "a fact's value", 1000)?;
                    }
                }
                other => return Err(format!("unexpected element {other:?}")),
            }
        }
        if let Some(actions) = card.get("actions") {
            for act in actions.as_array().ok_or("actions must be an array")? {
                if act["type"] != "Action.OpenUrl" {
                    return Err("only Action.OpenUrl is expected".into());
                }
                string(&act["title"], "an action's title", 200)?;
                let url = string(&act["url"], "an action's url", 3000)?;
                if !(url.starts_with("https://") || url.starts_with("http://")) {
                    return Err("an action's url must be absolute".into());
                }
            }
        }
        Ok(())
    }
}
