//! Opsgenie's Alert API (`POST /v2/alerts`, and `/v2/alerts/{identifier}/close` and
//! `/acknowledge`): any sender configured for Opsgenie (Alertmanager's `opsgenie_configs`,
//! Grafana's Opsgenie contact point, Zabbix, Uptime Kuma, …) pages through Klaxon by changing its
//! API URL and its API key (the integration's key). <https://docs.opsgenie.com/docs/alert-api>
//!
//! A created alert is an event about the alert its `alias` names (Opsgenie's de-duplication
//! key), alone in its group as Opsgenie has one alert per alias. Its labels are the `details`
//! (Alertmanager sends its common labels there, so a team's matchers keep working), then
//! `alertname` (the message), `severity` (from `priority`: P1 and P2 are Klaxon's critical, P3,
//! Opsgenie's default, warning, P4 and P5 info), and `entity`, `source` and `tags` when given;
//! the `description` and `note` are annotations. Fields past Opsgenie's own limits are cut to
//! them, as Opsgenie does; `responders` and `visibleTo` are not used (Klaxon pages the
//! integration's team), which the alert's `responders` annotation says.

use super::{text, Event, Reading, Source};
use klaxon_domain::alerting::WebhookAlert;
use klaxon_domain::mapping::WebhookTemplates;
use rand::Rng;
use serde::Deserialize;
use serde_json::Value;
use std::collections::BTreeMap;

/// Bodies Klaxon takes from an Opsgenie sender; a create is far smaller.
pub const MAX_REQUEST: usize = 512 * 1024;
/// Opsgenie's limits, in characters: a message of 130, an alias of 512, 20 tags of 50 each,
/// an entity of 512 and a source of 100. The description (Opsgenie: 15 000) is kept to 4 000
/// so that an alert's labels and annotations stay within Klaxon's bounds.
const MAX_MESSAGE: usize = 130;
const MAX_ALIAS: usize = 512;
const MAX_TAGS: usize = 20;
const MAX_TAG: usize = 50;
const MAX_ENTITY: usize = 512;
const MAX_SOURCE: usize = 100;
const MAX_DESCRIPTION: usize = 4_000;

pub struct Opsgenie;

impl Source for Opsgenie {
    fn kind(&self) -> &'static str {
        "opsgenie"
    }

    fn label(&self) -> &'static str {
        "Opsgenie"
    }

    fn read(&self, body: &[u8], now: i64, _: Option<&WebhookTemplates>) -> Result<Reading, String> {
        match read_create(body, now, &request_id()) {
            Ok(event) => Ok(Reading::Event(event)),
            Err(Refused::NotJson(e)) => Err(format!("not an Opsgenie alert: {e}")),
            Err(Refused::Invalid(errors)) => Err(format!(
                "not an Opsgenie alert: {}",
                errors.into_values().collect::<Vec<_>>().join("; ")
            )),
        }
    }
}

/// Why a request is refused, as Opsgenie answers it: 400 for a body that is not JSON, 422 with
/// the faulty fields for one that is.
#[derive(Debug, PartialEq, Eq)]
pub enum Refused {
    NotJson(String),
    /// By field, what is wrong with it.
    Invalid(BTreeMap<String, String>),
}

/// A create request as sent. Unknown fields (`actions`, `user`, `visibleTo`, …) are ignored.
#[derive(Deserialize)]
struct Create {
    message: Option<String>,
    alias: Option<String>,
    description: Option<String>,
    #[serde(default)]
    responders: Vec<Value>,
    #[serde(default)]
    tags: Vec<String>,
    #[serde(default)]
    details: BTreeMap<String, Value>,
    entity: Option<String>,
    source: Option<String>,
    priority: Option<String>,
    note: Option<String>,
}

/// A new request id, in Opsgenie's (UUID) form; a create without an alias takes it as its key.
pub fn request_id() -> String {
    let hex: String = (0..32)
        .map(|_| char::from_digit(rand::thread_rng().gen_range(0..16), 16).unwrap_or('0'))
        .collect();
    format!(
        "{}-{}-{}-{}-{}",
        &hex[..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..]
    )
}

/// The first `n` characters of `s`.
fn cut(s: &str, n: usize) -> String {
    s.chars().take(n).collect()
}

/// A create request as an event: the alert its alias names (or, without an alias, a new alert
/// keyed by `request_id`) fires.
pub fn read_create(body: &[u8], now: i64, request_id: &str) -> Result<Event, Refused> {
    let sent: Create = match serde_json::from_slice(body) {
        Ok(sent) => sent,
        Err(e) if e.is_data() => {
            let field = e.to_string();
            return Err(Refused::Invalid(BTreeMap::from([(
                "body".to_string(),
                format!("a field has the wrong type: {field}"),
            )])));
        }
        Err(e) => return Err(Refused::NotJson(format!("the body is not JSON: {e}"))),
    };
    let mut errors = BTreeMap::new();
    let message = text(&sent.message).map(|m| cut(m, MAX_MESSAGE));
    if message.is_none() {
        errors.insert("message".into(), "Message can not be empty.".into());
    }
    let severity = match sent.priority.as_deref().map(str::trim) {
        Some("P1" | "P2") => "critical",
        None | Some("" | "P3") => "warning",
        Some("P4" | "P5") => "info",
        Some(_) => {
            errors.insert(
                "priority".into(),
                "Priority should be one of [P1, P2, P3, P4, P5]".into(),
            );
            "warning"
        }
    };
    let key = match text(&sent.alias) {
        Some(a) if a.chars().count() > MAX_ALIAS => {
            errors.insert(
                "alias".into(),
                format!("Alias can be at most {MAX_ALIAS} characters"),
            );
            String::new()
        }
        Some(a) => a.to_string(),
        None => request_id.to_string(),
    };
    if !errors.is_empty() {
        return Err(Refused::Invalid(errors));
    }
    let mut labels: BTreeMap<String, String> = sent
        .details
        .into_iter()
        .map(|(k, v)| match v {
            Value::String(s) => (k, s),
            other => (k, other.to_string()),
        })
        .collect();
    labels.insert("alertname".into(), message.unwrap_or_default());
    labels.insert("severity".into(), severity.into());
    if let Some(e) = text(&sent.entity) {
        labels.insert("entity".into(), cut(e, MAX_ENTITY));
    }
    if let Some(s) = text(&sent.source) {
        labels.insert("source".into(), cut(s, MAX_SOURCE));
    }
    let tags: Vec<String> = sent
        .tags
        .iter()
        .map(|t| cut(t.trim(), MAX_TAG))
        .filter(|t| !t.is_empty())
        .take(MAX_TAGS)
        .collect();
    if !tags.is_empty() {
        labels.insert("tags".into(), tags.join(","));
    }
    let mut annotations = BTreeMap::new();
    if let Some(d) = text(&sent.description) {
        annotations.insert("description".into(), cut(d, MAX_DESCRIPTION));
    }
    if let Some(n) = text(&sent.note) {
        annotations.insert("note".into(), cut(n, MAX_DESCRIPTION));
    }
    if !sent.responders.is_empty() {
        let asked: Vec<String> = sent.responders.iter().map(responder).collect();
        annotations.insert(
            "responders".into(),
            cut(
                &format!(
                    "not used: Klaxon pages this integration's team (asked for {})",
                    asked.join(", ")
                ),
                MAX_DESCRIPTION,
            ),
        );
    }
    let alert = WebhookAlert {
        status: Some("firing".to_string()),
        labels,
        annotations,
        starts_at: Some(klaxon_domain::Timestamp(now).to_rfc3339()),
        ends_at: None,
        generator_url: None,
        fingerprint: None,
    };
    Event::trigger("opsgenie", key, alert)
        .map_err(|e| Refused::Invalid(BTreeMap::from([("details".to_string(), e)])))
}

/// A responder as Opsgenie names one: `team ops`, `user bob@example.com`.
fn responder(r: &Value) -> String {
    let kind = r["type"].as_str().unwrap_or("responder");
    let name = ["name", "username", "id"]
        .iter()
        .find_map(|f| r[f].as_str())
        .unwrap_or("?");
    format!("{kind} {name}")
}

/// How a close or acknowledge names its alert (`identifierType`).
pub fn identifier_type(given: Option<&str>) -> Result<(), Refused> {
    match given.unwrap_or("id") {
        // Klaxon's id of an Opsgenie alert is its alias (for an alert created without one, the
        // create's request id), so `id` and `alias` name it alike.
        "id" | "alias" => Ok(()),
        other => Err(Refused::Invalid(BTreeMap::from([(
            "identifierType".to_string(),
            format!("Klaxon names alerts by id or alias, not by {other}"),
        )]))),
    }
}

#[cfg(test)]
mod tests;
