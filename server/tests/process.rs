//! The `klaxon serve` process itself: on SIGTERM it stops accepting, answers the request in
//! flight, finishes its loops' passes, hands its lease over and exits 0.

use crate::common;

use common::process::{bootstrap, team_with_integration, until, Replica, LIMIT};
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

#[tokio::test]
async fn sigterm_answers_the_request_in_flight_releases_the_lease_and_exits_0() {
    let mut replica = Replica::start(&[]).await;
    let (base, port) = (replica.url.clone(), replica.port);
    let client = reqwest::Client::new();
    let admin = bootstrap(&client, &base).await;
    let (_, key) = team_with_integration(&client, &base, &admin, "web").await;
    let db = klaxon_core::Db::connect(Some(&replica.sqlite_url()), replica.data_dir())
        .await
        .unwrap();
    let lease = || async {
        sqlx::query_as::<_, (String, i64)>("SELECT holder, expires_at FROM leases")
            .fetch_one(&db.pool)
            .await
            .unwrap()
    };
    until("the sweeper taking its lease", || async {
        let (holder, _) = lease().await;
        (!holder.is_empty()).then_some(())
    })
    .await;

    // A webhook half sent when the signal comes. It asks to be told to go on (`Expect:
    // 100-continue`), which the server says only once the handler reads the body: the signal
    // then comes while the request is surely in flight, not while its bytes still wait unread
    // in the socket (a connection with no request begun is closed by a stop, as it may be).
    let body = json!({"version": "4", "groupKey": "g", "status": "firing", "alerts": [{
        "status": "firing", "labels": {"alertname": "DiskFull"}, "annotations": {},
        "startsAt": "2026-11-22T00:00:00Z", "endsAt": "0001-01-01T00:00:00Z", "fingerprint": "f1",
    }]})
    .to_string();
    let (first, rest) = body.as_bytes().split_at(body.len() / 2);
    let mut inflight = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    inflight
        .write_all(
            format!(
                "POST /api/alertmanager/webhook/{key} HTTP/1.1\r\nhost: klaxon\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\nexpect: 100-continue\r\n\r\n",
                body.len()
            )
            .as_bytes(),
        )
        .await
        .unwrap();
    let mut go_on = Vec::new();
    while !go_on.ends_with(b"\r\n\r\n") {
        let mut byte = [0u8; 1];
        tokio::time::timeout(LIMIT, inflight.read_exact(&mut byte))
            .await
            .expect("the server reads the body")
            .unwrap();
        go_on.push(byte[0]);
    }
    assert!(go_on.starts_with(b"HTTP/1.1 100"), "{go_on:?}");
    inflight.write_all(first).await.unwrap();
    inflight.flush().await.unwrap();
    replica.signal("TERM");
    until("new connections refused", || async {
        TcpStream::connect(("127.0.0.1", port))
            .await
            .is_err()
            .then_some(())
    })
    .await;
    inflight.write_all(rest).await.unwrap();
    let mut answer = String::new();
    tokio::time::timeout(LIMIT, inflight.read_to_string(&mut answer))
        .await
        .expect("the request in flight is answered")
        .unwrap();
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");

    let status = tokio::time::timeout(LIMIT, replica.child.wait())
        .await
        .expect("the process exits")
        .unwrap();
    assert_eq!(status.code(), Some(0));
    // The lease is free now, not 90 s from now, and the alert answered 200 is stored.
    assert_eq!(lease().await.1, 0);
    let (stored,): (i64,) = sqlx::query_as("SELECT COUNT(*) FROM alerts")
        .fetch_one(&db.pool)
        .await
        .unwrap();
    assert_eq!(stored, 1);
}
