//! `klaxon bench intake`: webhook intake over loopback HTTP against the database's own rate for
//! the same row writes, on throwaway databases, with a check that nothing was lost or doubled.

use super::{drop_schema, err, fresh_db};
use axum::body::Bytes;
use clap::Args;
use klaxon_core::{Config, Core, Db, SystemClock};
use serde_json::{json, Value};
use std::net::SocketAddr;
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
    let result = run(&args, dir.path(), &mut schemas).await;
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

fn median(rates: &mut [f64]) -> f64 {
    rates.sort_by(f64::total_cmp);
    rates[rates.len() / 2]
}

fn rate(alerts: usize, wall: Duration) -> f64 {
    alerts as f64 / wall.as_secs_f64()
}

/// Payload `p` as Alertmanager sends it: its own group (service `svc-p`), distinct fingerprints.
fn payload(p: usize, alerts: usize, starts_at: &str) -> Value {
    let service = format!("svc-{p}");
    let alerts: Vec<Value> = (0..alerts)
        .map(|i| {
            json!({
                "status": "firing",
                "labels": {"alertname": "HighErrorRate", "service": service, "severity": "critical",
                           "instance": format!("web-{i}:9100"), "job": "web"},
                "annotations": {"summary": "Error rate above 5%",
                                "runbook_url": "https://runbooks.example/high-error"},
                "startsAt": starts_at,
                "endsAt": "0001-01-01T00:00:00Z",
                "generatorURL": "http://prometheus:9090/graph?g0.expr=rate%28errors%5B5m%5D%29",
                "fingerprint": format!("{:016x}", p * alerts + i),
            })
        })
        .collect();
    json!({
        "version": "4",
        "groupKey": format!("{{}}:{{alertname=\"HighErrorRate\", service=\"{service}\"}}"),
        "status": "firing",
        "receiver": "klaxon",
        "groupLabels": {"alertname": "HighErrorRate", "service": service},
        "commonLabels": {"alertname": "HighErrorRate", "service": service, "severity": "critical", "job": "web"},
        "commonAnnotations": {"summary": "Error rate above 5%"},
        "externalURL": "http://alertmanager:9093",
        "truncatedAlerts": 0,
        "alerts": alerts,
    })
}

struct IntakeRun {
    wall: Duration,
    p50: Duration,
    p99: Duration,
    failures: usize,
    first_error: Option<String>,
}

/// Serves the real application on a loopback port and posts every payload to its webhook.
async fn measure_intake(
    args: &IntakeArgs,
    db: Db,
    payloads: &[Value],
) -> Result<IntakeRun, String> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .map_err(err)?;
    let base = format!("http://{}", listener.local_addr().map_err(err)?);
    let config = Config {
        public_url: base.clone(),
        ..Config::default()
    };
    // No background loops: only intake is measured.
    let core = Core::start(db, Arc::new(SystemClock), config)
        .await
        .map_err(err)?;
    let app = crate::app(core).into_make_service_with_connect_info::<SocketAddr>();
    let server = tokio::spawn(async move { axum::serve(listener, app).await });

    let client = reqwest::Client::new();
    let url = super::bench_team(&client, &base).await?.webhook;

    // Bodies are serialized before the clock starts: the sender's cost is not intake's.
    let bodies: Arc<Vec<Bytes>> = Arc::new(
        payloads
            .iter()
            .map(|p| Bytes::from(serde_json::to_vec(p).unwrap_or_default()))
            .collect(),
    );
    let expected = args.alerts_per_payload as u64;
    let started = Instant::now();
    let mut senders = JoinSet::new();
    for s in 0..args.senders {
        let (client, url, bodies, step) =
            (client.clone(), url.clone(), bodies.clone(), args.senders);
        senders.spawn(async move {
            let mut latencies = Vec::new();
            let mut errors = Vec::new();
            for body in bodies.iter().skip(s).step_by(step) {
                let t = Instant::now();
                let res = client
                    .post(&url)
                    .header("content-type", "application/json")
                    .body(body.clone())
                    .send()
                    .await;
                let outcome = match res {
                    Ok(r) => {
                        let status = r.status();
                        let text = r.text().await.unwrap_or_default();
                        let accepted = serde_json::from_str::<Value>(&text)
                            .ok()
                            .and_then(|v| v["accepted"].as_u64());
                        match (status.is_success(), accepted) {
                            (true, Some(n)) if n == expected => Ok(()),
                            _ => Err(format!("{status}: {text}")),
                        }
                    }
                    Err(e) => Err(e.to_string()),
                };
                latencies.push(t.elapsed());
                if let Err(e) = outcome {
                    errors.push(e);
                }
            }
            (latencies, errors)
        });
    }
    let mut latencies = Vec::with_capacity(payloads.len());
    let mut errors = Vec::new();
    while let Some(done) = senders.join_next().await {
        let (l, e) = done.map_err(err)?;
        latencies.extend(l);
        errors.extend(e);
    }
    let wall = started.elapsed();
    server.abort();
    latencies.sort();
    let at = |q: usize| latencies[(latencies.len() * q / 100).min(latencies.len() - 1)];
    Ok(IntakeRun {
        wall,
        p50: at(50),
        p99: at(99),
        failures: errors.len(),
        first_error: errors.into_iter().next(),
    })
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
