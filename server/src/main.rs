#[tokio::main]
async fn main() {
    if let Err(e) = klaxon_server::cli::run().await {
        eprintln!("klaxon: {e}");
        std::process::exit(1);
    }
}
