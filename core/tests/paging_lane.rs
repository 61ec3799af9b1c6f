//! The paging lane on SQLite: with ordinary writers queued for the writer's turn, the notifier's
//! transaction is the next to write, not the last.

use klaxon_core::Db;
use std::sync::{Arc, Mutex};

#[tokio::test]
async fn the_paging_lane_writes_before_queued_requests() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::connect(None, dir.path()).await.unwrap();
    let order = Arc::new(Mutex::new(Vec::new()));
    let writing = db.begin().await.unwrap();

    let mut queued = Vec::new();
    for i in 0..4 {
        let (db, order) = (db.clone(), order.clone());
        queued.push(tokio::spawn(async move {
            let tx = db.begin().await.unwrap();
            order.lock().unwrap().push(format!("request {i}"));
            tx.commit().await.unwrap();
        }));
        // Each is waiting before the next one comes (one thread: it runs until it waits).
        settle().await;
    }
    let lane = {
        let (db, order) = (db.paging_lane(), order.clone());
        tokio::spawn(async move {
            let tx = db.begin().await.unwrap();
            order.lock().unwrap().push("paging".to_string());
            tx.commit().await.unwrap();
        })
    };
    settle().await;
    writing.commit().await.unwrap();
    lane.await.unwrap();
    for q in queued {
        q.await.unwrap();
    }
    let order = order.lock().unwrap().clone();
    // The request already waiting for the turn goes first; the lane passes the rest.
    assert_eq!(
        order,
        ["request 0", "paging", "request 1", "request 2", "request 3"]
    );
}

/// Lets every spawned task run until it waits (the test runtime has one thread).
async fn settle() {
    for _ in 0..10 {
        tokio::task::yield_now().await;
    }
}
