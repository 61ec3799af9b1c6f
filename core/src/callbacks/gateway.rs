//! SMS Gateway for Android's webhooks (`/api/phone/sms-gateway`, registered for `sms:received`
//! and `sms:failed`): checked by `X-Signature` over the raw body and `X-Timestamp`, the time
//! within five minutes, and each event id acted on once. A text received is read as a reply
//! and answered by a text from the same phone; a text failed hands its page on.

use super::refused;
use crate::roads::phone::{number, Callback};
use crate::{Core, Error, Result};
use serde::Deserialize;

pub const GATEWAY_PATH: &str = "/api/phone/sms-gateway";

#[derive(Deserialize)]
struct Event {
    event: String,
    id: String,
    #[serde(default)]
    payload: Payload,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct Payload {
    message_id: Option<String>,
    message: Option<String>,
    phone_number: Option<String>,
    reason: Option<String>,
}

impl Core {
    /// One webhook of the gateway.
    pub async fn sms_gateway_event(
        &self,
        body: &[u8],
        timestamp: Option<&str>,
        signature: Option<&str>,
    ) -> Result<()> {
        let Some(gateway) = self.roads.sms_gateway.clone() else {
            return Err(Error::NotFound);
        };
        let (Some(at), Some(sig)) = (timestamp, signature) else {
            return Err(refused("SMS gateway", GATEWAY_PATH));
        };
        if !gateway.authentic(body, at, sig, self.now()) {
            return Err(refused("SMS gateway", GATEWAY_PATH));
        }
        let event: Event = serde_json::from_slice(body)
            .map_err(|e| Error::Invalid(format!("not a gateway event: {e}")))?;
        if !self.first_report("sms-gateway", &event.id).await? {
            return Ok(());
        }
        let p = event.payload;
        match event.event.as_str() {
            "sms:received" => {
                let (Some(from), Some(text)) = (p.phone_number, p.message) else {
                    return Err(Error::Invalid(
                        "sms:received needs phoneNumber and message".into(),
                    ));
                };
                let from = number::check(&from).unwrap_or(from);
                let answer = self.text_received(&from, &text).await?;
                let back = Callback {
                    url: String::new(),
                    delivery: format!("reply-{}", event.id),
                };
                use crate::roads::phone::{metered, segments, Provider};
                let send = gateway.text(&from, &answer, &back);
                let sent = metered(self, &*gateway, "text", segments(&answer), send).await;
                if let Err(f) = sent {
                    tracing::warn!(reason = %f.reason, "the SMS gateway did not take a reply");
                }
                Ok(())
            }
            "sms:failed" => {
                let Some(delivery) = p.message_id else {
                    return Ok(());
                };
                let reason = match p.reason {
                    Some(r) => format!(
                        "the text was not sent ({})",
                        r.chars().take(200).collect::<String>()
                    ),
                    None => "the text was not sent".into(),
                };
                self.delivery_not_reached(&delivery, &reason).await
            }
            _ => Ok(()),
        }
    }
}
