//! Telegram: the bot's webhook (<https://core.telegram.org/bots/api#setwebhook>), each update
//! checked by `X-Telegram-Bot-Api-Secret-Token` (the secret given to `setWebhook`, compared by
//! its hash) before it is read. A button pressed on an announcement (a `callback_query` whose
//! data is `ack:42`) acts as the person the Telegram account is linked to; the press is answered
//! (`answerCallbackQuery`: a toast only the presser sees) and the incident's messages are edited
//! to show it as it is now. Messages to the bot: `/link 123456`, `/unlink`, and the commands
//! `/ack 42`, `/resolve 42 what fixed it`, `/snooze 42`, `/take 42` (or, in reply to the bot's
//! message, without the number), answered in reply. The webhook is answered 200 at once; the
//! calls back to Telegram go in a task of their own.

use crate::roads::announcement::Announcement;
use crate::roads::telegram::{call, edit_to, post_key, TelegramConfig, PLATFORM};
use crate::secrets::hash_token;
use crate::{Core, Error, Result};
use klaxon_domain::chat::{read_said, ChatAct, Said};
use serde_json::{json, Value};

/// What the bot says to anything else.
pub const HELP: &str = "Klaxon acts on incidents as you once your account is linked: get a code under Chat accounts in your Klaxon profile and send /link with it. Then /ack 42, /resolve 42 what fixed it, /snooze 42, /take 42, or press the buttons.";

impl Core {
    /// One webhook update. Only a wrong or missing secret is refused; anything else is taken
    /// (Telegram would otherwise send it again and again).
    pub async fn telegram_update(&self, body: &[u8], secret: Option<&str>) -> Result<()> {
        let Some(bot) = self.config.roads.telegram.clone() else {
            return Err(Error::NotFound);
        };
        let Some(expected) = bot.webhook_secret.as_deref() else {
            return Err(Error::NotFound);
        };
        // Compared as hashes: how long a comparison takes says nothing of the secret.
        if secret.is_none_or(|s| hash_token(s) != hash_token(expected)) {
            tracing::warn!("a Telegram update failed its check; nothing was done");
            return Err(Error::Unauthorized);
        }
        let update: Value = serde_json::from_slice(body)
            .map_err(|_| Error::Invalid("body: not a Telegram update".into()))?;
        let core = self.clone();
        tokio::spawn(async move {
            if let Err(e) = core.telegram_take(&bot, &update).await {
                tracing::warn!(error = %e, "a Telegram update was not acted on");
            }
        });
        Ok(())
    }

    async fn telegram_take(&self, bot: &TelegramConfig, update: &Value) -> Result<()> {
        if let Some(press) = update.get("callback_query") {
            return self.telegram_press(bot, press).await;
        }
        let m = &update["message"];
        let (Some(text), Some(from), Some(chat)) = (
            m["text"].as_str(),
            m["from"]["id"].as_i64(),
            m["chat"]["id"].as_i64(),
        ) else {
            return Ok(());
        };
        let account = from.to_string();
        let command = text.trim().strip_prefix('/').map(|c| {
            // `/ack@klaxon_bot 42` in a group names the bot.
            let (word, rest) = c.split_once(char::is_whitespace).unwrap_or((c, ""));
            let word = word.split('@').next().unwrap_or(word);
            (word.to_ascii_lowercase(), rest.trim().to_string())
        });
        let replied = m["reply_to_message"]["message_id"].as_i64();
        let about = match replied {
            Some(id) => {
                self.post(PLATFORM, &post_key(&chat.to_string(), id))
                    .await?
            }
            None => None,
        };
        let said = match command.as_ref().map(|(w, r)| (w.as_str(), r.as_str())) {
            // `/start 123456` is what the link `t.me/<bot>?start=123456` sends.
            Some(("link" | "start", code)) if !code.is_empty() => {
                let shown = match m["from"]["username"].as_str() {
                    Some(u) => format!("@{u}"),
                    None => format!("Telegram user {from}"),
                };
                let said = self.link_chat(PLATFORM, &account, &shown, code).await?;
                match m["chat"]["type"] == "private" {
                    true => self.telegram_method(&account, said).await?,
                    false => said,
                }
            }
            Some(("unlink", _)) => self.unlink_account(PLATFORM, &account).await?,
            Some(("start" | "help", _)) => HELP.into(),
            _ => {
                let line = match &command {
                    Some((w, r)) => format!("!{w} {r}"),
                    None => text.to_string(),
                };
                match read_said(&line, about.is_some()) {
                    Said::Nothing => return Ok(()),
                    Said::Help => HELP.into(),
                    Said::Act {
                        act,
                        incident,
                        note,
                    } => match incident.or(about.as_ref().map(|p| p.incident_id)) {
                        None => "Which incident? /ack 42, or reply to Klaxon's message.".into(),
                        Some(id) => self.telegram_act(bot, &account, id, act, note).await?,
                    },
                }
            }
        };
        let reply = json!({
            "chat_id": chat,
            "text": said,
            "reply_parameters": {"message_id": m["message_id"], "allow_sending_without_reply": true},
        });
        call(&self.outbound, bot, "sendMessage", &reply)
            .await
            .map(|_| ())
            .map_err(|f| Error::Upstream(f.reason))
    }

    /// After `/link` in a private chat: the chat becomes the linked person's verified Telegram
    /// contact method (the chat's id is the account's), so pages can reach them here.
    async fn telegram_method(&self, account: &str, said: String) -> Result<String> {
        let Some(person) = self.chat_person(PLATFORM, account).await? else {
            return Ok(said);
        };
        Ok(match self.add_chat_method(&person, PLATFORM, account).await? {
            true => format!("{said} Klaxon can page you in this chat too: choose Telegram in your notification rules."),
            false => said,
        })
    }

    /// A button pressed: acts, tells the presser alone, and edits the incident's messages.
    async fn telegram_press(&self, bot: &TelegramConfig, press: &Value) -> Result<()> {
        let (Some(query), Some(from)) = (press["id"].as_str(), press["from"]["id"].as_i64()) else {
            return Ok(());
        };
        let data = press["data"].as_str().unwrap_or_default();
        let (act, id) = data.split_once(':').unwrap_or_default();
        let said = match (ChatAct::parse(act), id.parse::<i64>()) {
            (Some(act), Ok(id)) => {
                self.telegram_act(bot, &from.to_string(), id, act, None)
                    .await?
            }
            _ => "That button is not Klaxon's.".into(),
        };
        let answer = json!({"callback_query_id": query, "text": said});
        call(&self.outbound, bot, "answerCallbackQuery", &answer)
            .await
            .map(|_| ())
            .map_err(|f| Error::Upstream(f.reason))
    }

    /// Does `act` as the person the Telegram account is linked to; edits the incident's
    /// announcements when it changed. The sentence for the person.
    async fn telegram_act(
        &self,
        bot: &TelegramConfig,
        account: &str,
        id: i64,
        act: ChatAct,
        note: Option<String>,
    ) -> Result<String> {
        let outcome = match self.chat_person(PLATFORM, account).await? {
            Some(actor) => self.act_as(&actor, id, act, note.as_deref()).await?,
            None => return Ok(super::act::NOT_LINKED.replace("`/klaxon link`", "/link")),
        };
        if let (Some(_), Some(i)) = (&outcome.by, &outcome.incident) {
            let team = self.team_name_of(i).await?;
            let now = Announcement::current(
                i,
                &team,
                &self.config.public_url,
                outcome.by.clone(),
                bot.webhook_secret.is_some(),
            );
            for post in self.announcements_of(PLATFORM, id, None).await? {
                edit_to(&self.outbound, bot, &post.place, &post.message_id, &now).await;
            }
        }
        Ok(format!("#{id}: {}", outcome.said))
    }
}
