//! The operator's own endpoints: `/metrics` (Prometheus text: reconciles, failures and their
//! durations per kind) and `/healthz` (200 while this replica holds the lease or waits for it).

use axum::extract::State;
use axum::http::{header, StatusCode};
use axum::response::IntoResponse;
use axum::routing::get;
use axum::Router;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::histogram::{exponential_buckets, Histogram};
use prometheus_client::registry::Registry;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct KindLabel {
    pub kind: String,
}

/// What the controllers report.
pub struct Metrics {
    registry: Registry,
    reconciles: Family<KindLabel, Counter>,
    failures: Family<KindLabel, Counter>,
    duration: Family<KindLabel, Histogram>,
    /// False once the lease is lost: the process is about to end.
    pub healthy: AtomicBool,
}

impl Default for Metrics {
    fn default() -> Self {
        let mut registry = Registry::with_prefix("klaxon_operator");
        let reconciles = Family::<KindLabel, Counter>::default();
        let failures = Family::<KindLabel, Counter>::default();
        let duration = Family::<KindLabel, Histogram>::new_with_constructor(|| {
            Histogram::new(exponential_buckets(0.005, 2.0, 12))
        });
        registry.register("reconciles", "Reconciles run, by kind", reconciles.clone());
        registry.register(
            "reconcile_failures",
            "Reconciles that failed, by kind",
            failures.clone(),
        );
        registry.register(
            "reconcile_duration_seconds",
            "How long reconciles took, by kind",
            duration.clone(),
        );
        Metrics {
            registry,
            reconciles,
            failures,
            duration,
            healthy: AtomicBool::new(true),
        }
    }
}

impl Metrics {
    /// Counts one reconcile of `kind` that started at `start`.
    pub fn observe(&self, kind: &str, start: Instant, ok: bool) {
        let label = KindLabel { kind: kind.into() };
        self.reconciles.get_or_create(&label).inc();
        if !ok {
            self.failures.get_or_create(&label).inc();
        }
        self.duration
            .get_or_create(&label)
            .observe(start.elapsed().as_secs_f64());
    }

    pub fn text(&self) -> String {
        let mut out = String::new();
        prometheus_client::encoding::text::encode(&mut out, &self.registry)
            .expect("writing to a String");
        out
    }
}

pub fn router(metrics: Arc<Metrics>) -> Router {
    Router::new()
        .route("/metrics", get(metrics_text))
        .route("/healthz", get(healthz))
        .with_state(metrics)
}

async fn metrics_text(State(m): State<Arc<Metrics>>) -> impl IntoResponse {
    (
        [(
            header::CONTENT_TYPE,
            "text/plain; version=0.0.4; charset=utf-8",
        )],
        m.text(),
    )
}

async fn healthz(State(m): State<Arc<Metrics>>) -> StatusCode {
    if m.healthy.load(Ordering::Relaxed) {
        StatusCode::OK
    } else {
        StatusCode::SERVICE_UNAVAILABLE
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reconciles_are_counted_per_kind() {
        let m = Metrics::default();
        m.observe("KlaxonTeam", Instant::now(), true);
        m.observe("KlaxonTeam", Instant::now(), false);
        let text = m.text();
        assert!(
            text.contains(r#"klaxon_operator_reconciles_total{kind="KlaxonTeam"} 2"#),
            "{text}"
        );
        assert!(text.contains(r#"klaxon_operator_reconcile_failures_total{kind="KlaxonTeam"} 1"#));
        assert!(text.contains("klaxon_operator_reconcile_duration_seconds_count"));
    }
}
