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

use super::{text, Action, Event, Reading, Source};
use klaxon_domain::alerting::WebhookAlert;
use klaxon_domain::mapping::WebhookTemplates;
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

    fn read(&self, body: &[u8], now: i64, _: Option<&WebhookTemplates>) -> Result<Reading, String> {
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
    text: Option<String>,
}

/// A change event (`POST /v2/change/enqueue`): never paged, kept beside the team's incidents.
/// <https://developer.pagerduty.com/docs/events-api-v2/send-change-events/>
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChangeEvent {
    /// When it happened: its `timestamp`, else when it arrived.
    pub at: i64,
    pub summary: String,
    pub source: Option<String>,
    pub link: Option<String>,
    pub link_text: Option<String>,
    /// `custom_details` as JSON text.
    pub details: Option<String>,
}

/// The body as sent, its routing key, and the faults found in them so far.
fn opened(body: &[u8]) -> Result<(Sent, String, Vec<String>), Vec<String>> {
    let sent: Sent = serde_json::from_slice(body)
        .map_err(|e| vec![format!("the body is not an event object: {e}")])?;
    let routing_key = sent.routing_key.clone().unwrap_or_default();
    let mut errors = Vec::new();
    if routing_key.trim().is_empty() {
        errors.push("'routing_key' is missing".to_string());
    }
    Ok((sent, routing_key, errors))
}

impl Payload {
    /// What is wrong with `summary`, if anything.
    fn summary_fault(&self) -> Option<String> {
        match text(&self.summary) {
            None => Some("'payload.summary' is missing".to_string()),
            Some(s) if s.chars().count() > MAX_SUMMARY => Some(format!(
                "'payload.summary' is longer than {MAX_SUMMARY} characters"
            )),
            Some(_) => None,
        }
    }

    /// `timestamp` in seconds, `now` when left out; `Err` with the fault when unreadable.
    fn time(&self, now: i64) -> Result<i64, String> {
        match text(&self.timestamp) {
            None => Ok(now),
            Some(t) => t
                .parse::<jiff::Timestamp>()
                .map(|t| t.as_second())
                .map_err(|_| "'payload.timestamp' is not an ISO 8601 time".to_string()),
        }
    }
}

/// Change events' `custom_details` are kept up to this many bytes of JSON.
const MAX_DETAILS: usize = 16 * 1024;

/// A change event's routing key and what it says, or the errors PagerDuty would answer with.
pub fn read_change(body: &[u8], now: i64) -> Result<(String, ChangeEvent), Vec<String>> {
    let (sent, routing_key, mut errors) = opened(body)?;
    let Some(p) = &sent.payload else {
        errors.push("'payload' is required".to_string());
        return Err(errors);
    };
    errors.extend(p.summary_fault());
    let at = p.time(now).map_err(|e| errors.push(e)).ok();
    let details = p
        .custom_details
        .as_ref()
        .filter(|d| !d.is_null())
        .map(Value::to_string);
    if details.as_ref().is_some_and(|d| d.len() > MAX_DETAILS) {
        errors.push(format!(
            "'payload.custom_details' is over {MAX_DETAILS} bytes"
        ));
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    let link = sent.links.iter().find(|l| text(&l.href).is_some());
    let bounded = |v: Option<&str>| v.map(|s| s.chars().take(MAX_SUMMARY).collect::<String>());
    Ok((
        routing_key,
        ChangeEvent {
            at: at.unwrap_or(now),
            summary: text(&p.summary).unwrap_or_default().to_string(),
            source: bounded(text(&p.source)),
            link: bounded(link.and_then(|l| text(&l.href))),
            link_text: bounded(link.and_then(|l| text(&l.text))),
            details,
        },
    ))
}

/// The event's routing key and what it says, or the errors PagerDuty would answer with
/// (`{"status": "invalid event", "errors": [...]}`). A trigger without a `dedup_key` gets a new
/// one, as PagerDuty makes one.
pub fn read_event(body: &[u8], now: i64) -> Result<(String, Event), Vec<String>> {
    let (sent, routing_key, mut errors) = opened(body)?;
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
    let event = match wanted {
        None if sent.event_action.as_deref() == Some("resolve") => {
            Event::about(key, Action::Resolve)
        }
        None => Event::about(key, Action::Acknowledge),
        Some(alert) => Event::trigger("pagerduty", key, alert).map_err(|e| vec![e])?,
    };
    Ok((routing_key, event))
}

/// A trigger's alert, in the webhook's shape (its checks then apply alike).
fn trigger(sent: &Sent, now: i64) -> Result<WebhookAlert, Vec<String>> {
    let mut errors = Vec::new();
    let Some(p) = &sent.payload else {
        return Err(vec!["'payload' is required to trigger".to_string()]);
    };
    let summary = text(&p.summary);
    errors.extend(p.summary_fault());
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
    let starts_at = match p.time(now) {
        Ok(t) => t,
        Err(e) => {
            errors.push(e);
            return Err(errors);
        }
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
