//! `klaxon-operator`: the command line.

use clap::{Parser, Subcommand};

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
    /// Reconcile the resources of every namespace (in-cluster credentials or $KUBECONFIG).
    Run {
        /// Where credentials are kept: the operator's own namespace.
        #[arg(
            long,
            env = "KLAXON_OPERATOR_NAMESPACE",
            default_value = "klaxon-system"
        )]
        namespace: String,
    },
}

#[tokio::main]
async fn main() -> Result<(), String> {
    match Cli::parse().command {
        Command::Crd => print!("{}", klaxon_operator::crd::all_yaml()),
        Command::Run { namespace } => {
            tracing_subscriber::fmt()
                .with_env_filter(
                    tracing_subscriber::EnvFilter::try_from_default_env()
                        .unwrap_or_else(|_| "info".into()),
                )
                .init();
            let client = kube::Client::try_default()
                .await
                .map_err(|e| format!("no Kubernetes API to talk to: {e}"))?;
            klaxon_operator::controller::run(client, namespace).await;
        }
    }
    Ok(())
}
