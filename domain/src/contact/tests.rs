#[test]
fn one_mailbox_however_it_is_written() {
    for a in [
        "victim@example.org",
        "\"victim\"@example.org",
        "victim+1@example.org",
        "Victim@Example.org",
        " \"VICTIM+x\"@example.org ",
    ] {
        assert_eq!(super::mailbox_key(a), "victim@example.org", "{a}");
    }
    assert_ne!(
        super::mailbox_key("victim@example.com"),
        "victim@example.org"
    );
}

use super::*;
#[test]
fn destinations_round_trip_and_never_take_a_topic_for_a_method() {
    for d in [
        Destination::Ntfy("alice-phone".into()),
        Destination::Method(ContactKind::Webpush, 7),
        Destination::Method(ContactKind::Email, 12),
        Destination::Method(ContactKind::Matrix, 3),
        Destination::Method(ContactKind::Webhook, 4),
        Destination::Method(ContactKind::Sms, 5),
        Destination::Method(ContactKind::Voice, 6),
    ] {
        assert_eq!(Destination::parse(&d.to_string()), d);
    }
    assert_eq!(
        Destination::parse("email-alerts"),
        Destination::Ntfy("email-alerts".into())
    );
    assert_eq!(
        Destination::parse("ntfy:3"),
        Destination::Ntfy("ntfy:3".into())
    );
    assert_eq!(
        Destination::Method(ContactKind::Email, 3).method_id(),
        Some(3)
    );
    assert_eq!(Destination::Ntfy("x".into()).kind(), ContactKind::Ntfy);
}

fn subscription(endpoint: &str, p256dh: &str, auth: &str) -> PushSubscription {
    PushSubscription {
        endpoint: endpoint.into(),
        keys: PushKeys {
            p256dh: p256dh.into(),
            auth: auth.into(),
        },
    }
}

// The subscription of RFC 8291's Appendix A.
const P256DH: &str =
    "BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4";
const AUTH: &str = "BTBZMqHH6r4Tts7J_aSIgg";

#[test]
fn a_browsers_subscription_is_read_with_its_keys() {
    let s = subscription("https://push.example.net/wpush/v2/gAAAA?x=1", P256DH, AUTH)
        .check()
        .unwrap();
    assert_eq!(s.origin, "https://push.example.net");
    assert_eq!(s.p256dh[0], 0x04);
    assert_eq!(s.auth.len(), 16);
    // Padded keys, as some browsers give them, read the same.
    let padded = subscription(
        "https://push.example.net/x",
        &format!("{P256DH}="),
        &format!("{AUTH}=="),
    );
    assert_eq!(padded.check().unwrap().p256dh, s.p256dh);
    // Plain http only to this machine, for tests.
    assert_eq!(
        subscription("http://127.0.0.1:9000/notify/a", P256DH, AUTH)
            .check()
            .unwrap()
            .origin,
        "http://127.0.0.1:9000"
    );
    assert!(subscription("http://[::1]:9000/a", P256DH, AUTH)
        .check()
        .is_ok());
}

#[test]
fn a_subscription_that_cannot_be_pushed_to_is_refused_with_the_reason() {
    let refused = |endpoint: &str, p256dh: &str, auth: &str| {
        subscription(endpoint, p256dh, auth).check().unwrap_err()
    };
    assert!(refused("http://push.example.net/a", P256DH, AUTH).starts_with("endpoint"));
    assert!(refused("ftp://push.example.net/a", P256DH, AUTH).starts_with("endpoint"));
    assert!(refused("https:///a", P256DH, AUTH).starts_with("endpoint"));
    assert!(refused("https://user:pw@push.example.net/a", P256DH, AUTH).starts_with("endpoint"));
    assert!(refused("https://push.example.net/a b", P256DH, AUTH).starts_with("endpoint"));
    let long = format!("https://push.example.net/{}", "a".repeat(MAX_ENDPOINT));
    assert!(refused(&long, P256DH, AUTH).starts_with("endpoint"));
    // A key of the wrong length, not base64url, or a compressed point.
    assert!(refused("https://p.example/a", &P256DH[..80], AUTH).starts_with("keys.p256dh"));
    assert!(
        refused("https://p.example/a", &P256DH.replace('_', "/"), AUTH).starts_with("keys.p256dh")
    );
    let compressed = P256DH.replacen('B', "A", 1);
    assert!(refused("https://p.example/a", &compressed, AUTH).starts_with("keys.p256dh"));
    assert!(refused("https://p.example/a", P256DH, "BTBZMqHH6r4Tts7J").starts_with("keys.auth"));
    // Not ASCII where the padding would be: refused, not a panic.
    let odd = format!("{}é", &AUTH[..22]);
    assert!(refused("https://p.example/a", P256DH, &odd).starts_with("keys.auth"));
    // Padding where none belongs, or too much of it.
    assert!(refused("https://p.example/a", P256DH, &format!("{AUTH}=")).starts_with("keys.auth"));
    assert!(refused("https://p.example/a", &format!("{P256DH}=="), AUTH).starts_with("keys.p256dh"));
}

#[test]
fn a_new_method_names_its_road_by_kind() {
    let m: NewContactMethod =
        serde_json::from_str(r#"{"name":"Phone","kind":"ntfy","topic":"alice-pager"}"#).unwrap();
    assert_eq!(m.road.kind(), ContactKind::Ntfy);
    let m: NewContactMethod =
        serde_json::from_str(r#"{"name":"Mail","kind":"email","address":" Alice@Example.org "}"#)
            .unwrap();
    assert_eq!(
        m.road,
        Road::Email {
            address: Email::parse("alice@example.org").unwrap()
        }
    );
    assert!(
        serde_json::from_str::<NewContactMethod>(r#"{"name":"x","kind":"sms","to":"1"}"#).is_err()
    );
    assert!(serde_json::from_str::<NewContactMethod>(
        r#"{"name":"x","kind":"email","address":"nobody"}"#
    )
    .is_err());
}

#[test]
fn a_webhook_url_is_checked_as_its_schema_says() {
    assert_eq!(
        webhook_url(" https://sms.example/hook?k=1 ").unwrap(),
        "https://sms.example/hook?k=1"
    );
    assert!(webhook_url("HTTP://127.0.0.1:9000/x").is_ok());
    for bad in [
        "ftp://x.example/a",
        "https://user@x.example/a",
        "https:///a",
        "https://:80/a",
        "https://x.example/a b",
        "https://x.example/\u{e9}",
        "\thttps://x.example/a",
    ] {
        assert!(webhook_url(bad).is_err(), "{bad}");
    }
    assert!(webhook_url(&format!("https://x.example/{}", "a".repeat(2048))).is_err());
}

#[test]
fn codes_are_read_as_people_type_them() {
    assert_eq!(normalize_code(" 123 456 ").as_deref(), Some("123456"));
    assert_eq!(normalize_code("12345"), None);
    assert_eq!(normalize_code("12345a"), None);
    assert_eq!(normalize_code("123\t456"), None);
}

#[test]
fn phone_numbers_are_kept_as_e164_and_need_their_country_code() {
    use crate::text::PhoneNumber;
    for (written, kept) in [
        (" +44 20 7946 0000 ", "+442079460000"),
        ("+1 (415) 555-2671", "+14155552671"),
        ("+49.30.1234567", "+49301234567"),
    ] {
        assert_eq!(
            PhoneNumber::parse(written).unwrap().as_str(),
            kept,
            "{written}"
        );
    }
    for bad in [
        "020 7946 0000",
        "+0 20 7946 0000",
        "+44 20 7946 0000 ext 1",
        "+1234567",
        "+1234567890123456",
        "+44-",
        "++442079460000",
    ] {
        assert!(PhoneNumber::parse(bad).is_err(), "{bad}");
    }
}
