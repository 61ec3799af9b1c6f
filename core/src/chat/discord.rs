//! Discord: the application's interactions endpoint
//! (<https://discord.com/developers/docs/interactions/overview#setting-up-an-endpoint>). Each
//! request is checked first as Discord documents: `X-Signature-Ed25519` is the Ed25519 signature,
//! by the application's key, of `X-Signature-Timestamp` followed by the body; Klaxon also refuses
//! a timestamp more than five minutes from its clock. A `PING` is answered `PONG`; a button
//! (`klaxon:ack:42`) acts as the person the Discord account is linked to, is answered with a
//! message only the presser sees, and the incident's announcements are edited; the `/klaxon`
//! command's `link <code>` and `unlink` link the account.

use crate::roads::announcement::Announcement;
use crate::roads::discord::{edit_to, DiscordConfig, PLATFORM};
use crate::{Core, Error, Result};
use ed25519_dalek::{Signature, VerifyingKey};
use klaxon_domain::chat::ChatAct;
use serde_json::{json, Value};

/// How far a request's timestamp may be from now.
pub const WINDOW: i64 = 5 * 60;
/// Discord's flag for a message only the one who acted sees.
const EPHEMERAL: i64 = 64;

impl Core {
    /// One interaction: the answer Discord shows, once its signature and time are checked.
    pub async fn discord_interaction(
        &self,
        body: &[u8],
        timestamp: Option<&str>,
        sig: Option<&str>,
    ) -> Result<Value> {
        let Some(bot) = self.config.roads.discord.clone() else {
            return Err(Error::NotFound);
        };
        let Some(key) = bot.public_key else {
            return Err(Error::NotFound);
        };
        let refused = |what: &str| {
            tracing::warn!(
                what,
                "a Discord interaction failed its check; nothing was done"
            );
            Error::Unauthorized
        };
        let (Some(at), Some(sig)) = (timestamp, sig) else {
            return Err(refused("no signature"));
        };
        let sent = at
            .trim()
            .parse::<i64>()
            .map_err(|_| refused("a timestamp that is not a number"))?;
        if (self.now() - sent).abs() > WINDOW {
            return Err(refused("a timestamp outside the five minutes"));
        }
        let sig = hex::decode(sig.trim())
            .ok()
            .and_then(|b| Signature::from_slice(&b).ok())
            .ok_or_else(|| refused("a signature that is not one"))?;
        let key = VerifyingKey::from_bytes(&key).map_err(|_| refused("the configured key"))?;
        let mut signed = at.as_bytes().to_vec();
        signed.extend_from_slice(body);
        key.verify_strict(&signed, &sig)
            .map_err(|_| refused("a wrong signature"))?;
        let i: Value = serde_json::from_slice(body)
            .map_err(|_| Error::Invalid("body: not a Discord interaction".into()))?;
        let user = i["member"]["user"]["id"]
            .as_str()
            .or(i["user"]["id"].as_str())
            .unwrap_or_default()
            .to_string();
        let said = match i["type"].as_i64() {
            Some(1) => return Ok(json!({"type": 1})),
            Some(3) => {
                let custom = i["data"]["custom_id"].as_str().unwrap_or_default();
                let mut parts = custom.split(':');
                let act = parts.nth(1).and_then(ChatAct::parse);
                let id = parts.next().and_then(|id| id.parse::<i64>().ok());
                match (act, id) {
                    (Some(act), Some(id)) if !user.is_empty() => {
                        self.discord_act(&bot, &user, id, act).await?
                    }
                    _ => "That button is not Klaxon's.".into(),
                }
            }
            Some(2) => self.discord_command(&i, &user).await?,
            _ => {
                return Err(Error::Invalid(
                    "type: not an interaction Klaxon takes".into(),
                ))
            }
        };
        Ok(
            json!({"type": 4, "data": {"content": said, "flags": EPHEMERAL, "allowed_mentions": {"parse": []}}}),
        )
    }

    /// `/klaxon link <code>` or `/klaxon unlink` (subcommands).
    async fn discord_command(&self, i: &Value, user: &str) -> Result<String> {
        let sub = &i["data"]["options"][0];
        let code = sub["options"][0]["value"].as_str().unwrap_or_default();
        let name = i["member"]["user"]["username"]
            .as_str()
            .or(i["user"]["username"].as_str())
            .unwrap_or_default();
        Ok(match (sub["name"].as_str(), user.is_empty()) {
            (_, true) => "Nobody to link.".into(),
            (Some("link"), false) if !code.is_empty() => {
                self.link_chat(PLATFORM, user, &format!("@{name}"), code).await?
            }
            (Some("unlink"), false) => self.unlink_account(PLATFORM, user).await?,
            _ => "Use /klaxon link with the code from your Klaxon profile (Chat accounts); /klaxon unlink to stop.".into(),
        })
    }

    /// Does `act` as the person the Discord account is linked to; edits the incident's
    /// announcements in a task of their own when it changed. The sentence for the presser.
    async fn discord_act(
        &self,
        bot: &DiscordConfig,
        user: &str,
        id: i64,
        act: ChatAct,
    ) -> Result<String> {
        let outcome = self.act_from_chat(PLATFORM, user, id, act).await?;
        if let (Some(_), Some(i)) = (&outcome.by, outcome.incident.clone()) {
            let team = self.team_name_of(&i).await?;
            let now =
                Announcement::current(&i, &team, &self.config.public_url, outcome.by.clone(), true);
            let posts = self.announcements_of(PLATFORM, id, None).await?;
            let (core, bot) = (self.clone(), bot.clone());
            tokio::spawn(async move {
                for post in posts {
                    edit_to(&core.outbound, &bot, &post.place, &post.message_id, &now).await;
                }
            });
        }
        Ok(format!("#{id}: {}", outcome.said))
    }
}
