//! PagerDuty's Events API v2 (`POST /v2/enqueue`): one event about one alert, named by its
//! `dedup_key`, so that any sender configured for PagerDuty (Alertmanager's `pagerduty_configs`,
//! Grafana's PagerDuty contact point, Zabbix, Uptime Kuma, …) pages through Klaxon by changing
//! its URL and its routing key (the integration's key).
//! <https://developer.pagerduty.com/docs/events-api-v2/trigger-events/>
//!
//! A trigger is an alert in a group of its own (one incident per `dedup_key`, as PagerDuty has
//! one alert per key). Its labels are `alertname` (the summary), `severity` (PagerDuty's
//! `critical` and `error` are Klaxon's critical, as PagerDuty pages high urgency for both),
//! and `source`, `component`, `group` and `class` when given; `custom_details` is kept as the
//! `details` annotation, the first link (or `client_url`) as the alert's source link.

use super::{Action, Alerts, Event, Reading, Source};
use klaxon_domain::alerting::{PayloadGroup, WebhookAlert, MAX_FINGERPRINT};
use serde::Deserialize;
use serde_json::Value;
use std::collections::BTreeMap;

/// Events API v2 bodies are at most 512 KB.
pub const MAX_EVENT: usize = 512 * 1024;
/// PagerDuty's bounds: a `dedup_key` of 255 characters, a summary of 1024.
const MAX_KEY: usize = 255;
const MAX_SUMMARY: usize = 1024;

pub struct PagerDuty;

impl Source for PagerDuty {
    fn kind(&self) -> &'static str {
        "pagerduty"
    }

    fn label(&self) -> &'static str {
        "PagerDuty"
    }

    fn read(&self, body: &[u8], now: i64) -> Result<Reading, String> {
        read_event(body, now)
            .map(|(_, event)| Reading::Event(event))
            .map_err(|errors| format!("not a PagerDuty event: {}", errors.join("; ")))
    }
}

/// An Events API v2 event as sent. Unknown fields (`client`, `images`, …) are ignored.
#[derive(Deserialize)]
struct Sent {
    routing_key: Option<String>,
    event_action: Option<String>,
    dedup_key: Option<String>,
    payload: Option<Payload>,
    client_url: Option<String>,
    #[serde(default)]
    links: Vec<Link>,
}

#[derive(Deserialize)]
struct Payload {
    summary: Option<String>,
    source: Option<String>,
    severity: Option<String>,
    timestamp: Option<String>,
    component: Option<String>,
    group: Option<String>,
    class: Option<String>,
    custom_details: Option<Value>,
}

#[derive(Deserialize)]
struct Link {
    href: Option<String>,
}

/// The event's routing key and what it says, or the errors PagerDuty would answer with
/// (`{"status": "invalid event", "errors": [...]}`). A trigger without a `dedup_key` gets a new
/// one, as PagerDuty makes one.
pub fn read_event(body: &[u8], now: i64) -> Result<(String, Event), Vec<String>> {
    let sent: Sent = serde_json::from_slice(body)
        .map_err(|e| vec![format!("the body is not an event object: {e}")])?;
    let mut errors = Vec::new();
    let routing_key = sent.routing_key.clone().unwrap_or_default();
    if routing_key.trim().is_empty() {
        errors.push("'routing_key' is missing".to_string());
    }
    let key = sent.dedup_key.clone().filter(|k| !k.trim().is_empty());
    if key.as_ref().is_some_and(|k| k.chars().count() > MAX_KEY) {
        errors.push(format!("'dedup_key' is longer than {MAX_KEY} characters"));
    }
    // The trigger's alert, still without its fingerprint; `None` to acknowledge or resolve.
    let wanted = match sent.event_action.as_deref() {
        Some("trigger") => match trigger(&sent, now) {
            Ok(alert) => Some(Some(alert)),
            Err(e) => {
                errors.extend(e);
                None
            }
        },
        Some("acknowledge" | "resolve") => {
            if key.is_none() {
                errors.push("'dedup_key' is required to acknowledge or resolve".to_string());
            }
            Some(None)
        }
        _ => {
            errors.push("'event_action' must be trigger, acknowledge or resolve".to_string());
            None
        }
    };
    let Some(wanted) = wanted.filter(|_| errors.is_empty()) else {
        return Err(errors);
    };
    let key = key.unwrap_or_else(|| crate::secrets::new_token()[..32].to_lowercase());
    let fingerprint = fingerprint_of(&key);
    let action = match wanted {
        None if sent.event_action.as_deref() == Some("resolve") => Action::Resolve,
        None => Action::Acknowledge,
        Some(alert) => {
            let alert = WebhookAlert {
                fingerprint: Some(fingerprint.clone()),
                ..alert
            }
            .validate()
            .map_err(|e| vec![format!("the event is over Klaxon's bounds: {e}")])?;
            let group = PayloadGroup {
                key: format!("pagerduty:{fingerprint}"),
                labels: alert.labels.clone(),
            };
            Action::Trigger(Box::new(Alerts {
                group,
                alerts: BTreeMap::from([(fingerprint.clone(), alert)]),
                ignored: 0,
            }))
        }
    };
    Ok((
        routing_key,
        Event {
            key,
            fingerprint,
            action,
        },
    ))
}

/// A key as a fingerprint: itself when short enough, else its SHA-256.
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

/// A trigger's alert, in the webhook's shape (its checks then apply alike).
fn trigger(sent: &Sent, now: i64) -> Result<WebhookAlert, Vec<String>> {
    let mut errors = Vec::new();
    let Some(p) = &sent.payload else {
        return Err(vec!["'payload' is required to trigger".to_string()]);
    };
    let summary = text(&p.summary);
    match summary {
        None => errors.push("'payload.summary' is missing".to_string()),
        Some(s) if s.chars().count() > MAX_SUMMARY => errors.push(format!(
            "'payload.summary' is longer than {MAX_SUMMARY} characters"
        )),
        Some(_) => {}
    }
    if text(&p.source).is_none() {
        errors.push("'payload.source' is missing".to_string());
    }
    let severity = match p.severity.as_deref() {
        Some("critical" | "error") => "critical",
        Some("warning") => "warning",
        Some("info") => "info",
        _ => {
            errors.push("'payload.severity' must be critical, error, warning or info".into());
            "warning"
        }
    };
    let starts_at = match text(&p.timestamp) {
        None => Some(now),
        Some(t) => t.parse::<jiff::Timestamp>().ok().map(|t| t.as_second()),
    };
    let Some(starts_at) = starts_at else {
        errors.push("'payload.timestamp' is not an ISO 8601 time".to_string());
        return Err(errors);
    };
    if !errors.is_empty() {
        return Err(errors);
    }
    let mut labels = BTreeMap::from([
        (
            "alertname".to_string(),
            summary.unwrap_or_default().to_string(),
        ),
        ("severity".to_string(), severity.to_string()),
    ]);
    for (name, value) in [
        ("source", &p.source),
        ("component", &p.component),
        ("group", &p.group),
        ("class", &p.class),
    ] {
        if let Some(v) = text(value) {
            labels.insert(name.to_string(), v.to_string());
        }
    }
    let mut annotations = BTreeMap::new();
    if let Some(details) = p.custom_details.as_ref().filter(|d| !d.is_null()) {
        let details = match details {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        annotations.insert("details".to_string(), details);
    }
    let link = sent
        .links
        .iter()
        .find_map(|l| l.href.clone())
        .or_else(|| sent.client_url.clone());
    Ok(WebhookAlert {
        status: Some("firing".to_string()),
        labels,
        annotations,
        starts_at: Some(klaxon_domain::Timestamp(starts_at).to_rfc3339()),
        ends_at: None,
        generator_url: link,
        fingerprint: None,
    })
}

#[cfg(test)]
mod tests;
