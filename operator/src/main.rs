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
}

fn main() {
    match Cli::parse().command {
        Command::Crd => print!("{}", klaxon_operator::crd::all_yaml()),
    }
}
