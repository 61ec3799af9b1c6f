//! Shared by the operator's tests: a real Klaxon router on loopback HTTP (SQLite).
#![allow(dead_code)]

use klaxon_core::{Config, Core, Db, ManualClock};
use std::net::SocketAddr;
use std::sync::Arc;

/// A Klaxon server; its database lives as long as this value.
pub struct Server {
    pub url: String,
    _dir: tempfile::TempDir,
}

pub async fn klaxon() -> Server {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}?mode=rwc", dir.path().join("k.db").display());
    let db = Db::connect(Some(&url), dir.path()).await.unwrap();
    let clock = Arc::new(ManualClock::new(1_795_305_600));
    let core = Core::start(db, clock, Config::default()).await.unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        axum::serve(
            listener,
            klaxon_server::app(core).into_make_service_with_connect_info::<SocketAddr>(),
        )
        .await
        .unwrap();
    });
    Server {
        url: format!("http://{addr}"),
        _dir: dir,
    }
}
