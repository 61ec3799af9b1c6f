use super::*;
use crate::sources::{Action, Alerts};

const T0: i64 = 1_795_000_000;
const REQUEST: &str = "43a29c5c-3dbf-4fa4-9c26-f4f71023e120";

fn create(body: &str) -> Result<Event, Refused> {
    read_create(body.as_bytes(), T0, REQUEST)
}

fn triggered(event: &Event) -> &Alerts {
    match &event.action {
        Action::Trigger(alerts) => alerts,
        other => panic!("a trigger, not {other:?}"),
    }
}

#[test]
fn opsgenies_own_create_example_is_one_alert_keyed_by_its_alias() {
    let body = include_bytes!("../../../../domain/tests/fixtures/opsgenie-create.json");
    let event = read_create(body, T0, REQUEST).unwrap();
    assert_eq!(event.key, "Life is too short for no alias");
    let alerts = triggered(&event);
    assert_eq!(alerts.group.key, "opsgenie:Life is too short for no alias");
    let alert = &alerts.alerts["Life is too short for no alias"];
    assert_eq!(alert.labels["alertname"], "An example alert message");
    assert_eq!(alert.labels["severity"], "critical", "P1");
    assert_eq!(alert.labels["key1"], "value1", "details are labels");
    assert_eq!(alert.labels["entity"], "An example entity");
    assert_eq!(alert.labels["tags"], "OverwriteQuietHours,Critical");
    assert_eq!(
        alert.annotations["description"],
        "Every alert needs a description"
    );
    let responders = &alert.annotations["responders"];
    assert!(responders.starts_with("not used"), "{responders}");
    assert!(responders.contains("team NOC"), "{responders}");
    assert_eq!(alert.starts_at, T0);
}

#[test]
fn priorities_map_to_severities_and_p3_is_the_default() {
    for (priority, severity) in [
        (r#""P2""#, "critical"),
        (r#""P3""#, "warning"),
        ("null", "warning"),
        (r#""P4""#, "info"),
        (r#""P5""#, "info"),
    ] {
        let body = format!(r#"{{"message": "m", "priority": {priority}}}"#);
        let event = create(&body).unwrap();
        let alert = triggered(&event).alerts.values().next().unwrap();
        assert_eq!(alert.labels["severity"], severity, "{priority}");
    }
}

#[test]
fn without_an_alias_the_request_id_is_the_key() {
    let event = create(r#"{"message": "backup failed"}"#).unwrap();
    assert_eq!(event.key, REQUEST);
    assert_ne!(request_id(), request_id());
    assert_eq!(request_id().len(), 36);
}

#[test]
fn long_fields_are_cut_to_opsgenies_limits() {
    let body = serde_json::json!({
        "message": "m".repeat(200),
        "tags": (0..30).map(|i| format!("{i}{}", "t".repeat(60))).collect::<Vec<_>>(),
        "description": "d".repeat(20_000),
    });
    let event = create(&body.to_string()).unwrap();
    let alert = triggered(&event).alerts.values().next().unwrap();
    assert_eq!(alert.labels["alertname"].chars().count(), 130);
    let tags: Vec<&str> = alert.labels["tags"].split(',').collect();
    assert_eq!(tags.len(), 20);
    assert!(tags.iter().all(|t| t.chars().count() == 50));
    assert_eq!(alert.annotations["description"].len(), MAX_DESCRIPTION);
}

#[test]
fn a_request_that_is_not_an_alert_is_refused_field_by_field() {
    assert!(matches!(create("{not json"), Err(Refused::NotJson(_))));
    let Err(Refused::Invalid(errors)) = create(r#"{"message": " ", "priority": "P9"}"#) else {
        panic!("refused");
    };
    assert_eq!(errors["message"], "Message can not be empty.");
    assert!(errors["priority"].contains("P1"), "{errors:?}");
    let Err(Refused::Invalid(errors)) = create(r#"{"message": 5}"#) else {
        panic!("refused");
    };
    assert!(errors["body"].contains("wrong type"), "{errors:?}");
    let long_alias = format!(r#"{{"message": "m", "alias": "{}"}}"#, "a".repeat(513));
    assert!(matches!(create(&long_alias), Err(Refused::Invalid(e)) if e.contains_key("alias")));
    // Details over Klaxon's bounds for an alert's labels.
    let details: BTreeMap<String, String> =
        (0..200).map(|i| (format!("k{i}"), "v".into())).collect();
    let body = serde_json::json!({"message": "m", "details": details});
    assert!(
        matches!(create(&body.to_string()), Err(Refused::Invalid(e)) if e.contains_key("details"))
    );
}

#[test]
fn a_long_alias_is_hashed_into_a_fingerprint() {
    let alias = "a".repeat(300);
    let event = create(&format!(r#"{{"message": "m", "alias": "{alias}"}}"#)).unwrap();
    assert_eq!(event.key, alias);
    assert!(event.fingerprint.starts_with("sha256:"));
    let again = Event::about(alias, Action::Resolve);
    assert_eq!(again.fingerprint, event.fingerprint);
}

#[test]
fn alerts_are_named_by_id_or_alias() {
    assert!(identifier_type(None).is_ok());
    assert!(identifier_type(Some("alias")).is_ok());
    assert!(matches!(
        identifier_type(Some("tiny")),
        Err(Refused::Invalid(_))
    ));
}
