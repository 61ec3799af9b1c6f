//! Settings: seeded once, validated all-or-nothing, unknown keys refused.

use crate::common;
use common::*;
use klaxon_core::Config;
use serde_json::json;

fn seeds(stale: &str) -> Config {
    Config {
        setting_seeds: vec![
            ("stale_after", stale.to_string()),
            ("signup_mode", "open".into()),
        ],
        ..Config::default()
    }
}

#[tokio::test]
async fn seeded_at_first_start_and_never_overwritten() {
    let app = TestApp::spawn_with(Backend::Sqlite, seeds("2h")).await;
    let admin = app.bootstrap().await;
    let s = app.get("/api/admin/settings", &admin).await.expect(200);
    assert_eq!(s["settings"]["stale_after"], "2h");
    assert_eq!(s["settings"]["signup_mode"], "open");
    assert_eq!(s["settings"]["archive_after"], "7d");
    // A restart with other seeds keeps the stored values.
    let dir = tempfile::tempdir().unwrap();
    let again = TestApp::spawn_on(dir, app.database_url.clone(), seeds("9h")).await;
    let s = again.get("/api/admin/settings", &admin).await.expect(200);
    assert_eq!(s["settings"]["stale_after"], "2h");
}

#[tokio::test]
#[cfg_attr(
    not(postgres_tests),
    ignore = "needs KLAXON_TEST_DATABASE_URL at build time"
)]
async fn seeded_once_on_postgres_too() {
    let url = TestApp::spawn_postgres().await.database_url.clone();
    // The schema above was migrated with default seeds; a start with other seeds changes nothing.
    let app = TestApp::spawn_on(tempfile::tempdir().unwrap(), url, seeds("9h")).await;
    let admin = app.bootstrap().await;
    let s = app.get("/api/admin/settings", &admin).await.expect(200);
    assert_eq!(s["settings"]["stale_after"], "6h");
}

both!(admin_reads_values_bounds_and_push_status, |app| {
    let admin = app.bootstrap().await;
    let s = app.get("/api/admin/settings", &admin).await.expect(200);
    assert_eq!(s["settings"]["notify_repeat_interval"], "30m");
    assert_eq!(s["bounds"]["notify_repeat_interval"]["min"], "1m");
    assert_eq!(s["bounds"]["archive_after"]["max"], "365d");
    // The harness configures a (recording) ntfy server with a token: reported, never revealed.
    assert_eq!(s["push"]["configured"], true);
    assert_eq!(s["push"]["token_configured"], true);
    assert_eq!(s["oidc"]["configured"], false);
    let text = s.to_string();
    assert!(
        !text.contains(&app.ntfy.url),
        "the ntfy address is not reported"
    );
    assert!(
        !text.contains(common::ntfy::TOKEN),
        "the ntfy token is not reported"
    );
});

both!(update_is_all_or_nothing, |app| {
    let admin = app.bootstrap().await;
    let s = app
        .put(
            "/api/admin/settings",
            &admin,
            json!({"stale_after": "90m", "signup_mode": "open"}),
        )
        .await
        .expect(200);
    assert_eq!(s["settings"]["stale_after"], "1h30m");
    for bad in [
        json!({"stale_after": "2h", "archive_after": "1m"}),
        json!({"stale_after": "2h", "colour": "red"}),
        json!({"stale_after": 7200}),
        json!({"signup_mode": "sometimes"}),
        json!({"notify_repeat_interval": "1h1h"}),
    ] {
        app.put("/api/admin/settings", &admin, bad)
            .await
            .expect_error(400, "invalid");
    }
    let s = app.get("/api/admin/settings", &admin).await.expect(200);
    assert_eq!(s["settings"]["stale_after"], "1h30m");
    assert_eq!(s["settings"]["archive_after"], "7d");
    // The loops' accessor sees the change at once.
    assert_eq!(
        app.core.settings().await.unwrap().stale_after.as_secs(),
        5400
    );
});

both!(only_administrators_touch_settings, |app| {
    let admin = app.bootstrap().await;
    let (_, bob) = app.user(&admin, "bob").await;
    app.get("/api/admin/settings", &bob)
        .await
        .expect_error(403, "forbidden");
    app.put("/api/admin/settings", &bob, json!({"stale_after": "2h"}))
        .await
        .expect_error(403, "forbidden");
    app.get("/api/admin/settings", &Auth::None)
        .await
        .expect_error(401, "unauthorized");
});

both!(
    unparseable_stored_signup_mode_behaves_as_invite_only,
    |app| {
        sqlx::query("UPDATE settings SET value = 'wide-open' WHERE key = 'signup_mode'")
            .execute(&app.core.db.pool)
            .await
            .unwrap();
        let c = app.get("/api/auth/config", &Auth::None).await.expect(200);
        assert_eq!(c["signup_mode"], "invite_only");
    }
);
