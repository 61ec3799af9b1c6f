//! The stand-in carrier (`carrier.py`): Twilio's REST API and SMS Gateway for Android's, which
//! record what Klaxon sends, and the phone network's callbacks back to Klaxon, signed by PyPI
//! `twilio`'s RequestValidator and Python's hmac (not Klaxon's code). One carrier per test: its
//! account, token and gateway key are the test's.

use serde_json::{json, Value};
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

pub const SID: &str = "AC0123456789abcdef0123456789abcdef";
pub const TOKEN: &str = "carrier-auth-token";
pub const GATEWAY_USER: &str = "sms";
pub const GATEWAY_PASSWORD: &str = "gateway-password";
pub const GATEWAY_KEY: &str = "gateway-signing-key";
/// The number Klaxon texts and calls from.
pub const FROM: &str = "+14155550100";

pub struct Carrier {
    pub url: String,
    /// Klaxon's public URL, which callbacks are signed over.
    pub public: String,
    client: reqwest::Client,
    _child: Child,
}

/// What a callback got back.
pub struct Answered {
    pub status: u16,
    pub body: String,
    /// The TwiML, read as (tag, attributes, text, children).
    pub xml: Value,
}

impl Carrier {
    pub fn start(public: &str) -> Carrier {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/common/carrier.py");
        let mut child = Command::new("python3")
            .args([
                script,
                &port.to_string(),
                SID,
                TOKEN,
                GATEWAY_USER,
                GATEWAY_PASSWORD,
                GATEWAY_KEY,
                public,
            ])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("python3 runs the stand-in carrier (scripts/setup.sh installs twilio)");
        let mut ready = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut ready)
            .unwrap();
        assert_eq!(ready.trim(), "ready", "the carrier did not start");
        Carrier {
            url: format!("http://127.0.0.1:{port}"),
            public: public.to_string(),
            client: reqwest::Client::new(),
            _child: child,
        }
    }

    /// Klaxon's settings for this carrier: Twilio, and the gateway when `gateway`.
    pub fn roads(&self, gateway: bool) -> klaxon_core::roads::RoadSettings {
        use klaxon_core::roads::phone::{gateway::GatewayConfig, twilio::TwilioConfig};
        klaxon_core::roads::RoadSettings {
            twilio: Some(TwilioConfig {
                url: self.url.clone(),
                account_sid: SID.into(),
                auth_token: TOKEN.into(),
                from: FROM.into(),
            }),
            sms_gateway: gateway.then(|| GatewayConfig {
                url: format!("{}/gateway", self.url),
                username: GATEWAY_USER.into(),
                password: GATEWAY_PASSWORD.into(),
                signing_key: GATEWAY_KEY.into(),
            }),
            ..Default::default()
        }
    }

    async fn post(&self, path: &str, body: Value) -> Value {
        self.client
            .post(format!("{}{path}", self.url))
            .json(&body)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap()
    }

    /// Every request the carrier accepted, oldest first.
    pub async fn records(&self) -> Vec<Value> {
        let all: Value = self
            .client
            .get(format!("{}/records", self.url))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        all.as_array().unwrap().clone()
    }

    /// The accepted requests of one API (`messages`, `calls`, `gateway`) to `to`.
    pub async fn sent(&self, api: &str, to: &str) -> Vec<Value> {
        self.records()
            .await
            .into_iter()
            .filter(|r| {
                r["api"] == api && (r["form"]["To"] == to || r["json"]["phoneNumbers"][0] == to)
            })
            .collect()
    }

    /// Later texts and calls to `to` are refused with `status` and Twilio error `code`.
    pub async fn refuse(&self, to: &str, status: u16, code: u32) {
        self.client
            .post(format!(
                "{}/fail?to={}&status={status}&code={code}",
                self.url,
                to.replace('+', "%2B")
            ))
            .send()
            .await
            .unwrap();
    }

    /// Twilio's request to `url` (a public URL Klaxon gave) with `params`, signed; through
    /// `base`, where Klaxon listens. `signature: Some("")` sends none.
    pub async fn twilio(
        &self,
        base: &str,
        url: &str,
        params: Value,
        signature: Option<&str>,
    ) -> Answered {
        let mut cmd = json!({"url": url, "params": params, "base": base});
        match signature {
            Some("") => cmd["unsigned"] = json!(true),
            Some(sig) => cmd["signature"] = json!(sig),
            None => {}
        }
        let r = self.post("/twilio/post", cmd).await;
        Answered {
            status: r["status"].as_u64().unwrap() as u16,
            body: r["body"].as_str().unwrap_or("").to_string(),
            xml: r["xml"].clone(),
        }
    }

    /// The menu TwiML as Twilio's own library writes it, read the same way.
    pub async fn menu_reference(&self, said: &str, keys: &str, action: &str) -> Value {
        self.post(
            "/twilio/menu-reference",
            json!({"said": said, "keys": keys, "action": action}),
        )
        .await["xml"]
            .clone()
    }

    /// The gateway's webhook `event`, signed at `timestamp` (with `key`, else the right one).
    pub async fn gateway(
        &self,
        base: &str,
        event: Value,
        timestamp: i64,
        key: Option<&str>,
    ) -> u16 {
        let url = format!("{}/api/phone/sms-gateway", self.public);
        let mut cmd = json!({"url": url, "body": event, "base": base, "timestamp": timestamp});
        if let Some(k) = key {
            cmd["key"] = json!(k);
        }
        self.post("/gateway/post", cmd).await["status"]
            .as_u64()
            .unwrap() as u16
    }
}

/// The `Say` texts of a TwiML tree, in order.
pub fn said(xml: &Value) -> Vec<String> {
    let mut out = Vec::new();
    fn walk(node: &Value, out: &mut Vec<String>) {
        if node[0] == "Say" || node[0] == "Message" {
            out.push(node[2].as_str().unwrap().to_string());
        }
        for child in node[3].as_array().into_iter().flatten() {
            walk(child, out);
        }
    }
    walk(xml, &mut out);
    out
}
