//! Phone numbers and the providers that text and ring them: the SMS and voice roads
//! (`roads::sms`, `roads::voice`) hand a provider one message for one number; the provider speaks
//! its service's API. Several may be configured; one is the install's default, and a person may
//! name another for a method (`contact_methods.provider`).
//!
//! - `number`: a number as Klaxon keeps it (E.164, checked with libphonenumber's metadata) and
//!   as it is shown to others (masked).
//! - `words`: what a text says and what a call says, from a message, road-neutral of provider.
//! - `twilio`: the Twilio REST API (and the services that speak it at another base URL:
//!   SignalWire's LaML, Telnyx's TeXML): Messages, Calls, TwiML, `X-Twilio-Signature`.
//! - `gateway`: the open-source SMS Gateway for Android (`android-sms-gateway`): a team's own
//!   phone sends the texts; its webhooks are signed with HMAC-SHA256.
//! - `ceiling`: the limits that protect people and the bill.

pub mod ceiling;
pub mod gateway;
pub mod number;
pub mod twilio;
pub mod words;

use super::Sent;
use std::sync::Arc;

/// One service that texts or rings numbers. A next provider (Vonage, Plivo, jambonz) is one
/// more file implementing this.
#[async_trait::async_trait]
pub trait Provider: Send + Sync {
    /// Its name in settings, in a method's `provider` and in callback URLs (`twilio`).
    fn name(&self) -> &'static str;

    /// Whether it can ring a number (an SMS gateway cannot).
    fn calls(&self) -> bool;

    /// Texts `body` to `to` (E.164). `status` is where the service reports the text failed.
    async fn text(&self, to: &str, body: &str, status: &Callback) -> Sent;

    /// Rings `to` and has the call say `call`; `status` is where the service reports that the
    /// call was not answered, went to voicemail or failed.
    async fn ring(&self, to: &str, call: &Call, status: &Callback) -> Sent;
}

/// Where a provider reports what became of one send: the public URL of Klaxon's callback for
/// it, and the delivery's id (`To::delivery`), which the service carries back.
#[derive(Debug, Clone)]
pub struct Callback {
    pub url: String,
    pub delivery: String,
}

impl Callback {
    /// Where `provider` reports what became of the send to `to`: Klaxon's status callback for
    /// that delivery, under the public URL.
    pub fn status(core: &crate::Core, provider: &dyn Provider, to: &super::To) -> Callback {
        Callback {
            url: format!(
                "{}/api/phone/{}/status/{}",
                core.config.public_url,
                provider.name(),
                to.delivery
            ),
            delivery: to.delivery.clone(),
        }
    }
}

/// What a call does once answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Call {
    /// The page's menu, read out by Klaxon when the call is answered (its URL, fetched by the
    /// service), so the words are those of that moment.
    Menu { url: String },
    /// Words said once, with no menu (a code, a test, an all-clear).
    Say(String),
}

/// Hands one text or call to `provider` and counts it: the outcome, the time the provider took,
/// and the units its bill counts (SMS segments; one call).
pub async fn metered(
    core: &crate::Core,
    provider: &dyn Provider,
    kind: &'static str,
    units: u64,
    send: impl std::future::Future<Output = Sent>,
) -> Sent {
    use crate::metrics::{PhoneLabel, PhoneOutcomeLabel};
    let started = std::time::Instant::now();
    let sent = send.await;
    let m = &core.metrics;
    let label = PhoneLabel {
        provider: provider.name(),
        kind,
    };
    m.phone_latency
        .get_or_create(&label)
        .observe(started.elapsed().as_secs_f64());
    let outcome = if sent.is_ok() { "sent" } else { "failed" };
    m.phone_sends
        .get_or_create(&PhoneOutcomeLabel {
            provider: label.provider,
            kind,
            outcome,
        })
        .inc();
    if sent.is_ok() {
        m.phone_units.get_or_create(&label).inc_by(units);
    }
    sent
}

/// SMS segments a text takes: 160 septets in one (153 each when split) in the GSM 7-bit
/// alphabet, whose extension characters (`[`, `]`, `{`, `}`, `|`, …) take two; otherwise 70
/// UTF-16 units (67 each when split).
pub fn segments(text: &str) -> u64 {
    const GSM: &str = "@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ !\"#¤%&'()*+,-./0123456789:;<=>?¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà";
    const EXTENDED: &str = "^{}\\[~]|€\u{c}";
    let mut septets = 0u64;
    for c in text.chars() {
        if GSM.contains(c) {
            septets += 1;
        } else if EXTENDED.contains(c) {
            septets += 2;
        } else {
            let units = text.encode_utf16().count() as u64;
            return if units <= 70 { 1 } else { units.div_ceil(67) };
        }
    }
    if septets <= 160 {
        1
    } else {
        septets.div_ceil(153)
    }
}

/// The providers this install has, its default first.
#[derive(Clone, Default)]
pub struct Phones {
    all: Vec<Arc<dyn Provider>>,
}

impl Phones {
    /// `default` names the default provider; without it, the first configured.
    pub fn new(mut all: Vec<Arc<dyn Provider>>, default: Option<&str>) -> Result<Phones, String> {
        if let Some(name) = default {
            let at = all.iter().position(|p| p.name() == name).ok_or_else(|| {
                format!("KLAXON_PHONE_PROVIDER: {name} is not a configured provider")
            })?;
            let chosen = all.remove(at);
            all.insert(0, chosen);
        }
        Ok(Phones { all })
    }

    /// The provider for a method: the one it names, else the install's default; for a call,
    /// the first that can ring when the default cannot.
    pub fn pick(&self, named: Option<&str>, ringing: bool) -> Option<&Arc<dyn Provider>> {
        if let Some(name) = named {
            return self
                .all
                .iter()
                .find(|p| p.name() == name && (!ringing || p.calls()));
        }
        self.all.iter().find(|p| !ringing || p.calls())
    }

    /// Whether a method may name `name` for texts (`ringing` false) or calls.
    pub fn offers(&self, name: &str, ringing: bool) -> bool {
        self.pick(Some(name), ringing).is_some()
    }

    pub fn is_empty(&self) -> bool {
        self.all.is_empty()
    }

    /// Whether any provider can ring.
    pub fn can_ring(&self) -> bool {
        self.all.iter().any(|p| p.calls())
    }

    pub fn get(&self, name: &str) -> Option<&Arc<dyn Provider>> {
        self.all.iter().find(|p| p.name() == name)
    }
}
