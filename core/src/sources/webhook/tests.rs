use super::*;

const T0: i64 = 1_780_000_000;

/// Templates as Grafana OnCall's "Webhook" integration writes them for an uptime checker that
/// posts `{"check": …, "status": "down"|"up", …}`.
fn oncall() -> WebhookTemplates {
    WebhookTemplates {
        title: "{{ payload.check }} is {{ payload.status }}".into(),
        severity: Some("{{ payload.level | default('warning') }}".into()),
        dedup_key: Some("{{ payload.check }}".into()),
        resolved: Some("{{ payload.status == 'up' }}".into()),
        labels: BTreeMap::from([
            ("service".into(), "{{ payload.tags.service }}".into()),
            ("region".into(), "{{ payload.tags.region }}".into()),
        ]),
        link: Some("{{ payload.url }}".into()),
        message: Some("{{ payload.detail | json_dumps }}".into()),
    }
}

fn render(t: &WebhookTemplates, body: &str) -> Result<Rendered, String> {
    Mapper::new(t)?.render(body.as_bytes())
}

#[test]
fn a_body_becomes_the_alert_its_templates_say() {
    let body = r#"{"check": "api-health", "status": "down", "level": "P1",
        "tags": {"service": "api", "region": ""}, "url": "https://up.example/checks/7",
        "detail": {"code": 503}}"#;
    let r = render(&oncall(), body).unwrap();
    assert!(!r.resolves);
    assert_eq!(r.title, "api-health is down");
    assert_eq!(r.dedup_key, "api-health");
    assert_eq!(r.severity, "critical");
    // An empty rendering is left out; alertname and severity are always there.
    assert_eq!(
        r.labels,
        BTreeMap::from([
            ("alertname".into(), "api-health is down".into()),
            ("service".into(), "api".into()),
            ("severity".into(), "critical".into()),
        ])
    );
    assert_eq!(r.link.as_deref(), Some("https://up.example/checks/7"));
    assert_eq!(r.message.as_deref(), Some(r#"{"code": 503}"#));

    let Event {
        key,
        fingerprint,
        action,
    } = r.event(T0).unwrap();
    assert_eq!(
        (key.as_str(), fingerprint.as_str()),
        ("api-health", "api-health")
    );
    let Action::Trigger(alerts) = action else {
        panic!("a firing body triggers")
    };
    let alert = &alerts.alerts["api-health"];
    assert_eq!(alert.starts_at, T0);
    assert_eq!(alert.annotations["description"], r#"{"code": 503}"#);
    assert_eq!(alerts.group.key, "webhook:api-health");
}

#[test]
fn the_resolve_condition_resolves_the_alert_its_key_names() {
    let r = render(&oncall(), r#"{"check": "api-health", "status": "up"}"#).unwrap();
    assert!(r.resolves);
    assert_eq!(
        r.event(T0).unwrap(),
        Event::about("api-health".into(), Action::Resolve)
    );
    for yes in ["True", "true", "1", "yes", "OK", "resolved"] {
        assert!(truthy(yes), "{yes}");
    }
    for no in ["False", "false", "0", "", "firing"] {
        assert!(!truthy(no), "{no}");
    }
}

#[test]
fn defaults_a_title_key_a_warning_and_firing() {
    let t = WebhookTemplates {
        title: "{{ payload.name }}".into(),
        ..Default::default()
    };
    let r = render(&t, r#"{"name": "Backup late"}"#).unwrap();
    assert_eq!(
        (r.dedup_key.as_str(), r.severity),
        ("Backup late", "warning")
    );
    assert!(!r.resolves && r.link.is_none() && r.message.is_none());
    // A severity spelled another way is mapped, one not known is a warning: never refused.
    for (sent, klaxon) in [
        ("error", "critical"),
        ("HIGH", "critical"),
        ("low", "info"),
        ("P5", "info"),
        ("sev2", "warning"),
    ] {
        assert_eq!(severity(sent), klaxon, "{sent}");
    }
}

#[test]
fn a_link_that_is_not_a_web_address_is_left_out() {
    let mut t = oncall();
    for url in ["javascript:alert(1)", "ftp://x", "https://a b"] {
        t.link = Some(url.into());
        assert_eq!(render(&t, r#"{"check": "x"}"#).unwrap().link, None, "{url}");
    }
}

#[test]
fn bad_bodies_and_templates_are_named() {
    assert!(render(&oncall(), "not json")
        .unwrap_err()
        .starts_with("not a JSON webhook body"));
    let empty = render(&oncall(), "{}").unwrap();
    assert_eq!(empty.title, "is");
    let blank = WebhookTemplates {
        title: "{{ payload.nothing }}".into(),
        ..Default::default()
    };
    assert_eq!(
        render(&blank, "{}").unwrap_err(),
        "title: the template rendered nothing for this body"
    );
    let broken = WebhookTemplates {
        severity: Some("{{ payload.level ".into()),
        ..oncall()
    };
    let e = Mapper::new(&broken).err().unwrap();
    assert!(e.starts_with("severity: "), "{e}");
    let failing = WebhookTemplates {
        title: "{{ payload.count + 1 }}".into(),
        ..Default::default()
    };
    let e = render(&failing, r#"{"count": "seven"}"#).unwrap_err();
    assert!(e.starts_with("title: "), "{e}");
}

#[test]
fn templates_read_no_file_and_their_work_and_output_are_bounded() {
    let t = |title: &str| WebhookTemplates {
        title: title.into(),
        ..Default::default()
    };
    // No loader: nothing outside the templates can be included.
    for reach in [
        "{% include '/etc/passwd' %}",
        "{% import '/etc/passwd' as p %}x",
        "{% extends 'base' %}",
    ] {
        let e = render(&t(reach), "{}").unwrap_err();
        assert!(e.starts_with("title: "), "{reach}: {e}");
    }
    // A loop that would run for ages ends on its fuel.
    let e = render(
        &t("{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}x"),
        "{}",
    )
    .unwrap_err();
    assert!(e.contains("too much work"), "{e}");
    // A huge string is refused before it is made.
    let e = render(&t("{{ 'x' * 50000000 }}"), "{}").unwrap_err();
    assert!(e.starts_with("title: "), "{e}");
    // Output past 16 KB fails.
    let e = render(&t("{% for i in range(2000) %}0123456789{% endfor %}"), "{}").unwrap_err();
    assert!(e.contains("more than 16 KB"), "{e}");
    // Deep recursion ends at the limit.
    let e = render(
        &t("{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}"),
        "{}",
    )
    .unwrap_err();
    assert!(e.starts_with("title: "), "{e}");
}

#[test]
fn oncall_filters_work_as_oncall_writes_them() {
    let t = WebhookTemplates {
        title: r#"{{ payload.host | regex_replace('^(\\w+)\\.example\\.com$', 'host \\1') }}"#
            .into(),
        labels: BTreeMap::from([
            (
                "prod".into(),
                "{{ payload.host | regex_search('^prod') }}".into(),
            ),
            (
                "web".into(),
                "{{ payload.host | regex_match('web') }}".into(),
            ),
        ]),
        message: Some("{{ payload.tags | tojson_pretty }}".into()),
        ..Default::default()
    };
    let r = render(&t, r#"{"host": "prod1.example.com", "tags": ["a"]}"#).unwrap();
    assert_eq!(r.title, "host prod1");
    assert_eq!(r.labels["prod"], "True");
    assert_eq!(r.labels["web"], "False");
    assert_eq!(r.message.as_deref(), Some("[\n  \"a\"\n]"));
}

#[test]
fn the_source_needs_its_templates() {
    assert_eq!(
        Webhook.read(b"{}", T0, None).unwrap_err(),
        "this webhook integration has no templates yet"
    );
    let Reading::Event(e) = Webhook
        .read(br#"{"check": "db", "status": "down"}"#, T0, Some(&oncall()))
        .unwrap()
    else {
        panic!("an event")
    };
    assert_eq!(e.key, "db");
}

#[test]
fn the_starter_templates_page_for_common_field_names() {
    let t = WebhookTemplates::starter();
    let r = render(&t, r#"{"message": "Queue backed up", "priority": "high"}"#).unwrap();
    assert_eq!(
        (r.title.as_str(), r.severity),
        ("Queue backed up", "critical")
    );
    assert_eq!(r.dedup_key, "Queue backed up");
    assert!(!r.resolves);
    let r = render(
        &t,
        r#"{"id": "q-7", "title": "Queue backed up", "status": "RESOLVED", "url": "https://q/7"}"#,
    )
    .unwrap();
    assert!(r.resolves);
    assert_eq!(r.dedup_key, "q-7");
    assert_eq!(r.link.as_deref(), Some("https://q/7"));
    assert_eq!(render(&t, "{}").unwrap().title, "Webhook alert");
}

#[test]
fn oncalls_python_methods_work() {
    // As OnCall's own Webhook integration writes its title and grouping templates.
    let t = WebhookTemplates {
        title: "{{ payload.get('title', 'Title') }}".into(),
        dedup_key: Some("{{ payload.get('alert_uid') }}".into()),
        labels: BTreeMap::from([(
            "keys".into(),
            "{{ payload.labels.keys() | sort | join(',') }}".into(),
        )]),
        resolved: Some("{{ payload.get('state', '').upper() == 'OK' }}".into()),
        ..Default::default()
    };
    let r = render(
        &t,
        r#"{"alert_uid": "u-1", "state": "ok", "labels": {"b": "1", "a": "2"}}"#,
    )
    .unwrap();
    assert_eq!((r.title.as_str(), r.dedup_key.as_str()), ("Title", "u-1"));
    assert_eq!(r.labels["keys"], "a,b");
    assert!(r.resolves);
}
