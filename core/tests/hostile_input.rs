//! What strangers can send, generated: webhook payloads (raw bytes and shaped JSON), dead man's
//! switch matchers, durations, timestamps, cookies, `Authorization` headers and proxy lists.
//! Nothing may panic, and whatever is accepted keeps the limits the rest of Klaxon relies on.
//! The case counts are fixed (override with `PROPTEST_CASES`), so the run time is bounded.

use klaxon_core::client::TrustedProxies;
use klaxon_core::credentials::{session_from_cookie_header, Presented};
use klaxon_core::{Config, Core, Db, ManualClock};
use klaxon_domain::alerting::{WebhookPayload, MAX_FINGERPRINT, MAX_LABELS};
use klaxon_domain::deadman::matcher::Matcher;
use klaxon_domain::duration::Duration;
use klaxon_domain::Timestamp;
use proptest::prelude::*;
use serde_json::{json, Value};
use std::sync::Arc;

fn config(cases: u32) -> ProptestConfig {
    ProptestConfig {
        cases: std::env::var("PROPTEST_CASES")
            .ok()
            .and_then(|c| c.parse().ok())
            .unwrap_or(cases),
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

/// Strings a sender might put anywhere: empty, huge, control characters, other scripts.
fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        Just(String::new()),
        "\\PC{0,40}",
        "[a-z_]{1,12}",
        "[\\x00-\\x1f\"\\\\{}=~!,]{0,16}",
        (1usize..20_000).prop_map(|n| "x".repeat(n)),
    ]
}

/// Times as senders write them, and as they should not.
fn time() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(json!("2026-11-22T00:00:00Z")),
        Just(json!("0001-01-01T00:00:00Z")),
        Just(json!("2026-11-22T01:58:30.101834+02:00")),
        Just(json!("9999-12-31T23:59:59Z")),
        Just(json!("10000-01-01T00:00:00Z")),
        Just(json!("1969-12-31T23:59:59Z")),
        Just(json!(1_795_305_600)),
        Just(Value::Null),
        text().prop_map(Value::from),
    ]
}

fn labels() -> impl Strategy<Value = Value> {
    prop_oneof![
        prop::collection::btree_map(text(), text(), 0..6).prop_map(|m| json!(m)),
        (0usize..300).prop_map(|n| json!((0..n)
            .map(|i| (format!("l{i}"), "v".to_string()))
            .collect::<std::collections::BTreeMap<_, _>>())),
        Just(json!([1, 2])),
        Just(Value::Null),
    ]
}

fn alert() -> impl Strategy<Value = Value> {
    (
        prop_oneof![
            Just(json!("firing")),
            Just(json!("resolved")),
            text().prop_map(Value::from)
        ],
        labels(),
        labels(),
        time(),
        time(),
        prop_oneof![
            text().prop_map(Value::from),
            Just(Value::Null),
            Just(json!(7))
        ],
    )
        .prop_map(|(status, labels, annotations, starts, ends, fingerprint)| {
            json!({"status": status, "labels": labels, "annotations": annotations,
                   "startsAt": starts, "endsAt": ends, "fingerprint": fingerprint})
        })
}

fn payload() -> impl Strategy<Value = Value> {
    (
        prop::collection::vec(alert(), 0..8),
        prop_oneof![text().prop_map(Value::from), Just(Value::Null)],
        labels(),
        labels(),
        prop_oneof![
            Just(json!(0)),
            Just(json!(-1)),
            Just(json!(u64::MAX)),
            Just(json!("3"))
        ],
    )
        .prop_map(|(alerts, key, group, common, truncated)| {
            json!({"version": "4", "groupKey": key, "status": "firing", "alerts": alerts,
                   "groupLabels": group, "commonLabels": common, "truncatedAlerts": truncated})
        })
}

/// Decodes and validates like intake; checks what validation promises.
fn intake_checks(bytes: &[u8]) {
    let Ok(payload) = serde_json::from_slice::<WebhookPayload>(bytes) else {
        return;
    };
    let _ = payload.group();
    for a in &payload.alerts {
        if let Ok(v) = a.validate() {
            assert!(!v.fingerprint.is_empty() && v.fingerprint.len() <= MAX_FINGERPRINT);
            assert!(v.labels.len() <= MAX_LABELS && v.annotations.len() <= MAX_LABELS);
            assert!(v.starts_at >= 0);
            assert!(v.ends_at.is_none_or(|e| e >= 0));
        }
    }
}

proptest! {
    #![proptest_config(config(2000))]

    #[test]
    fn webhook_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..512)) {
        intake_checks(&bytes);
    }

    #[test]
    fn shaped_webhook_payloads_are_validated_within_limits(p in payload()) {
        intake_checks(p.to_string().as_bytes());
    }

    #[test]
    fn matchers_never_panic_and_always_select_on_alertname(
        raw in prop_oneof![
            "\\PC{0,60}",
            prop::collection::vec(
                prop_oneof![
                    Just("alertname".to_string()), Just("cluster".to_string()),
                    Just("=".to_string()), Just("=~".to_string()), Just("!=".to_string()),
                    Just("!~".to_string()), Just("\"".to_string()), Just(",".to_string()),
                    Just("{".to_string()), Just("}".to_string()), Just(" or ".to_string()),
                    Just("(".to_string()), Just(".*".to_string()), Just("[".to_string()),
                    "[a-zA-Z0-9_]{1,6}",
                ],
                0..14,
            ).prop_map(|parts| parts.concat()),
        ]
    ) {
        if let Ok(m) = Matcher::parse(&raw) {
            // A matcher that parses never matches an alert without an alertname.
            let empty = std::collections::BTreeMap::new();
            let _ = m.matches(&empty);
            prop_assert!(raw.contains("alertname"));
        }
    }

    #[test]
    fn durations_round_trip_and_stay_bounded(raw in prop_oneof!["\\PC{0,40}", "[0-9]{0,20}[dhms]?[0-9]{0,6}[dhms]?"]) {
        if let Ok(d) = raw.parse::<Duration>() {
            prop_assert!(d.as_secs() >= 0 && d.as_secs() <= 100 * 365 * 86_400);
            prop_assert_eq!(d.to_string().parse::<Duration>(), Ok(d));
        }
    }

    #[test]
    fn timestamps_round_trip(raw in prop_oneof!["\\PC{0,40}", "[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\\.[0-9]{1,9})?(Z|[+-][0-9]{2}:[0-9]{2})"]) {
        if let Some(t) = Timestamp::parse(&raw) {
            prop_assert_eq!(Timestamp::parse(&t.to_rfc3339()), Some(t));
        }
    }

    #[test]
    fn cookie_headers_never_panic(raw in "\\PC{0,200}") {
        if let Some(token) = session_from_cookie_header(&raw) {
            prop_assert!(!token.is_empty() && !token.contains(';'));
        }
    }

    #[test]
    fn proxy_lists_never_panic(raw in "[0-9a-f.:/, ]{0,60}|\\PC{0,40}") {
        let _ = TrustedProxies::parse(&raw);
    }

    #[test]
    fn request_headers_of_any_bytes_are_read_without_panic(
        auth in prop::collection::vec(any::<u8>(), 0..80),
        cookie in prop::collection::vec(any::<u8>(), 0..80),
        forwarded in prop::collection::vec(any::<u8>(), 0..80),
    ) {
        let mut headers = http::HeaderMap::new();
        for (name, value) in [("authorization", auth), ("cookie", cookie), ("x-forwarded-for", forwarded)] {
            if let Ok(v) = http::HeaderValue::from_bytes(&value) {
                headers.insert(name, v);
            }
        }
        let _ = Presented::from_request(&http::Method::POST, &headers, None);
    }
}

/// Forged `Authorization` headers against a real database: every one is refused, none panics.
#[test]
fn forged_authorization_headers_are_all_refused() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let core = runtime.block_on(async {
        let url = format!("sqlite://{}?mode=rwc", dir.path().join("k.db").display());
        let db = Db::connect(Some(&url), dir.path()).await.unwrap();
        Core::start(
            db,
            Arc::new(ManualClock::new(1_795_305_600)),
            Config::default(),
        )
        .await
        .unwrap()
    });
    let header = prop_oneof![
        "\\PC{0,100}",
        "Bearer [a-zA-Z0-9]{64}",
        "bearer [a-zA-Z0-9]{0,70}",
        "Bearer \\PC{0,70}",
        "Basic [a-zA-Z0-9+/=]{0,40}",
    ];
    let mut runner = proptest::test_runner::TestRunner::new(config(300));
    runner
        .run(&header, |h| {
            let presented = Presented {
                authorization: Some(&h),
                changes_state: true,
                ..Presented::default()
            };
            let result = runtime.block_on(core.authenticate(&presented));
            prop_assert!(
                matches!(result, Err(klaxon_core::Error::Unauthorized)),
                "{h:?}: {result:?}"
            );
            Ok(())
        })
        .unwrap();
}
