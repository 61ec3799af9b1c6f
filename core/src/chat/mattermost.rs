//! Mattermost: a button pressed on an announcement, and the `/klaxon` slash command (`link
//! <code>`, `unlink`). Mattermost signs neither request, so each is checked by what only it and
//! Klaxon know: a press by its context's signature (`roads::mattermost::sign`, made with the
//! slash command's token when the message was posted, and kept by the Mattermost server from
//! clients), a command by its token (the form's `token`, or `Authorization: Token …`), compared
//! by its hash. The person who pressed or typed is the Mattermost user the server names.
//! A press is answered with the message as it is now (Mattermost replaces the post with it) and
//! a sentence only the presser sees.

use crate::callbacks::form;
use crate::roads::mattermost::{current, signed};
use crate::secrets::hash_token;
use crate::{Core, Error, Result};
use klaxon_domain::chat::ChatAct;
use serde::Deserialize;
use serde_json::{json, Value};

pub const ACTIONS_PATH: &str = crate::roads::mattermost::ACTIONS_PATH;
pub const COMMANDS_PATH: &str = "/api/chat/mattermost/commands";
const PLATFORM: &str = "mattermost";

/// A press, as Mattermost's server posts it: who pressed, and the button's context.
#[derive(Deserialize)]
struct Press {
    user_id: String,
    #[serde(default)]
    context: Value,
}

impl Core {
    fn mattermost_token(&self) -> Result<&str> {
        self.config
            .roads
            .mattermost_token
            .as_deref()
            .ok_or(Error::NotFound)
    }

    /// A button pressed on a Mattermost announcement: acts as the person the Mattermost account
    /// is linked to, and answers the updated message and the presser's sentence.
    pub async fn mattermost_action(&self, body: &[u8]) -> Result<Value> {
        let key = self.mattermost_token()?;
        let press: Press = serde_json::from_slice(body)
            .map_err(|_| Error::Invalid("body: not a Mattermost action request".into()))?;
        let c = &press.context;
        let (Some(action), Some(id), Some(sig)) = (
            c["action"].as_str(),
            c["incident"].as_i64(),
            c["sig"].as_str(),
        ) else {
            return Err(Error::Invalid("context: not a Klaxon button's".into()));
        };
        if !signed(key, action, id, sig) {
            tracing::warn!("a Mattermost press failed its check; nothing was done");
            return Err(Error::Unauthorized);
        }
        let Some(act) = ChatAct::parse(action) else {
            return Err(Error::Invalid("context: an unknown action".into()));
        };
        if press.user_id.is_empty() || press.user_id.len() > 64 {
            return Err(Error::Invalid("user_id: required".into()));
        }
        let outcome = self
            .act_from_chat(PLATFORM, &press.user_id, id, act)
            .await?;
        let mut answer = json!({"ephemeral_text": outcome.said});
        if let Some(i) = &outcome.incident {
            let team = self.team_name_of(i).await?;
            let now = current(i, &team, &self.config.public_url, key, outcome.by.clone());
            answer["update"] = json!({"message": "", "props": now});
        }
        Ok(answer)
    }

    /// The `/klaxon` command: `link <code>`, `unlink`, anything else its help; the answer is
    /// shown to the person who typed it alone.
    pub async fn mattermost_command(
        &self,
        body: &[u8],
        authorization: Option<&str>,
    ) -> Result<Value> {
        let key = self.mattermost_token()?;
        let form = form(body);
        let field = |name: &str| {
            form.iter()
                .find(|(k, _)| k == name)
                .map_or("", |(_, v)| v.as_str())
        };
        let given = authorization
            .and_then(|h| h.trim().strip_prefix("Token "))
            .unwrap_or(field("token"))
            .trim();
        // Compared as hashes: how long a comparison takes says nothing of the token.
        if given.is_empty() || hash_token(given) != hash_token(key) {
            tracing::warn!("a Mattermost command failed its check; nothing was done");
            return Err(Error::Unauthorized);
        }
        let user = field("user_id");
        if user.is_empty() || user.len() > 64 {
            return Err(Error::Invalid("user_id: required".into()));
        }
        let shown = format!("@{} in {}", field("user_name"), field("team_domain"));
        let mut words = field("text").split_whitespace();
        let said = match (words.next(), words.next()) {
            (Some("link"), Some(code)) => self.link_chat(PLATFORM, user, &shown, code).await?,
            (Some("unlink"), None) => self.unlink_account(PLATFORM, user).await?,
            _ => "Type `/klaxon link` and the code from your Klaxon profile (Chat accounts) to act on incidents from here; `/klaxon unlink` to stop.".into(),
        };
        Ok(json!({"response_type": "ephemeral", "text": said}))
    }
}
