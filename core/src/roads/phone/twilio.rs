//! The Twilio REST API, version 2010-04-01, as Twilio documents it and as SignalWire (LaML) and
//! Telnyx (TeXML) serve it at another base URL: a text is a form POST to
//! `Accounts/{sid}/Messages.json`, a call to `Accounts/{sid}/Calls.json` with the URL of its
//! TwiML, both with HTTP Basic auth by the account SID and auth token. Twilio signs every
//! request it makes to Klaxon with `X-Twilio-Signature`: HMAC-SHA1, keyed by the auth token,
//! over the full URL followed by each form parameter's name and value, sorted by name, base64.

use super::{Call, Callback, Provider};
use crate::outbound::{Answer, Outbound};
use crate::roads::{http::retry_after, Failure, Sent};
use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use hmac::{Hmac, Mac};

/// `KLAXON_TWILIO_*`.
#[derive(Debug, Clone)]
pub struct TwilioConfig {
    /// `https://api.twilio.com`, or another service's base for the same paths.
    pub url: String,
    pub account_sid: String,
    pub auth_token: String,
    /// The number texts and calls come from, E.164.
    pub from: String,
}

pub struct Twilio {
    client: Outbound,
    config: TwilioConfig,
}

/// How long a call rings before it counts as not answered (seconds).
const RING_FOR: u32 = 30;

impl Twilio {
    pub fn new(config: TwilioConfig) -> Twilio {
        // The administrator's provider: no address policy, no redirects, a capped read.
        Twilio {
            client: Outbound::trusted(),
            config: TwilioConfig {
                url: config.url.trim_end_matches('/').to_string(),
                ..config
            },
        }
    }

    fn resource(&self, name: &str) -> String {
        format!(
            "{}/2010-04-01/Accounts/{}/{name}.json",
            self.config.url, self.config.account_sid
        )
    }

    async fn create(&self, name: &str, form: &[(&str, &str)]) -> Sent {
        let req = self
            .client
            .request(reqwest::Method::POST, &self.resource(name))
            .basic_auth(&self.config.account_sid, Some(&self.config.auth_token))
            .form(form);
        match self.client.send(req).await {
            Err(f) => Err(Failure::outage(format!(
                "cannot reach the Twilio API at {}: it {}",
                self.config.url, f.sentence
            ))),
            Ok(a) => refused(&a),
        }
    }

    /// Whether `signature` is Twilio's for a form POST to `url` with `params`.
    pub fn authentic(&self, url: &str, params: &[(String, String)], signature: &str) -> bool {
        let Ok(given) = STANDARD.decode(signature.trim()) else {
            return false;
        };
        mac(&self.config.auth_token, url, params)
            .verify_slice(&given)
            .is_ok()
    }
}

fn mac(token: &str, url: &str, params: &[(String, String)]) -> Hmac<sha1::Sha1> {
    let mut sorted: Vec<&(String, String)> = params.iter().collect();
    sorted.sort();
    let mut mac =
        Hmac::<sha1::Sha1>::new_from_slice(token.as_bytes()).expect("HMAC takes any key length");
    mac.update(url.as_bytes());
    for (k, v) in sorted {
        mac.update(k.as_bytes());
        mac.update(v.as_bytes());
    }
    mac
}

/// The signature Twilio would send (for the tests' own checks).
pub fn signature(token: &str, url: &str, params: &[(String, String)]) -> String {
    STANDARD.encode(mac(token, url, params).finalize().into_bytes())
}

/// An answer of the API as a send's result. Its errors are JSON with a numeric `code`:
/// 21211 (not a valid number), 21610 (the number texted STOP), 21614 (not a mobile number)
/// and the like are for good; 429 (code 20429) and 5xx are the service's, retried.
fn refused(a: &Answer) -> Sent {
    if a.status.is_success() {
        return Ok(());
    }
    let body = a.json::<serde_json::Value>().unwrap_or_default();
    let code = body["code"].as_i64();
    let message: String = body["message"]
        .as_str()
        .unwrap_or("")
        .chars()
        .take(200)
        .collect();
    let reason = match code {
        Some(code) => format!(
            "the Twilio API answered {} (error {code}: {message})",
            a.status.as_u16()
        ),
        None => format!("the Twilio API answered {}", a.status.as_u16()),
    };
    if a.status == reqwest::StatusCode::TOO_MANY_REQUESTS {
        return Err(Failure {
            retry_after: retry_after(a).or(Some(1)),
            rate_limited: true,
            ..Failure::outage(reason)
        });
    }
    // A wrong credential is the install's, not the number's: every page waits for it.
    if a.status.is_server_error() || matches!(a.status.as_u16(), 401 | 403) {
        return Err(Failure::outage(reason));
    }
    Err(Failure::permanent(reason))
}

#[async_trait::async_trait]
impl Provider for Twilio {
    fn name(&self) -> &'static str {
        "twilio"
    }

    fn calls(&self) -> bool {
        true
    }

    async fn text(&self, to: &str, body: &str, status: &Callback) -> Sent {
        let form = [
            ("To", to),
            ("From", self.config.from.as_str()),
            ("Body", body),
            ("StatusCallback", status.url.as_str()),
        ];
        self.create("Messages", &form).await
    }

    async fn ring(&self, to: &str, call: &Call, status: &Callback) -> Sent {
        let ring_for = RING_FOR.to_string();
        let said;
        let mut form = vec![
            ("To", to),
            ("From", self.config.from.as_str()),
            ("StatusCallback", status.url.as_str()),
            ("Timeout", ring_for.as_str()),
            // A voicemail's greeting is told from a person; Twilio says which in `AnsweredBy`.
            ("MachineDetection", "Enable"),
        ];
        match call {
            Call::Menu { url } => form.push(("Url", url.as_str())),
            Call::Say(words) => {
                said = say(words);
                form.push(("Twiml", said.as_str()));
            }
        }
        self.create("Calls", &form).await
    }
}

/// TwiML, written as Twilio's own library writes it (`twilio.twiml.voice_response`): the
/// declaration, then the verbs with their attributes, text escaped.
pub fn say(words: &str) -> String {
    response(&format!("<Say>{}</Say>", escape(words)))
}

/// A page's menu: what broke, then the keys, listened for twice; then goodbye.
pub fn menu(spoken: &str, keys: &str, action: &str) -> String {
    let gather = format!(
        "<Gather action=\"{}\" method=\"POST\" numDigits=\"1\" timeout=\"8\"><Say>{}</Say><Say>{}</Say></Gather>",
        escape(action),
        escape(spoken),
        escape(keys)
    );
    let again = format!(
        "<Gather action=\"{}\" method=\"POST\" numDigits=\"1\" timeout=\"8\"><Say>{}</Say></Gather>",
        escape(action),
        escape(keys)
    );
    response(&format!(
        "{gather}{again}<Say>No key was pressed. Goodbye.</Say>"
    ))
}

/// Hangs up at once (a voicemail answered).
pub fn hang_up() -> String {
    response("<Hangup/>")
}

/// The answer to a text: one text back, or none.
pub fn message(reply: Option<&str>) -> String {
    match reply {
        Some(text) => response(&format!("<Message>{}</Message>", escape(text))),
        None => "<?xml version=\"1.0\" encoding=\"UTF-8\"?><Response />".into(),
    }
}

fn response(verbs: &str) -> String {
    format!("<?xml version=\"1.0\" encoding=\"UTF-8\"?><Response>{verbs}</Response>")
}

fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            c if c.is_control() && c != '\n' && c != '\t' => {}
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    // Twilio's documented example ("Validating requests": the signature of this URL and these
    // parameters with auth token 12345 is 0/KCTR6DLpKmkAf8muzZqo1nDgQ=).
    #[test]
    fn signatures_match_twilios_documented_example() {
        let params: Vec<(String, String)> = [
            ("CallSid", "CA1234567890ABCDE"),
            ("Caller", "+12349013030"),
            ("Digits", "1234"),
            ("From", "+12349013030"),
            ("To", "+18005551212"),
        ]
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        let url = "https://mycompany.com/myapp.php?foo=1&bar=2";
        assert_eq!(
            signature("12345", url, &params),
            "0/KCTR6DLpKmkAf8muzZqo1nDgQ="
        );
        let twilio = Twilio::new(TwilioConfig {
            url: "https://api.twilio.com".into(),
            account_sid: "AC1".into(),
            auth_token: "12345".into(),
            from: "+15005550006".into(),
        });
        assert!(twilio.authentic(url, &params, "0/KCTR6DLpKmkAf8muzZqo1nDgQ="));
        assert!(!twilio.authentic(url, &params[1..], "0/KCTR6DLpKmkAf8muzZqo1nDgQ="));
        assert!(!twilio.authentic(url, &params, "not base64"));
    }

    #[test]
    fn twiml_escapes_what_it_says() {
        assert_eq!(
            say("disk <full> & \"hot\""),
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?><Response><Say>disk &lt;full&gt; &amp; &quot;hot&quot;</Say></Response>"
        );
    }
}
