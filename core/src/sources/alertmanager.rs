//! Prometheus Alertmanager's webhook (version 4): a group of alerts with their labels,
//! annotations and times. <https://prometheus.io/docs/alerting/latest/configuration/#webhook_config>

use super::{Alerts, Reading, Source, MAX_ALERTS};
use klaxon_domain::alerting::WebhookPayload;
use klaxon_domain::mapping::WebhookTemplates;
use std::collections::BTreeMap;

pub struct Alertmanager;

impl Source for Alertmanager {
    fn kind(&self) -> &'static str {
        "alertmanager"
    }

    fn label(&self) -> &'static str {
        "Alertmanager"
    }

    fn read(&self, body: &[u8], _: i64, _: Option<&WebhookTemplates>) -> Result<Reading, String> {
        read_webhook(body, self.label()).map(Reading::Alerts)
    }
}

/// An Alertmanager-shaped webhook (Alertmanager's own, or a sender that speaks it) as alerts;
/// `label` names the sender in the sentences.
pub(super) fn read_webhook(body: &[u8], label: &str) -> Result<Alerts, String> {
    let article = if label.starts_with(['A', 'E', 'I', 'O', 'U']) {
        "an"
    } else {
        "a"
    };
    let not_one = |why: String| format!("not {article} {label} webhook payload: {why}");
    // serde would read the payload struct from an array too (`[]` as "no alerts").
    if body.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'[') {
        return Err(not_one("expected a JSON object".into()));
    }
    let payload: WebhookPayload =
        serde_json::from_slice(body).map_err(|e| not_one(e.to_string()))?;
    if payload.alerts.len() > MAX_ALERTS {
        return Err(format!("a payload may carry at most {MAX_ALERTS} alerts"));
    }
    let group = payload.group()?;
    // Unusable alerts are counted and skipped; the rest of the payload still counts.
    let mut alerts = BTreeMap::new();
    let mut ignored = 0;
    for a in &payload.alerts {
        match a.validate() {
            Ok(a) => {
                if alerts.insert(a.fingerprint.clone(), a).is_some() {
                    ignored += 1;
                }
            }
            Err(_) => ignored += 1,
        }
    }
    Ok(Alerts {
        group,
        alerts,
        ignored,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_payload_is_an_object_of_alerts_and_its_sentences_name_the_sender() {
        let read = |body: &str| match Alertmanager.read(body.as_bytes(), 0, None)? {
            Reading::Alerts(alerts) => Ok(alerts),
            Reading::Event(_) => Err("an event".to_string()),
        };
        assert_eq!(
            read("[]").unwrap_err(),
            "not an Alertmanager webhook payload: expected a JSON object"
        );
        assert!(read("{\"alerts\": 3}")
            .unwrap_err()
            .starts_with("not an Alertmanager webhook payload: "));
        let two = r#"{"alerts": [
            {"status": "firing", "labels": {"alertname": "A"}, "fingerprint": "f1", "startsAt": "2026-01-01T00:00:00Z"},
            {"status": "firing", "labels": {"alertname": "B"}, "fingerprint": "f1", "startsAt": "2026-01-01T00:00:00Z"},
            {"status": "firing", "labels": {}}
        ]}"#;
        let alerts = read(two).unwrap();
        assert_eq!(alerts.alerts.len(), 1);
        assert_eq!(alerts.alerts["f1"].labels["alertname"], "B");
        assert_eq!(alerts.ignored, 2);
    }
}
