use super::*;
use crate::sources::Alerts;

const T0: i64 = 1_795_000_000;

fn event(body: &str) -> Result<(String, Event), Vec<String>> {
    read_event(body.as_bytes(), T0)
}

fn triggered(event: &Event) -> &Alerts {
    match &event.action {
        Action::Trigger(alerts) => alerts,
        other => panic!("a trigger, not {other:?}"),
    }
}

#[test]
fn pagerdutys_own_trigger_example_is_one_alert_in_a_group_of_its_own() {
    let body = include_bytes!("../../../../domain/tests/fixtures/pagerduty-trigger.json");
    let (routing_key, event) = read_event(body, T0).unwrap();
    assert_eq!(routing_key, "samplekeyhere");
    assert_eq!(event.key, "samplekeyhere");
    let alerts = triggered(&event);
    assert_eq!(alerts.group.key, "pagerduty:samplekeyhere");
    let alert = &alerts.alerts["samplekeyhere"];
    assert_eq!(
        alert.labels["alertname"],
        "Example alert on host1.example.com"
    );
    assert_eq!(alert.labels["severity"], "info");
    assert_eq!(alert.labels["component"], "postgres");
    assert_eq!(alert.labels["group"], "prod-datapipe");
    assert_eq!(alert.labels["class"], "deploy");
    assert!(alert.labels["source"].starts_with("monitoringtool:"));
    // "+0000" (no colon) is ISO 8601's basic offset, as PagerDuty's example writes it.
    assert_eq!(alert.starts_at, 1_437_122_578);
    assert_eq!(alert.generator_url.as_deref(), Some("https://example.com/"));
    let details: Value = serde_json::from_str(&alert.annotations["details"]).unwrap();
    assert_eq!(details["ping time"], "1500ms");
}

#[test]
fn a_trigger_without_a_key_gets_a_new_one_and_error_pages_as_critical() {
    let body = r#"{"routing_key": "k", "event_action": "trigger",
        "payload": {"summary": "disk full", "source": "db1", "severity": "error"}}"#;
    let (_, first) = event(body).unwrap();
    let (_, second) = event(body).unwrap();
    assert_eq!(first.key.len(), 32);
    assert_ne!(
        first.key, second.key,
        "each trigger without a key is a new alert"
    );
    let alert = triggered(&first).alerts.values().next().unwrap();
    assert_eq!(alert.labels["severity"], "critical");
    assert_eq!(alert.starts_at, T0, "no timestamp: received now");
    assert!(alert.annotations.is_empty());
}

#[test]
fn acknowledge_and_resolve_name_an_alert_by_its_key() {
    let (_, e) =
        event(r#"{"routing_key": "k", "dedup_key": "d1", "event_action": "resolve"}"#).unwrap();
    assert_eq!((e.key.as_str(), e.action), ("d1", Action::Resolve));
    let (_, e) =
        event(r#"{"routing_key": "k", "dedup_key": "d1", "event_action": "acknowledge"}"#).unwrap();
    assert_eq!(e.action, Action::Acknowledge);
    assert_eq!(
        event(r#"{"routing_key": "k", "event_action": "resolve"}"#).unwrap_err(),
        vec!["'dedup_key' is required to acknowledge or resolve"]
    );
}

#[test]
fn every_fault_of_an_event_is_named_at_once() {
    let errors = event(
        r#"{"event_action": "trigger", "payload": {"severity": "major",
        "timestamp": "yesterday"}}"#,
    )
    .unwrap_err();
    assert_eq!(
        errors,
        vec![
            "'routing_key' is missing",
            "'payload.summary' is missing",
            "'payload.source' is missing",
            "'payload.severity' must be critical, error, warning or info",
            "'payload.timestamp' is not an ISO 8601 time",
        ]
    );
    assert_eq!(
        event(r#"{"routing_key": "k", "event_action": "snooze"}"#).unwrap_err(),
        vec!["'event_action' must be trigger, acknowledge or resolve"]
    );
    assert!(event("[]").unwrap_err()[0].starts_with("the body is not an event object"));
    assert_eq!(
        PagerDuty.read(b"{}", T0, None).unwrap_err(),
        "not a PagerDuty event: 'routing_key' is missing; \
         'event_action' must be trigger, acknowledge or resolve"
    );
}

#[test]
fn a_long_key_is_kept_for_the_sender_and_hashed_as_the_fingerprint() {
    let key = "k".repeat(200);
    let body = format!(
        r#"{{"routing_key": "k", "dedup_key": "{key}", "event_action": "trigger",
            "payload": {{"summary": "s", "source": "h", "severity": "warning"}}}}"#
    );
    let (_, e) = event(&body).unwrap();
    assert_eq!(e.key, key);
    assert!(e.fingerprint.starts_with("sha256:") && e.fingerprint.len() == 71);
    let too_long = body.replace(&key, &"k".repeat(256));
    assert_eq!(
        event(&too_long).unwrap_err(),
        vec!["'dedup_key' is longer than 255 characters"]
    );
}

#[test]
fn pagerdutys_own_change_example_is_read_with_its_time_and_link() {
    let body = include_bytes!("../../../../domain/tests/fixtures/pagerduty-change.json");
    let (key, change) = read_change(body, T0).unwrap();
    assert_eq!(key, "samplekeyhere");
    assert_eq!(
        change.summary,
        "Build Success: Increase snapshot create timeout to 30 seconds"
    );
    assert_eq!(change.at, 1_594_975_378);
    assert_eq!(
        change.source.as_deref(),
        Some("acme-build-pipeline-tool-default-i-9999")
    );
    assert_eq!(
        change.link.as_deref(),
        Some("https://acme.pagerduty.dev/build/2")
    );
    assert_eq!(
        change.link_text.as_deref(),
        Some("View more details in Acme!")
    );
    let details: Value = serde_json::from_str(change.details.as_deref().unwrap()).unwrap();
    assert_eq!(details["build_state"], "passed");
}

#[test]
fn a_change_without_a_summary_is_refused() {
    let errors =
        read_change(br#"{"routing_key": "k", "payload": {"source": "ci"}}"#, T0).unwrap_err();
    assert_eq!(errors, vec!["'payload.summary' is missing"]);
    let errors =
        read_change(br#"{"payload": {"summary": "s", "timestamp": "soon"}}"#, T0).unwrap_err();
    assert_eq!(errors.len(), 2, "{errors:?}");
    let (_, change) =
        read_change(br#"{"routing_key": "k", "payload": {"summary": "s"}}"#, T0).unwrap();
    assert_eq!(change.at, T0, "no timestamp: received now");
}

/// A fixture of `domain/tests/fixtures` as its sender sends it.
fn fixture(name: &str) -> Vec<u8> {
    let path = format!(
        "{}/../domain/tests/fixtures/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

#[test]
fn grafanas_pagerduty_contact_point_pages_as_critical_with_its_group_key() {
    let (_, event) = read_event(&fixture("grafana-pagerduty-trigger.json"), T0).unwrap();
    assert_eq!(event.key.len(), 64, "Grafana's hash of the group key");
    let alert = triggered(&event).alerts.values().next().unwrap();
    assert_eq!(alert.labels["alertname"], "[FIRING:1]  (val1)");
    assert_eq!(alert.labels["severity"], "critical");
    assert_eq!(alert.labels["component"], "Grafana");
    assert_eq!(alert.generator_url.as_deref(), Some("http://localhost"));
    let details: Value = serde_json::from_str(&alert.annotations["details"]).unwrap();
    assert_eq!(details["num_firing"], "1");
}

#[test]
fn zabbixs_pagerduty_media_type_triggers_acknowledges_and_resolves_one_event() {
    let (key, event) = read_event(&fixture("zabbix-pagerduty-trigger.json"), T0).unwrap();
    assert_eq!(key, "zabbix-key");
    assert_eq!(event.key, "10423", "Zabbix's event id");
    let alert = triggered(&event).alerts.values().next().unwrap();
    assert_eq!(
        alert.labels["severity"], "critical",
        "High is PagerDuty's error"
    );
    assert_eq!(alert.labels["source"], "db-1 : 10.0.0.12");
    assert_eq!(
        alert.generator_url.as_deref(),
        Some("https://zabbix.example.com/tr_events.php?triggerid=23881&eventid=10423")
    );
    let (_, ack) = read_event(&fixture("zabbix-pagerduty-acknowledge.json"), T0).unwrap();
    assert_eq!(
        (ack.key.as_str(), ack.action),
        ("10423", Action::Acknowledge)
    );
    let (_, resolve) = read_event(&fixture("zabbix-pagerduty-resolve.json"), T0).unwrap();
    assert_eq!(resolve.fingerprint, event.fingerprint);
    assert_eq!(resolve.action, Action::Resolve);
}

#[test]
fn uptime_kumas_pagerduty_notification_is_one_alert_per_monitor() {
    let (key, event) = read_event(&fixture("uptime-kuma-pagerduty-trigger.json"), T0).unwrap();
    assert_eq!(key, "kuma-key");
    assert_eq!(event.key, "Uptime Kuma/7");
    let alert = triggered(&event).alerts.values().next().unwrap();
    assert!(alert.labels["alertname"].contains("[Checkout]"));
    assert_eq!(alert.labels["severity"], "warning");
    assert_eq!(alert.labels["source"], "https://checkout.example.com");
}
