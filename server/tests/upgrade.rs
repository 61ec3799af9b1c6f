//! Upgrades convert what is in flight: pages queued before their road had typed columns
//! (migration 0035) name their road and contact method after it, and each is sent exactly once,
//! a page claimed by a replica that did not survive the upgrade included.

use crate::common;
use common::chat::Chat;
use common::TestApp;
use klaxon_core::Clock;

/// The database as a version before 0035 left it: pages without `road` and `method_id`, and the
/// migration not yet applied (nor 0036 and 0037, the phone roads, which came after it).
async fn before_page_roads(app: &TestApp) {
    let pool = &app.core.db.pool;
    let sqlite = app.database_url.starts_with("sqlite");
    let mut undo = Vec::new();
    if sqlite {
        undo.extend([
            "DROP TRIGGER pages_road_insert_check",
            "DROP TRIGGER pages_road_update_check",
            "DROP TRIGGER contact_methods_kind_insert_check",
            "DROP TRIGGER contact_methods_kind_update_check",
        ]);
    }
    undo.extend([
        "ALTER TABLE contact_methods DROP COLUMN provider",
        "DROP TABLE phone_replies",
        "DROP TABLE phone_sends",
        "DROP TABLE phone_stops",
        "DROP TABLE phone_seen",
        "DROP TABLE phone_reports",
        "DROP TABLE phone_hours",
        // What 0052 (the reports' indexes, one of them on `road`) made is made again after.
        "DROP INDEX pages_team_sent",
        "DROP INDEX timeline_escalated",
        "DROP INDEX timeline_resolved",
        "DROP INDEX timeline_acted",
        "ALTER TABLE pages DROP COLUMN road",
        "ALTER TABLE pages DROP COLUMN method_id",
        "DELETE FROM _sqlx_migrations WHERE version IN (35, 36, 37, 52, 53)",
    ]);
    for sql in undo {
        sqlx::query(sql).execute(pool).await.expect(sql);
    }
}

both!(
    pages_queued_before_the_road_columns_go_once_each_after_the_upgrade,
    |app| {
        let w = app.paging_world().await;
        let chat = Chat::start().await;
        let pool = &app.core.db.pool;
        // Alice's verified webhook, as an earlier version stored it: with no rules, she is paged
        // on her push topic and on it at once.
        let (method,): (i64,) = sqlx::query_as(
            "INSERT INTO contact_methods (user_id, kind, name, target, verified_at, created_at, signing_secret) \
             VALUES ($1, 'webhook', 'gateway', $2, 0, 0, 'secret') RETURNING id",
        )
        .bind(w.alice.0)
        .bind(format!("{}/hook/alice", chat.url))
        .fetch_one(pool)
        .await
        .unwrap();
        let first = app.fire(&w.key, "db-down").await;
        let second = app.fire(&w.key, "disk-full").await;
        // The second incident's pages were in a replica's hands when it stopped for the upgrade.
        sqlx::query(
            "UPDATE pages SET claimed_by = 'stopped-replica', claimed_until = $1 WHERE incident_id = $2",
        )
        .bind(app.clock.now() + 5)
        .bind(second)
        .execute(pool)
        .await
        .unwrap();

        before_page_roads(&app).await;
        app.core.db.migrate().await.expect("the upgrade");

        let mut rows: Vec<(i64, String, String, Option<i64>, String)> = sqlx::query_as(
            "SELECT incident_id, topic, road, method_id, state FROM pages ORDER BY incident_id, road",
        )
        .fetch_all(pool)
        .await
        .unwrap();
        rows.sort();
        let webhook = format!("webhook:{method}");
        let expected: Vec<(i64, String, String, Option<i64>, String)> = [first, second]
            .into_iter()
            .flat_map(|i| {
                [
                    (
                        i,
                        "alice-pager".to_string(),
                        "ntfy".to_string(),
                        None,
                        "pending".to_string(),
                    ),
                    (
                        i,
                        webhook.clone(),
                        "webhook".to_string(),
                        Some(method),
                        "pending".to_string(),
                    ),
                ]
            })
            .collect();
        assert_eq!(rows, expected);

        // The upgraded server sends the first incident's pages now, and the second's once the
        // stopped replica's claim lapses; each once, by its road.
        app.tick().await;
        app.core.deliveries_settled().await;
        app.clock.advance(10);
        app.tick().await;
        app.core.deliveries_settled().await;
        app.clock.advance(60);
        app.tick().await;
        app.core.deliveries_settled().await;
        let pushed: Vec<String> = app
            .ntfy
            .published()
            .iter()
            .map(|p| p.topic.clone())
            .collect();
        assert_eq!(pushed, ["alice-pager", "alice-pager"]);
        let posted = chat.posts("/hook/alice");
        assert_eq!(posted.len(), 2, "{posted:?}");
        assert!(posted.iter().all(|p| p.body["event"] == "page"));
        let (unsent,): (i64,) = sqlx::query_as("SELECT COUNT(*) FROM pages WHERE state <> 'sent'")
            .fetch_one(pool)
            .await
            .unwrap();
        assert_eq!(unsent, 0);
    }
);
