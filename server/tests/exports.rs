//! A team's record over a range (`GET /api/teams/{id}/export/…`): incidents, pages and alerts as
//! JSON and as CSV (read back by Python's `csv`, an independent reader), a page at a time; only
//! for the team's members; ranges over a year refused; and the time to acknowledge counted per
//! team in `/metrics`.

use crate::common;
use common::*;
use serde_json::{json, Value};

/// Rows of a CSV answer, as Python's `csv.DictReader` reads them.
fn read_csv(text: &str) -> Vec<Value> {
    use std::io::Write;
    let mut child = std::process::Command::new("python3")
        .args([
            "-c",
            "import csv, json, sys; print(json.dumps(list(csv.DictReader(sys.stdin))))",
        ])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("python3");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    serde_json::from_slice::<Value>(&out.stdout)
        .unwrap()
        .as_array()
        .unwrap()
        .clone()
}

fn time(t: i64) -> String {
    klaxon_domain::Timestamp(t).to_rfc3339()
}

both!(
    a_teams_record_exports_as_json_and_csv_a_page_at_a_time,
    |app| {
        let w = app.paging_world().await;
        let first = app.fire(&w.key, "checkout").await;
        app.clock.advance(90);
        app.post(
            &format!("/api/incidents/{first}/acknowledge"),
            &w.alice.1,
            json!({}),
        )
        .await
        .expect(200);
        app.clock.advance(60);
        // An integration whose name a spreadsheet would run as a formula.
        let formula = app
            .post(
                &format!("/api/teams/{}/integrations", w.team),
                &w.admin,
                json!({"name": "=HYPERLINK(\"http://x\")", "kind": "alertmanager"}),
            )
            .await
            .expect(201);
        let second = app.fire(formula["key"].as_str().unwrap(), "formula").await;
        app.fire(&w.key, "disk").await;
        app.tick().await;
        let base = format!("/api/teams/{}/export", w.team);

        // JSON, two at a time: the first page names the next.
        let page = app
            .get(&format!("{base}/incidents?limit=2"), &w.alice.1)
            .await
            .expect(200);
        let rows = page["rows"].as_array().unwrap();
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0]["id"], first);
        assert_eq!(rows[0]["acknowledged_by"], "alice");
        assert_eq!(rows[0]["seconds_to_acknowledge"], 90);
        assert_eq!(rows[0]["alerts"], 1);
        assert_eq!(rows[1]["id"], second);
        assert!(rows[1]["acknowledged_at"].is_null());
        let next = page["next_after"].as_i64().unwrap();
        let rest = app
            .get(
                &format!("{base}/incidents?limit=2&after={next}"),
                &w.alice.1,
            )
            .await
            .expect(200);
        assert_eq!(rest["rows"].as_array().unwrap().len(), 1);
        assert!(rest["next_after"].is_null());

        // CSV: a header row and every field.
        let csv = app
            .get(&format!("{base}/incidents?format=csv"), &w.alice.1)
            .await;
        assert_eq!(csv.status, 200);
        assert_eq!(
            csv.headers["content-type"].to_str().unwrap(),
            "text/csv; charset=utf-8"
        );
        assert!(csv.headers.get("klaxon-next-after").is_none());
        let rows = read_csv(&csv.text);
        assert_eq!(rows.len(), 3);
        assert_eq!(rows[0]["seconds_to_acknowledge"], "90");
        assert_eq!(rows[0]["opened_at"], time(T0));
        let paged = app
            .get(&format!("{base}/incidents?format=csv&limit=1"), &w.alice.1)
            .await;
        assert_eq!(
            paged.headers["klaxon-next-after"].to_str().unwrap(),
            first.to_string()
        );

        // Pages and alerts.
        let pages = app
            .get(&format!("{base}/pages"), &w.alice.1)
            .await
            .expect(200);
        let pages = pages["rows"].as_array().unwrap();
        assert!(!pages.is_empty());
        assert!(pages.iter().all(|p| p["incident_id"].is_i64()));
        assert!(pages.iter().any(|p| p["person"] == "alice"), "{pages:?}");
        let alerts = app
            .get(&format!("{base}/alerts?format=csv"), &w.alice.1)
            .await;
        let alerts = read_csv(&alerts.text);
        assert_eq!(alerts.len(), 3);
        assert_eq!(alerts[0]["alertname"], "HighErrorRate");
        assert_eq!(alerts[0]["status"], "firing");
        // A name a spreadsheet would run as a formula is shown as text.
        assert_eq!(alerts[1]["integration"], "'=HYPERLINK(\"http://x\")");

        // A range: only what was opened in it.
        let later = app
            .get(
                &format!("{base}/incidents?from={}", time(T0 + 120)),
                &w.alice.1,
            )
            .await
            .expect(200);
        assert_eq!(later["rows"].as_array().unwrap().len(), 2);
    }
);

both!(exports_refuse_strangers_long_ranges_and_bad_input, |app| {
    let w = app.paging_world().await;
    let base = format!("/api/teams/{}/export", w.team);
    let (_, dave) = app.user(&w.admin, "dave").await;
    for kind in ["incidents", "pages", "alerts"] {
        app.get(&format!("{base}/{kind}"), &dave)
            .await
            .expect_error(404, "not_found");
    }
    let too_long = format!(
        "{base}/incidents?from={}&to={}",
        time(T0 - 367 * 86_400),
        time(T0)
    );
    let said = app
        .get(&too_long, &w.alice.1)
        .await
        .expect_error(400, "invalid");
    assert!(said.contains("366 days"), "{said}");
    let backwards = format!("{base}/incidents?from={}&to={}", time(T0), time(T0 - 1));
    app.get(&backwards, &w.alice.1)
        .await
        .expect_error(400, "invalid");
    for bad in [
        "limit=0",
        "limit=1001",
        "after=-1",
        "from=yesterday",
        "format=xml",
    ] {
        app.get(&format!("{base}/pages?{bad}"), &w.alice.1)
            .await
            .expect_error(400, "invalid");
    }
    app.get("/api/teams/999999/export/alerts", &w.admin)
        .await
        .expect_error(404, "not_found");
});

both!(the_time_to_acknowledge_is_counted_per_team, |app| {
    let w = app.paging_world().await;
    let id = app.fire(&w.key, "checkout").await;
    app.clock.advance(100);
    app.post(
        &format!("/api/incidents/{id}/acknowledge"),
        &w.alice.1,
        json!({}),
    )
    .await
    .expect(200);
    let metrics = app
        .raw(reqwest::Method::GET, "/metrics", &[], Vec::new())
        .await
        .text;
    let line = |bucket: &str| {
        format!("klaxon_time_to_acknowledge_seconds_bucket{{le=\"{bucket}\",team=\"payments\"}} ")
    };
    let count = |bucket: &str| -> String {
        let l = line(bucket);
        metrics
            .lines()
            .find(|m| m.starts_with(&l))
            .unwrap_or_else(|| panic!("no {l} in {metrics}"))[l.len()..]
            .to_string()
    };
    assert_eq!(count("60.0"), "0");
    assert_eq!(count("120.0"), "1");
});
