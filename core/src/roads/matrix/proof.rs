//! Proving a room: the bot joins it (by invitation, or because it is public) and reads its last
//! messages for a channel's one-time code, posted by someone with power in the room. A team can
//! name any room; only the room's moderators can make it the team's channel.

use super::client::{enc, errcode, Matrix};
use crate::roads::{answered, Sent};
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

/// How many of the room's latest messages are read for the code.
pub const PROOF_MESSAGES: usize = 20;
/// The least power that proves a room (a moderator's), whatever the room lets everyone do.
pub const PROOF_POWER: i64 = 50;

/// Why a room is not proven.
#[derive(Debug, PartialEq, Eq)]
pub enum ProofFailure {
    /// Something the room's people can fix (invite the bot, post the code): a sentence to show.
    NotYet(String),
    /// The homeserver could not be asked: a sentence without anything it wrote.
    Unreachable(String),
}

/// A message as the proof reads it.
struct Said<'a> {
    sender: &'a str,
    body: &'a str,
}

/// Who may prove a room: its power levels and its creators.
struct Powers {
    levels: Option<Value>,
    creators: Vec<String>,
    /// Room versions 12 on give creators a power above every level, kept out of `levels`.
    creators_above_all: bool,
}

impl Powers {
    /// Whether `user` may change the room's settings and is at least a moderator.
    fn proves(&self, user: &str) -> bool {
        let creator = self.creators.iter().any(|c| c == user);
        if creator && self.creators_above_all {
            return true;
        }
        let (level, needed) = match &self.levels {
            Some(l) => {
                let int = |v: &Value| v.as_i64();
                let level = l["users"]
                    .get(user)
                    .and_then(int)
                    .or_else(|| l.get("users_default").and_then(int))
                    .unwrap_or(0);
                (level, l.get("state_default").and_then(int).unwrap_or(50))
            }
            // No power levels at all: the creator has 100, everyone else 0.
            None => (if creator { 100 } else { 0 }, 0),
        };
        level >= needed.max(PROOF_POWER)
    }
}

/// Whether a room version gives its creators power above every level (MSC4289, version 12).
fn creators_above_all(version: &str) -> bool {
    version.parse::<u32>().is_ok_and(|v| v >= 12) || version.contains("hydra")
}

/// The first message that carries `code` from someone who may prove the room.
fn proof_in<'a>(messages: &[Said<'a>], code: &str, powers: &Powers) -> Option<&'a str> {
    let code = code.to_ascii_lowercase();
    messages
        .iter()
        .find(|m| m.body.to_ascii_lowercase().contains(&code) && powers.proves(m.sender))
        .map(|m| m.sender)
}

impl Matrix {
    /// The bot's own user id (asked once).
    pub async fn user_id(&self) -> Result<String, ProofFailure> {
        if let Some(id) = self.user_id.lock().await.clone() {
            return Ok(id);
        }
        let got = self.get("/_matrix/client/v3/account/whoami").await?;
        let id = got["user_id"]
            .as_str()
            .ok_or_else(|| self.unreachable("answered whoami without a user id"))?
            .to_string();
        *self.user_id.lock().await = Some(id.clone());
        Ok(id)
    }

    /// Proves `room` (an id or alias) with `code`: the room's id when one of its latest messages
    /// carries the code and was posted by a moderator or administrator of the room.
    pub async fn prove_room(&self, room: &str, code: &str) -> Result<String, ProofFailure> {
        let bot = self.user_id().await?;
        let token = self.token().await.map_err(|f| self.sentence_of(Err(f)))?;
        let joined = self
            .outbound
            .request(
                Method::POST,
                &format!("{}/_matrix/client/v3/join/{}", self.homeserver, enc(room)),
            )
            .bearer_auth(&token)
            .json(&json!({}));
        let answer = self.outbound.send(joined).await;
        let room_id = match &answer {
            Ok(a) if a.status.is_success() => a
                .json::<Value>()
                .and_then(|v| v.get("room_id")?.as_str().map(str::to_string)),
            Ok(a) if a.status == StatusCode::FORBIDDEN => {
                return Err(ProofFailure::NotYet(format!(
                    "The bot {bot} cannot join {room}: invite it to the room, then check again."
                )))
            }
            Ok(a) if a.status == StatusCode::NOT_FOUND => {
                return Err(ProofFailure::NotYet(format!(
                    "{room} is not a room the homeserver knows ({}).",
                    errcode(&a.body).unwrap_or_else(|| "404".into())
                )))
            }
            _ => None,
        };
        let Some(room_id) = room_id else {
            return Err(self.sentence_of(answered(&self.who(room), answer)));
        };
        self.joined
            .lock()
            .await
            .insert(room.to_string(), room_id.clone());

        let state = |kind: &str, format: &str| {
            format!(
                "/_matrix/client/v3/rooms/{}/state/{kind}/{format}",
                enc(&room_id)
            )
        };
        let levels = self.get_optional(&state("m.room.power_levels", "")).await?;
        let create = self
            .get_optional(&state("m.room.create", "?format=event"))
            .await?
            .unwrap_or(Value::Null);
        let content = create.get("content").unwrap_or(&create);
        let mut creators: Vec<String> = [create.get("sender"), content.get("creator")]
            .into_iter()
            .flatten()
            .chain(
                content["additional_creators"]
                    .as_array()
                    .into_iter()
                    .flatten(),
            )
            .filter_map(|v| v.as_str().map(str::to_string))
            .collect();
        creators.dedup();
        let powers = Powers {
            levels,
            creators,
            creators_above_all: creators_above_all(content["room_version"].as_str().unwrap_or("1")),
        };

        let filter = json!({"types": ["m.room.message"], "not_senders": [bot]}).to_string();
        let messages = self
            .get(&format!(
                "/_matrix/client/v3/rooms/{}/messages?dir=b&limit={PROOF_MESSAGES}&filter={}",
                enc(&room_id),
                enc(&filter)
            ))
            .await?;
        let said: Vec<Said> = messages["chunk"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|e| {
                Some(Said {
                    sender: e["sender"].as_str()?,
                    body: e["content"]["body"].as_str()?,
                })
            })
            .collect();
        match proof_in(&said, code, &powers) {
            Some(_) => Ok(room_id),
            None => Err(ProofFailure::NotYet(format!(
                "The code {code} is not among the last {PROOF_MESSAGES} messages in {room} \
                 from a moderator or administrator of the room (power level {PROOF_POWER} or more, \
                 unencrypted): post it there, then check again."
            ))),
        }
    }

    /// GET on the homeserver, signed in: the answer's JSON.
    async fn get(&self, path: &str) -> Result<Value, ProofFailure> {
        self.get_optional(path)
            .await?
            .ok_or_else(|| self.unreachable("answered 404 Not Found"))
    }

    /// GET on the homeserver, signed in: the answer's JSON, none on a 404.
    async fn get_optional(&self, path: &str) -> Result<Option<Value>, ProofFailure> {
        let token = self.token().await.map_err(|f| self.sentence_of(Err(f)))?;
        let req = self
            .outbound
            .request(Method::GET, &format!("{}{path}", self.homeserver))
            .bearer_auth(&token);
        let answer = self.outbound.send(req).await;
        match &answer {
            Ok(a) if a.status.is_success() => Ok(Some(a.json().unwrap_or(Value::Null))),
            Ok(a) if a.status == StatusCode::NOT_FOUND => Ok(None),
            _ => Err(self.sentence_of(answered(
                &format!("the Matrix homeserver {}", self.homeserver),
                answer,
            ))),
        }
    }

    fn unreachable(&self, what: &str) -> ProofFailure {
        ProofFailure::Unreachable(format!("the Matrix homeserver {} {what}", self.homeserver))
    }

    fn sentence_of(&self, answered: Sent) -> ProofFailure {
        match answered {
            Err(f) => ProofFailure::Unreachable(f.reason),
            Ok(()) => self.unreachable("gave no answer to read"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn said<'a>(sender: &'a str, body: &'a str) -> Said<'a> {
        Said { sender, body }
    }

    #[test]
    fn only_a_moderator_or_more_proves_a_room() {
        let powers = Powers {
            levels: Some(
                json!({"users": {"@mod:x": 50, "@admin:x": 100, "@low:x": 49},
                "users_default": 0, "state_default": 50}),
            ),
            creators: vec!["@admin:x".into()],
            creators_above_all: false,
        };
        let code = "klaxon-abcd-efgh";
        let room = [
            said("@stranger:x", "klaxon-abcd-efgh"),
            said("@low:x", "here: klaxon-abcd-efgh"),
        ];
        assert_eq!(
            proof_in(&room, code, &powers),
            None,
            "power 0 and 49 prove nothing"
        );
        let room = [
            said("@low:x", code),
            said("@mod:x", "KLAXON-ABCD-EFGH please"),
        ];
        assert_eq!(proof_in(&room, code, &powers), Some("@mod:x"));
        assert_eq!(
            proof_in(&[said("@admin:x", "klaxon-abcd")], code, &powers),
            None
        );

        // A room that lets everyone change its settings still wants a moderator.
        let open = Powers {
            levels: Some(json!({"users_default": 0, "state_default": 0})),
            creators: vec![],
            creators_above_all: false,
        };
        assert!(!open.proves("@anyone:x"));
        // A room raising the bar for its settings raises it for the proof too.
        let strict = Powers {
            levels: Some(json!({"users": {"@mod:x": 50}, "state_default": 90})),
            creators: vec![],
            creators_above_all: false,
        };
        assert!(!strict.proves("@mod:x"));
        // No power levels: only the creator; version 12 creators are above every level.
        let bare = Powers {
            levels: None,
            creators: vec!["@c:x".into()],
            creators_above_all: false,
        };
        assert!(bare.proves("@c:x") && !bare.proves("@d:x"));
        let v12 = Powers {
            levels: Some(json!({"users": {}, "state_default": 50})),
            creators: vec!["@c:x".into()],
            creators_above_all: creators_above_all("12"),
        };
        assert!(v12.proves("@c:x") && !v12.proves("@d:x"));
        assert!(!creators_above_all("10") && creators_above_all("org.matrix.hydra.11"));
    }
}
