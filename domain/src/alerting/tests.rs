use super::*;
use AlertStatus::*;

fn stored(status: AlertStatus, starts_at: i64) -> Option<StoredAlert> {
    Some(StoredAlert { status, starts_at })
}

#[test]
fn alert_transition_table() {
    assert_eq!(ingest(None, Firing, 10), Ingest::Fire);
    assert_eq!(ingest(None, Resolved, 10), Ingest::StoreResolved);
    assert_eq!(ingest(stored(Firing, 10), Firing, 10), Ingest::Refresh);
    assert_eq!(ingest(stored(Firing, 10), Firing, 11), Ingest::Fire);
    assert_eq!(ingest(stored(Firing, 10), Firing, 9), Ingest::Discard);
    assert_eq!(ingest(stored(Firing, 10), Resolved, 10), Ingest::Resolve);
    assert_eq!(ingest(stored(Firing, 10), Resolved, 9), Ingest::Discard);
    assert_eq!(ingest(stored(Resolved, 10), Firing, 10), Ingest::Discard);
    assert_eq!(ingest(stored(Resolved, 10), Firing, 11), Ingest::Fire);
    assert_eq!(ingest(stored(Resolved, 10), Resolved, 10), Ingest::Refresh);
    assert_eq!(ingest(stored(Resolved, 10), Firing, 9), Ingest::Discard);
}

#[test]
fn severity_from_label() {
    assert_eq!(Severity::from_label(Some("critical")), Severity::Critical);
    assert_eq!(Severity::from_label(Some("CRITICAL ")), Severity::Critical);
    assert_eq!(Severity::from_label(Some("info")), Severity::Info);
    assert_eq!(Severity::from_label(Some("page")), Severity::Warning);
    assert_eq!(Severity::from_label(None), Severity::Warning);
    assert!(Severity::Critical > Severity::Warning && Severity::Warning > Severity::Info);
}

#[test]
fn signature_drops_where_it_ran() {
    let mut g = BTreeMap::new();
    g.insert("alertname".to_string(), "HighErrorRate".to_string());
    g.insert("service".to_string(), "checkout".to_string());
    g.insert("instance".to_string(), "web-1:8080".to_string());
    g.insert("pod".to_string(), "web-7d9".to_string());
    assert_eq!(
        signature("HighErrorRate", &g),
        "HighErrorRate{service=\"checkout\"}"
    );
    g.insert("instance".to_string(), "web-2:8080".to_string());
    assert_eq!(
        signature("HighErrorRate", &g),
        "HighErrorRate{service=\"checkout\"}"
    );
}

#[test]
fn only_web_source_links_are_kept() {
    let link = |u: &str| {
        WebhookAlert {
            status: Some("firing".into()),
            starts_at: Some("2026-11-22T01:23:49Z".into()),
            fingerprint: Some("f".into()),
            generator_url: Some(u.into()),
            ..Default::default()
        }
        .validate()
        .unwrap()
        .generator_url
    };
    let graph = "http://prometheus:9090/graph?g0.expr=up%3D%3D0&g0.tab=1";
    assert_eq!(link(graph).as_deref(), Some(graph));
    assert_eq!(link(" https://x/y ").as_deref(), Some("https://x/y"));
    for bad in [
        "javascript:alert(1)",
        "/graph",
        "http://",
        "ftp://x/y",
        "http://x/\u{7}",
    ] {
        assert_eq!(link(bad), None, "{bad}");
    }
    assert_eq!(
        link(&format!("http://x/{}", "a".repeat(MAX_PAYLOAD_STRING))),
        None
    );
}

#[test]
fn parses_a_real_alertmanager_payload() {
    let text = include_str!("../../tests/fixtures/alertmanager-webhook.json");
    let p: WebhookPayload = serde_json::from_str(text).unwrap();
    assert_eq!(
        p.group_key.as_deref(),
        Some("{}:{alertname=\"HighErrorRate\", service=\"checkout\"}")
    );
    let a = p.alerts[0].validate().unwrap();
    assert_eq!(a.status, Firing);
    assert_eq!(a.ends_at, None, "year 0001 means still firing");
    assert_eq!(a.fingerprint, "f7ca8b2ae37f4b50");
    assert_eq!(Timestamp(a.starts_at).to_rfc3339(), "2026-11-22T01:23:49Z");
    assert!(a
        .generator_url
        .as_deref()
        .is_some_and(|u| u.starts_with("http")));
    let text = include_str!("../../tests/fixtures/alertmanager-webhook-resolved.json");
    let p: WebhookPayload = serde_json::from_str(text).unwrap();
    let a = p.alerts[0].validate().unwrap();
    assert_eq!(a.status, Resolved);
    assert_eq!(
        a.ends_at.map(|t| Timestamp(t).to_rfc3339()).as_deref(),
        Some("2026-11-22T01:23:53Z")
    );
}

#[test]
fn group_fields_are_bounded_and_long_keys_hashed() {
    let p: WebhookPayload = serde_json::from_str(
        r#"{"groupKey":"{}:{alertname=\"A\"}","groupLabels":{"alertname":"A"},"externalURL":"http://am:9093"}"#,
    )
    .unwrap();
    let g = p.group().unwrap();
    assert_eq!(g.key, "{}:{alertname=\"A\"}");
    assert_eq!(g.labels["alertname"], "A");

    let long = WebhookPayload {
        group_key: Some("k".repeat(2 * 1024 * 1024)),
        ..WebhookPayload::default()
    };
    let g = long.group().unwrap();
    assert!(
        g.key.starts_with("sha256:") && g.key.len() == 7 + 64,
        "{}",
        g.key
    );
    assert_eq!(g, long.group().unwrap(), "the same key hashes the same way");

    let mut big = BTreeMap::new();
    big.insert("k".to_string(), "v".repeat(MAX_LABEL_BYTES));
    for p in [
        WebhookPayload {
            group_labels: big.clone(),
            ..Default::default()
        },
        WebhookPayload {
            common_labels: big.clone(),
            ..Default::default()
        },
        WebhookPayload {
            common_annotations: big.clone(),
            ..Default::default()
        },
        WebhookPayload {
            external_url: Some("h".repeat(MAX_PAYLOAD_STRING + 1)),
            ..Default::default()
        },
        WebhookPayload {
            receiver: Some("r".repeat(MAX_PAYLOAD_STRING + 1)),
            ..Default::default()
        },
    ] {
        assert!(p.group().is_err());
    }
}

#[test]
fn tolerates_missing_and_unknown_fields_but_rejects_garbage_alerts() {
    let p: WebhookPayload = serde_json::from_str(r#"{"alerts":[{"status":"firing","fingerprint":"a","startsAt":"2026-01-01T00:00:00Z","extra":1}],"new":true}"#).unwrap();
    assert!(p.alerts[0].validate().is_ok());
    for bad in [
        r#"{"status":"firing","startsAt":"2026-01-01T00:00:00Z"}"#,
        r#"{"status":"burning","fingerprint":"a","startsAt":"2026-01-01T00:00:00Z"}"#,
        r#"{"status":"firing","fingerprint":"a","startsAt":"yesterday"}"#,
        r#"{"status":"firing","fingerprint":"a","startsAt":"99999-01-01T00:00:00Z"}"#,
        r#"{"status":"firing","fingerprint":"a","startsAt":"2026-01-01T00:00:00Z","endsAt":"soon"}"#,
    ] {
        let a: WebhookAlert = serde_json::from_str(bad).unwrap_or_default();
        assert!(a.validate().is_err(), "{bad}");
    }
}
