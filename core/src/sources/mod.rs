//! Where alerts come from: each sender's format is one file here implementing `Source`, which
//! turns a request's body into Klaxon's own normalized alerts (`Alerts`), or, for a sender that
//! names one alert by its own key (PagerDuty's `dedup_key`), into an `Event` about that alert;
//! `Core::intake` and `Core::apply_event` take those, whatever sent them. A source is chosen by
//! the integration's kind, registered once in `SOURCES`; its sentences name it ("not a Grafana
//! webhook payload").

mod alertmanager;
mod grafana;
pub mod opsgenie;
pub mod pagerduty;
pub mod webhook;

use klaxon_domain::alerting::{IncomingAlert, PayloadGroup, WebhookAlert, MAX_FINGERPRINT};
use klaxon_domain::mapping::WebhookTemplates;
use std::collections::BTreeMap;

/// Most alerts one request may carry; Alertmanager's own default cap is far lower.
pub const MAX_ALERTS: usize = 10_000;

/// One request's alerts as Klaxon keeps them: checked, one per fingerprint, with the group they
/// arrived in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Alerts {
    pub group: PayloadGroup,
    /// By fingerprint; a fingerprint twice in one request: the later copy wins.
    pub alerts: BTreeMap<String, IncomingAlert>,
    /// Alerts that were unusable, or an earlier copy of a fingerprint.
    pub ignored: usize,
}

/// What a sender said about one alert it names by its own key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    /// The sender's key for the alert, answered back to it (PagerDuty's `dedup_key`).
    pub key: String,
    /// The alert's fingerprint: the key, or its hash when longer than a fingerprint may be.
    pub fingerprint: String,
    pub action: Action,
}

impl Event {
    /// `action` on the alert `key` names.
    pub fn about(key: String, action: Action) -> Event {
        Event {
            fingerprint: fingerprint_of(&key),
            key,
            action,
        }
    }

    /// The alert `key` names fires: `alert` (its fingerprint made from the key) alone in a group
    /// keyed `{kind}:{fingerprint}`, one incident per key as the sender has one alert per key.
    /// `Err` when the alert is over Klaxon's bounds.
    pub fn trigger(kind: &str, key: String, alert: WebhookAlert) -> Result<Event, String> {
        let fingerprint = fingerprint_of(&key);
        let alert = WebhookAlert {
            fingerprint: Some(fingerprint.clone()),
            ..alert
        }
        .validate()
        .map_err(|e| format!("the alert is over Klaxon's bounds: {e}"))?;
        let group = PayloadGroup {
            key: format!("{kind}:{fingerprint}"),
            labels: alert.labels.clone(),
        };
        let alerts = Alerts {
            group,
            alerts: BTreeMap::from([(fingerprint, alert)]),
            ignored: 0,
        };
        Ok(Event::about(key, Action::Trigger(Box::new(alerts))))
    }
}

/// A sender's key as a fingerprint: itself when short enough, else its SHA-256.
fn fingerprint_of(key: &str) -> String {
    if key.len() <= MAX_FINGERPRINT {
        return key.to_string();
    }
    use sha2::Digest;
    let hash = sha2::Sha256::digest(key.as_bytes());
    format!(
        "sha256:{}",
        hash.iter().map(|b| format!("{b:02x}")).collect::<String>()
    )
}

/// A field's text, trimmed, when it has any.
fn text(v: &Option<String>) -> Option<&str> {
    v.as_deref().map(str::trim).filter(|s| !s.is_empty())
}

/// What an `Event` does to its alert.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// The alert fires, in its own group (its own incident); firing again while it fires is a
    /// refresh, after it resolved a new occurrence.
    Trigger(Box<Alerts>),
    /// The firing alert resolves; an alert not firing is left alone.
    Resolve,
    /// The firing alert's incident is acknowledged by its sender; else nothing happens.
    Acknowledge,
}

/// A request's body as its source reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reading {
    Alerts(Alerts),
    Event(Event),
}

/// One alert format.
pub trait Source: Sync {
    /// The integration kind that sends it (`integrations.kind`).
    fn kind(&self) -> &'static str;

    /// Its name in a sentence.
    fn label(&self) -> &'static str;

    /// The request's body as alerts or an event, or why it is not one: the 400's sentence.
    /// `now` stands for a time the sender left out; `templates` are the integration's own
    /// mapping, which only a generic webhook has.
    fn read(
        &self,
        body: &[u8],
        now: i64,
        templates: Option<&WebhookTemplates>,
    ) -> Result<Reading, String>;
}

/// Every source, registered once.
static SOURCES: [&dyn Source; 5] = [
    &alertmanager::Alertmanager,
    &grafana::Grafana,
    &pagerduty::PagerDuty,
    &opsgenie::Opsgenie,
    &webhook::Webhook,
];

/// The source an integration of `kind` reads; Alertmanager's for a kind Klaxon does not know.
pub fn source(kind: &str) -> &'static dyn Source {
    SOURCES
        .iter()
        .copied()
        .find(|s| s.kind() == kind)
        .unwrap_or(&alertmanager::Alertmanager)
}
