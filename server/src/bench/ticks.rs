//! `klaxon bench ticks`: the cost of one notifier pass and one sweep with many open, idle
//! incidents and a fixed amount of due work, at two sizes.

use super::err;
use super::paging::{backend, check_url, with_db};
use super::sinks::Arrivals;
use clap::Args;
use klaxon_core::{Config, Core, Db, SystemClock};
use std::sync::Arc;
use std::time::{Duration, Instant};

#[derive(Args)]
pub struct TickArgs {
    /// Open, idle incidents, one run per size.
    #[arg(long, value_delimiter = ',', default_values_t = [10_000usize, 100_000])]
    sizes: Vec<usize>,
    /// Incidents with due work: a reminder for the notifier, an expired alert for the sweeper.
    #[arg(long, default_value_t = 1000)]
    due: usize,
    /// A `postgres://…` URL: measure PostgreSQL in throwaway schemas. Default: SQLite files.
    #[arg(long)]
    database_url: Option<String>,
}

pub async fn ticks(args: TickArgs) -> Result<(), String> {
    check_url(args.database_url.as_deref())?;
    if args.sizes.is_empty() || args.sizes.iter().any(|s| *s < args.due) {
        return Err("every --sizes value must be at least --due".into());
    }
    let url = args.database_url.as_deref();
    println!(
        "{}: one pass each, {} incidents with due work (a reminder; an expired alert)",
        backend(url),
        args.due
    );
    let mut rows = Vec::new();
    for &size in &args.sizes {
        let dir = tempfile::tempdir().map_err(err)?;
        let due = args.due;
        let row = with_db(url, dir.path(), "ticks", |db| async move {
            measure_ticks(db, size, due).await
        })
        .await?;
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        println!(
            "{size:>7} open incidents: notifier with {due} due: queueing {:.1} ms ({} reminders), delivering {:.1} ms \
             ({:.1} ms reading and recording, {:.1} ms waiting on ntfy for {} pages), {:.1} ms idle · \
             sweeper {:.1} ms with {due} due ({} resolved), {:.1} ms idle",
            ms(row.schedule_due),
            row.reminded,
            ms(row.deliver_due),
            ms(row.deliver_due.saturating_sub(row.publishing)),
            ms(row.publishing),
            row.sent,
            ms(row.notify_idle),
            ms(row.sweep_due),
            row.resolved,
            ms(row.sweep_idle),
        );
        rows.push((size, row));
    }
    if let [(small, a), .., (large, b)] = rows.as_slice() {
        let r = |x: Duration, y: Duration| y.as_secs_f64() / x.as_secs_f64().max(1e-9);
        let own = |t: &TickRow| t.deliver_due.saturating_sub(t.publishing);
        println!(
            "{large} vs {small} open incidents ({:.0}x): notifier queueing {:.2}x, delivering without ntfy {:.2}x, \
             idle {:.2}x · sweeper with due work {:.2}x, idle {:.2}x",
            *large as f64 / *small as f64,
            r(a.schedule_due, b.schedule_due),
            r(own(a), own(b)),
            r(a.notify_idle, b.notify_idle),
            r(a.sweep_due, b.sweep_due),
            r(a.sweep_idle, b.sweep_idle),
        );
    }
    Ok(())
}

struct TickRow {
    /// Finding the due incidents and queueing their pages.
    schedule_due: Duration,
    /// Reading what the queued pages say, publishing them to ntfy and recording them.
    deliver_due: Duration,
    /// The part of `deliver_due` spent waiting on ntfy.
    publishing: Duration,
    notify_idle: Duration,
    sweep_due: Duration,
    sweep_idle: Duration,
    reminded: u64,
    sent: u64,
    resolved: u64,
}

async fn measure_ticks(db: Db, size: usize, due: usize) -> Result<TickRow, String> {
    let now = time::OffsetDateTime::now_utc().unix_timestamp();
    seed(&db, size, due, now).await?;
    let arrivals = Arrivals::default();
    // Every page its own push, as in `run_paging`.
    let config = Config {
        roads: klaxon_core::roads::RoadSettings {
            ntfy_url: Some(arrivals.serve().await?),
            ..Default::default()
        },
        page_bundle_after: 0,
        intake_per_minute: super::UNHELD,
        ..Config::default()
    };
    let core = Core::start(db, Arc::new(SystemClock), config)
        .await
        .map_err(err)?;
    let t = Instant::now();
    let mut report = core.schedule_due().await.map_err(err)?;
    let schedule_due = t.elapsed();
    let t = Instant::now();
    let (delivered, publishing) = core.deliver_pending_timed("bench").await.map_err(err)?;
    let deliver_due = t.elapsed();
    report.sent = delivered.sent;
    let t = Instant::now();
    core.notify_tick("bench").await.map_err(err)?;
    let notify_idle = t.elapsed();
    let t = Instant::now();
    let sweep = core.sweep().await.map_err(err)?;
    let sweep_due = t.elapsed();
    let t = Instant::now();
    core.sweep().await.map_err(err)?;
    let sweep_idle = t.elapsed();
    if report.reminded != due as u64 || report.sent != due as u64 {
        return Err(format!("expected {due} reminders sent, got {report:?}"));
    }
    if sweep.incidents_resolved != due as u64 {
        return Err(format!("expected {due} incidents resolved, got {sweep:?}"));
    }
    Ok(TickRow {
        schedule_due,
        deliver_due,
        publishing,
        notify_idle,
        sweep_due,
        sweep_idle,
        reminded: report.reminded,
        sent: report.sent,
        resolved: sweep.incidents_resolved,
    })
}

/// `size` open, triggered incidents of one team, each with one firing alert, paged and not yet
/// due a reminder, except the first `due`: their reminder is due and their alert is stale.
async fn seed(db: &Db, size: usize, due: usize, now: i64) -> Result<(), String> {
    let team = super::insert_bench_team(db, now).await?;
    let (user,): (i64,) = sqlx::query_as(
        "INSERT INTO users (username, push_topic, created_at) VALUES ('bench', 'bench-pager', $1) RETURNING id",
    )
    .bind(now)
    .fetch_one(&db.pool)
    .await
    .map_err(err)?;
    let long_ago = now - 7 * 3600;
    sqlx::query(
        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < $1) \
         INSERT INTO incidents (team_id, title, state, severity, group_key, signature, assignee_id, created_at, \
         page_topic, page_user_id, opening_sent, reminded_at) \
         SELECT $2, 'Bench: idle', 'triggered', 'warning', 'g' || i, 'Bench', $3, $4, 'bench-pager', $3, 1, \
         CASE WHEN i <= $5 THEN $6 ELSE $4 END FROM n",
    )
    .bind(size as i64)
    .bind(team)
    .bind(user)
    .bind(now)
    .bind(due as i64)
    .bind(long_ago)
    .execute(&db.pool)
    .await
    .map_err(err)?;
    sqlx::query(
        "INSERT INTO alerts (team_id, fingerprint, status, labels, annotations, starts_at, received_at, alertname, incident_id) \
         SELECT team_id, 'f' || id, 'firing', '{}', '{}', created_at, reminded_at, 'Bench', id FROM incidents",
    )
    .execute(&db.pool)
    .await
    .map_err(err)?;
    if db.backend == klaxon_core::Backend::Postgres {
        sqlx::query("ANALYZE")
            .execute(&db.pool)
            .await
            .map_err(err)?;
    }
    Ok(())
}
