//! `klaxon bench replicas`: one, two and three `klaxon serve` processes on one PostgreSQL
//! database under 64 concurrent senders — committed alerts per second against one replica,
//! nothing lost or doubled, the time from a webhook's answer to its publish during the storm,
//! each replica's resident memory — and, with `--failover`, how long a survivor takes over from
//! a replica killed with SIGKILL.

use super::paging::{check_url, on_call_setup};
use super::sinks::{one_alert, title, Arrivals};
use super::{drop_schema, err, fresh_schema, send_webhook};
use axum::body::Bytes;
use clap::Args;
use std::process::Stdio;
use std::time::{Duration, Instant};
use tokio::process::{Child, Command};

#[derive(Args)]
pub struct ReplicaArgs {
    /// The `postgres://…` database the replicas share (a throwaway schema per run, dropped).
    #[arg(long, env = "KLAXON_DATABASE_URL", hide_env_values = true)]
    database_url: String,
    /// Replica counts, one run each; the first is the baseline of the ratios.
    #[arg(long, value_delimiter = ',', default_values_t = [1usize, 2, 3])]
    replicas: Vec<usize>,
    /// Concurrent senders, spread over the replicas.
    #[arg(long, default_value_t = 64)]
    senders: usize,
    /// Webhooks in all; each carries one alert of its own group, so each opens an incident and
    /// sends one page.
    #[arg(long, default_value_t = 4000)]
    payloads: usize,
    /// After the last run, kill a replica with SIGKILL while it publishes a page and time the
    /// survivor (about two minutes: a claim and a lease have to lapse).
    #[arg(long)]
    failover: bool,
}

/// One `klaxon serve` child.
struct Replica {
    base: String,
    child: Child,
}

impl Replica {
    async fn start(
        database_url: &str,
        ntfy: &str,
        dir: &std::path::Path,
    ) -> Result<Replica, String> {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map_err(err)?
            .port();
        let data = dir.join(format!("replica-{port}"));
        let child = Command::new(std::env::current_exe().map_err(err)?)
            .arg("serve")
            .env("KLAXON_ADDR", format!("127.0.0.1:{port}"))
            .env("KLAXON_DATA_DIR", &data)
            .env("KLAXON_DATABASE_URL", database_url)
            .env("KLAXON_NTFY_URL", ntfy)
            // Every page its own push: the figure is the engine's, not the bundling's.
            .env("KLAXON_PAGE_BUNDLE_AFTER", "0")
            .env("KLAXON_INTAKE_RATE", super::UNHELD.to_string())
            .env("KLAXON_LOG", "error")
            .stdout(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .map_err(err)?;
        let base = format!("http://127.0.0.1:{port}");
        super::wait_healthy(&base, Duration::from_secs(60)).await?;
        Ok(Replica { base, child })
    }

    fn pid(&self) -> u32 {
        self.child.id().unwrap_or_default()
    }

    /// Resident set now and at its peak, in MiB, from `/proc`.
    fn memory(&self) -> (f64, f64) {
        let status =
            std::fs::read_to_string(format!("/proc/{}/status", self.pid())).unwrap_or_default();
        let kb = |key: &str| {
            status
                .lines()
                .find_map(|l| l.strip_prefix(key))
                .and_then(|v| v.split_whitespace().next()?.parse::<f64>().ok())
                .unwrap_or(0.0)
        };
        (kb("VmRSS:") / 1024.0, kb("VmHWM:") / 1024.0)
    }

    async fn kill(&mut self) {
        let _ = self.child.start_kill();
        let _ = self.child.wait().await;
    }
}

/// What one run measured.
struct Run {
    replicas: usize,
    alerts_per_s: f64,
    lost: i64,
    duplicate_incidents: i64,
    published: usize,
    distinct_pages: usize,
    p50_ms: f64,
    p99_ms: f64,
    idle_mb: f64,
    peak_mb: f64,
}

pub async fn replicas(args: ReplicaArgs) -> Result<(), String> {
    check_url(Some(&args.database_url))?;
    if args.replicas.is_empty() || args.replicas.contains(&0) {
        return Err("--replicas must list counts of at least 1".into());
    }
    if args.senders == 0 || args.payloads == 0 {
        return Err("--senders and --payloads must be at least 1".into());
    }
    sqlx::any::install_default_drivers();
    println!(
        "postgresql: {} webhooks from {} senders spread over the replicas, one alert, incident and page each",
        args.payloads, args.senders
    );
    let mut runs = Vec::new();
    for (i, &n) in args.replicas.iter().enumerate() {
        let failover = args.failover && i + 1 == args.replicas.len();
        let mut schemas = Vec::new();
        let result = run(&args, n, failover, &mut schemas).await;
        for schema in schemas {
            if let Err(e) = drop_schema(&args.database_url, &schema).await {
                eprintln!("could not drop schema {schema}: {e}");
            }
        }
        runs.push(result?);
    }
    let base = runs[0].alerts_per_s;
    for r in &runs {
        println!(
            "{} replica(s): {:.0} alerts/s committed ({:.2}x {} replica(s)); lost {}, duplicate incidents {}; \
             {} pages published for {} incidents ({} distinct); webhook answered → publish p50 {:.1} ms, p99 {:.1} ms; \
             resident set per replica: idle {:.0} MB, peak {:.0} MB",
            r.replicas,
            r.alerts_per_s,
            r.alerts_per_s / base,
            runs[0].replicas,
            r.lost,
            r.duplicate_incidents,
            r.published,
            args.payloads,
            r.distinct_pages,
            r.p50_ms,
            r.p99_ms,
            r.idle_mb,
            r.peak_mb,
        );
    }
    let bad = runs.iter().any(|r| {
        r.lost != 0
            || r.duplicate_incidents != 0
            || r.published != args.payloads
            || r.distinct_pages != args.payloads
    });
    if bad {
        return Err("an alert was lost, or an incident or a page doubled".into());
    }
    Ok(())
}

async fn run(
    args: &ReplicaArgs,
    n: usize,
    failover: bool,
    schemas: &mut Vec<String>,
) -> Result<Run, String> {
    let url = fresh_schema(&args.database_url, "replicas", schemas).await?;
    let dir = tempfile::tempdir().map_err(err)?;
    let arrivals = Arrivals::default();
    let ntfy = arrivals.serve().await?;
    // One at a time: the first migrates the schema.
    let mut replicas = Vec::new();
    for _ in 0..n {
        replicas.push(Replica::start(&url, &ntfy, dir.path()).await?);
    }
    let webhook = on_call_setup(&replicas[0].base).await?.webhook;
    let path = webhook
        .strip_prefix(&replicas[0].base)
        .unwrap_or_default()
        .to_string();
    let webhooks: Vec<String> = replicas
        .iter()
        .map(|r| format!("{}{path}", r.base))
        .collect();
    let idle_mb = replicas.iter().map(|r| r.memory().0).fold(0.0, f64::max);

    // The storm: each sender posts its share, one webhook after another.
    let bodies: Vec<Bytes> = (0..args.payloads)
        .map(|i| Bytes::from(serde_json::to_vec(&one_alert(i)).unwrap_or_default()))
        .collect();
    let client = reqwest::Client::new();
    let started = Instant::now();
    let mut tasks = tokio::task::JoinSet::new();
    for s in 0..args.senders {
        let (client, webhooks) = (client.clone(), webhooks.clone());
        let mine: Vec<(usize, Bytes)> = (s..args.payloads)
            .step_by(args.senders)
            .map(|i| (i, bodies[i].clone()))
            .collect();
        tasks.spawn(async move {
            let mut sent = Vec::with_capacity(mine.len());
            for (i, body) in mine {
                send_webhook(&client, &webhooks[i % webhooks.len()], body).await?;
                // From the webhook's answer: the time it queued for intake is intake's own.
                sent.push((i, Instant::now()));
            }
            Ok::<_, String>(sent)
        });
    }
    let mut sent_at = vec![started; args.payloads];
    while let Some(done) = tasks.join_next().await {
        for (i, at) in done.map_err(err)?? {
            sent_at[i] = at;
        }
    }
    let intake = started.elapsed();
    arrivals
        .wait_for(args.payloads, Duration::from_secs(300))
        .await?;
    let peak_mb = replicas.iter().map(|r| r.memory().1).fold(0.0, f64::max);
    let mut latencies: Vec<f64> = (0..args.payloads)
        .filter_map(|i| {
            let at = arrivals.arrival(&title(i))?;
            Some(at.saturating_duration_since(sent_at[i]).as_secs_f64() * 1e3)
        })
        .collect();
    latencies.sort_by(f64::total_cmp);
    let at = |q: usize| latencies[(latencies.len() * q / 100).min(latencies.len() - 1)];

    let db = klaxon_core::Db::connect(Some(&url), dir.path())
        .await
        .map_err(err)?;
    let (stored, incidents, groups) = super::stored_counts(&db).await?;
    // A moment for duplicates to show, should a page be sent twice.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let result = Run {
        replicas: n,
        alerts_per_s: args.payloads as f64 / intake.as_secs_f64(),
        lost: args.payloads as i64 - stored,
        duplicate_incidents: incidents - groups,
        published: arrivals.total.load(std::sync::atomic::Ordering::SeqCst),
        distinct_pages: arrivals.count(),
        p50_ms: at(50),
        p99_ms: at(99),
        idle_mb,
        peak_mb,
    };
    if failover && n >= 2 {
        measure_failover(&db, &arrivals, &mut replicas, &webhooks).await?;
    }
    db.pool.close().await;
    for r in &mut replicas {
        r.kill().await;
    }
    Ok(result)
}

/// Replica 0 is killed while its publish of a page is held at ntfy; the survivor sends that
/// page once the claim lapses, pages new alerts at once, and takes the sweeper lease when it
/// expires.
async fn measure_failover(
    db: &klaxon_core::Db,
    arrivals: &Arrivals,
    replicas: &mut [Replica],
    webhooks: &[String],
) -> Result<(), String> {
    let client = reqwest::Client::new();
    let post = |url: String, i: usize| {
        let client = client.clone();
        async move {
            let body = serde_json::to_vec(&one_alert(i)).map_err(err)?;
            send_webhook(&client, &url, body.into()).await
        }
    };
    let (held, dead) = (1_000_000, 1_000_001);
    let (arrived, release) = arrivals.hold(&title(held));
    post(webhooks[0].clone(), held).await?;
    tokio::time::timeout(Duration::from_secs(30), arrived)
        .await
        .map_err(|_| "the held page never reached ntfy".to_string())?
        .map_err(err)?;
    let victim = format!("{}-", replicas[0].pid());
    let (holder,): (String,) = sqlx::query_as("SELECT holder FROM leases WHERE name = 'sweeper'")
        .fetch_one(&db.pool)
        .await
        .map_err(err)?;
    let victim_swept = holder.starts_with(&victim);
    replicas[0].kill().await;
    let killed = Instant::now();
    let _ = release.send(());
    post(webhooks[1].clone(), dead).await?;
    let deadline = Duration::from_secs(300);
    let (mut new_page, mut held_page, mut lease) = (None, None, None);
    while killed.elapsed() < deadline
        && (new_page.is_none() || held_page.is_none() || lease.is_none())
    {
        new_page = new_page.or(arrivals.arrival(&title(dead)).map(|t| t - killed));
        held_page = held_page.or(arrivals.arrival(&title(held)).map(|t| t - killed));
        if lease.is_none() && !victim_swept {
            lease = Some(Duration::ZERO);
        }
        if lease.is_none() {
            let (holder,): (String,) =
                sqlx::query_as("SELECT holder FROM leases WHERE name = 'sweeper'")
                    .fetch_one(&db.pool)
                    .await
                    .map_err(err)?;
            if !holder.is_empty() && !holder.starts_with(&victim) {
                lease = Some(killed.elapsed());
            }
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let secs = |d: Option<Duration>| {
        d.map(|d| format!("{:.1} s", d.as_secs_f64()))
            .unwrap_or_else(|| "never".into())
    };
    println!(
        "failover after SIGKILL of a replica publishing a page: a new alert at the survivor paged after {}; \
         the page the dead replica held sent by the survivor after {}; sweeper lease taken over after {}",
        d_ms(new_page),
        secs(held_page),
        secs(lease),
    );
    if held_page.is_none() || new_page.is_none() {
        return Err("a page was lost in the failover".into());
    }
    Ok(())
}

fn d_ms(d: Option<Duration>) -> String {
    d.map(|d| format!("{:.0} ms", d.as_secs_f64() * 1e3))
        .unwrap_or_else(|| "never".into())
}
