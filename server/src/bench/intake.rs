//! `klaxon bench intake`: webhook intake over loopback HTTP against the database's own rate for
//! the same row writes, on throwaway databases, with a check that nothing was lost or doubled.

use super::send::{median, payload, post_all, rate, serve, IntakeRun, Request};
use super::{drop_schema, err, fresh_db};
use axum::body::Bytes;
use clap::Args;
use klaxon_core::Db;
use serde_json::Value;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::task::JoinSet;

#[derive(Args)]
pub struct IntakeArgs {
    /// Concurrent senders (HTTP clients for intake, transactions for the raw database run).
    #[arg(long, default_value_t = 8)]
    senders: usize,
    /// Payloads in all, shared among the senders; each has its own group, so each opens an incident.
    #[arg(long, default_value_t = 2000)]
    payloads: usize,
    /// Alerts per payload, each with its own fingerprint.
    #[arg(long, default_value_t = 10)]
    alerts_per_payload: usize,
    /// A `postgres://…` URL: measure PostgreSQL in throwaway schemas (dropped at the end).
    /// Default: temporary SQLite files.
    #[arg(long)]
    database_url: Option<String>,
    /// Rounds, each intake then the raw database on fresh databases; the ratio is of the
    /// medians, as either side alone swings between rounds on a machine of two cores.
    #[arg(long, default_value_t = 3)]
    rounds: usize,
    /// `webhook`: Alertmanager's webhook against the database alone. `pagerduty` or `opsgenie`:
    /// events through that API against one-alert webhooks, events/s, on fresh databases each.
    /// `templated`: generic JSON read by a webhook integration's templates, likewise, with p99.
    #[arg(long, value_enum, default_value = "webhook")]
    pub(super) format: super::formats::Format,
}

pub async fn intake(args: IntakeArgs) -> Result<(), String> {
    if args.senders == 0 || args.payloads == 0 || args.alerts_per_payload == 0 {
        return Err("--senders, --payloads and --alerts-per-payload must be at least 1".into());
    }
    if let Some(url) = &args.database_url {
        if !(url.starts_with("postgres://") || url.starts_with("postgresql://")) {
            return Err("--database-url must be a postgres:// URL".into());
        }
    }
    sqlx::any::install_default_drivers();
    let dir = tempfile::tempdir().map_err(err)?;
    let mut schemas = Vec::new();
    let result = match args.format {
        super::formats::Format::Webhook => run(&args, dir.path(), &mut schemas).await,
        format => {
            let plan = super::formats::Plan {
                senders: args.senders,
                events: args.payloads,
                database_url: args.database_url.as_deref(),
                rounds: args.rounds,
            };
            super::formats::compare(&plan, format, dir.path(), &mut schemas).await
        }
    };
    if let Some(base) = &args.database_url {
        for schema in schemas {
            if let Err(e) = drop_schema(base, &schema).await {
                eprintln!("could not drop schema {schema}: {e}");
            }
        }
    }
    result
}

async fn run(args: &IntakeArgs, dir: &Path, schemas: &mut Vec<String>) -> Result<(), String> {
    let backend = if args.database_url.is_some() {
        "postgresql"
    } else {
        "sqlite"
    };
    let alerts = args.payloads * args.alerts_per_payload;
    let starts_at = time::OffsetDateTime::now_utc()
        .format(&time::format_description::well_known::Rfc3339)
        .map_err(err)?;
    let payloads: Vec<Value> = (0..args.payloads)
        .map(|p| payload(p, args.alerts_per_payload, &starts_at))
        .collect();
    println!(
        "{backend}: {} senders, {} payloads x {} alerts, {} rounds",
        args.senders,
        args.payloads,
        args.alerts_per_payload,
        args.rounds.max(1)
    );
    let (mut intake_rates, mut raw_rates) = (Vec::new(), Vec::new());
    for round in 1..=args.rounds.max(1) {
        let db = fresh_db(
            args.database_url.as_deref(),
            dir,
            &format!("intake{round}"),
            schemas,
        )
        .await?;
        let intake = measure_intake(args, db.clone(), &payloads).await?;
        let (stored, incidents, groups) = super::stored_counts(&db).await?;
        db.pool.close().await;
        let lost = alerts as i64 - stored;
        let duplicates = incidents - groups;
        let missing_incidents = args.payloads as i64 - groups;

        let db = fresh_db(
            args.database_url.as_deref(),
            dir,
            &format!("raw{round}"),
            schemas,
        )
        .await?;
        let raw = measure_raw(args, db.clone(), &payloads).await?;
        db.pool.close().await;

        let (intake_rate, raw_rate) = (rate(alerts, intake.wall), rate(alerts, raw));
        println!(
            "round {round}: intake {intake_rate:.0} alerts/s (p50 {} ms, p99 {} ms) · raw database \
             {raw_rate:.0} alerts/s · ratio {:.2} · failed requests {} · lost {lost} · \
             duplicate incidents {duplicates} · payloads without an incident {missing_incidents}",
            intake.p50.as_millis(),
            intake.p99.as_millis(),
            intake_rate / raw_rate,
            intake.failures,
        );
        if let Some(e) = intake.first_error {
            eprintln!("first failed request: {e}");
        }
        if lost != 0 || duplicates != 0 || missing_incidents != 0 || intake.failures != 0 {
            return Err("intake lost, doubled or refused work (see above)".into());
        }
        intake_rates.push(intake_rate);
        raw_rates.push(raw_rate);
    }
    let (intake, raw) = (median(&mut intake_rates), median(&mut raw_rates));
    println!(
        "median: intake {intake:.0} alerts/s · raw database {raw:.0} alerts/s · ratio {:.2}",
        intake / raw
    );
    Ok(())
}

/// Serves the real application on a loopback port and posts every payload to its webhook.
async fn measure_intake(
    args: &IntakeArgs,
    db: Db,
    payloads: &[Value],
) -> Result<IntakeRun, String> {
    let (base, server) = serve(db).await?;
    let client = reqwest::Client::new();
    let url = super::bench_team(&client, &base).await?.webhook;
    let requests: Vec<Request> = payloads
        .iter()
        .map(|p| Request {
            url: url.clone(),
            headers: Vec::new(),
            body: Bytes::from(serde_json::to_vec(p).unwrap_or_default()),
        })
        .collect();
    let expected = args.alerts_per_payload as u64;
    let run = post_all(&client, args.senders, requests, move |status, text| {
        let accepted = serde_json::from_str::<Value>(text)
            .ok()
            .and_then(|v| v["accepted"].as_u64());
        status.is_success() && accepted == Some(expected)
    })
    .await;
    server.abort();
    run
}

/// The rows intake writes for a payload that opens an incident (the integration's times, the
/// incident, its `opened` and `nobody_reachable` entries, the alerts, one `alert_firing` summary),
/// one statement per row,
/// one transaction per payload, with the same concurrency: the database's own ceiling.
async fn measure_raw(args: &IntakeArgs, db: Db, payloads: &[Value]) -> Result<Duration, String> {
    let now = time::OffsetDateTime::now_utc().unix_timestamp();
    let team = super::insert_bench_team(&db, now).await?;
    let (integration,): (i64,) = sqlx::query_as(
        "INSERT INTO integrations (team_id, name, kind, key_hash, created_at) \
         VALUES ($1, 'bench', 'alertmanager', 'bench', $2) RETURNING id",
    )
    .bind(team)
    .bind(now)
    .fetch_one(&db.pool)
    .await
    .map_err(err)?;
    let payloads = Arc::new(payloads.to_vec());
    let started = Instant::now();
    let mut workers = JoinSet::new();
    for s in 0..args.senders {
        let (db, payloads, step) = (db.clone(), payloads.clone(), args.senders);
        workers.spawn(async move {
            for p in payloads.iter().skip(s).step_by(step) {
                raw_payload(&db, team, integration, p).await?;
            }
            Ok::<_, String>(())
        });
    }
    while let Some(done) = workers.join_next().await {
        done.map_err(err)??;
    }
    Ok(started.elapsed())
}

async fn raw_payload(db: &Db, team: i64, integration: i64, p: &Value) -> Result<(), String> {
    let now = time::OffsetDateTime::now_utc().unix_timestamp();
    let alerts = p["alerts"].as_array().cloned().unwrap_or_default();
    let group_labels = serde_json::from_value(p["groupLabels"].clone()).map_err(err)?;
    let title = "HighErrorRate: Error rate above 5%";
    // The transaction intake writes in (`Db::begin_indexed`): the same plans, the same ceiling.
    let mut tx = db.begin_indexed().await.map_err(err)?;
    let (incident,): (i64,) = sqlx::query_as(
        "INSERT INTO incidents (team_id, title, state, severity, group_key, signature, created_at) \
         VALUES ($1, $2, 'triggered', 'critical', $3, $4, $5) RETURNING id",
    )
    .bind(team)
    .bind(title)
    .bind(p["groupKey"].as_str())
    .bind(klaxon_domain::alerting::signature("HighErrorRate", &group_labels))
    .bind(now)
    .fetch_one(&mut *tx)
    .await
    .map_err(err)?;
    timeline(&mut tx, incident, now, "opened", title).await?;
    // Intake also settles paging: the bench team has no rota, so nobody is paged.
    timeline(&mut tx, incident, now, "nobody_reachable", "nobody paged").await?;
    let mut fired = Vec::new();
    for a in &alerts {
        let fingerprint = a["fingerprint"].as_str().unwrap_or_default();
        sqlx::query(
            "INSERT INTO alerts (team_id, fingerprint, status, labels, annotations, starts_at, received_at, \
             integration_id, alertname, incident_id) VALUES ($1, $2, 'firing', $3, $4, $5, $6, $7, 'HighErrorRate', $8)",
        )
        .bind(team)
        .bind(fingerprint)
        .bind(a["labels"].to_string())
        .bind(a["annotations"].to_string())
        .bind(now)
        .bind(now)
        .bind(integration)
        .bind(incident)
        .execute(&mut *tx)
        .await
        .map_err(err)?;
        fired.push(format!(
            "HighErrorRate ({})",
            &fingerprint[..8.min(fingerprint.len())]
        ));
    }
    let text = format!("{} alerts firing: {}", fired.len(), fired.join(", "));
    timeline(&mut tx, incident, now, "alert_firing", &text).await?;
    // Stamped last, as intake does (when the second has moved on).
    klaxon_core::intake::stamp_integration(&mut tx, integration, true, now)
        .await
        .map_err(err)?;
    tx.commit().await.map_err(err)
}

async fn timeline(
    tx: &mut klaxon_core::db::Tx,
    incident: i64,
    at: i64,
    kind: &str,
    text: &str,
) -> Result<(), String> {
    sqlx::query("INSERT INTO timeline (incident_id, at, kind, text) VALUES ($1, $2, $3, $4)")
        .bind(incident)
        .bind(at)
        .bind(kind)
        .bind(text)
        .execute(&mut **tx)
        .await
        .map_err(err)?;
    Ok(())
}
