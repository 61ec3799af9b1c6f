//! What the intake benches share: the application served on loopback, a sender's requests and
//! their timing, the payloads, and the figures' arithmetic.

use super::err;
use axum::body::Bytes;
use klaxon_core::{Config, Core, Db, SystemClock};
use serde_json::{json, Value};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::task::JoinSet;

pub(crate) fn median(rates: &mut [f64]) -> f64 {
    rates.sort_by(f64::total_cmp);
    rates[rates.len() / 2]
}

pub(crate) fn rate(alerts: usize, wall: Duration) -> f64 {
    alerts as f64 / wall.as_secs_f64()
}

/// Payload `p` as Alertmanager sends it: its own group (service `svc-p`), distinct fingerprints.
pub(crate) fn payload(p: usize, alerts: usize, starts_at: &str) -> Value {
    let service = format!("svc-{p}");
    let alerts: Vec<Value> = (0..alerts)
        .map(|i| {
            json!({
                "status": "firing",
                "labels": {"alertname": "HighErrorRate", "service": service, "severity": "critical",
                           "instance": format!("web-{i}:9100"), "job": "web"},
                "annotations": {"summary": "Error rate above 5%",
                                "runbook_url": "https://runbooks.example/high-error"},
                "startsAt": starts_at,
                "endsAt": "0001-01-01T00:00:00Z",
                "generatorURL": "http://prometheus:9090/graph?g0.expr=rate%28errors%5B5m%5D%29",
                "fingerprint": format!("{:016x}", p * alerts + i),
            })
        })
        .collect();
    json!({
        "version": "4",
        "groupKey": format!("{{}}:{{alertname=\"HighErrorRate\", service=\"{service}\"}}"),
        "status": "firing",
        "receiver": "klaxon",
        "groupLabels": {"alertname": "HighErrorRate", "service": service},
        "commonLabels": {"alertname": "HighErrorRate", "service": service, "severity": "critical", "job": "web"},
        "commonAnnotations": {"summary": "Error rate above 5%"},
        "externalURL": "http://alertmanager:9093",
        "truncatedAlerts": 0,
        "alerts": alerts,
    })
}

pub(crate) struct IntakeRun {
    pub wall: Duration,
    pub p50: Duration,
    pub p99: Duration,
    pub failures: usize,
    pub first_error: Option<String>,
}

/// The real application on a loopback port over `db`, with no background loops (only intake is
/// measured) and a per-key rate that holds no sender (`UNHELD`). Its base URL, and the task
/// serving it.
pub(crate) async fn serve(db: Db) -> Result<(String, tokio::task::JoinHandle<()>), String> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .map_err(err)?;
    let base = format!("http://{}", listener.local_addr().map_err(err)?);
    let config = Config {
        public_url: base.clone(),
        intake_per_minute: super::UNHELD,
        ..Config::default()
    };
    let core = Core::start(db, Arc::new(SystemClock), config)
        .await
        .map_err(err)?;
    let app = crate::app(core).into_make_service_with_connect_info::<SocketAddr>();
    let server = tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    Ok((base, server))
}

/// One request a sender makes: where, its headers, its body (serialized before the clock
/// starts: the sender's cost is not intake's).
pub(crate) struct Request {
    pub url: String,
    pub headers: Vec<(&'static str, String)>,
    pub body: Bytes,
}

/// Posts every request from `senders` concurrent clients, each taking every `senders`-th, and
/// times them; `taken` says whether an answer is the one expected.
pub(crate) async fn post_all<F>(
    client: &reqwest::Client,
    senders: usize,
    requests: Vec<Request>,
    taken: F,
) -> Result<IntakeRun, String>
where
    F: Fn(reqwest::StatusCode, &str) -> bool + Clone + Send + 'static,
{
    let count = requests.len();
    let requests = Arc::new(requests);
    let started = Instant::now();
    let mut tasks = JoinSet::new();
    for s in 0..senders {
        let (client, requests, taken) = (client.clone(), requests.clone(), taken.clone());
        tasks.spawn(async move {
            let mut latencies = Vec::new();
            let mut errors = Vec::new();
            for r in requests.iter().skip(s).step_by(senders) {
                let t = Instant::now();
                let mut req = client
                    .post(&r.url)
                    .header("content-type", "application/json")
                    .body(r.body.clone());
                for (name, value) in &r.headers {
                    req = req.header(*name, value);
                }
                let outcome = match req.send().await {
                    Ok(res) => {
                        let status = res.status();
                        let text = res.text().await.unwrap_or_default();
                        if taken(status, &text) {
                            Ok(())
                        } else {
                            Err(format!("{status}: {text}"))
                        }
                    }
                    Err(e) => Err(e.to_string()),
                };
                latencies.push(t.elapsed());
                if let Err(e) = outcome {
                    errors.push(e);
                }
            }
            (latencies, errors)
        });
    }
    let mut latencies = Vec::with_capacity(count);
    let mut errors = Vec::new();
    while let Some(done) = tasks.join_next().await {
        let (l, e) = done.map_err(err)?;
        latencies.extend(l);
        errors.extend(e);
    }
    let wall = started.elapsed();
    latencies.sort();
    let at = |q: usize| latencies[(latencies.len() * q / 100).min(latencies.len() - 1)];
    Ok(IntakeRun {
        wall,
        p50: at(50),
        p99: at(99),
        failures: errors.len(),
        first_error: errors.into_iter().next(),
    })
}
