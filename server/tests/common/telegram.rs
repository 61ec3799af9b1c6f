//! A stand-in for Telegram's Bot API, which cannot run here: `POST /bot{token}/{method}` for the
//! methods Klaxon calls, each body checked against the shape the Bot API documents
//! (<https://core.telegram.org/bots/api#sendmessage>, `#editmessagetext`,
//! `#answercallbackquery`, `#inlinekeyboardmarkup`, `#formatting-options` for HTML) and answered
//! as Telegram answers (`{"ok": true, "result": …}`; a wrong token 401). The updates Telegram
//! sends to a bot's webhook (`#update`, `#callbackquery`, `#message`) are built by `update_*`,
//! with the secret header of `#setwebhook`.

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::routing::post;
use axum::{Json, Router};
use serde_json::{json, Value};
use std::sync::{Arc, Mutex};

pub const TOKEN: &str = "123456:AAbot-token-for-tests";
pub const SECRET: &str = "klaxon_webhook_secret-1";

#[derive(Default)]
struct Inner {
    calls: Vec<(String, Value)>,
    next_message: i64,
}

#[derive(Clone)]
pub struct Telegram {
    pub url: String,
    inner: Arc<Mutex<Inner>>,
}

impl Telegram {
    pub async fn start() -> Telegram {
        let inner = Arc::new(Mutex::new(Inner::default()));
        let router = Router::new()
            .route("/{bot}/{method}", post(receive))
            .with_state(inner.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
        Telegram { url, inner }
    }

    /// The bodies of the calls of `method`, in order.
    pub fn calls(&self, method: &str) -> Vec<Value> {
        let inner = self.inner.lock().unwrap();
        inner
            .calls
            .iter()
            .filter(|(m, _)| m == method)
            .map(|(_, b)| b.clone())
            .collect()
    }
}

async fn receive(
    State(inner): State<Arc<Mutex<Inner>>>,
    Path((bot, method)): Path<(String, String)>,
    Json(body): Json<Value>,
) -> (StatusCode, Json<Value>) {
    if bot != format!("bot{TOKEN}") {
        let refused = json!({"ok": false, "error_code": 401, "description": "Unauthorized"});
        return (StatusCode::UNAUTHORIZED, Json(refused));
    }
    let checked = match method.as_str() {
        "sendMessage" | "editMessageText" => message(&method, &body),
        "answerCallbackQuery" => callback_answer(&body),
        _ => Err(format!("Not Found: method {method}")),
    };
    if let Err(why) = checked {
        let refused =
            json!({"ok": false, "error_code": 400, "description": format!("Bad Request: {why}")});
        return (StatusCode::BAD_REQUEST, Json(refused));
    }
    let mut inner = inner.lock().unwrap();
    inner.calls.push((method.clone(), body.clone()));
    let result = match method.as_str() {
        "answerCallbackQuery" => json!(true),
        "sendMessage" => {
            inner.next_message += 1;
            json!({"message_id": inner.next_message, "date": 1_764_000_000,
                   "chat": {"id": body["chat_id"], "type": "supergroup"}, "text": body["text"]})
        }
        _ => json!({"message_id": body["message_id"], "date": 1_764_000_000,
                    "chat": {"id": body["chat_id"], "type": "supergroup"}, "text": body["text"]}),
    };
    (StatusCode::OK, Json(json!({"ok": true, "result": result})))
}

/// `sendMessage` and `editMessageText`: a chat, 1 to 4096 characters of text, HTML of the tags
/// Telegram allows, and an inline keyboard whose buttons each have a text and exactly one of a
/// `url` or 1 to 64 bytes of `callback_data`.
fn message(method: &str, body: &Value) -> Result<(), String> {
    if !(body["chat_id"].is_i64() || body["chat_id"].is_string()) {
        return Err("chat_id is required".into());
    }
    if method == "editMessageText" && !body["message_id"].is_i64() {
        return Err("message_id is required".into());
    }
    let text = body["text"].as_str().ok_or("text is required")?;
    if text.is_empty() || text.chars().count() > 4096 {
        return Err("text must be 1 to 4096 characters".into());
    }
    if body["parse_mode"] == "HTML" {
        const TAGS: [&str; 16] = [
            "b",
            "strong",
            "i",
            "em",
            "u",
            "ins",
            "s",
            "strike",
            "del",
            "span",
            "tg-spoiler",
            "a",
            "code",
            "pre",
            "blockquote",
            "tg-emoji",
        ];
        for tag in text.split('<').skip(1) {
            let name: String = tag
                .trim_start_matches('/')
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
                .collect();
            if !TAGS.contains(&name.as_str()) {
                return Err(format!(
                    "can't parse entities: unsupported start tag \"{name}\""
                ));
            }
        }
    }
    if let Some(markup) = body.get("reply_markup") {
        let rows = markup["inline_keyboard"]
            .as_array()
            .ok_or("inline_keyboard must be an array")?;
        for row in rows {
            for button in row.as_array().ok_or("a keyboard row must be an array")? {
                if button["text"].as_str().is_none_or(str::is_empty) {
                    return Err("a button needs a text".into());
                }
                match (button.get("url"), button.get("callback_data")) {
                    (Some(url), None)
                        if url.as_str().is_some_and(|u| u.starts_with("https://")) => {}
                    (None, Some(data))
                        if data.as_str().is_some_and(|d| (1..=64).contains(&d.len())) => {}
                    _ => return Err("BUTTON_TYPE_INVALID".into()),
                }
            }
        }
    }
    Ok(())
}

/// `answerCallbackQuery`: the query's id, and at most 200 characters of text.
fn callback_answer(body: &Value) -> Result<(), String> {
    body["callback_query_id"]
        .as_str()
        .ok_or("callback_query_id is required")?;
    if body["text"]
        .as_str()
        .is_some_and(|t| t.chars().count() > 200)
    {
        return Err("MESSAGE_TOO_LONG".into());
    }
    Ok(())
}

/// An update carrying a button's press on message `message_id` of `chat`.
pub fn update_press(update_id: i64, from: i64, chat: i64, message_id: i64, data: &str) -> Value {
    json!({"update_id": update_id, "callback_query": {
        "id": format!("q{update_id}"),
        "from": {"id": from, "is_bot": false, "first_name": "A", "username": format!("user{from}")},
        "message": {"message_id": message_id, "date": 1_764_000_000,
                    "chat": {"id": chat, "type": "supergroup"}, "text": "…"},
        "chat_instance": "-42",
        "data": data,
    }})
}

/// An update carrying a message `text` from `from` in `chat`, in reply to `reply_to` if any.
pub fn update_message(
    update_id: i64,
    from: i64,
    chat: i64,
    text: &str,
    reply_to: Option<i64>,
) -> Value {
    let mut message = json!({
        "message_id": 1000 + update_id, "date": 1_764_000_000,
        "from": {"id": from, "is_bot": false, "first_name": "A", "username": format!("user{from}")},
        "chat": {"id": chat, "type": if chat > 0 { "private" } else { "supergroup" }},
        "text": text,
    });
    if let Some(id) = reply_to {
        message["reply_to_message"] = json!({"message_id": id, "date": 1_764_000_000,
            "chat": {"id": chat, "type": "supergroup"}, "text": "…"});
    }
    json!({"update_id": update_id, "message": message})
}
