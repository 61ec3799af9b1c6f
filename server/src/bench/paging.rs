//! `klaxon bench paging`: webhook received → page received by its road (the stand-in ntfy, a push
//! service for Web Push, an SMTP server for email, `sinks`; Twilio's API for texts and calls,
//! `carrier`), over loopback with the real notifier loop; or, with `--failover`, ntfy refusing
//! each page and the time until the next road has it.

use super::cpu::Cpu;
use super::sinks::{one_alert, title, Arrivals};
use super::{drop_schema, err, fresh_db, post, send_webhook};
use axum::body::Bytes;
use clap::Args;
use klaxon_core::{Config, Core, Db, SystemClock};
use serde_json::json;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

#[derive(Args)]
pub struct PagingArgs {
    /// Incidents opened, one webhook each, one after another.
    #[arg(long, default_value_t = 1000)]
    incidents: usize,
    /// Then a storm: this many concurrent senders (0: no storm), each webhook opening an
    /// incident of its own, once with every incident paged and once with nobody to page.
    #[arg(long, default_value_t = 64)]
    storm_senders: usize,
    /// Webhooks in each storm run.
    #[arg(long, default_value_t = 4000)]
    storm_webhooks: usize,
    /// Storm runs of each kind, taking turns; the figures are over all of them.
    #[arg(long, default_value_t = 3)]
    rounds: usize,
    /// A `postgres://…` URL: measure PostgreSQL in a throwaway schema. Default: a SQLite file.
    #[arg(long)]
    database_url: Option<String>,
    /// The road the on-call person is paged by (their only step); `all`: each road in turn,
    /// with every road's figures against ntfy's at the end.
    #[arg(long, value_enum, default_value_t = Road::All)]
    road: Road,
    /// ntfy refuses every page (403); the person's next step, after 30 minutes, is `--road`:
    /// the figure is from ntfy's refusal to that road's delivery. With `--road voice`, the call
    /// goes unanswered and the next step is ntfy: from the carrier's report to ntfy's page.
    #[arg(long)]
    failover: bool,
    /// A second team pages, all through the run, its on-call person's N Web Push subscriptions
    /// and its N channels at a destination that never answers (`tarpits`): the figures are
    /// this team's, beside it.
    #[arg(long, default_value_t = 0)]
    tarpits: usize,
}

/// A road the benchmark pages by.
#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Road {
    Ntfy,
    Webpush,
    Email,
    Sms,
    Voice,
    All,
}

impl Road {
    fn name(self) -> &'static str {
        match self {
            Road::Ntfy => "ntfy publish",
            Road::Webpush => "Web Push message",
            Road::Email => "email",
            Road::Sms => "SMS request",
            Road::Voice => "call request",
            Road::All => "every road",
        }
    }
}

/// One road's figures, for the comparison of a run over every road.
struct Figures {
    road: Road,
    quiet_p99: f64,
    storm_p50: f64,
    storm_p99: f64,
    /// Storm intake with this road paging, against the same storm with nobody to page.
    intake_ratio: f64,
}

/// Runs `f` with a fresh database, dropping its PostgreSQL schema afterwards.
pub(super) async fn with_db<T, F, Fut>(
    url: Option<&str>,
    dir: &Path,
    name: &str,
    f: F,
) -> Result<T, String>
where
    F: FnOnce(Db) -> Fut,
    Fut: std::future::Future<Output = Result<T, String>>,
{
    sqlx::any::install_default_drivers();
    let mut schemas = Vec::new();
    let db = fresh_db(url, dir, name, &mut schemas).await?;
    let out = f(db.clone()).await;
    db.pool.close().await;
    if let Some(base) = url {
        for schema in schemas {
            if let Err(e) = drop_schema(base, &schema).await {
                eprintln!("could not drop schema {schema}: {e}");
            }
        }
    }
    out
}

pub(super) fn backend(url: Option<&str>) -> &'static str {
    if url.is_some() {
        "postgresql"
    } else {
        "sqlite"
    }
}

pub(super) fn check_url(url: Option<&str>) -> Result<(), String> {
    match url {
        Some(u) if !(u.starts_with("postgres://") || u.starts_with("postgresql://")) => {
            Err("--database-url must be a postgres:// URL".into())
        }
        _ => Ok(()),
    }
}

pub async fn paging(args: PagingArgs) -> Result<(), String> {
    check_url(args.database_url.as_deref())?;
    if args.incidents == 0 || (args.storm_senders > 0 && args.storm_webhooks == 0) {
        return Err("--incidents and --storm-webhooks must be at least 1".into());
    }
    let roads = match args.road {
        Road::All if args.failover => {
            return Err("--failover needs one road other than ntfy".into())
        }
        Road::All => vec![
            Road::Ntfy,
            Road::Webpush,
            Road::Email,
            Road::Sms,
            Road::Voice,
        ],
        road => vec![road],
    };
    let mut figures = Vec::new();
    for road in roads {
        figures.extend(one_road(&args, road).await?);
    }
    let Some(ntfy) = figures.iter().find(|f| f.road == Road::Ntfy) else {
        return Ok(());
    };
    if figures.len() < 2 {
        return Ok(());
    }
    println!(
        "{}: every road against ntfy (p99, storm intake):",
        backend(args.database_url.as_deref())
    );
    for f in &figures {
        println!(
            "  {:<16} quiet p99 {:>7.1} ms ({:>5.2}x ntfy) · storm p50 {:>7.1} ms, p99 {:>7.1} ms ({:>5.2}x ntfy) · \
             storm intake {:.2} of unpaged ({:.2}x ntfy's)",
            f.road.name(),
            f.quiet_p99,
            f.quiet_p99 / ntfy.quiet_p99.max(1e-3),
            f.storm_p50,
            f.storm_p99,
            f.storm_p99 / ntfy.storm_p99.max(1e-3),
            f.intake_ratio,
            f.intake_ratio / ntfy.intake_ratio.max(1e-3),
        );
    }
    Ok(())
}

/// The quiet run and the storms of one road, printed; their figures when there was a storm.
async fn one_road(args: &PagingArgs, road: Road) -> Result<Option<Figures>, String> {
    let name = backend(args.database_url.as_deref());
    let measured = if args.failover && road == Road::Voice {
        "the carrier reported the call not answered → ntfy publish received".to_string()
    } else if args.failover {
        format!("ntfy refused the page → {} received", road.name())
    } else {
        format!("webhook answered → {} received", road.name())
    };
    let measured = if args.tarpits > 0 {
        format!(
            "{measured}, beside a team paging {n} Web Push subscriptions and {n} channels that never answer",
            n = args.tarpits
        )
    } else {
        measured
    };
    let mut quiet = run_paging(args, road, 0, args.incidents, true).await?;
    println!(
        "{name}: quiet: {} incidents, each webhook after the previous page arrived; {measured}: \
         p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms",
        args.incidents,
        quiet.ms(50),
        quiet.ms(99),
        quiet.ms(100)
    );
    if !quiet.acks.is_empty() {
        quiet.acks.sort();
        let at = |q: usize| {
            let i = (quiet.acks.len() * q / 100).min(quiet.acks.len() - 1);
            quiet.acks[i].as_secs_f64() * 1e3
        };
        println!(
            "{name}: quiet: each call answered and key 4 pressed; key pressed → acknowledgement stored \
             (Klaxon's answer): p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms over {} calls",
            at(50),
            at(99),
            at(100),
            quiet.acks.len()
        );
    }
    if args.storm_senders == 0 {
        return Ok(None);
    }
    // Paged and unpaged storms take turns, so a slow spell of a shared machine falls on both.
    let (mut storm, mut unpaged) = (PagingRun::default(), PagingRun::default());
    for _ in 0..args.rounds.max(1) {
        let (senders, webhooks) = (args.storm_senders, args.storm_webhooks);
        unpaged.add(run_paging(args, road, senders, webhooks, false).await?);
        storm.add(run_paging(args, road, senders, webhooks, true).await?);
    }
    let intake_ratio = storm.alerts_per_s() / unpaged.alerts_per_s();
    println!(
        "{name}: storm: {} webhooks from {} senders, an incident and a page each, {} rounds; {measured}: \
         p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms; intake {:.0} alerts/s, \
         {intake_ratio:.2}x the same storm with nobody to page ({:.0} alerts/s)",
        args.storm_webhooks,
        args.storm_senders,
        args.rounds.max(1),
        storm.ms(50),
        storm.ms(99),
        storm.ms(100),
        storm.alerts_per_s(),
        unpaged.alerts_per_s(),
    );
    if storm.cpu.is_some() {
        // Where the difference goes: the machine's cores are shared by all of it.
        println!(
            "{name}: storm: processor time a webhook took: {} paged, {} with nobody to page",
            storm.cpu_per_webhook(),
            unpaged.cpu_per_webhook()
        );
    }
    Ok(Some(Figures {
        road,
        quiet_p99: quiet.ms(99),
        storm_p50: storm.ms(50),
        storm_p99: storm.ms(99),
        intake_ratio,
    }))
}

/// What paging runs measured: each page's webhook answered → publish received (none when
/// nobody was paged), and the webhooks sent and the time intake took, summed over the runs.
#[derive(Default)]
struct PagingRun {
    latencies: Vec<Duration>,
    webhooks: usize,
    intake: Duration,
    /// A quiet voice run's key 4 pressed → acknowledgement stored, each call.
    acks: Vec<Duration>,
    /// Processor time while the webhooks were sent (`cpu`), where it can be read.
    cpu: Option<Cpu>,
}

impl PagingRun {
    fn add(&mut self, run: PagingRun) {
        self.latencies.extend(run.latencies);
        self.webhooks += run.webhooks;
        self.intake += run.intake;
        self.cpu = match (self.cpu, run.cpu) {
            (Some(mut a), Some(b)) => {
                a.add(b);
                Some(a)
            }
            (a, b) => a.or(b),
        };
    }

    /// Processor time a webhook took, in words ("" where it cannot be read).
    fn cpu_per_webhook(&self) -> String {
        self.cpu.map_or(String::new(), |c| c.per(self.webhooks))
    }

    fn alerts_per_s(&self) -> f64 {
        self.webhooks as f64 / self.intake.as_secs_f64()
    }

    /// The `q`th percentile latency, in milliseconds (100: the largest).
    fn ms(&mut self, q: usize) -> f64 {
        self.latencies.sort();
        let i = (self.latencies.len() * q / 100).min(self.latencies.len().saturating_sub(1));
        self.latencies.get(i).map_or(0.0, |d| d.as_secs_f64() * 1e3)
    }
}

/// Sends `webhooks` webhooks, each opening an incident, from `senders` concurrent senders to a
/// fresh server with the real notifier loop (0 senders: one, each webhook after the previous
/// page arrived, so every page has the server to itself); with `paged`, today's on-call has a topic and
/// every incident is paged, else nobody can be (the same intake work, no pages).
async fn run_paging(
    args: &PagingArgs,
    road: Road,
    senders: usize,
    webhooks: usize,
    paged: bool,
) -> Result<PagingRun, String> {
    let dir = tempfile::tempdir().map_err(err)?;
    let url = args.database_url.clone();
    with_db(url.as_deref(), dir.path(), "paging", |db| async move {
        let arrivals = Arrivals::default();
        let ntfy = arrivals.serve().await?;
        let push = if road == Road::Webpush {
            Some(super::sinks::push_sink(arrivals.clone()).await?)
        } else {
            None
        };
        let smtp = if road == Road::Email {
            Some(super::sinks::smtp_sink(arrivals.clone()).await?)
        } else {
            None
        };
        let carrier = if matches!(road, Road::Sms | Road::Voice) {
            let press = road == Road::Voice && senders == 0 && !args.failover;
            let unanswered = road == Road::Voice && args.failover;
            Some(super::carrier::Carrier::start(arrivals.clone(), press, unanswered).await?)
        } else {
            None
        };
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .map_err(err)?;
        let base = format!("http://{}", listener.local_addr().map_err(err)?);
        // Every page its own push: one on-call person is paged for every incident, and the
        // figure is the delivery engine's, not the bundling's (which would send five a minute).
        let config = Config {
            public_url: base.clone(),
            intake_per_minute: super::UNHELD,
            roads: klaxon_core::roads::RoadSettings {
                ntfy_url: Some(ntfy),
                smtp: smtp.as_ref().map(|s| klaxon_core::roads::email::SmtpConfig {
                    url: format!("smtp://127.0.0.1:{}", s.port),
                    from: "Klaxon <klaxon@bench.example>".into(),
                    ca_pem: Some(s.ca_pem.clone()),
                }),
                twilio: carrier.as_ref().map(|c| c.config()),
                // One number is paged for every incident: its own limits (one text a minute)
                // would measure the limit, not delivery, as bundling would.
                phone_number_limits: false,
                phone_hourly_limit: i64::MAX,
                ..Default::default()
            },
            page_bundle_after: 0,
            // The push service of the run listens on loopback.
            outbound_allow: klaxon_core::outbound::OutboundAllow::parse("127.0.0.0/8")
                .map_err(err)?,
            personal_outbound_allow: klaxon_core::outbound::OutboundAllow::parse("127.0.0.0/8")
                .map_err(err)?,
            ..Config::default()
        };
        let core = Core::start(db, Arc::new(SystemClock), config)
            .await
            .map_err(err)?;
        // The real loop: woken by each queued page.
        let (_stop, stopped) = tokio::sync::watch::channel(false);
        crate::loops::spawn_notifier(core.clone(), "bench".into(), stopped.clone());
        crate::loops::spawn_announcer(core.clone(), stopped);
        let app = crate::app(core.clone()).into_make_service_with_connect_info::<SocketAddr>();
        let server = tokio::spawn(async move { axum::serve(listener, app).await });
        let mut strangers = None;
        let webhook = if paged {
            let team = on_call_setup(&base).await?;
            let sinks = Sinks {
                push: push.as_ref(),
                smtp: smtp.as_ref(),
                carrier: carrier.as_ref(),
            };
            roads_setup(&base, &team, road, args.failover, sinks).await?;
            // ntfy refuses, and the road after it is measured; or, for calls, the call goes
            // unanswered and ntfy after it is.
            if args.failover && road != Road::Voice {
                arrivals.refuse.store(true, std::sync::atomic::Ordering::SeqCst);
            }
            if args.tarpits > 0 {
                strangers = Some(super::tarpits::stranger(&base, &team.api_key, args.tarpits).await?);
            }
            team.webhook
        } else {
            super::bench_team(&reqwest::Client::new(), &base).await?.webhook
        };

        let client = reqwest::Client::new();
        let bodies: Vec<Bytes> = (0..webhooks)
            .map(|i| Bytes::from(serde_json::to_vec(&one_alert(i)).unwrap_or_default()))
            .collect();
        let cpu_before = Cpu::now(args.database_url.as_deref());
        let started = Instant::now();
        let mut tasks = tokio::task::JoinSet::new();
        let paced = senders == 0;
        let senders = senders.max(1);
        for s in 0..senders {
            let (client, webhook, arrivals) = (client.clone(), webhook.clone(), arrivals.clone());
            let mine: Vec<(usize, Bytes)> = (s..webhooks)
                .step_by(senders)
                .map(|i| (i, bodies[i].clone()))
                .collect();
            tasks.spawn(async move {
                let mut answered = Vec::with_capacity(mine.len());
                for (i, body) in mine {
                    send_webhook(&client, &webhook, body).await?;
                    answered.push((i, Instant::now()));
                    if paced {
                        arrivals.wait_for(i + 1, Duration::from_secs(10)).await?;
                    }
                }
                Ok::<_, String>(answered)
            });
        }
        let mut answered = vec![started; webhooks];
        while let Some(done) = tasks.join_next().await {
            for (i, at) in done.map_err(err)?? {
                answered[i] = at;
            }
        }
        let intake = started.elapsed();
        let cpu = Cpu::now(args.database_url.as_deref())
            .zip(cpu_before)
            .map(|(after, before)| after.since(before));
        if !paged {
            server.abort();
            return Ok(PagingRun {
                webhooks,
                intake,
                cpu,
                ..PagingRun::default()
            });
        }
        arrivals
            .wait_for(webhooks, Duration::from_secs(300))
            .await?;
        if let Some(s) = strangers {
            s.abort();
        }
        server.abort();
        let seen = arrivals.seen.lock().unwrap().clone();
        let refused = arrivals.refused.lock().unwrap().clone();
        let latencies: Vec<Duration> = (0..webhooks)
            .filter_map(|i| {
                let at = seen.get(&title(i))?;
                let from = if args.failover {
                    *refused.get(&title(i))?
                } else {
                    answered[i]
                };
                Some(at.saturating_duration_since(from))
            })
            .collect();
        if latencies.len() != webhooks {
            return Err(format!(
                "{} pages arrived with unexpected titles",
                webhooks - latencies.len()
            ));
        }
        // The last pages may be published but not yet marked sent: give the notifier a moment.
        let mut pages = 0;
        for _ in 0..100 {
            (pages,) = sqlx::query_as(
                "SELECT COUNT(*) FROM pages p JOIN users u ON u.id = p.user_id \
                 WHERE p.state = 'sent' AND u.username = 'bench'",
            )
                .fetch_one(&core.db.pool)
                .await
                .map_err(err)?;
            if pages >= webhooks as i64 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        arrivals.count(); // opens what came since, duplicates included
        let published = arrivals.total.load(std::sync::atomic::Ordering::SeqCst);
        if pages != webhooks as i64 || published != webhooks {
            return Err(format!(
                "a page was lost or sent twice: {published} published, {pages} marked sent, for {webhooks} incidents"
            ));
        }
        let acks = carrier.map(|c| c.acks.lock().unwrap().clone());
        Ok(PagingRun {
            latencies,
            webhooks,
            intake,
            acks: acks.unwrap_or_default(),
            cpu,
        })
    })
    .await
}

/// The run's stand-ins a road's method is made at.
struct Sinks<'a> {
    push: Option<&'a super::sinks::PushSink>,
    smtp: Option<&'a super::sinks::SmtpSink>,
    carrier: Option<&'a super::carrier::Carrier>,
}

/// The bench team, after giving its owner a topic and today's on-call shift.
pub(super) async fn on_call_setup(base: &str) -> Result<super::BenchTeam, String> {
    let client = reqwest::Client::new();
    let team = super::bench_team(&client, base).await?;
    super::put(
        &client,
        &format!("{base}/api/users/{}/push-topic", team.user_id),
        &team.api_key,
        json!({"push_topic": "bench-pager"}),
    )
    .await?;
    let today = klaxon_domain::calendar::utc_date(time::OffsetDateTime::now_utc().unix_timestamp());
    post(
        &client,
        &format!("{base}/api/teams/{}/schedule", team.team_id),
        Some(&team.api_key),
        json!({"user_id": team.user_id, "dates": [today]}),
    )
    .await?;
    Ok(team)
}

/// Gives the on-call person `road` as their only step, or with `failover` as the step after
/// their push topic, 30 minutes later (which only ntfy's refusal brings forward).
async fn roads_setup(
    base: &str,
    team: &super::BenchTeam,
    road: Road,
    failover: bool,
    sinks: Sinks<'_>,
) -> Result<(), String> {
    let client = reqwest::Client::new();
    let methods = format!("{base}/api/users/{}/contact-methods", team.user_id);
    let method = match (road, sinks.push, sinks.smtp) {
        (Road::Sms | Road::Voice, _, _) => {
            let carrier = sinks.carrier.ok_or("no carrier for a phone road")?;
            let kind = if road == Road::Sms { "sms" } else { "voice" };
            let body = json!({"name": "bench phone", "kind": kind, "number": "+14155552671"});
            let id = post(&client, &methods, Some(&team.api_key), body).await?["id"].clone();
            let code = carrier
                .codes
                .lock()
                .unwrap()
                .last()
                .cloned()
                .ok_or("no verification code was texted or said")?;
            post(
                &client,
                &format!("{methods}/{id}/verify"),
                Some(&team.api_key),
                json!({"code": code}),
            )
            .await?;
            Some(id)
        }
        (Road::Webpush, Some(p), _) => {
            let body = json!({"name": "bench phone", "kind": "webpush", "subscription":
                {"endpoint": p.endpoint, "keys": {"p256dh": p.p256dh, "auth": p.auth}}});
            Some(post(&client, &methods, Some(&team.api_key), body).await?["id"].clone())
        }
        (Road::Email, _, Some(s)) => {
            let body =
                json!({"name": "bench mail", "kind": "email", "address": "oncall@bench.example"});
            let id = post(&client, &methods, Some(&team.api_key), body).await?["id"].clone();
            let code = s
                .codes
                .lock()
                .unwrap()
                .last()
                .cloned()
                .ok_or("no verification code was mailed")?;
            post(
                &client,
                &format!("{methods}/{id}/verify"),
                Some(&team.api_key),
                json!({"code": code}),
            )
            .await?;
            Some(id)
        }
        _ => None,
    };
    let steps = match (method, failover) {
        (None, false) => return Ok(()),
        (None, true) => return Err("--failover needs a road other than ntfy".into()),
        (Some(m), false) => json!([{"after_minutes": 0, "method_id": m}]),
        (Some(m), true) if road == Road::Voice => {
            json!([{"after_minutes": 0, "method_id": m}, {"after_minutes": 30}])
        }
        (Some(m), true) => json!([{"after_minutes": 0}, {"after_minutes": 30, "method_id": m}]),
    };
    super::put(
        &client,
        &format!("{base}/api/users/{}/notification-rules", team.user_id),
        &team.api_key,
        json!({"high": steps}),
    )
    .await?;
    Ok(())
}
