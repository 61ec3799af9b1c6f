//! Voice: a page rings a person's number through the install's provider (`phone`). Answered, the
//! call says what broke and offers its menu ("press 4 to acknowledge, 6 to resolve, 5 to
//! escalate now, 1 to hear it again"), read by Klaxon at that moment from the delivery's token
//! (`callbacks::voice`); the keypress acts as that person through that token. No answer, a busy
//! line or a voicemail is reported by the provider and counts as not reached
//! (`callbacks::status`): the person's next road goes.

use super::message::{Message, Tone};
use super::phone::ceiling::{self, Kind};
use super::phone::{self, number, words, Call, Callback, Phones};
use super::sms::NO_PROVIDER;
use super::{Failure, Form, Info, Owner, Profile, Road, Sent, To};
use crate::Core;

static INFO: Info = Info {
    name: "voice",
    label: "Phone call",
    personal: Some(Profile {
        listed_as: "phone calls",
        code_from: "Code from the call",
        in_chat: false,
        form: Some(Form {
            name: "Phone calls",
            field: "Phone number for calls",
            input: "tel",
            placeholder: "+44 20 7946 0000",
            hint: "With the country code. We call it and say a code; a page's call lets you press 4 to acknowledge.",
            button: "Call me with a code",
            folded: None,
        }),
    }),
    channel: false,
    needs_code: true,
    shared_service: true,
    signed: false,
    per_minute: Some(1),
};

pub struct VoiceRoad(pub Phones);

#[async_trait::async_trait]
impl Road for VoiceRoad {
    fn info(&self) -> &'static Info {
        &INFO
    }

    fn unconfigured(&self) -> Option<String> {
        (!self.0.can_ring())
            .then(|| "no phone provider that can call is configured (KLAXON_TWILIO_*)".to_string())
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
        let Some(provider) = self.0.pick(to.provider.as_deref(), true) else {
            return Err(Failure::permanent(NO_PROVIDER));
        };
        let public_url = &core.config.public_url;
        let call = match message {
            Message::Page(page) if matches!(page.tone, Tone::Alert(_)) => match &page.ack {
                Some(ack) => Call::Menu {
                    url: format!(
                        "{public_url}/api/phone/{}/voice/{}",
                        provider.name(),
                        ack.token
                    ),
                },
                None => Call::Say(format!("Klaxon: {}. Goodbye.", page.subject)),
            },
            other => Call::Say(words::spoken(other).ok_or_else(|| Failure::not_carried("voice"))?),
        };
        let paged = matches!(message, Message::Page(_))
            .then_some(to.method_id)
            .flatten();
        let mut tx = core.db.begin().await.map_err(ceiling::db_failure)?;
        ceiling::reserve(core, &mut tx, paged, Kind::Call).await?;
        tx.commit().await.map_err(ceiling::db_failure)?;
        let status = Callback::status(core, &**provider, to);
        let send = provider.ring(&to.target, &call, &status);
        phone::metered(core, &**provider, "call", 1, send).await
    }
}
