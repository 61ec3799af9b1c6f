//! `klaxon bench chaos`: three `klaxon serve` replicas on one PostgreSQL of the run's own, a
//! stand-in ntfy that throttles, fails and slows down in bursts, steady webhooks from several
//! senders (new alerts, Alertmanager's re-sends, resolutions), a responder tapping Acknowledge
//! on what reaches the phone, and a driver that SIGKILLs, SIGTERMs, SIGSTOPs and restarts
//! replicas and restarts PostgreSQL once. Everything random comes from one seed.
//!
//! At the end it checks, from the database and the pushes ntfy accepted: every webhook answered
//! 200 is stored; no incident is doubled; every incident owed a page got exactly one opening push,
//! alone or in a summary; no push asked for an owner after its incident's acknowledgement was
//! answered. It prints the delay from webhook answered to opening push, and each page that
//! waited over 15 s with the faults around it.
//!
//! A second copy of a push is possible in one case only: the push service has the message but
//! the replica that sent it died or froze before it could record that (see `outbox`).
//! Such a copy is reported, and counted against the run only when no replica was killed or
//! frozen, and PostgreSQL not restarted, around the first copy.

use super::cluster::Cluster;
use super::err;
use super::flaky_ntfy::{FlakyNtfy, Mode, Push};
use clap::Args;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde_json::{json, Value};
use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::process::{Child, Command};

#[derive(Args)]
pub struct ChaosArgs {
    /// How long webhooks flow and faults happen, in seconds.
    #[arg(long, default_value_t = 600, value_parser = clap::value_parser!(u64).range(20..=86_400))]
    seconds: u64,
    /// Seeds the webhooks, the taps and the faults: one seed, one plan.
    #[arg(long, default_value_t = 42)]
    seed: u64,
    /// Concurrent webhook senders, each spread over the replicas.
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u64).range(1..=64))]
    senders: u64,
    /// Teams, each with its own on-call person and topic.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u64).range(1..=20))]
    teams: u64,
}

/// A page later than this is listed with the faults around it; one that went in a summary, later
/// than this past the minute bundling may hold it (`domain::paging::BUNDLE_WINDOW`).
const LATE: Duration = Duration::from_secs(15);
const REPLICAS: usize = 3;

/// One fault: what, and from when to when (seconds into the run).
#[derive(Clone, Debug)]
struct Fault {
    what: String,
    from: f64,
    to: f64,
    /// A fault that can leave a push sent but not recorded (a replica killed or frozen, the
    /// database restarted).
    cuts_a_publish: bool,
}

/// What the run knows of one alert group it sent.
#[derive(Clone, Debug, Default)]
struct Group {
    team: usize,
    fingerprint: String,
    starts_at: String,
    severity: &'static str,
    /// When its first firing webhook was answered 200.
    opened: Option<Instant>,
    /// Its resolution was answered 200.
    resolved: bool,
    /// No more webhooks for it: its resolution is on its way or done.
    closing: bool,
}

/// State shared by the run's tasks.
struct Run {
    started: Instant,
    stop: AtomicBool,
    groups: Mutex<Vec<Group>>,
    faults: Mutex<Vec<Fault>>,
    /// Incident id → when the first tap that acknowledged it was answered.
    acked: Mutex<HashMap<i64, Instant>>,
    bases: Vec<String>,
    webhooks: Vec<String>,
    answered: std::sync::atomic::AtomicUsize,
    unanswered: std::sync::atomic::AtomicUsize,
}

impl Run {
    fn at(&self, t: Instant) -> f64 {
        t.saturating_duration_since(self.started).as_secs_f64()
    }

    fn fault(&self, what: String, from: Instant, to: Instant, cuts_a_publish: bool) {
        println!("  {:>6.1} s  {what}", self.at(from));
        self.faults.lock().unwrap().push(Fault {
            what,
            from: self.at(from),
            to: self.at(to),
            cuts_a_publish,
        });
    }
}

/// One replica: a fixed port, so it comes back where the senders look for it.
struct Node {
    index: usize,
    port: u16,
    data: PathBuf,
    log: PathBuf,
    child: Option<Child>,
}

impl Node {
    fn base(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    async fn start(&mut self, database_url: &str, ntfy: &str) -> Result<(), String> {
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.log)
            .map_err(err)?;
        let started = Instant::now();
        loop {
            let child = Command::new(std::env::current_exe().map_err(err)?)
                .arg("serve")
                .env("KLAXON_ADDR", format!("127.0.0.1:{}", self.port))
                .env("KLAXON_DATA_DIR", &self.data)
                .env("KLAXON_DATABASE_URL", database_url)
                .env("KLAXON_NTFY_URL", ntfy)
                .env("KLAXON_LOG", "warn")
                .env("KLAXON_INTAKE_RATE", super::UNHELD.to_string())
                .stdout(Stdio::null())
                .stderr(log.try_clone().map_err(err)?)
                .kill_on_drop(true)
                .spawn()
                .map_err(err)?;
            self.child = Some(child);
            if super::wait_healthy(&self.base(), Duration::from_secs(20))
                .await
                .is_ok()
            {
                return Ok(());
            }
            // The database may be restarting, or the port not yet free: try again.
            self.signal(libc::SIGKILL).await;
            if started.elapsed() > Duration::from_secs(120) {
                return Err(format!(
                    "replica {} never became healthy (log: {})",
                    self.index,
                    self.log.display()
                ));
            }
        }
    }

    fn pid(&self) -> Option<i32> {
        self.child.as_ref()?.id().map(|p| p as i32)
    }

    /// Sends `sig`; after SIGKILL, waits for the process to be gone.
    async fn signal(&mut self, sig: i32) {
        if let Some(pid) = self.pid() {
            // SAFETY: kill(2) with our own child's pid and a valid signal number.
            unsafe { libc::kill(pid, sig) };
        }
        if sig == libc::SIGKILL {
            if let Some(mut child) = self.child.take() {
                let _ = child.wait().await;
            }
        }
    }

    /// SIGTERM, then the process's own time to finish (SIGKILL after 30 s).
    async fn terminate(&mut self) {
        self.signal(libc::SIGTERM).await;
        if let Some(mut child) = self.child.take() {
            if tokio::time::timeout(Duration::from_secs(30), child.wait())
                .await
                .is_err()
            {
                let _ = child.start_kill();
                let _ = child.wait().await;
            }
        }
    }
}

pub async fn chaos(args: ChaosArgs) -> Result<(), String> {
    sqlx::any::install_default_drivers();
    let dir = tempfile::tempdir().map_err(err)?;
    let cluster = tokio::task::spawn_blocking(Cluster::start)
        .await
        .map_err(err)?;
    let cluster = Arc::new(cluster);
    let db_url = cluster.url();
    let ntfy = FlakyNtfy::new();
    let ntfy_url = ntfy.serve().await?;
    let mut nodes = Vec::new();
    for index in 0..REPLICAS {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map_err(err)?
            .port();
        let mut node = Node {
            index,
            port,
            data: dir.path().join(format!("replica-{index}")),
            log: dir.path().join(format!("replica-{index}.log")),
            child: None,
        };
        // One at a time: the first migrates the database.
        node.start(&db_url, &ntfy_url).await?;
        nodes.push(node);
    }
    let bases: Vec<String> = nodes.iter().map(Node::base).collect();
    let webhooks = setup(&bases[0], args.teams as usize).await?;
    println!(
        "chaos: {} replicas on one PostgreSQL, {} senders, {} teams, {} s, seed {}",
        REPLICAS, args.senders, args.teams, args.seconds, args.seed
    );
    let run = Arc::new(Run {
        started: Instant::now(),
        stop: AtomicBool::new(false),
        groups: Mutex::default(),
        faults: Mutex::default(),
        acked: Mutex::default(),
        bases,
        webhooks,
        answered: Default::default(),
        unanswered: Default::default(),
    });

    let mut tasks = tokio::task::JoinSet::new();
    for s in 0..args.senders {
        let run = run.clone();
        let rng = StdRng::seed_from_u64(args.seed.wrapping_add(1000 + s));
        tasks.spawn(async move { sender(&run, rng).await });
    }
    {
        let (r, n) = (run.clone(), ntfy.clone());
        let rng = StdRng::seed_from_u64(args.seed.wrapping_add(1));
        tasks.spawn(async move { responder(&r, &n, rng).await });
        let (r, n) = (run.clone(), ntfy.clone());
        let rng = StdRng::seed_from_u64(args.seed.wrapping_add(2));
        tasks.spawn(async move { push_service_bursts(&r, &n, rng).await });
    }
    let duration = Duration::from_secs(args.seconds);
    let driver = faults(
        &run,
        &mut nodes,
        &cluster,
        &db_url,
        &ntfy_url,
        StdRng::seed_from_u64(args.seed),
        duration,
    )
    .await;
    run.stop.store(true, Ordering::SeqCst);
    while let Some(done) = tasks.join_next().await {
        done.map_err(err)??;
    }
    driver?;
    ntfy.set(Mode::Normal);

    // Settle: every replica up, the push service well, the opening pages all sent.
    let pool = sqlx::AnyPool::connect(&db_url).await.map_err(err)?;
    let settle = Instant::now();
    loop {
        let (pending,): (i64,) = sqlx::query_as(
            "SELECT COUNT(*) FROM pages WHERE kind = 'opening' AND state = 'pending'",
        )
        .fetch_one(&pool)
        .await
        .map_err(err)?;
        if pending == 0 {
            break;
        }
        if settle.elapsed() > Duration::from_secs(300) {
            return Err(format!(
                "{pending} opening pages still pending 300 s after the faults stopped"
            ));
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    // Time for a second copy to show, should one be on its way.
    tokio::time::sleep(Duration::from_secs(3)).await;
    let report = check(&run, &pool, &ntfy).await;
    pool.close().await;
    for node in &mut nodes {
        node.terminate().await;
    }
    match report {
        Ok(()) => Ok(()),
        Err(e) => {
            let kept = dir.keep();
            Err(format!("{e}\n(replica logs kept in {})", kept.display()))
        }
    }
}

/// The administrator, the teams (each with one on-call person, their topic, today and the next
/// days) and one Alertmanager integration each; reminders every minute. Returns the webhooks.
async fn setup(base: &str, teams: usize) -> Result<Vec<String>, String> {
    let client = reqwest::Client::new();
    let first = super::bench_team(&client, base).await?;
    let key = first.api_key.clone();
    super::put(
        &client,
        &format!("{base}/api/admin/settings"),
        &key,
        json!({"notify_repeat_interval": "1m"}),
    )
    .await?;
    let today = time::OffsetDateTime::now_utc().unix_timestamp();
    let dates: Vec<String> = (0..3)
        .map(|d| klaxon_domain::calendar::utc_date(today + d * 86_400))
        .collect();
    let mut webhooks = vec![first.webhook];
    let mut team_ids = vec![first.team_id];
    for t in 1..teams {
        let team = super::post(
            &client,
            &format!("{base}/api/teams"),
            Some(&key),
            json!({"name": format!("team-{t}")}),
        )
        .await?;
        let team_id = team["id"].as_i64().unwrap_or_default();
        let integration = super::post(
            &client,
            &format!("{base}/api/teams/{team_id}/integrations"),
            Some(&key),
            json!({"name": "alertmanager", "kind": "alertmanager"}),
        )
        .await?;
        webhooks.push(format!(
            "/api/alertmanager/webhook/{}",
            integration["key"].as_str().unwrap_or_default()
        ));
        team_ids.push(team_id);
    }
    webhooks[0] = webhooks[0]
        .strip_prefix(base)
        .unwrap_or_default()
        .to_string();
    for (t, team_id) in team_ids.iter().enumerate() {
        let user = super::post(
            &client,
            &format!("{base}/api/users"),
            Some(&key),
            json!({"username": format!("oncall{t}"), "push_topic": format!("chaos-pager-{t}")}),
        )
        .await?;
        let user_id = user["id"].as_i64().unwrap_or_default();
        super::post(
            &client,
            &format!("{base}/api/teams/{team_id}/members"),
            Some(&key),
            json!({"user_id": user_id}),
        )
        .await?;
        super::post(
            &client,
            &format!("{base}/api/teams/{team_id}/schedule"),
            Some(&key),
            json!({"user_id": user_id, "dates": dates}),
        )
        .await?;
    }
    Ok(webhooks)
}

fn alert(group: usize, g: &Group, firing: bool) -> Value {
    let name = format!("Chaos{group}");
    let ends_at = if firing {
        "0001-01-01T00:00:00Z".to_string()
    } else {
        rfc3339_now()
    };
    let status = if firing { "firing" } else { "resolved" };
    json!({
        "version": "4",
        "groupKey": format!("{{}}:{{alertname=\"{name}\"}}"),
        "status": status,
        "receiver": "klaxon",
        "groupLabels": {"alertname": name},
        "commonLabels": {"alertname": name, "severity": g.severity},
        "commonAnnotations": {"summary": "chaos"},
        "externalURL": "http://alertmanager:9093",
        "truncatedAlerts": 0,
        "alerts": [{
            "status": status,
            "labels": {"alertname": name, "severity": g.severity},
            "annotations": {"summary": "chaos"},
            "startsAt": g.starts_at,
            "endsAt": ends_at,
            "fingerprint": g.fingerprint,
        }],
    })
}

fn rfc3339_now() -> String {
    time::OffsetDateTime::now_utc()
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_default()
}

/// Posts a webhook the way Alertmanager does: to a replica, and on anything but 200 to another
/// after a moment, a few times. Returns whether one answered 200.
async fn deliver(
    run: &Run,
    client: &reqwest::Client,
    rng: &mut StdRng,
    team: usize,
    body: &Value,
) -> bool {
    for _ in 0..8 {
        let base = &run.bases[rng.gen_range(0..run.bases.len())];
        let url = format!("{base}{}", run.webhooks[team]);
        let answer = client.post(&url).json(body).send().await;
        if answer.is_ok_and(|r| r.status().is_success()) {
            run.answered.fetch_add(1, Ordering::Relaxed);
            return true;
        }
        tokio::time::sleep(Duration::from_millis(rng.gen_range(100..500))).await;
    }
    run.unanswered.fetch_add(1, Ordering::Relaxed);
    false
}

/// One sender: every 0.5–2 s a new alert (40 %), a re-send of an open one (40 %) or a
/// resolution (20 %).
async fn sender(run: &Run, mut rng: StdRng) -> Result<(), String> {
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(5))
        .build()
        .map_err(err)?;
    while !run.stop.load(Ordering::SeqCst) {
        tokio::time::sleep(Duration::from_millis(rng.gen_range(500..2000))).await;
        let roll = rng.gen_range(0..10);
        let open: Vec<usize> = {
            let groups = run.groups.lock().unwrap();
            (0..groups.len())
                .filter(|&i| groups[i].opened.is_some() && !groups[i].closing)
                .collect()
        };
        if roll < 4 || open.is_empty() {
            let (index, group) = {
                let mut groups = run.groups.lock().unwrap();
                let index = groups.len();
                let g = Group {
                    team: rng.gen_range(0..run.webhooks.len()),
                    fingerprint: format!("{:016x}", 0xc4a0_0000_0000u64 + index as u64),
                    starts_at: rfc3339_now(),
                    severity: if rng.gen_bool(0.7) {
                        "critical"
                    } else {
                        "warning"
                    },
                    ..Group::default()
                };
                groups.push(g.clone());
                (index, g)
            };
            if deliver(
                run,
                &client,
                &mut rng,
                group.team,
                &alert(index, &group, true),
            )
            .await
            {
                let now = Instant::now();
                run.groups.lock().unwrap()[index].opened.get_or_insert(now);
            }
        } else {
            let index = open[rng.gen_range(0..open.len())];
            let resolve = roll >= 8;
            let group = {
                let mut groups = run.groups.lock().unwrap();
                if groups[index].closing {
                    continue;
                }
                groups[index].closing |= resolve;
                groups[index].clone()
            };
            let ok = deliver(
                run,
                &client,
                &mut rng,
                group.team,
                &alert(index, &group, !resolve),
            )
            .await;
            if ok && resolve {
                run.groups.lock().unwrap()[index].resolved = true;
            }
        }
    }
    Ok(())
}

/// The person holding the phone: every 1–3 s, taps Acknowledge on one push of the last half
/// minute that has the button (about half of them get a tap).
async fn responder(run: &Run, ntfy: &FlakyNtfy, mut rng: StdRng) -> Result<(), String> {
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(5))
        .build()
        .map_err(err)?;
    let mut tapped = 0;
    while !run.stop.load(Ordering::SeqCst) {
        tokio::time::sleep(Duration::from_millis(rng.gen_range(1000..3000))).await;
        let pushes = ntfy.pushes();
        let fresh: Vec<&Push> = pushes[tapped.min(pushes.len())..]
            .iter()
            .filter(|p| p.ack_url.is_some() && p.answered.elapsed() < Duration::from_secs(30))
            .collect();
        tapped = pushes.len();
        for push in fresh {
            if !rng.gen_bool(0.5) {
                continue;
            }
            let Some((_, token)) = push
                .ack_url
                .as_deref()
                .and_then(|u| u.split_once("/api/notify/ack/"))
            else {
                continue;
            };
            let base = &run.bases[rng.gen_range(0..run.bases.len())];
            let Ok(answer) = client
                .post(format!("{base}/api/notify/ack/{token}"))
                .send()
                .await
            else {
                continue;
            };
            if !answer.status().is_success() {
                continue;
            }
            let at = Instant::now();
            let Ok(outcome) = answer.json::<Value>().await else {
                continue;
            };
            let mut acked = run.acked.lock().unwrap();
            for id in outcome["acknowledged"].as_array().into_iter().flatten() {
                if let Some(id) = id.as_i64() {
                    acked.entry(id).or_insert(at);
                }
            }
        }
    }
    Ok(())
}

/// ntfy misbehaves now and then: after 10–30 s of calm, 3–10 s of 429s (with or without
/// `Retry-After`), 500s or slow answers.
async fn push_service_bursts(run: &Run, ntfy: &FlakyNtfy, mut rng: StdRng) -> Result<(), String> {
    while !run.stop.load(Ordering::SeqCst) {
        tokio::time::sleep(Duration::from_secs(rng.gen_range(10..30))).await;
        if run.stop.load(Ordering::SeqCst) {
            break;
        }
        let mode = match rng.gen_range(0..4) {
            0 => Mode::Throttle(Some(rng.gen_range(1..6))),
            1 => Mode::Throttle(None),
            2 => Mode::Fail,
            _ => Mode::Slow(Duration::from_millis(rng.gen_range(1000..3000))),
        };
        let from = Instant::now();
        ntfy.set(mode);
        tokio::time::sleep(Duration::from_secs(rng.gen_range(3..10))).await;
        ntfy.set(Mode::Normal);
        run.fault(mode.describe(), from, Instant::now(), false);
    }
    Ok(())
}

/// The driver: every 8–20 s a fault on one replica (never the last one up): SIGKILL and a
/// restart 2–6 s later, SIGTERM and a restart, or SIGSTOP for 3–12 s; PostgreSQL restarted once,
/// between 40 % and 60 % of the run. At the end every replica is up.
async fn faults(
    run: &Run,
    nodes: &mut [Node],
    cluster: &Arc<Cluster>,
    db_url: &str,
    ntfy: &str,
    mut rng: StdRng,
    duration: Duration,
) -> Result<(), String> {
    let restart_db_at = duration.mul_f64(rng.gen_range(0.4..0.6));
    let mut db_restarted = false;
    while run.started.elapsed() < duration {
        tokio::time::sleep(Duration::from_millis(rng.gen_range(8000..20000))).await;
        if run.started.elapsed() >= duration {
            break;
        }
        if !db_restarted && run.started.elapsed() >= restart_db_at {
            db_restarted = true;
            let from = Instant::now();
            let c = cluster.clone();
            tokio::task::spawn_blocking(move || c.down())
                .await
                .map_err(err)?;
            tokio::time::sleep(Duration::from_secs(rng.gen_range(2..6))).await;
            let c = cluster.clone();
            tokio::task::spawn_blocking(move || c.up())
                .await
                .map_err(err)?;
            run.fault("PostgreSQL restarted".into(), from, Instant::now(), true);
            continue;
        }
        let node = &mut nodes[rng.gen_range(0..nodes.len())];
        let from = Instant::now();
        match rng.gen_range(0..10) {
            0..=3 => {
                node.signal(libc::SIGKILL).await;
                tokio::time::sleep(Duration::from_millis(rng.gen_range(2000..6000))).await;
                node.start(db_url, ntfy).await?;
                let what = format!("SIGKILL replica {}, restarted", node.index);
                run.fault(what, from, Instant::now(), true);
            }
            4..=6 => {
                node.terminate().await;
                tokio::time::sleep(Duration::from_millis(rng.gen_range(500..3000))).await;
                node.start(db_url, ntfy).await?;
                let what = format!("SIGTERM replica {}, restarted", node.index);
                run.fault(what, from, Instant::now(), false);
            }
            _ => {
                node.signal(libc::SIGSTOP).await;
                tokio::time::sleep(Duration::from_millis(rng.gen_range(3000..12000))).await;
                node.signal(libc::SIGCONT).await;
                let what = format!("SIGSTOP replica {} until SIGCONT", node.index);
                run.fault(what, from, Instant::now(), true);
            }
        }
    }
    Ok(())
}

/// A page of the database: which incident, what kind, how it ended, and its summary.
#[derive(sqlx::FromRow)]
struct PageRow {
    incident_id: i64,
    kind: String,
    state: String,
    bundle_id: Option<i64>,
}

async fn check(run: &Run, pool: &sqlx::AnyPool, ntfy: &FlakyNtfy) -> Result<(), String> {
    let mut problems: Vec<String> = Vec::new();
    let groups = run.groups.lock().unwrap().clone();
    let faults = run.faults.lock().unwrap().clone();
    let acked = run.acked.lock().unwrap().clone();
    let pushes = ntfy.pushes();

    // Every webhook answered 200 is stored: each opened group's alert, resolved when its
    // resolution was answered.
    let alerts: Vec<(String, String, Option<i64>)> =
        sqlx::query_as("SELECT fingerprint, status, incident_id FROM alerts")
            .fetch_all(pool)
            .await
            .map_err(err)?;
    let alerts: HashMap<String, (String, Option<i64>)> =
        alerts.into_iter().map(|(f, s, i)| (f, (s, i))).collect();
    let mut lost = 0;
    for g in groups.iter().filter(|g| g.opened.is_some()) {
        match alerts.get(&g.fingerprint) {
            None => lost += 1,
            Some((status, _)) if g.resolved && status != "resolved" => lost += 1,
            _ => {}
        }
    }
    if lost > 0 {
        problems.push(format!(
            "{lost} webhooks answered 200 are not stored as sent"
        ));
    }
    let (incidents, distinct): (i64, i64) =
        sqlx::query_as("SELECT COUNT(*), COUNT(DISTINCT group_key) FROM incidents")
            .fetch_one(pool)
            .await
            .map_err(err)?;
    if incidents != distinct {
        problems.push(format!(
            "{} incidents doubled (each group fires once)",
            incidents - distinct
        ));
    }

    // Which incidents each push asked someone to take, and which of them it opened.
    let pages: Vec<PageRow> = sqlx::query_as(
        "SELECT incident_id, kind, state, bundle_id FROM pages WHERE incident_id IS NOT NULL",
    )
    .fetch_all(pool)
    .await
    .map_err(err)?;
    let mut bundles: HashMap<i64, Vec<&PageRow>> = HashMap::new();
    for p in &pages {
        if let Some(b) = p.bundle_id {
            bundles.entry(b).or_default().push(p);
        }
    }
    let mut openings: BTreeMap<i64, Vec<&Push>> = BTreeMap::new();
    let mut late_acks = Vec::new();
    let mut orphan_summaries = Vec::new();
    for push in pushes.iter().filter(|p| p.asks_for_owner()) {
        let mut about: Vec<(i64, bool)> = Vec::new();
        if let Some(id) = push.incident() {
            about.push((id, push.is_opening()));
        } else if let Some(b) = push.bundle() {
            match bundles.get(&b) {
                Some(rows) => about.extend(
                    rows.iter()
                        .filter(|r| r.kind != "all_clear" && r.kind != "handoff")
                        .map(|r| (r.incident_id, r.kind == "opening")),
                ),
                None => orphan_summaries.push(push),
            }
        }
        for (id, opening) in about {
            if opening {
                openings.entry(id).or_default().push(push);
            }
            if let Some(at) = acked.get(&id) {
                if push.arrived > *at {
                    late_acks.push(format!(
                        "incident {id}: paged at {:.1} s, acknowledged (answered) at {:.1} s",
                        run.at(push.arrived),
                        run.at(*at)
                    ));
                }
            }
        }
    }
    if !late_acks.is_empty() {
        problems.push(format!(
            "{} pushes asked for an owner after the acknowledgement was answered: {}",
            late_acks.len(),
            late_acks.join("; ")
        ));
    }

    // Every incident owed a page got exactly one opening push.
    let explained = |first: &Push| {
        let t = run.at(first.arrived);
        faults
            .iter()
            .find(|f| f.cuts_a_publish && f.from <= t + 2.0 && f.to >= t - 11.0)
    };
    let mut owed = 0;
    let mut unpaged = Vec::new();
    let mut doubled = Vec::new();
    let mut doubled_at_faults = Vec::new();
    for p in pages.iter().filter(|p| p.kind == "opening") {
        let got = openings.get(&p.incident_id).map_or(&[][..], Vec::as_slice);
        if p.state == "sent" {
            owed += 1;
            if got.is_empty() {
                unpaged.push(p.incident_id);
            }
        } else if p.state != "cancelled" {
            unpaged.push(p.incident_id);
        }
        if got.len() > 1 {
            match explained(got[0]) {
                Some(f) => doubled_at_faults.push(format!(
                    "incident {} ({} copies; {} at {:.1} s)",
                    p.incident_id,
                    got.len(),
                    f.what,
                    f.from
                )),
                None => doubled.push(p.incident_id),
            }
        }
    }
    if !unpaged.is_empty() {
        problems.push(format!(
            "{} incidents owed a page got no opening push: {unpaged:?}",
            unpaged.len()
        ));
    }
    if !doubled.is_empty() {
        problems.push(format!(
            "{} incidents got two opening pushes with no fault to explain it: {doubled:?}",
            doubled.len()
        ));
    }

    // Delay: the group's first firing webhook answered → its incident's first opening push.
    let bundled: HashMap<i64, bool> = pages
        .iter()
        .filter(|p| p.kind == "opening")
        .map(|p| (p.incident_id, p.bundle_id.is_some()))
        .collect();
    let mut delays: Vec<(f64, bool)> = Vec::new();
    let mut late = Vec::new();
    for g in &groups {
        let (Some(opened), Some((_, Some(incident)))) = (g.opened, alerts.get(&g.fingerprint))
        else {
            continue;
        };
        let Some(first) = openings.get(incident).and_then(|p| p.first()) else {
            continue;
        };
        let delay = first.arrived.saturating_duration_since(opened);
        let in_summary = bundled.get(incident).copied().unwrap_or(false);
        delays.push((delay.as_secs_f64(), in_summary));
        let allowed = if in_summary {
            LATE + Duration::from_secs(klaxon_domain::paging::BUNDLE_WINDOW as u64)
        } else {
            LATE
        };
        if delay > allowed {
            let (from, to) = (run.at(opened), run.at(first.arrived));
            let around: Vec<&str> = faults
                .iter()
                .filter(|f| f.from <= to && f.to >= from - 11.0)
                .map(|f| f.what.as_str())
                .collect();
            let cause = if around.is_empty() {
                "no fault found".to_string()
            } else {
                around.join(", ")
            };
            late.push(format!(
                "  incident {incident}: {:.1} s (due at {from:.1} s){}: {cause}",
                delay.as_secs_f64(),
                if in_summary { ", in a summary" } else { "" }
            ));
        }
    }

    let (throttled, failed) = ntfy.refused();
    println!(
        "webhooks: {} answered 200, {} never answered; incidents {incidents}; ntfy accepted {} pushes ({} summaries), \
         answered 429 {throttled} times and 500 {failed} times; acknowledgements tapped for {} incidents",
        run.answered.load(Ordering::Relaxed),
        run.unanswered.load(Ordering::Relaxed),
        pushes.len(),
        pushes.iter().filter(|p| p.bundle().is_some()).count(),
        acked.len(),
    );
    println!(
        "opening pages owed {owed}: each got exactly one push except {} doubled at a fault{}",
        doubled_at_faults.len(),
        if doubled_at_faults.is_empty() {
            String::new()
        } else {
            format!(" ({})", doubled_at_faults.join("; "))
        }
    );
    if !orphan_summaries.is_empty() {
        println!(
            "{} summary pushes whose pages went again in a later summary (sent, then not recorded)",
            orphan_summaries.len()
        );
    }
    print_delays("alone", delays.iter().filter(|d| !d.1).map(|d| d.0));
    print_delays("in a summary", delays.iter().filter(|d| d.1).map(|d| d.0));
    print_delays("all", delays.iter().map(|d| d.0));
    println!(
        "most pushes to one topic in any 60 s: {} (bundling allows {}; replicas racing may add one or two)",
        busiest_minute(&pushes),
        klaxon_domain::paging::BUNDLE_AFTER
    );
    println!(
        "opening pages later than {} s (in a summary: {} s past its minute): {}",
        LATE.as_secs(),
        LATE.as_secs(),
        late.len()
    );
    for line in &late {
        println!("{line}");
    }
    if problems.is_empty() {
        println!("chaos: every check passed");
        Ok(())
    } else {
        Err(format!("chaos: {}", problems.join("\n")))
    }
}

/// The most pushes any topic got within 60 s (hand-off notices, which bundling leaves alone,
/// not counted).
fn busiest_minute(pushes: &[Push]) -> usize {
    let mut by_topic: HashMap<&str, Vec<Instant>> = HashMap::new();
    for p in pushes.iter().filter(|p| p.title != "On-call hand-off") {
        by_topic.entry(&p.topic).or_default().push(p.arrived);
    }
    let window = Duration::from_secs(klaxon_domain::paging::BUNDLE_WINDOW as u64);
    let mut most = 0;
    for times in by_topic.values_mut() {
        times.sort();
        let mut start = 0;
        for end in 0..times.len() {
            while times[end].duration_since(times[start]) >= window {
                start += 1;
            }
            most = most.max(end - start + 1);
        }
    }
    most
}

fn print_delays(what: &str, delays: impl Iterator<Item = f64>) {
    let mut d: Vec<f64> = delays.collect();
    if d.is_empty() {
        println!("webhook answered → opening push, {what}: none");
        return;
    }
    d.sort_by(f64::total_cmp);
    let at = |q: usize| d[(d.len() * q / 100).min(d.len() - 1)];
    println!(
        "webhook answered → opening push, {what} ({}): p50 {:.2} s, p99 {:.2} s, max {:.2} s",
        d.len(),
        at(50),
        at(99),
        d[d.len() - 1]
    );
}
