//! `klaxon-operator`: the command line.

use clap::{Parser, Subcommand};
use klaxon_operator::ops::{self, Metrics};
use klaxon_operator::{controller, lease};
use std::sync::atomic::Ordering;
use std::sync::Arc;

#[derive(Parser)]
#[command(
    name = "klaxon-operator",
    version,
    about = "Kubernetes operator for Klaxon"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Print the CustomResourceDefinitions (YAML, one document each).
    Crd,
    /// Reconcile the resources of every namespace (in-cluster credentials or $KUBECONFIG),
    /// while this replica holds the leader lease.
    Run {
        /// Where credentials and the leader lease are kept: the operator's own namespace.
        #[arg(
            long,
            env = "KLAXON_OPERATOR_NAMESPACE",
            default_value = "klaxon-system"
        )]
        namespace: String,
        /// Address of `/metrics` and `/healthz`.
        #[arg(long, env = "KLAXON_OPERATOR_ADDR", default_value = "0.0.0.0:8081")]
        addr: std::net::SocketAddr,
    },
}

#[tokio::main]
async fn main() -> Result<(), String> {
    match Cli::parse().command {
        Command::Crd => print!("{}", klaxon_operator::crd::all_yaml()),
        Command::Run { namespace, addr } => {
            tracing_subscriber::fmt()
                .with_env_filter(
                    tracing_subscriber::EnvFilter::try_from_default_env()
                        .unwrap_or_else(|_| "info".into()),
                )
                .init();
            let client = kube::Client::try_default()
                .await
                .map_err(|e| format!("no Kubernetes API to talk to: {e}"))?;
            let metrics = Arc::new(Metrics::default());
            let listener = tokio::net::TcpListener::bind(addr)
                .await
                .map_err(|e| format!("cannot listen on {addr}: {e}"))?;
            let endpoints = ops::router(metrics.clone());
            tokio::spawn(async move { axum::serve(listener, endpoints).await });
            // Pod names are unique among live replicas; the pid tells restarts apart.
            let identity = format!(
                "{}-{}",
                std::env::var("HOSTNAME").unwrap_or_else(|_| "klaxon-operator".into()),
                std::process::id()
            );
            lease::acquire(&client, &namespace, &identity).await;
            tracing::info!(%identity, "leading: reconciling");
            tokio::select! {
                _ = controller::run(controller::Context::new(client.clone(), namespace.clone(), metrics.clone())) => {}
                _ = lease::keep(&client, &namespace, &identity) => {
                    metrics.healthy.store(false, Ordering::Relaxed);
                    return Err("lost the leader lease; exiting so a follower takes over".into());
                }
            }
        }
    }
    Ok(())
}
