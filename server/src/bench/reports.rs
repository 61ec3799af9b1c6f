//! `klaxon bench reports`: a year of a busy team's record (100 000 incidents, 1 000 000 alerts,
//! 300 000 pages and their timelines, a schedule day for every date) written straight to a
//! throwaway database, then each report read through the real server on fresh connections, and
//! webhook intake measured alone and while a reader keeps asking for reports: the ratio says
//! whether reading the record slows taking alerts in.

use super::send::{payload, post_all, rate, serve, Request};
use super::{bench_team, drop_schema, err, fresh_schema};
use axum::body::Bytes;
use clap::Args;
use klaxon_core::Db;
use serde_json::Value;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

#[derive(Args)]
pub struct ReportArgs {
    /// Incidents over the year (each with ten alerts, three pages and its timeline).
    #[arg(long, default_value_t = 100_000)]
    incidents: i64,
    /// A `postgres://…` URL: measure PostgreSQL in a throwaway schema. Default: SQLite.
    #[arg(long)]
    database_url: Option<String>,
    /// A shell command run before each first read, to read cold: for example `sync; echo 3 >
    /// /proc/sys/vm/drop_caches` (Linux, as root) for the system's file cache, with a restart of
    /// the PostgreSQL server for its own buffers.
    #[arg(long)]
    empty_caches: Option<String>,
    /// Webhook payloads (ten alerts each) for each intake run.
    #[arg(long, default_value_t = 2000)]
    payloads: usize,
    /// Rounds of intake alone, beside a paced reader and beside a reader asking back to back,
    /// taken in turn.
    #[arg(long, default_value_t = 3)]
    rounds: usize,
}

const YEAR: i64 = 365 * 86_400;

pub async fn reports(args: ReportArgs) -> Result<(), String> {
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

async fn run(
    args: &ReportArgs,
    dir: &std::path::Path,
    schemas: &mut Vec<String>,
) -> Result<(), String> {
    let url = match &args.database_url {
        Some(base) => fresh_schema(base, "reports", schemas).await?,
        None => format!("sqlite://{}?mode=rwc", dir.join("reports.db").display()),
    };
    let db = Db::connect(Some(&url), dir).await.map_err(err)?;
    db.migrate().await.map_err(err)?;
    let (base, server) = serve(db.clone()).await?;
    let client = reqwest::Client::new();
    let team = bench_team(&client, &base).await?;
    let now = time::OffsetDateTime::now_utc().unix_timestamp();
    let started = Instant::now();
    seed(&db, team.team_id, now, args.incidents).await?;
    println!(
        "seeded {} incidents, {} alerts, {} pages in {:.1} s",
        args.incidents,
        args.incidents * 10,
        args.incidents * 3,
        started.elapsed().as_secs_f64()
    );
    server.abort();
    db.pool.close().await;

    // Fresh connections and a fresh server: nothing planned or cached in the process.
    let db = Db::connect(Some(&url), dir).await.map_err(err)?;
    let seeded_at = base;
    let (base, server) = serve(db.clone()).await?;
    let webhook = team.webhook.replacen(&seeded_at, &base, 1);
    let key = &team.api_key;
    let t = team.team_id;
    if let Some(command) = &args.empty_caches {
        println!("before each first read: {command}");
    }
    let mut last = Duration::ZERO;
    for (name, path) in [
        (
            "on-call health, 4 weeks",
            format!("/api/teams/{t}/reports/health"),
        ),
        (
            "alert noise, 4 weeks",
            format!("/api/teams/{t}/reports/noise"),
        ),
        (
            "on-call health, a year",
            format!("/api/teams/{t}/reports/health?{}", year_range(now)),
        ),
        (
            "alert noise, a year",
            format!("/api/teams/{t}/reports/noise?{}", year_range(now)),
        ),
    ] {
        // Each read is timed once the time the last one read is paid back
        // (`reports::SHARE`): the figure is the report's, not its wait for a turn.
        let rest = |read: Duration| read * klaxon_core::reports::SHARE + Duration::from_millis(20);
        tokio::time::sleep(rest(last)).await;
        if let Some(command) = &args.empty_caches {
            empty_caches(command)?;
        }
        let first = timed_get(&client, &format!("{base}{path}"), key).await?;
        tokio::time::sleep(rest(first)).await;
        let again = timed_get(&client, &format!("{base}{path}"), key).await?;
        last = again;
        println!(
            "{name}: first read {} ms, again {} ms",
            first.as_millis(),
            again.as_millis()
        );
    }
    let reports = [
        format!("{base}/api/teams/{t}/reports/health"),
        format!("{base}/api/teams/{t}/reports/noise"),
    ];
    // Intake alone, beside a team looking at its reports (one opened a second), and beside a
    // reader asking back to back take turns, so a slow spell of a shared machine falls on all.
    let (mut alone, mut paced, mut busy) = (Duration::ZERO, Reading::default(), Reading::default());
    let mut round = 0;
    for _ in 0..args.rounds.max(1) {
        alone += intake(&client, &webhook, args.payloads, round).await?;
        paced.add(while_reading(&client, &webhook, args, &reports, key, round + 1, true).await?);
        busy.add(while_reading(&client, &webhook, args, &reports, key, round + 2, false).await?);
        round += 3;
    }
    server.abort();
    let alerts = args.payloads * 10 * args.rounds.max(1);
    let a = rate(alerts, alone);
    println!(
        "intake alone {a:.0} alerts/s ({} rounds)",
        args.rounds.max(1)
    );
    for (what, reading) in [
        ("a report opened every second", paced),
        ("a reader asking back to back", busy),
    ] {
        let b = rate(alerts, reading.intake);
        println!(
            "intake while {what} ({} reads): {b:.0} alerts/s · ratio {:.2}",
            reading.reads,
            b / a
        );
    }
    Ok(())
}

/// Intake's time beside a reader and the reports read, summed over rounds.
#[derive(Default)]
struct Reading {
    intake: Duration,
    reads: usize,
}

impl Reading {
    fn add(&mut self, other: Reading) {
        self.intake += other.intake;
        self.reads += other.reads;
    }
}

/// Runs the `--empty-caches` command; its failure stops the run, since "cold" would be untrue.
fn empty_caches(command: &str) -> Result<(), String> {
    let status = std::process::Command::new("sh")
        .args(["-c", command])
        .status()
        .map_err(err)?;
    if !status.success() {
        return Err(format!("--empty-caches: `{command}` failed ({status})"));
    }
    Ok(())
}

/// Intake (round `round`) while reports are read, one a second (`paced`) or back to back.
async fn while_reading(
    client: &reqwest::Client,
    webhook: &str,
    args: &ReportArgs,
    reports: &[String; 2],
    key: &str,
    round: usize,
    paced: bool,
) -> Result<Reading, String> {
    let reading = Arc::new(AtomicBool::new(true));
    let reader = {
        let (client, reading) = (client.clone(), reading.clone());
        let (reports, key) = (reports.clone(), key.to_string());
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(Duration::from_secs(1));
            let mut reads = 0;
            while reading.load(Ordering::SeqCst) {
                for url in &reports {
                    if paced {
                        tick.tick().await;
                    }
                    if timed_get(&client, url, &key).await.is_ok() {
                        reads += 1;
                    }
                }
            }
            reads
        })
    };
    let intake = intake(client, webhook, args.payloads, round).await?;
    reading.store(false, Ordering::SeqCst);
    let reads = reader.await.map_err(err)?;
    Ok(Reading { intake, reads })
}

fn year_range(now: i64) -> String {
    let at = |t: i64| klaxon_domain::Timestamp(t).to_rfc3339();
    format!("from={}&to={}", at(now - YEAR + 86_400), at(now + 1))
}

async fn timed_get(client: &reqwest::Client, url: &str, key: &str) -> Result<Duration, String> {
    let started = Instant::now();
    let r = client.get(url).bearer_auth(key).send().await.map_err(err)?;
    let status = r.status();
    let body = r.text().await.map_err(err)?;
    if !status.is_success() {
        return Err(format!("GET {url}: {status}: {body}"));
    }
    Ok(started.elapsed())
}

/// Posts `payloads` new groups (of ten alerts) from eight senders; `round` keeps groups apart.
async fn intake(
    client: &reqwest::Client,
    url: &str,
    payloads: usize,
    round: usize,
) -> Result<Duration, String> {
    let starts_at = time::OffsetDateTime::now_utc()
        .format(&time::format_description::well_known::Rfc3339)
        .map_err(err)?;
    let requests: Vec<Request> = (0..payloads)
        .map(|p| {
            let body: Value = payload(round * payloads + p + 1_000_000, 10, &starts_at);
            Request {
                url: url.to_string(),
                headers: Vec::new(),
                body: Bytes::from(serde_json::to_vec(&body).unwrap_or_default()),
            }
        })
        .collect();
    let run = post_all(client, 8, requests, |status, _| status.is_success()).await?;
    if run.failures > 0 {
        return Err(format!("{} intake requests failed", run.failures));
    }
    Ok(run.wall)
}

/// A year of the team's record, written by a few statements that count rows up (a recursive
/// sequence both databases run): incidents every ~5 minutes, each acknowledged by one of five
/// people within ten minutes and resolved within an hour, one in ten escalated, with ten alerts
/// (one name of 200), three pages on three roads and its timeline; a holder for every date.
async fn seed(db: &Db, team: i64, now: i64, incidents: i64) -> Result<(), String> {
    let mut people = Vec::new();
    for k in 0..5 {
        let (id,): (i64,) = sqlx::query_as(
            "INSERT INTO users (username, is_admin, created_at) VALUES ($1, 0, $2) RETURNING id",
        )
        .bind(format!("oncall{k}"))
        .bind(now)
        .fetch_one(&db.pool)
        .await
        .map_err(err)?;
        sqlx::query(
            "INSERT INTO team_members (team_id, user_id, role, created_at) VALUES ($1, $2, 'member', $3)",
        )
        .bind(team)
        .bind(id)
        .bind(now)
            .execute(&db.pool)
            .await
            .map_err(err)?;
        people.push(id);
    }
    let (first, step) = (now - YEAR, YEAR / incidents.max(1));
    let seq = |n: i64| {
        format!(
            "WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < {}) ",
            n - 1
        )
    };
    let person = |col: &str| format!("{} + ({col} % 5)", people[0]);
    let statements = [
        format!(
            "{}INSERT INTO incidents (team_id, title, state, severity, group_key, signature, acknowledged_by, \
             acknowledged_at, resolved_at, created_at) SELECT {team}, 'Alert' || (i % 200), 'resolved', 'critical', \
             'g' || i, 'Alert' || (i % 200) || '{{}}', {}, {first} + i * {step} + 60 + (i % 540), \
             {first} + i * {step} + 600 + (i % 3000), {first} + i * {step} FROM n",
            seq(incidents),
            person("i")
        ),
        format!(
            "{}INSERT INTO alerts (team_id, fingerprint, status, labels, annotations, starts_at, ends_at, \
             received_at, alertname, incident_id) SELECT {team}, 'f' || i, 'resolved', '{{}}', '{{}}', s.created_at, \
             s.resolved_at, s.created_at, s.title, s.id FROM n JOIN incidents s ON s.id = (SELECT MIN(id) FROM incidents) + i / 10",
            seq(incidents * 10)
        ),
        format!(
            "{}INSERT INTO pages (incident_id, team_id, kind, topic, user_id, state, due_at, created_at, sent_at, road) \
             SELECT s.id, {team}, CASE i % 3 WHEN 0 THEN 'opening' WHEN 1 THEN 'reminder' ELSE 'escalation' END, \
             'bench-topic', {}, 'sent', s.created_at, s.created_at + (i % 3) * 300, s.created_at + (i % 3) * 300 + 1, \
             CASE i % 3 WHEN 0 THEN 'ntfy' WHEN 1 THEN 'webpush' ELSE 'email' END \
             FROM n JOIN incidents s ON s.id = (SELECT MIN(id) FROM incidents) + i / 3",
            seq(incidents * 3),
            person("(i / 3)")
        ),
        "INSERT INTO timeline (incident_id, at, kind, actor_id, text) SELECT id, created_at, 'opened', NULL, title FROM incidents".to_string(),
        "INSERT INTO timeline (incident_id, at, kind, actor_id, text) SELECT id, acknowledged_at, 'acknowledged', acknowledged_by, '' FROM incidents".to_string(),
        "INSERT INTO timeline (incident_id, at, kind, actor_id, text) SELECT id, resolved_at, 'resolved', acknowledged_by, '' FROM incidents".to_string(),
        "INSERT INTO timeline (incident_id, at, kind, actor_id, text) SELECT id, created_at + 300, 'escalated', NULL, 'level 2' FROM incidents WHERE id % 10 = 0".to_string(),
    ];
    for sql in statements {
        sqlx::query(&sql)
            .execute(&db.pool)
            .await
            .map_err(|e| format!("{e}: {sql}"))?;
    }
    let day = klaxon_domain::oncall_day::HandOff::default();
    let mut date = day.day_of(first);
    let last = day.day_of(now);
    let mut k = 0;
    while date <= last {
        sqlx::query("INSERT INTO schedule (team_id, date, user_id) VALUES ($1, $2, $3)")
            .bind(team)
            .bind(date.to_string())
            .bind(people[k % 5])
            .execute(&db.pool)
            .await
            .map_err(err)?;
        k += 1;
        date = date.tomorrow().map_err(err)?;
    }
    // What a database that grew to this over a year would know of its tables, and on
    // PostgreSQL what its autovacuum would have recorded of which pages are all visible (without
    // it, every index read visits the table too).
    let analyze = match db.backend {
        klaxon_core::Backend::Postgres => "VACUUM ANALYZE",
        klaxon_core::Backend::Sqlite => "ANALYZE",
    };
    sqlx::query(analyze).execute(&db.pool).await.map_err(err)?;
    Ok(())
}
