//! SMS: a page texted to a person's number by the install's provider (`phone`), with reply codes
//! that act on it ("reply 4 a7 to acknowledge"). A number that texted STOP gets no text until it
//! texts START; its pages fail and the person's next road goes.

use super::message::Message;
use super::phone::ceiling::{self, Kind};
use super::phone::{self, number, words, Callback, Phones};
use super::{Failure, Form, Info, Owner, Profile, Road, Sent, To};
use crate::Core;

static INFO: Info = Info {
    name: "sms",
    label: "SMS",
    personal: Some(Profile {
        listed_as: "text messages",
        code_from: "Code from the text",
        in_chat: false,
        form: Some(Form {
            name: "Text messages",
            field: "Phone number for texts",
            input: "tel",
            placeholder: "+44 20 7946 0000",
            hint:
                "With the country code. We text a code to it; reply to a page's text to act on it.",
            button: "Text me a code",
            folded: None,
        }),
    }),
    channel: false,
    needs_code: true,
    shared_service: true,
    signed: false,
    per_minute: Some(super::phone::ceiling::TEXTS_PER_MINUTE),
};

pub struct SmsRoad(pub Phones);

/// Why this install has no road by phone, when it has no provider.
pub(super) const NO_PROVIDER: &str =
    "no phone provider is configured (KLAXON_TWILIO_* or KLAXON_SMS_GATEWAY_*)";

#[async_trait::async_trait]
impl Road for SmsRoad {
    fn info(&self) -> &'static Info {
        &INFO
    }

    fn unconfigured(&self) -> Option<String> {
        self.0.is_empty().then(|| NO_PROVIDER.to_string())
    }

    fn check(&self, _core: &Core, _owner: Owner, target: &str) -> Result<String, String> {
        number::check(target)
    }

    fn shown(&self, target: &str) -> String {
        number::readable(target)
    }

    fn shown_to_others(&self, target: &str) -> String {
        number::masked(target)
    }

    async fn send(&self, core: &Core, to: &To, message: &Message<'_>) -> Sent {
        let Some(provider) = self.0.pick(to.provider.as_deref(), false) else {
            return Err(Failure::permanent(NO_PROVIDER));
        };
        if core.texted_stop(&to.target).await {
            return Err(Failure::permanent(
                "the number texted STOP; it gets no texts until it texts START",
            ));
        }
        let paged = matches!(message, Message::Page(_))
            .then_some(to.method_id)
            .flatten();
        // The reply code and the ceilings' counts in one transaction: one turn of SQLite's
        // writer (the notifier's, not queued behind webhooks) for each text.
        let mut tx = core.db.begin().await.map_err(ceiling::db_failure)?;
        let reply = match message {
            Message::Page(page) => core.reply_code(&mut tx, &to.target, page).await?,
            _ => None,
        };
        let public_url = &core.config.public_url;
        let body = words::text(message, public_url, reply.as_deref())
            .ok_or_else(|| Failure::not_carried("SMS"))?;
        ceiling::reserve(core, &mut tx, paged, Kind::Text).await?;
        tx.commit().await.map_err(ceiling::db_failure)?;
        let status = Callback::status(core, &**provider, to);
        let units = phone::segments(&body);
        let send = provider.text(&to.target, &body, &status);
        phone::metered(core, &**provider, "text", units, send).await
    }
}
