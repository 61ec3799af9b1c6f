//! The `klaxon` command line. Every `KLAXON_*` environment variable is also a flag.

use clap::{Args, Parser, Subcommand};
use klaxon_core::{Core, Db};
use std::path::PathBuf;

mod chat_args;
mod serve_args;
use serve_args::ServeArgs;

#[derive(Parser)]
#[command(
    name = "klaxon",
    version,
    about = "Klaxon: incident paging for Prometheus Alertmanager, with ntfy pages and a phone app."
)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run the server: API, web UI and background work.
    Serve(Box<ServeArgs>),
    /// Apply database migrations and exit.
    Migrate(DbArgs),
    /// Print the version and the commit it was built from.
    Version,
    /// Measure the service on throwaway databases.
    #[command(subcommand)]
    Bench(BenchCommand),
    /// Sign this terminal in: approve the code in a browser where you use Klaxon.
    Login(crate::terminal::LoginArgs),
    /// Sign this terminal out.
    Logout,
    /// Who this terminal is signed in as, and where.
    Whoami,
    /// The open incidents of your teams.
    Incidents,
    /// Acknowledge an incident.
    Ack(crate::terminal::AckArgs),
    /// Print the JSON Schema of the configuration file.
    Schema,
    /// Write the server's configuration as a file (no secrets).
    Export(crate::config_file::ExportArgs),
    /// Print what `apply -f FILE` would change; exit 0 when nothing, 2 when something.
    Diff(crate::config_file::PlanArgs),
    /// Make the server's configuration what FILE says, step by step.
    Apply(crate::config_file::PlanArgs),
    /// Write a Klaxon file from Grafana OnCall, PagerDuty or Opsgenie, with a report.
    Import(crate::import::ImportArgs),
}

#[derive(Subcommand)]
enum BenchCommand {
    /// Webhook intake over loopback HTTP, against the database's own rate for the same writes.
    Intake(crate::bench::IntakeArgs),
    /// Page latency: webhook received → ntfy publish received, with the real notifier loop.
    Paging(crate::bench::PagingArgs),
    /// One notifier pass and one sweep with many open, idle incidents and some due work.
    Ticks(crate::bench::TickArgs),
    /// Several `klaxon serve` processes on one PostgreSQL: intake, paging and failover.
    Replicas(crate::bench::ReplicaArgs),
    /// Three replicas, a misbehaving push service and a seeded plan of kills, freezes and a
    /// database restart under steady webhooks; checks that no page was lost or doubled.
    Chaos(crate::bench::ChaosArgs),
    /// A Slack button pressed → acknowledgement stored, and → the message replaced.
    Chat(crate::bench::ChatArgs),
    /// A year of a busy team's record: each report read cold, and intake while reports are read.
    Reports(crate::bench::ReportArgs),
}

#[derive(Args)]
struct DbArgs {
    /// Database URL; `postgres://…` selects PostgreSQL. Default: SQLite file klaxon.db in the data dir.
    #[arg(long, env = "KLAXON_DATABASE_URL", hide_env_values = true)]
    database_url: Option<String>,
    /// Directory for the SQLite database.
    #[arg(long, env = "KLAXON_DATA_DIR", default_value = "./data")]
    data_dir: PathBuf,
}

fn init_tracing(filter: &str, format: &str) {
    let filter = tracing_subscriber::EnvFilter::try_new(filter).unwrap_or_else(|_| "info".into());
    let builder = tracing_subscriber::fmt().with_env_filter(filter);
    if format == "json" {
        builder.json().init();
    } else {
        builder.init();
    }
}

pub async fn run() -> Result<(), String> {
    match Cli::parse().command {
        Command::Version => {
            let v = crate::api::ops::VERSION;
            println!("klaxon {} ({})", v.version, v.commit);
            Ok(())
        }
        Command::Migrate(db) => {
            let db = Db::connect(db.database_url.as_deref(), &db.data_dir)
                .await
                .map_err(|e| e.to_string())?;
            db.migrate().await.map_err(|e| format!("{e:?}"))?;
            println!("migrations applied");
            Ok(())
        }
        Command::Serve(args) => serve(*args).await,
        Command::Bench(BenchCommand::Intake(args)) => crate::bench::intake(args).await,
        Command::Bench(BenchCommand::Paging(args)) => crate::bench::paging(args).await,
        Command::Bench(BenchCommand::Ticks(args)) => crate::bench::ticks(args).await,
        Command::Bench(BenchCommand::Replicas(args)) => crate::bench::replicas(args).await,
        Command::Bench(BenchCommand::Chaos(args)) => crate::bench::chaos(args).await,
        Command::Bench(BenchCommand::Chat(args)) => crate::bench::chat(args).await,
        Command::Bench(BenchCommand::Reports(args)) => crate::bench::reports(args).await,
        Command::Login(args) => crate::terminal::login(args).await,
        Command::Logout => crate::terminal::logout().await,
        Command::Whoami => crate::terminal::whoami().await,
        Command::Incidents => crate::terminal::incidents().await,
        Command::Ack(args) => crate::terminal::ack(args).await,
        Command::Schema => {
            print!("{}", crate::config_file::schema());
            Ok(())
        }
        Command::Export(args) => exit_with(crate::config_file::run_export(args).await),
        Command::Diff(args) => exit_with(crate::config_file::run_diff(args).await),
        Command::Apply(args) => exit_with(crate::config_file::run_apply(args).await),
        Command::Import(args) => exit_with(crate::import::run(args).await),
    }
}

/// Ends the process with a command's own exit code (`diff` says "changes" with 2).
fn exit_with(code: Result<i32, String>) -> Result<(), String> {
    match code? {
        0 => Ok(()),
        n => std::process::exit(n),
    }
}

async fn serve(args: ServeArgs) -> Result<(), String> {
    init_tracing(&args.log, &args.log_format);
    let config = args.config()?;
    let db = Db::connect(args.db.database_url.as_deref(), &args.db.data_dir)
        .await
        .map_err(|e| format!("cannot open the database: {e:?}"))?;
    let public_url = config.public_url.clone();
    let core = Core::start(db, klaxon_core::clock::serving_clock(), config)
        .await
        .map_err(|e| format!("cannot start: {e:?}"))?;
    if core.config.legacy_webhook {
        tracing::warn!(
            "the key-less webhook POST /api/alertmanager/webhook is on (KLAXON_LEGACY_WEBHOOK): \
             anyone who reaches Klaxon can open incidents in the oldest team"
        );
    }
    let loops = crate::loops::spawn(core.clone());
    let listener = tokio::net::TcpListener::bind(args.addr)
        .await
        .map_err(|e| format!("cannot listen on {}: {e}", args.addr))?;
    tracing::info!(addr = %args.addr, %public_url, "Klaxon is listening");
    println!(
        "Klaxon is listening on http://{} (public URL {public_url})",
        args.addr
    );
    let streams = core.clone();
    let limits = crate::listen::Limits {
        max_connections: args.max_connections,
        ..Default::default()
    }
    .fitted();
    let on_full: crate::listen::OnFull = {
        let core = core.clone();
        std::sync::Arc::new(move |full| core.connections_full(full))
    };
    crate::listen::serve(
        listener,
        crate::app(core),
        limits,
        Some(on_full),
        async move {
            shutdown().await;
            // Live-update streams never end by themselves; end them so the stop is not held open.
            streams.close_events();
        },
    )
    .await;
    // No new requests now and the ones in flight are answered: finish the loops' passes and
    // hand the lease over.
    tracing::info!("stopping");
    loops.stop(STOP_LOOPS_WITHIN).await;
    Ok(())
}

/// How long a stop waits for the loops' passes (a publish times out sooner), so the whole stop
/// fits in Kubernetes' default 30 s grace period.
const STOP_LOOPS_WITHIN: std::time::Duration = std::time::Duration::from_secs(20);

async fn shutdown() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        if let Ok(mut s) = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
        {
            s.recv().await;
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! { _ = ctrl_c => {}, _ = term => {} }
}
