//! Alerts and incidents: severities, states, the Alertmanager webhook payload, the ingestion
//! decision for one alert, and the incident signature.

use crate::Timestamp;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Lowest to highest. Taken from the alert label `severity`; anything else counts as warning.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "config", derive(schemars::JsonSchema))]
pub enum Severity {
    Info,
    Warning,
    Critical,
}

crate::words!(Severity, "severity" {
    Info => "info",
    Warning => "warning",
    Critical => "critical",
});

impl Severity {
    pub fn from_label(label: Option<&str>) -> Severity {
        match label.map(|s| s.trim().to_ascii_lowercase()).as_deref() {
            Some("info") => Severity::Info,
            Some("critical") => Severity::Critical,
            _ => Severity::Warning,
        }
    }
    /// ntfy priority of a page at this severity.
    pub fn ntfy_priority(self) -> u8 {
        match self {
            Severity::Info => 3,
            Severity::Warning => 4,
            Severity::Critical => 5,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub enum AlertStatus {
    Firing,
    Resolved,
}

crate::words!(AlertStatus, "alert status" {
    Firing => "firing",
    Resolved => "resolved",
});

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub enum IncidentState {
    Triggered,
    Acknowledged,
    Resolved,
}

crate::words!(IncidentState, "incident state" {
    Triggered => "triggered",
    Acknowledged => "acknowledged",
    Resolved => "resolved",
});

impl IncidentState {
    pub fn is_open(self) -> bool {
        self != IncidentState::Resolved
    }
}

// ---- the Alertmanager webhook payload (version 4) --------------------------------------------

/// Tolerant of unknown and missing optional fields: Alertmanager versions differ.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct WebhookPayload {
    pub version: Option<String>,
    pub group_key: Option<String>,
    pub status: Option<String>,
    pub receiver: Option<String>,
    pub group_labels: BTreeMap<String, String>,
    pub common_labels: BTreeMap<String, String>,
    pub common_annotations: BTreeMap<String, String>,
    #[serde(rename = "externalURL")]
    pub external_url: Option<String>,
    pub truncated_alerts: u64,
    pub alerts: Vec<WebhookAlert>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct WebhookAlert {
    pub status: Option<String>,
    pub labels: BTreeMap<String, String>,
    pub annotations: BTreeMap<String, String>,
    pub starts_at: Option<String>,
    pub ends_at: Option<String>,
    #[serde(rename = "generatorURL")]
    pub generator_url: Option<String>,
    pub fingerprint: Option<String>,
}

/// One alert of a payload after validation: everything ingestion needs, nothing optional.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IncomingAlert {
    pub fingerprint: String,
    pub status: AlertStatus,
    pub labels: BTreeMap<String, String>,
    pub annotations: BTreeMap<String, String>,
    pub starts_at: i64,
    /// `None` for the sender's zero time (year 0001), meaning still firing.
    pub ends_at: Option<i64>,
    /// The sender's link to the alert's source graph, when it is an http(s) URL of at most
    /// `MAX_PAYLOAD_STRING` bytes; anything else is dropped (the alert still counts).
    pub generator_url: Option<String>,
}

/// Limits that keep one alert's stored size sane; an alert past them is ignored, not stored.
pub const MAX_LABELS: usize = 128;
pub const MAX_LABEL_BYTES: usize = 16 * 1024;
pub const MAX_FINGERPRINT: usize = 128;
/// Timestamps outside 1970..=9999 are not real alert times.
const MAX_TIME: i64 = 253_402_300_799;

impl WebhookAlert {
    /// Validates one alert. `Err` names why it is unusable; the payload's other alerts still count.
    pub fn validate(&self) -> Result<IncomingAlert, String> {
        let fingerprint = self.fingerprint.as_deref().unwrap_or("").trim();
        if fingerprint.is_empty() || fingerprint.len() > MAX_FINGERPRINT {
            return Err("fingerprint missing or too long".into());
        }
        let status = self
            .status
            .as_deref()
            .and_then(AlertStatus::parse)
            .ok_or("status must be firing or resolved")?;
        if self.labels.len() > MAX_LABELS || self.annotations.len() > MAX_LABELS {
            return Err("too many labels or annotations".into());
        }
        let size: usize = self
            .labels
            .iter()
            .chain(&self.annotations)
            .map(|(k, v)| k.len() + v.len())
            .sum();
        if size > MAX_LABEL_BYTES {
            return Err("labels and annotations too large".into());
        }
        let starts_at = self
            .starts_at
            .as_deref()
            .and_then(Timestamp::parse)
            .map(|t| t.0)
            .filter(|t| (0..=MAX_TIME).contains(t))
            .ok_or("startsAt missing or not a real time")?;
        let ends_at = match self.ends_at.as_deref().map(Timestamp::parse) {
            None => None,
            Some(None) => return Err("endsAt is not an RFC 3339 time".into()),
            // Year 0001 (and anything before 1970) is the sender's "not ended".
            Some(Some(t)) if t.0 <= 0 => None,
            Some(Some(t)) if t.0 > MAX_TIME => return Err("endsAt is not a real time".into()),
            Some(Some(t)) => Some(t.0),
        };
        Ok(IncomingAlert {
            fingerprint: scrub_nul(fingerprint),
            status,
            labels: scrub_nul_map(&self.labels),
            annotations: scrub_nul_map(&self.annotations),
            starts_at,
            ends_at,
            generator_url: self.generator_url.as_deref().and_then(source_link),
        })
    }
}

/// An alert's `generatorURL` worth keeping: absolute http(s), bounded, no control characters.
fn source_link(url: &str) -> Option<String> {
    let url = url.trim();
    let (scheme, rest) = url.split_once("://")?;
    let web = scheme.eq_ignore_ascii_case("http") || scheme.eq_ignore_ascii_case("https");
    (web && !rest.is_empty()
        && url.len() <= MAX_PAYLOAD_STRING
        && !url.chars().any(char::is_control))
    .then(|| url.to_string())
}

/// Group keys longer than this are stored as `sha256:` and their hash: Alertmanager's own
/// keys are far shorter, and the key is returned with every incident.
pub const MAX_GROUP_KEY: usize = 512;
/// `externalURL` and `receiver` are a URL and a name.
pub const MAX_PAYLOAD_STRING: usize = 2048;

/// What a payload says about its group, bounded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PayloadGroup {
    /// The correlation key: the sender's group key (hashed past `MAX_GROUP_KEY`), or one made
    /// from the group labels when the sender gave none.
    pub key: String,
    pub labels: BTreeMap<String, String>,
}

impl WebhookPayload {
    /// Checks the payload's group-level fields against the same bounds as one alert's labels,
    /// so a payload cannot smuggle unbounded text past the per-alert checks. `Err` names the
    /// field; the whole payload is then refused (a real Alertmanager never sends such a group,
    /// since its common labels and annotations are shared by alerts that pass the bounds).
    pub fn group(&self) -> Result<PayloadGroup, String> {
        for (field, map) in [
            ("groupLabels", &self.group_labels),
            ("commonLabels", &self.common_labels),
            ("commonAnnotations", &self.common_annotations),
        ] {
            let size: usize = map.iter().map(|(k, v)| k.len() + v.len()).sum();
            if map.len() > MAX_LABELS || size > MAX_LABEL_BYTES {
                return Err(format!(
                    "{field} must hold at most {MAX_LABELS} entries and {MAX_LABEL_BYTES} bytes"
                ));
            }
        }
        for (field, value) in [
            ("externalURL", &self.external_url),
            ("receiver", &self.receiver),
        ] {
            if value
                .as_deref()
                .is_some_and(|v| v.len() > MAX_PAYLOAD_STRING)
            {
                return Err(format!(
                    "{field} must be at most {MAX_PAYLOAD_STRING} bytes"
                ));
            }
        }
        let labels = scrub_nul_map(&self.group_labels);
        let key = self
            .group_key
            .as_deref()
            .filter(|k| !k.is_empty())
            .map(scrub_nul)
            .unwrap_or_else(|| format!("labels:{labels:?}"));
        let key = if key.len() > MAX_GROUP_KEY {
            use sha2::Digest;
            format!(
                "sha256:{}",
                hex_lower(&sha2::Sha256::digest(key.as_bytes()))
            )
        } else {
            key
        };
        Ok(PayloadGroup { key, labels })
    }
}

fn hex_lower(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// A sender's NUL character as U+FFFD: PostgreSQL text cannot hold NUL, and an alert carrying
/// one must still land (and page) rather than fail its whole payload.
pub fn scrub_nul(s: &str) -> String {
    s.replace('\0', "\u{FFFD}")
}

/// `scrub_nul` over the keys and values of a label set.
pub fn scrub_nul_map(m: &BTreeMap<String, String>) -> BTreeMap<String, String> {
    m.iter()
        .map(|(k, v)| (scrub_nul(k), scrub_nul(v)))
        .collect()
}

// ---- what one incoming alert does to the stored one ------------------------------------------

/// The stored alert's state that decides what an incoming copy means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StoredAlert {
    pub status: AlertStatus,
    pub starts_at: i64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ingest {
    /// An older instance of the alert (a retried notification): dropped, nothing changes.
    Discard,
    /// Same occurrence, same status: refresh received_at, labels and annotations.
    Refresh,
    /// Transition into firing: a new occurrence, which opens an incident.
    Fire,
    /// Firing to resolved (the sender resolved it).
    Resolve,
    /// First sight of an already-resolved alert: stored, opens nothing.
    StoreResolved,
}

/// The seed's alert transition table for one incoming alert.
pub fn ingest(stored: Option<StoredAlert>, incoming: AlertStatus, starts_at: i64) -> Ingest {
    use AlertStatus::*;
    let Some(s) = stored else {
        return match incoming {
            Firing => Ingest::Fire,
            Resolved => Ingest::StoreResolved,
        };
    };
    if starts_at < s.starts_at {
        return Ingest::Discard;
    }
    let newer = starts_at > s.starts_at;
    match (s.status, incoming) {
        (Firing, Firing) if newer => Ingest::Fire,
        (Firing, Firing) => Ingest::Refresh,
        (Firing, Resolved) => Ingest::Resolve,
        (Resolved, Firing) if newer => Ingest::Fire,
        // A late retry of the firing notification after the resolve: must not resurrect it.
        (Resolved, Firing) => Ingest::Discard,
        (Resolved, Resolved) => Ingest::Refresh,
    }
}

// ---- signature ---------------------------------------------------------------------------------

/// Labels that say where something ran, not what is broken; left out of signatures so the same
/// failure on another machine or pod matches earlier incidents.
pub const LOCATION_LABELS: &[&str] = &[
    "instance",
    "pod",
    "pod_name",
    "container",
    "container_name",
    "node",
    "nodename",
    "host",
    "hostname",
    "machine",
    "ip",
    "address",
    "endpoint",
    "exported_instance",
    "exported_pod",
    "replica",
    "prometheus_replica",
    "uid",
    "container_id",
    "image",
    "image_id",
];

/// `alertname{label="value",…}` over the group labels minus location labels, sorted by name.
pub fn signature(alertname: &str, group_labels: &BTreeMap<String, String>) -> String {
    let parts: Vec<String> = group_labels
        .iter()
        .filter(|(k, _)| k.as_str() != "alertname" && !LOCATION_LABELS.contains(&k.as_str()))
        .map(|(k, v)| format!("{k}={v:?}"))
        .collect();
    format!("{alertname}{{{}}}", parts.join(","))
}

#[cfg(test)]
mod tests;
