//! Twilio's requests to Klaxon: a page's call answered or a key pressed
//! (`/api/phone/twilio/voice/{token}`), the status of a text or a call
//! (`/api/phone/twilio/status/{delivery}`), and a text to the install's number
//! (`/api/phone/twilio/sms`, set as the number's messaging webhook). Each is checked by
//! `X-Twilio-Signature` against the public URL Twilio was given before it is read.

use super::status::not_reached;
use super::{field, refused, Form};
use crate::roads::phone::twilio as twiml;
use crate::secrets::hash_token;
use crate::{Core, Error, Result};

/// The paths Twilio is given, under the public URL.
pub struct Twilio;

impl Twilio {
    pub const VOICE: &'static str = "/api/phone/twilio/voice";
    pub const STATUS: &'static str = "/api/phone/twilio/status";
    pub const SMS: &'static str = "/api/phone/twilio/sms";
}

impl Core {
    /// Checks Twilio's signature of a POST to `path` (with its query) carrying `form`.
    fn signed_by_twilio(&self, path: &str, form: &Form, signature: Option<&str>) -> Result<()> {
        let Some(twilio) = &self.roads.twilio else {
            return Err(Error::NotFound);
        };
        let url = format!("{}{path}", self.config.public_url);
        match signature {
            Some(sig) if twilio.authentic(&url, form, sig) => Ok(()),
            _ => Err(refused("Twilio", path)),
        }
    }

    /// A page's call: answered (its menu), or a key pressed. A voicemail is hung up on; the
    /// call's status report then says it was not reached.
    pub async fn twilio_voice(
        &self,
        path: &str,
        form: Form,
        signature: Option<&str>,
        token: &str,
    ) -> Result<String> {
        self.signed_by_twilio(path, &form, signature)?;
        let answered_by = field(&form, "AnsweredBy").unwrap_or("");
        if answered_by.starts_with("machine") || answered_by == "fax" {
            return Ok(twiml::hang_up());
        }
        let key = field(&form, "Digits").and_then(|d| d.chars().next());
        let action = format!("{}{}/{token}", self.config.public_url, Twilio::VOICE);
        self.call_answer(&hash_token(token), key, &action).await
    }

    /// A text's or a call's status: one that did not reach its person hands the page on.
    pub async fn twilio_status(
        &self,
        path: &str,
        form: Form,
        signature: Option<&str>,
        delivery: &str,
    ) -> Result<()> {
        self.signed_by_twilio(path, &form, signature)?;
        let why = not_reached(
            field(&form, "CallStatus"),
            field(&form, "AnsweredBy"),
            field(&form, "MessageStatus"),
            field(&form, "ErrorCode"),
        );
        match why {
            Some(reason) => self.delivery_not_reached(delivery, &reason).await,
            None => Ok(()),
        }
    }

    /// A text to the install's number: a reply code, STOP, START, or anything else (help).
    /// The answer is TwiML with the text back; a replayed message gets none.
    pub async fn twilio_text(
        &self,
        path: &str,
        form: Form,
        signature: Option<&str>,
    ) -> Result<String> {
        self.signed_by_twilio(path, &form, signature)?;
        let (Some(from), Some(sid)) = (field(&form, "From"), field(&form, "MessageSid")) else {
            return Err(Error::Invalid("From and MessageSid are required".into()));
        };
        if !self.first_report("twilio", sid).await? {
            return Ok(twiml::message(None));
        }
        let body = field(&form, "Body").unwrap_or("");
        let answer = self.text_received(from, body).await?;
        Ok(twiml::message(Some(&answer)))
    }
}
