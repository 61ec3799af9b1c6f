//! SMS Gateway for Android (the open-source `android-sms-gateway`): a phone of the team's own
//! texts the pages, with no vendor. Its REST API (local, cloud or private server mode):
//! `POST {base}/messages` with HTTP Basic auth and `{"textMessage": {"text"}, "phoneNumbers",
//! "id", "withDeliveryReport", "priority"}`, answered 202. Its webhooks (`sms:received`,
//! `sms:failed`, …) are signed: `X-Signature` is the hex HMAC-SHA256, keyed by the signing
//! key, of the raw body followed by `X-Timestamp` (Unix seconds).

use super::{Call, Callback, Provider};
use crate::outbound::Outbound;
use crate::roads::{http::answered, Failure, Sent};
use hmac::{Hmac, Mac};

/// `KLAXON_SMS_GATEWAY_*`.
#[derive(Debug, Clone)]
pub struct GatewayConfig {
    /// The API's base: `https://api.sms-gate.app/3rdparty/v1`, a private server's, or the
    /// phone's own (`http://192.168.1.10:8080`).
    pub url: String,
    pub username: String,
    pub password: String,
    /// The key the app signs its webhooks with (Settings → Webhooks → Signing Key).
    pub signing_key: String,
}

pub struct Gateway {
    client: Outbound,
    config: GatewayConfig,
}

/// A webhook older or newer than this (seconds) is refused: a replay, or a clock far off.
pub const WEBHOOK_WINDOW: i64 = 300;

impl Gateway {
    pub fn new(config: GatewayConfig) -> Gateway {
        Gateway {
            client: Outbound::trusted(),
            config: GatewayConfig {
                url: config.url.trim_end_matches('/').to_string(),
                ..config
            },
        }
    }

    /// Whether a webhook's body is signed with this install's key at `timestamp`, and that
    /// time is within `WEBHOOK_WINDOW` of `now`.
    pub fn authentic(&self, body: &[u8], timestamp: &str, signature: &str, now: i64) -> bool {
        let Ok(at) = timestamp.trim().parse::<i64>() else {
            return false;
        };
        let Ok(given) = hex::decode(signature.trim()) else {
            return false;
        };
        if (now - at).abs() > WEBHOOK_WINDOW {
            return false;
        }
        let mut mac = Hmac::<sha2::Sha256>::new_from_slice(self.config.signing_key.as_bytes())
            .expect("HMAC takes any key length");
        mac.update(body);
        mac.update(timestamp.trim().as_bytes());
        mac.verify_slice(&given).is_ok()
    }
}

/// Signs a webhook body as the app does (for the tests' own checks).
pub fn sign(key: &str, body: &[u8], timestamp: &str) -> String {
    let mut mac = Hmac::<sha2::Sha256>::new_from_slice(key.as_bytes()).expect("any key");
    mac.update(body);
    mac.update(timestamp.as_bytes());
    hex::encode(mac.finalize().into_bytes())
}

#[async_trait::async_trait]
impl Provider for Gateway {
    fn name(&self) -> &'static str {
        "sms-gateway"
    }

    fn calls(&self) -> bool {
        false
    }

    async fn text(&self, to: &str, body: &str, status: &Callback) -> Sent {
        // The delivery's id is the message's: the app's `sms:failed` webhook names it.
        let message = serde_json::json!({
            "id": status.delivery,
            "textMessage": {"text": body},
            "phoneNumbers": [to],
            "withDeliveryReport": true,
            // 100 and above skip the app's own send delays and limits: a page is urgent.
            "priority": 100,
            "ttl": 3600,
        });
        let req = self
            .client
            .request(
                reqwest::Method::POST,
                &format!("{}/messages", self.config.url),
            )
            .basic_auth(&self.config.username, Some(&self.config.password))
            .json(&message);
        answered("the SMS gateway", self.client.send(req).await)
    }

    async fn ring(&self, _to: &str, _call: &Call, _status: &Callback) -> Sent {
        Err(Failure::permanent("an SMS gateway cannot ring a number"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn webhooks_are_checked_by_their_signature_and_time() {
        let gateway = Gateway::new(GatewayConfig {
            url: "http://phone:8080/".into(),
            username: "sms".into(),
            password: "pw".into(),
            signing_key: "key".into(),
        });
        let body = br#"{"event":"sms:received"}"#;
        let sig = sign("key", body, "1700000000");
        assert!(gateway.authentic(body, "1700000000", &sig, 1_700_000_100));
        // Replayed after the window, another body, another key.
        assert!(!gateway.authentic(body, "1700000000", &sig, 1_700_000_301));
        assert!(!gateway.authentic(b"{}", "1700000000", &sig, 1_700_000_000));
        assert!(!gateway.authentic(
            body,
            "1700000000",
            &sign("other", body, "1700000000"),
            1_700_000_000
        ));
        assert!(!gateway.authentic(body, "x", &sig, 1_700_000_000));
    }
}
