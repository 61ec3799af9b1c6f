#[tokio::main]
async fn main() {
    klaxon_server::keep_large_allocations_apart();
    if let Err(e) = klaxon_server::cli::run().await {
        eprintln!("klaxon: {e}");
        std::process::exit(1);
    }
}
