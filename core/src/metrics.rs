//! What an operator watches, in Prometheus text (`GET /metrics`). Counters and histograms are
//! this replica's own and move where the work happens; gauges that describe the shared
//! database (the outbox, the lease) are read at scrape time.

use crate::{Core, Result};
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{exponential_buckets, Histogram};
use prometheus_client::registry::{Registry, Unit};
use std::time::Duration;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct IntegrationLabel {
    /// The integration's id; `legacy` for the key-less path.
    pub integration: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct PageLabel {
    /// `opening`, `reminder`, `escalation`, `all_clear`, …: `domain::paging::PageKind`.
    pub kind: &'static str,
    /// `ntfy`, `webpush` or `email`: `domain::contact::ContactKind`.
    pub road: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct RoadLabel {
    /// `ntfy`, `webpush` or `email`.
    pub road: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct PhoneLabel {
    /// `twilio` or `sms-gateway`: `roads::phone::Provider::name`.
    pub provider: &'static str,
    /// `text` or `call`.
    pub kind: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct PhoneOutcomeLabel {
    pub provider: &'static str,
    pub kind: &'static str,
    /// `sent` or `failed`.
    pub outcome: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ChannelLabel {
    /// `matrix`, `slack`, `teams` or `webhook`: never the channel's URL, which is a secret.
    pub kind: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct TeamLabel {
    /// The team's name.
    pub team: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct RouteLabel {
    pub method: String,
    /// The route template (`/api/incidents/{id}`), never the raw path.
    pub route: String,
    pub status: u16,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct LeaseLabel {
    pub lease: &'static str,
}

fn seconds_histogram() -> Histogram {
    // 1 ms to about 16 s.
    Histogram::new(exponential_buckets(0.001, 2.0, 15))
}

fn acknowledge_histogram() -> Histogram {
    // Half a minute to four hours: a page answered at once to a night's slow answer.
    Histogram::new([
        30.0, 60.0, 120.0, 300.0, 600.0, 900.0, 1800.0, 3600.0, 7200.0, 14400.0,
    ])
}

fn delivery_histogram() -> Histogram {
    // Whole seconds of the clock: 0 (on time) up to about 17 minutes of retries.
    Histogram::new([0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0, 1020.0])
}

/// Every metric of one replica. Names get the `klaxon_` prefix; each is documented in
/// the guide's "Operating Klaxon" (`docs/guide/src/operating.md`).
pub struct Metrics {
    registry: Registry,
    pub webhooks: Family<IntegrationLabel, Counter>,
    pub alerts_accepted: Family<IntegrationLabel, Counter>,
    pub alerts_ignored: Family<IntegrationLabel, Counter>,
    pub incidents_opened: Counter,
    /// From an incident's opening to its acknowledgement, by team.
    pub time_to_acknowledge: Family<TeamLabel, Histogram, fn() -> Histogram>,
    pub pages_sent: Family<PageLabel, Counter>,
    pub pages_failed: Family<PageLabel, Counter>,
    pub pages_retried: Family<PageLabel, Counter>,
    pub pages_given_up: Family<PageLabel, Counter>,
    pub page_summaries: Counter,
    /// From when a page was due to when its road took it, by road.
    pub page_latency: Family<RoadLabel, Histogram, fn() -> Histogram>,
    pub notifier_pass: Histogram,
    pub sweeper_pass: Histogram,
    pub phone_sends: Family<PhoneOutcomeLabel, Counter>,
    pub phone_units: Family<PhoneLabel, Counter>,
    pub phone_latency: Family<PhoneLabel, Histogram, fn() -> Histogram>,
    pub channel_messages: Family<ChannelLabel, Counter>,
    pub channel_summaries: Family<ChannelLabel, Counter>,
    pub channel_failures: Family<ChannelLabel, Counter>,
    pub channel_given_up: Family<ChannelLabel, Counter>,
    channels_failing: Gauge,
    pub http_requests: Family<RouteLabel, Counter>,
    pub http_duration: Family<RouteLabel, Histogram, fn() -> Histogram>,
    outbox_depth: Gauge,
    oldest_due_age: Gauge,
    lease_held: Family<LeaseLabel, Gauge>,
    lease_age: Family<LeaseLabel, Gauge>,
    pool_size: Gauge,
    pool_idle: Gauge,
    pub(crate) degraded: Gauge,
}

impl Default for Metrics {
    fn default() -> Self {
        // Long by design: every metric is registered here once, with its help text.
        let mut r = Registry::with_prefix("klaxon");
        let m = Metrics {
            webhooks: Family::default(),
            alerts_accepted: Family::default(),
            alerts_ignored: Family::default(),
            incidents_opened: Counter::default(),
            time_to_acknowledge: Family::new_with_constructor(acknowledge_histogram),
            pages_sent: Family::default(),
            pages_failed: Family::default(),
            pages_retried: Family::default(),
            pages_given_up: Family::default(),
            page_summaries: Counter::default(),
            page_latency: Family::new_with_constructor(delivery_histogram),
            notifier_pass: seconds_histogram(),
            sweeper_pass: seconds_histogram(),
            phone_sends: Family::default(),
            phone_units: Family::default(),
            phone_latency: Family::new_with_constructor(seconds_histogram),
            channel_messages: Family::default(),
            channel_summaries: Family::default(),
            channel_failures: Family::default(),
            channel_given_up: Family::default(),
            channels_failing: Gauge::default(),
            http_requests: Family::default(),
            http_duration: Family::new_with_constructor(seconds_histogram),
            outbox_depth: Gauge::default(),
            oldest_due_age: Gauge::default(),
            lease_held: Family::default(),
            lease_age: Family::default(),
            pool_size: Gauge::default(),
            pool_idle: Gauge::default(),
            degraded: Gauge::default(),
            registry: Registry::default(),
        };
        r.register(
            "webhooks_received",
            "Webhook payloads taken in, by integration",
            m.webhooks.clone(),
        );
        r.register(
            "alerts_accepted",
            "Alerts stored or refreshed, by integration",
            m.alerts_accepted.clone(),
        );
        r.register(
            "alerts_ignored",
            "Alerts unusable or older than the stored one, by integration",
            m.alerts_ignored.clone(),
        );
        r.register(
            "incidents_opened",
            "Incidents opened by alerts",
            m.incidents_opened.clone(),
        );
        r.register_with_unit(
            "time_to_acknowledge",
            "From an incident's opening to its acknowledgement (by a person or its sender), by team",
            Unit::Seconds,
            m.time_to_acknowledge.clone(),
        );
        r.register(
            "pages_sent",
            "Pages their road accepted, by kind and road",
            m.pages_sent.clone(),
        );
        r.register(
            "pages_failed",
            "Delivery attempts that failed, by kind and road",
            m.pages_failed.clone(),
        );
        r.register(
            "pages_retried",
            "Failed pages put back for another attempt, by kind and road",
            m.pages_retried.clone(),
        );
        r.register(
            "pages_given_up",
            "Pages abandoned, failed for good or after a day of failures, by kind and road",
            m.pages_given_up.clone(),
        );
        r.register(
            "page_summaries",
            "Summary pushes that carried the pages of a flooded topic",
            m.page_summaries.clone(),
        );
        r.register_with_unit(
            "page_delivery_delay",
            "From when a page was due to when its road took it (on the service's clock), by road",
            Unit::Seconds,
            m.page_latency.clone(),
        );
        r.register_with_unit(
            "notifier_pass_duration",
            "How long this replica's notifier passes took",
            Unit::Seconds,
            m.notifier_pass.clone(),
        );
        r.register_with_unit(
            "sweeper_pass_duration",
            "How long this replica's sweeps took",
            Unit::Seconds,
            m.sweeper_pass.clone(),
        );
        r.register(
            "channel_messages_sent",
            "Messages team channels accepted (a storm summary is one), by channel kind",
            m.channel_messages.clone(),
        );
        r.register(
            "channel_summaries",
            "Storm summaries sent to team channels, by channel kind",
            m.channel_summaries.clone(),
        );
        r.register(
            "channel_failures",
            "Attempts to post to a team channel that failed, by channel kind",
            m.channel_failures.clone(),
        );
        r.register(
            "channel_posts_given_up",
            "Channel posts abandoned after a day of failures, by channel kind",
            m.channel_given_up.clone(),
        );
        r.register(
            "phone_sends",
            "Texts and calls handed to a phone provider, by provider, kind and outcome",
            m.phone_sends.clone(),
        );
        r.register(
            "phone_units",
            "What the bill counts: SMS segments of texts and calls placed, by provider and kind",
            m.phone_units.clone(),
        );
        r.register_with_unit(
            "phone_request_duration",
            "How long a phone provider took to take a text or a call, by provider and kind",
            Unit::Seconds,
            m.phone_latency.clone(),
        );
        r.register(
            "channels_failing",
            "Team channels whose last attempt failed (all replicas)",
            m.channels_failing.clone(),
        );
        r.register(
            "http_requests",
            "HTTP requests answered, by method, route template and status",
            m.http_requests.clone(),
        );
        r.register_with_unit(
            "http_request_duration",
            "HTTP request latency, by method, route template and status",
            Unit::Seconds,
            m.http_duration.clone(),
        );
        r.register(
            "outbox_pending_pages",
            "Pages waiting in the outbox (all replicas)",
            m.outbox_depth.clone(),
        );
        r.register_with_unit(
            "oldest_due_page_age",
            "How long the oldest due, unsent page has been due (0 when none)",
            Unit::Seconds,
            m.oldest_due_age.clone(),
        );
        r.register(
            "lease_held",
            "1 when this replica holds the loop's lease",
            m.lease_held.clone(),
        );
        r.register_with_unit(
            "lease_renewal_age",
            "Time since the loop's lease was last taken or renewed, by any replica",
            Unit::Seconds,
            m.lease_age.clone(),
        );
        r.register(
            "db_pool_connections",
            "Database connections open in this replica's pool",
            m.pool_size.clone(),
        );
        r.register(
            "db_pool_idle_connections",
            "Open connections not in use",
            m.pool_idle.clone(),
        );
        r.register(
            "degraded",
            "1 while /healthz answers degraded (a page overdue, a loop stalled)",
            m.degraded.clone(),
        );
        Metrics { registry: r, ..m }
    }
}

impl Metrics {
    /// Counts one answered HTTP request.
    pub fn request(&self, method: &str, route: &str, status: u16, took: Duration) {
        let label = RouteLabel {
            method: method.to_string(),
            route: route.to_string(),
            status,
        };
        self.http_requests.get_or_create(&label).inc();
        self.http_duration
            .get_or_create(&label)
            .observe(took.as_secs_f64());
    }

    pub(crate) fn intake(&self, integration: Option<i64>, accepted: usize, ignored: usize) {
        let label = IntegrationLabel {
            integration: integration.map_or_else(|| "legacy".into(), |id| id.to_string()),
        };
        self.webhooks.get_or_create(&label).inc();
        self.alerts_accepted
            .get_or_create(&label)
            .inc_by(accepted as u64);
        self.alerts_ignored
            .get_or_create(&label)
            .inc_by(ignored as u64);
    }
}

impl Core {
    /// The exposition: the shared gauges read now, then every metric encoded.
    pub async fn metrics_text(&self) -> Result<String> {
        let m = &self.metrics;
        let now = self.now();
        let (depth, oldest): (i64, Option<i64>) = sqlx::query_as(
            "SELECT COUNT(*), MIN(CASE WHEN due_at <= $1 OR first_due_at IS NOT NULL THEN COALESCE(first_due_at, due_at) END) \
             FROM pages WHERE state = 'pending'",
        )
        .bind(now)
        .fetch_one(&self.db.pool)
        .await?;
        m.outbox_depth.set(depth);
        let (failing,): (i64,) =
            sqlx::query_as("SELECT COUNT(*) FROM channels WHERE failing_since IS NOT NULL")
                .fetch_one(&self.db.pool)
                .await?;
        m.channels_failing.set(failing);
        m.oldest_due_age.set(oldest.map_or(0, |t| now - t));
        let leases = self.leases().await?;
        for lease in crate::leases::LEASES {
            let row = leases.iter().find(|l| l.name == lease).cloned();
            let label = LeaseLabel { lease };
            let row = row.unwrap_or_default();
            let held = *row.holder == *self.holder && row.expires_at >= now;
            m.lease_held.get_or_create(&label).set(i64::from(held));
            m.lease_age
                .get_or_create(&label)
                .set(crate::leases::lease_age(row.expires_at, now).unwrap_or(0));
        }
        m.pool_size.set(i64::from(self.db.pool.size()));
        m.pool_idle.set(self.db.pool.num_idle() as i64);
        self.check_health(&leases).await?;
        let mut text = String::new();
        prometheus_client::encoding::text::encode(&mut text, &m.registry)
            .map_err(|e| crate::Error::Internal(format!("metrics: {e}")))?;
        Ok(text)
    }
}
