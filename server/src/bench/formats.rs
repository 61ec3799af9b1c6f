//! `klaxon bench intake --format pagerduty|opsgenie|templated`: events through a vendor's API
//! (or generic JSON read by a webhook integration's templates) against the same number of
//! one-alert Alertmanager webhooks (each event an alert with its own incident, as is each webhook
//! here), on fresh databases, the two sides' order alternating between rounds; the ratios are of
//! the medians. Every alert must be stored and open one incident.

use super::send::{median, payload, post_all, rate, serve, IntakeRun, Request};
use super::{err, fresh_db, post};
use axum::body::Bytes;
use serde_json::{json, Value};
use std::path::Path;

/// What `klaxon bench intake` sends.
#[derive(Clone, Copy, PartialEq, Eq, Debug, clap::ValueEnum)]
pub enum Format {
    Webhook,
    Pagerduty,
    Opsgenie,
    /// Generic JSON, read by a `webhook` integration's templates.
    Templated,
}

/// The templated side's templates: each template renders per request.
fn templates() -> Value {
    json!({"title": "{{ payload.title }}", "severity": "{{ payload.severity }}",
           "dedup_key": "{{ payload.id }}", "resolved": "{{ payload.status == 'resolved' }}",
           "labels": {"service": "{{ payload.service }}", "job": "{{ payload.job | default('web') }}"},
           "link": "{{ payload.url }}", "message": "{{ payload.detail | json_dumps }}"})
}

impl Format {
    fn kind(self) -> &'static str {
        match self {
            Format::Webhook => "alertmanager",
            Format::Pagerduty => "pagerduty",
            Format::Opsgenie => "opsgenie",
            Format::Templated => "webhook",
        }
    }

    /// Event `p` as the format's sender sends it, to the integration with `key`.
    fn request(self, base: &str, key: &str, p: usize, starts_at: &str) -> Request {
        let (url, headers, body) = match self {
            Format::Webhook => (
                format!("{base}/api/alertmanager/webhook/{key}"),
                Vec::new(),
                payload(p, 1, starts_at),
            ),
            Format::Pagerduty => (
                format!("{base}/v2/enqueue"),
                Vec::new(),
                json!({"routing_key": key, "event_action": "trigger", "dedup_key": format!("event-{p}"),
                       "payload": {"summary": format!("HighErrorRate svc-{p}"), "source": format!("web-{p}"),
                                   "severity": "critical", "custom_details": {"job": "web"}}}),
            ),
            Format::Opsgenie => (
                format!("{base}/v2/alerts"),
                vec![("authorization", format!("GenieKey {key}"))],
                json!({"message": format!("HighErrorRate svc-{p}"), "alias": format!("event-{p}"),
                       "priority": "P1", "details": {"service": format!("svc-{p}"), "job": "web"}}),
            ),
            Format::Templated => (
                format!("{base}/api/alertmanager/webhook/{key}"),
                Vec::new(),
                json!({"title": format!("HighErrorRate svc-{p}"), "severity": "critical",
                       "id": format!("event-{p}"), "status": "firing", "service": format!("svc-{p}"),
                       "url": format!("https://grafana.example/d/{p}"), "detail": {"errors": p}}),
            ),
        };
        Request {
            url,
            headers,
            body: Bytes::from(serde_json::to_vec(&body).unwrap_or_default()),
        }
    }
}

/// A webhook is taken when it says its one alert was; an event when answered 202.
fn taken(status: reqwest::StatusCode, text: &str) -> bool {
    match status.as_u16() {
        200 => serde_json::from_str::<Value>(text).is_ok_and(|v| v["accepted"] == 1),
        202 => true,
        _ => false,
    }
}

/// How a comparison runs: `senders` concurrent clients send `events` events (and as many
/// webhooks) per side and round, on SQLite or on PostgreSQL at `database_url`.
pub(super) struct Plan<'a> {
    pub senders: usize,
    pub events: usize,
    pub database_url: Option<&'a str>,
    pub rounds: usize,
}

pub(super) async fn compare(
    args: &Plan<'_>,
    format: Format,
    dir: &Path,
    schemas: &mut Vec<String>,
) -> Result<(), String> {
    let events = args.events;
    println!(
        "{}: {} senders, {events} events (one alert each) through {:?} against as many webhooks, {} rounds",
        if args.database_url.is_some() { "postgresql" } else { "sqlite" },
        args.senders,
        format,
        args.rounds.max(1)
    );
    let (mut theirs, mut webhooks) = (Vec::new(), Vec::new());
    let (mut their_p99, mut webhook_p99) = (Vec::new(), Vec::new());
    for round in 1..=args.rounds.max(1) {
        let order = if round % 2 == 1 {
            [format, Format::Webhook]
        } else {
            [Format::Webhook, format]
        };
        for side in order {
            let name = format!("{}{round}", side.kind());
            let db = fresh_db(args.database_url, dir, &name, schemas).await?;
            let run = measure(args, db.clone(), side).await?;
            let (stored, incidents, groups) = super::stored_counts(&db).await?;
            db.pool.close().await;
            let events_per_s = rate(events, run.wall);
            println!(
                "round {round}: {:?} {events_per_s:.0} events/s (p50 {} ms, p99 {} ms) · failed {} · \
                 stored {stored} · incidents {incidents}",
                side,
                run.p50.as_millis(),
                run.p99.as_millis(),
                run.failures
            );
            if let Some(e) = run.first_error {
                eprintln!("first failed request: {e}");
            }
            let whole =
                stored == events as i64 && incidents == events as i64 && groups == incidents;
            if run.failures != 0 || !whole {
                return Err("intake lost, doubled or refused work (see above)".into());
            }
            let p99 = run.p99.as_secs_f64() * 1000.0;
            if side == format {
                theirs.push(events_per_s);
                their_p99.push(p99);
            } else {
                webhooks.push(events_per_s);
                webhook_p99.push(p99);
            }
        }
    }
    let (theirs, webhooks) = (median(&mut theirs), median(&mut webhooks));
    let (their_p99, webhook_p99) = (median(&mut their_p99), median(&mut webhook_p99));
    println!(
        "median: {format:?} {theirs:.0} events/s · webhook {webhooks:.0} events/s · ratio {:.2} · \
         p99 {their_p99:.1} ms against {webhook_p99:.1} ms, ratio {:.2}",
        theirs / webhooks,
        their_p99 / webhook_p99
    );
    Ok(())
}

/// Serves the application over `db` and sends the events of `format` to a new integration of
/// its kind.
async fn measure(
    args: &Plan<'_>,
    db: klaxon_core::Db,
    format: Format,
) -> Result<IntakeRun, String> {
    let (base, server) = serve(db).await?;
    let client = reqwest::Client::new();
    let team = super::bench_team(&client, &base).await?;
    let made = post(
        &client,
        &format!("{base}/api/teams/{}/integrations", team.team_id),
        Some(&team.api_key),
        match format {
            Format::Templated => {
                json!({"name": "json", "kind": "webhook", "templates": templates()})
            }
            _ => json!({"name": format.kind(), "kind": format.kind()}),
        },
    )
    .await?;
    let key = made["key"]
        .as_str()
        .ok_or("no integration key")?
        .to_string();
    let starts_at = time::OffsetDateTime::now_utc()
        .format(&time::format_description::well_known::Rfc3339)
        .map_err(err)?;
    let requests = (0..args.events)
        .map(|p| format.request(&base, &key, p, &starts_at))
        .collect();
    let run = post_all(&client, args.senders, requests, taken).await;
    server.abort();
    run
}
