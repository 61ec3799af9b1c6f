//! The mail server as a real one is set up: TLS from the first byte (smtps) as well as STARTTLS,
//! and one connection carrying mail after mail.

use crate::common;
use serde_json::json;

fn smtps_config() -> klaxon_core::Config {
    let smtp = common::smtp::smtp();
    let mut config = common::smtp::mail_config();
    config.roads.smtp = Some(klaxon_core::roads::email::SmtpConfig {
        url: format!(
            "smtps://{}:{}@127.0.0.1:{}",
            common::smtp::USER,
            common::smtp::PASSWORD.replace(' ', "%20"),
            smtp.tls_port
        ),
        ..smtp.config()
    });
    config
}

both_with!(
    mail_goes_over_tls_from_the_first_byte,
    smtps_config(),
    |app| {
        let smtp = common::smtp::smtp();
        let admin = app.bootstrap().await;
        let (bob_id, bob) = app.user(&admin, "bob").await;
        let path = format!("/api/users/{bob_id}/contact-methods");
        let to = address();
        let id = common::smtp::verified_email(&app, &(bob_id, bob.clone()), &to).await;
        // Three test mails in a row: each arrives whole, the kept connection carrying the later ones.
        for i in 2..=4 {
            app.post(&format!("{path}/{id}/test"), &bob, json!({}))
                .await
                .expect(204);
            let test = smtp.wait_for(&to, i).await;
            assert!(test.contains("Pages reach this address"), "{test}");
        }
    }
);

both_with!(
    a_starttls_server_is_not_taken_for_one_that_speaks_tls_from_the_first_byte,
    {
        let mut config = smtps_config();
        let smtp = config.roads.smtp.as_mut().unwrap();
        smtp.url = smtp.url.replace(
            &common::smtp::smtp().tls_port.to_string(),
            &common::smtp::smtp().port.to_string(),
        );
        config
    },
    |app| {
        let admin = app.bootstrap().await;
        let (bob_id, bob) = app.user(&admin, "bob").await;
        let to = address();
        let why = app
            .post(
                &format!("/api/users/{bob_id}/contact-methods"),
                &bob,
                json!({"name": "Mail", "kind": "email", "address": to}),
            )
            .await
            .expect_error(502, "push_failed");
        assert!(why.contains("TLS connection failed"), "{why}");
        assert!(common::smtp::smtp().messages_to(&to).is_empty());
    }
);

/// An address no other test mails: the tests of the binary share one SMTP server.
fn address() -> String {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    format!("smtps-{n}@example.org")
}

both_with!(
    a_storm_to_one_address_is_five_mails_a_minute_the_last_a_summary,
    common::smtp::mail_config(),
    |app| {
        let smtp = common::smtp::smtp();
        let w = app.paging_world().await;
        let to = address();
        let id = common::smtp::verified_email(&app, &w.alice, &to).await;
        app.put(
            &format!("/api/users/{}/notification-rules", w.alice.0),
            &w.alice.1,
            json!({"high": [{"after_minutes": 0, "method_id": id}]}),
        )
        .await
        .expect(200);
        for i in 0..12 {
            app.fire(&w.key, &format!("mail-storm-{i}")).await;
        }
        app.tick().await;
        // The code, four pages alone and one summary of the other eight.
        let mails = smtp.messages_to(&to);
        assert_eq!(mails.len(), 6, "{mails:#?}");
        assert!(
            mails[5].contains("8 new incidents in payments"),
            "{}",
            mails[5]
        );
        assert!(app.ntfy.published().is_empty(), "alice's one road is email");
    }
);
