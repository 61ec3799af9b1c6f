//! The schema refuses words the code does not know: every column read into an enum or a 0/1
//! flag has a CHECK constraint (a trigger on SQLite), so no write, from Klaxon or by hand, can
//! leave a row the reads would fail on.

both!(columns_of_words_refuse_unknown_words, |app| {
    let world = app.paging_world().await;
    let incident = app.fire(&world.key, "db-down").await;
    app.tick().await;
    let pool = &app.core.db.pool;
    let refused = [
        "UPDATE users SET kind = 'robot'",
        "UPDATE users SET is_admin = 2",
        "UPDATE users SET disabled = -1",
        "UPDATE team_members SET role = 'boss'",
        "UPDATE integrations SET kind = 'zabbix'",
        "UPDATE incidents SET state = 'open'",
        "UPDATE incidents SET severity = 'page'",
        "UPDATE incidents SET opening_sent = 7",
        "UPDATE alerts SET status = 'flapping'",
        "UPDATE alerts SET resolution_source = 'magic'",
        "UPDATE pages SET kind = 'nag'",
        "UPDATE pages SET state = 'lost'",
        "UPDATE pages SET road = 'pigeon'",
        "UPDATE schedule SET offered = 2",
        "INSERT INTO schedule_log (team_id, date, kind, text, at) SELECT team_id, date, 'stolen', 'x', 0 FROM schedule",
        "UPDATE timeline SET kind = 'exploded'",
        "INSERT INTO timeline (incident_id, at, kind, text) SELECT id, 0, 'exploded', 'x' FROM incidents",
        "INSERT INTO incident_notes (incident_id, author_id, text, resolution, created_at) \
         SELECT id, NULL, 'x', 5, 0 FROM incidents",
    ];
    for sql in refused {
        let e = sqlx::query(sql).execute(pool).await;
        let message = e.expect_err(sql).to_string();
        assert!(message.to_lowercase().contains("check"), "{sql}: {message}");
    }
    // Nothing changed: the incident reads as it was.
    let detail = app.detail(&world.admin, incident).await;
    assert_eq!(detail["state"], "triggered");
    assert_eq!(detail["severity"], "critical");
    assert_eq!(detail["pages"][0]["kind"], "opening");
    // The words the code writes are all accepted.
    for sql in [
        "UPDATE alerts SET resolution_source = 'expiry'",
        "UPDATE alerts SET resolution_source = NULL",
        "UPDATE incidents SET state = 'acknowledged'",
        "UPDATE pages SET state = 'cancelled'",
        "UPDATE integrations SET kind = 'grafana'",
    ] {
        sqlx::query(sql).execute(pool).await.expect(sql);
    }
    for kind in klaxon_domain::incident::TimelineKind::ALL {
        sqlx::query("INSERT INTO timeline (incident_id, at, kind, text) SELECT id, 0, $1, 'x' FROM incidents")
            .bind(kind.as_str())
            .execute(pool)
            .await
            .unwrap_or_else(|e| panic!("{}: {e}", kind.as_str()));
    }
    // Each word reads back as the kind it was written as.
    let detail = app.detail(&world.admin, incident).await;
    let kinds: Vec<&str> = detail["timeline"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["kind"].as_str().unwrap())
        .collect();
    for kind in klaxon_domain::incident::TimelineKind::ALL {
        assert!(kinds.contains(&kind.as_str()), "{kinds:?}");
    }
});
