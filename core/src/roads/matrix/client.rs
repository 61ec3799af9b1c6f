//! The install's Matrix bot: one account on one homeserver (`KLAXON_MATRIX_HOMESERVER`, with
//! `KLAXON_MATRIX_TOKEN` or `KLAXON_MATRIX_USER` and `KLAXON_MATRIX_PASSWORD`), spoken to over
//! the client-server API with plain HTTP through the outbound policy. It joins a team channel's
//! room to prove it (`proof`: a moderator of the room posts the channel's code there), opens a
//! direct room with a person who adds their Matrix account, and posts each message with an
//! outbox row as its transaction id, so a retry after a lost answer is the same event, not a
//! second one.

use crate::outbound::Outbound;
use crate::roads::{answered, Failure, Sent};
use percent_encoding::{utf8_percent_encode, NON_ALPHANUMERIC};
use reqwest::Method;
use serde_json::json;
use std::collections::HashMap;
use tokio::sync::Mutex;

/// `KLAXON_MATRIX_*`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MatrixConfig {
    /// The homeserver's base URL (`https://matrix.example.org`).
    pub homeserver: String,
    /// How the bot signs in: an access token, or a password login.
    pub auth: MatrixAuth,
}

#[derive(Clone, PartialEq, Eq)]
pub enum MatrixAuth {
    Token(String),
    Password { user: String, password: String },
}

impl std::fmt::Debug for MatrixAuth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            MatrixAuth::Token(_) => f.write_str("Token(…)"),
            MatrixAuth::Password { user, .. } => write!(f, "Password {{ user: {user:?}, .. }}"),
        }
    }
}

pub struct Matrix {
    pub(super) homeserver: String,
    pub(super) auth: MatrixAuth,
    pub(super) outbound: Outbound,
    /// The access token in use: the configured one, or the last login's.
    pub(super) token: Mutex<Option<String>>,
    /// Room ids of aliases and rooms the bot has joined.
    pub(super) joined: Mutex<HashMap<String, String>>,
    /// The bot's user id, once asked.
    pub(super) user_id: Mutex<Option<String>>,
}

pub(super) fn enc(s: &str) -> String {
    utf8_percent_encode(s, NON_ALPHANUMERIC).to_string()
}

/// Matrix's `errcode` from an answer, when it is one (`M_FORBIDDEN`): a code, not prose, so it
/// may be said.
pub(super) fn errcode(body: &[u8]) -> Option<String> {
    let v: serde_json::Value = serde_json::from_slice(body).ok()?;
    let code = v.get("errcode")?.as_str()?;
    (code.len() <= 64 && code.bytes().all(|b| b.is_ascii_uppercase() || b == b'_'))
        .then(|| code.to_string())
}

enum Attempt {
    /// Sent (with the event's id when the homeserver named it), or failed.
    Done(Result<Option<String>, Failure>),
    /// The bot is not in the room (403): join, then send again.
    NotJoined,
    /// The token was refused (401): sign in again, then send again.
    SignedOut,
}

impl Matrix {
    pub fn new(config: &MatrixConfig, outbound: Outbound) -> Result<Matrix, String> {
        let homeserver = config.homeserver.trim_end_matches('/').to_string();
        outbound
            .check_url(&homeserver)
            .map_err(|why| format!("KLAXON_MATRIX_HOMESERVER: {why}"))?;
        let token = match &config.auth {
            MatrixAuth::Token(t) => Some(t.clone()),
            MatrixAuth::Password { .. } => None,
        };
        Ok(Matrix {
            homeserver,
            auth: config.auth.clone(),
            outbound,
            token: Mutex::new(token),
            joined: Mutex::default(),
            user_id: Mutex::default(),
        })
    }

    pub(super) fn who(&self, room: &str) -> String {
        format!("the Matrix room {room} on {}", self.homeserver)
    }

    /// The access token, signing in first when there is none.
    pub(super) async fn token(&self) -> Result<String, Failure> {
        let mut token = self.token.lock().await;
        if let Some(t) = &*token {
            return Ok(t.clone());
        }
        let MatrixAuth::Password { user, password } = &self.auth else {
            return Err(failed("the Matrix bot has no access token".into(), None));
        };
        let req = self
            .outbound
            .request(
                Method::POST,
                &format!("{}/_matrix/client/v3/login", self.homeserver),
            )
            .json(&json!({
                "type": "m.login.password",
                "identifier": {"type": "m.id.user", "user": user},
                "password": password,
                "initial_device_display_name": "Klaxon",
            }));
        let who = format!("the Matrix homeserver {} (signing in)", self.homeserver);
        let answer = self.outbound.send(req).await;
        let got = match answer {
            Ok(a) if a.status.is_success() => a
                .json::<serde_json::Value>()
                .and_then(|v| v.get("access_token")?.as_str().map(str::to_string)),
            other => return Err(answered(&who, other).err().unwrap_or_default()),
        };
        let t =
            got.ok_or_else(|| failed(format!("{who} answered without an access token"), None))?;
        *token = Some(t.clone());
        Ok(t)
    }

    /// Forgets a refused token, so the next call signs in again (a password bot only).
    pub(super) async fn signed_out(&self) -> bool {
        if matches!(self.auth, MatrixAuth::Password { .. }) {
            *self.token.lock().await = None;
            true
        } else {
            false
        }
    }

    /// Joins a room (by id or alias) and returns its id.
    async fn join(&self, room: &str, token: &str) -> Result<String, Failure> {
        if let Some(id) = self.joined.lock().await.get(room) {
            return Ok(id.clone());
        }
        let req = self
            .outbound
            .request(
                Method::POST,
                &format!("{}/_matrix/client/v3/join/{}", self.homeserver, enc(room)),
            )
            .bearer_auth(token)
            .json(&json!({}));
        let who = format!("{} (joining)", self.who(room));
        let answer = self.outbound.send(req).await;
        let id = match &answer {
            Ok(a) if a.status.is_success() => a
                .json::<serde_json::Value>()
                .and_then(|v| v.get("room_id")?.as_str().map(str::to_string)),
            _ => None,
        };
        let Some(id) = id else {
            return Err(without_id(&who, answer));
        };
        self.joined
            .lock()
            .await
            .insert(room.to_string(), id.clone());
        Ok(id)
    }

    /// Posts a message (its plain body and its HTML) to a room (an id or alias), joining it
    /// when needed.
    pub async fn post(&self, room: &str, plain: &str, html: &str, txn: &str) -> Sent {
        self.post_event(room, &text_content(plain, html), txn)
            .await
            .map(|_| ())
    }

    /// Posts `content` as an `m.room.message` to a room (an id or alias), joining it when
    /// needed; answers the event's id when the homeserver named it.
    pub async fn post_event(
        &self,
        room: &str,
        content: &serde_json::Value,
        txn: &str,
    ) -> Result<Option<String>, Failure> {
        // One more try after joining or signing in again, each at most once.
        let mut joined_now = false;
        let mut signed_in_again = false;
        loop {
            let token = self.token().await?;
            let room_id = if room.starts_with('#') || joined_now {
                self.join(room, &token).await?
            } else {
                self.joined
                    .lock()
                    .await
                    .get(room)
                    .cloned()
                    .unwrap_or_else(|| room.to_string())
            };
            match self.send(&room_id, room, content, txn, &token).await {
                Attempt::Done(o) => return o,
                Attempt::NotJoined if !joined_now => {
                    self.joined.lock().await.remove(room);
                    joined_now = true;
                }
                Attempt::SignedOut if !signed_in_again && self.signed_out().await => {
                    signed_in_again = true;
                }
                Attempt::NotJoined | Attempt::SignedOut => {
                    return Err(failed(format!("{} refused the bot", self.who(room)), None));
                }
            }
        }
    }

    async fn send(
        &self,
        room_id: &str,
        room: &str,
        content: &serde_json::Value,
        txn: &str,
        token: &str,
    ) -> Attempt {
        let req = self
            .outbound
            .request(
                Method::PUT,
                &format!(
                    "{}/_matrix/client/v3/rooms/{}/send/m.room.message/{}",
                    self.homeserver,
                    enc(room_id),
                    enc(txn)
                ),
            )
            .bearer_auth(token)
            .json(content);
        let answer = self.outbound.send(req).await;
        match &answer {
            Ok(a) if a.status == reqwest::StatusCode::FORBIDDEN => return Attempt::NotJoined,
            Ok(a) if a.status == reqwest::StatusCode::UNAUTHORIZED => return Attempt::SignedOut,
            _ => {}
        }
        let event_id = match &answer {
            Ok(a) if a.status.is_success() => a
                .json::<serde_json::Value>()
                .and_then(|v| v.get("event_id")?.as_str().map(str::to_string)),
            _ => None,
        };
        Attempt::Done(matrix_answered(&self.who(room), answer).map(|()| event_id))
    }
}

/// A message's content: its plain body and its HTML. Intentional mentions (Matrix spec 1.7): an
/// empty `m.mentions` mentions nobody, so an `@room` in alert text pings no one.
pub fn text_content(plain: &str, html: &str) -> serde_json::Value {
    json!({
        "msgtype": "m.text",
        "body": plain,
        "format": "org.matrix.custom.html",
        "formatted_body": html,
        "m.mentions": {},
    })
}

impl Matrix {
    /// Whether a page posted in the direct room `room_id` will be read by `user`: true when they
    /// are in it or invited, or have just been invited again after leaving it; false when the
    /// room cannot be used (the bot is not in it, or the invitation is refused), so the caller
    /// opens a new one. A failure to ask is true: posting then says what is wrong.
    pub async fn keeps_reader(&self, room_id: &str, user: &str) -> bool {
        let Ok(token) = self.token().await else {
            return true;
        };
        let state = self
            .outbound
            .request(
                Method::GET,
                &format!(
                    "{}/_matrix/client/v3/rooms/{}/state/m.room.member/{}",
                    self.homeserver,
                    enc(room_id),
                    enc(user)
                ),
            )
            .bearer_auth(&token);
        let membership = match self.outbound.send(state).await {
            Ok(a) if a.status.is_success() => a
                .json::<serde_json::Value>()
                .and_then(|v| v.get("membership")?.as_str().map(str::to_string)),
            // Never a member of it: invite them.
            Ok(a) if a.status == reqwest::StatusCode::NOT_FOUND => None,
            Ok(a) if a.status == reqwest::StatusCode::FORBIDDEN => return false,
            _ => return true,
        };
        match membership.as_deref() {
            Some("join") | Some("invite") => true,
            Some("ban") => false,
            _ => {
                let invite = self
                    .outbound
                    .request(
                        Method::POST,
                        &format!(
                            "{}/_matrix/client/v3/rooms/{}/invite",
                            self.homeserver,
                            enc(room_id)
                        ),
                    )
                    .bearer_auth(&token)
                    .json(&json!({ "user_id": user }));
                matches!(self.outbound.send(invite).await, Ok(a) if a.status.is_success())
            }
        }
    }

    /// Opens a direct room with `user` and invites them: a private chat whose history they read
    /// once they accept. Its id is kept by the caller and reused for every later message.
    pub async fn direct_room(&self, user: &str) -> Result<String, Failure> {
        let mut signed_in_again = false;
        loop {
            let token = self.token().await?;
            let req = self
                .outbound
                .request(
                    Method::POST,
                    &format!("{}/_matrix/client/v3/createRoom", self.homeserver),
                )
                .bearer_auth(&token)
                .json(&json!({
                    "is_direct": true,
                    "preset": "trusted_private_chat",
                    "invite": [user],
                    "name": "Klaxon pages",
                }));
            let who = format!(
                "the Matrix homeserver {} (opening a direct room with {user})",
                self.homeserver
            );
            let answer = self.outbound.send(req).await;
            let refused_token = answer
                .as_ref()
                .is_ok_and(|a| a.status == reqwest::StatusCode::UNAUTHORIZED);
            if refused_token && !signed_in_again && self.signed_out().await {
                signed_in_again = true;
                continue;
            }
            let id = match &answer {
                Ok(a) if a.status.is_success() => a
                    .json::<serde_json::Value>()
                    .and_then(|v| v.get("room_id")?.as_str().map(str::to_string)),
                _ => None,
            };
            return id.ok_or_else(|| without_id(&who, answer));
        }
    }
}

fn failed(reason: String, retry_after: Option<i64>) -> Failure {
    Failure {
        reason,
        retry_after,
        outage: true,
        rate_limited: retry_after.is_some(),
        ..Failure::default()
    }
}

/// `answered`, with Matrix's error code added to a failure's sentence.
fn matrix_answered(
    who: &str,
    answer: std::result::Result<crate::outbound::Answer, crate::outbound::Failure>,
) -> Sent {
    let code = answer.as_ref().ok().and_then(|a| errcode(&a.body));
    answered(who, answer).map_err(|f| Failure {
        reason: match code {
            Some(code) => format!("{} ({code})", f.reason),
            None => f.reason.clone(),
        },
        ..f
    })
}

/// The failure of a call whose answer should have named a room: its own failure, or a 2xx
/// without the room's id.
fn without_id(
    who: &str,
    answer: std::result::Result<crate::outbound::Answer, crate::outbound::Failure>,
) -> Failure {
    matrix_answered(who, answer)
        .err()
        .unwrap_or_else(|| failed(format!("{who} answered without a room id"), None))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_codes_are_said_and_prose_is_not() {
        assert_eq!(
            errcode(br#"{"errcode":"M_LIMIT_EXCEEDED","error":"Too many requests, token abc"}"#),
            Some("M_LIMIT_EXCEEDED".into())
        );
        assert_eq!(errcode(br#"{"errcode":"see https://evil.example"}"#), None);
        assert_eq!(errcode(b"<html>"), None);
        assert_eq!(
            format!("{:?}", MatrixAuth::Token("syt_secret".into())),
            "Token(…)"
        );
    }
}
