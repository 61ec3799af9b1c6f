//! Alert intake: one request's alerts, read by its integration's source (`crate::sources`), are
//! one transaction. Alerts are upserted by (team, fingerprint); a transition into firing opens or
//! joins an incident; incidents whose alerts have all stopped firing resolve. Idempotent, because
//! HA Alertmanager delivers at least once.

mod change;
mod event;
mod routing;
mod stamps;
mod store;

use crate::db::{Backend, Tx};
use crate::deadman;
use crate::incidents::lifecycle::{self, Group, Took};
use crate::paging::{self, GroupPlan};
use crate::sources::{source, Alerts, Reading, Source};
use crate::timeline::{self, Entry};
use crate::{Core, Error, Result};
use klaxon_domain::alerting::{IncomingAlert, Ingest, Severity};
use klaxon_domain::incident::TimelineKind;
use klaxon_domain::mapping::WebhookTemplates;
use klaxon_domain::routing::Rules;
use serde::Serialize;
use sqlx::AnyConnection;
pub use stamps::stamp_integration;
pub(crate) use stamps::Stamps;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;
use store::{any_fires, apply_alert, insert_new, load_stored, team_has, StoredRow, TeamHas};

/// How a payload arrived.
pub enum Route<'a> {
    /// `POST /api/alertmanager/webhook/{key}`.
    Key(&'a str),
    /// The deprecated key-less path: the oldest team.
    Legacy,
}

#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct IntakeOutcome {
    /// Alerts stored or refreshed.
    pub accepted: usize,
    /// Alerts that were unusable or an older instance of a stored alert.
    pub ignored: usize,
}

/// Where a payload goes, decided from its route before its body is read.
#[derive(Clone)]
pub struct Destination {
    integration_id: Option<i64>,
    team_id: i64,
    /// The format the integration's sender speaks.
    source: &'static dyn Source,
    /// A generic webhook's templates, read with the key.
    templates: Option<Arc<WebhookTemplates>>,
    /// The integration's routing rules, read with the key.
    rules: Option<Arc<Rules>>,
}

impl Destination {
    /// The integration kind whose source reads what is sent here.
    pub fn kind(&self) -> &'static str {
        self.source.kind()
    }
}

impl Core {
    /// Checks the key (or finds the legacy path's team, when `KLAXON_LEGACY_WEBHOOK` turned
    /// that path on; else it is a 404). Called before the body is read, so an unknown key is
    /// refused with 401 whatever it sends.
    pub async fn intake_destination(&self, route: Route<'_>) -> Result<Destination> {
        match route {
            Route::Key(key) => {
                let found = self.integration_by_key(key).await?;
                self.key_rate
                    .check(crate::key_rate::Keyed::Integration(found.id))?;
                Ok(Destination {
                    integration_id: Some(found.id),
                    team_id: found.team_id,
                    source: source(&found.kind),
                    templates: found.templates()?.map(Arc::new),
                    rules: found.rules()?.map(Arc::new),
                })
            }
            Route::Legacy if !self.config.legacy_webhook => Err(Error::NotFound),
            Route::Legacy => {
                let oldest: Option<(i64,)> =
                    sqlx::query_as("SELECT id FROM teams ORDER BY id LIMIT 1")
                        .fetch_optional(&self.db.pool)
                        .await?;
                let (team_id,) = oldest.ok_or_else(|| {
                    Error::Conflict("no team exists to receive alerts; create one first".into())
                })?;
                Ok(Destination {
                    integration_id: None,
                    team_id,
                    source: source("alertmanager"),
                    templates: None,
                    rules: None,
                })
            }
        }
    }

    /// A request's body, read by the destination's source, then taken in (`intake`).
    pub async fn receive(&self, to: Destination, body: &[u8]) -> Result<IntakeOutcome> {
        let templates = to.templates.as_deref();
        let reading = to
            .source
            .read(body, self.now(), templates)
            .map_err(Error::Invalid)?;
        if let Some(rules) = to.rules.clone() {
            return self.route(to, reading, &rules).await;
        }
        match reading {
            Reading::Alerts(alerts) => self.intake(to, alerts).await,
            Reading::Event(event) => self.apply_event(to, event).await,
        }
    }

    /// Takes in one request's alerts, whatever source they came from.
    pub async fn intake(&self, to: Destination, alerts: Alerts) -> Result<IntakeOutcome> {
        let integration_id = to.integration_id;
        let Alerts {
            group,
            alerts: usable,
            ignored,
        } = alerts;
        let group = Group {
            key: &group.key,
            labels: &group.labels,
            integration_id,
        };
        // Alerts are applied in fingerprint order, so concurrent payloads lock rows in one order;
        // a deadlock or busy database that still happens is retried whole.
        let mut attempt = 0;
        loop {
            attempt += 1;
            match self.apply_payload(&to, &group, &usable).await {
                Err(Error::Busy) if attempt < 5 => continue,
                Err(e) => return Err(e),
                Ok(done) => {
                    let outcome = IntakeOutcome {
                        accepted: usable.len() - done.discarded,
                        ignored: ignored + done.discarded,
                    };
                    self.metrics
                        .intake(integration_id, outcome.accepted, outcome.ignored);
                    self.metrics.incidents_opened.inc_by(done.opened);
                    return Ok(outcome);
                }
            }
        }
    }

    /// One transaction for the whole payload.
    async fn apply_payload(
        &self,
        to: &Destination,
        group: &Group<'_>,
        alerts: &BTreeMap<String, IncomingAlert>,
    ) -> Result<Committed> {
        let Destination {
            integration_id,
            team_id,
            ..
        } = *to;
        let now = self.now();
        // What the payload's alerts were and, when one fires, how its group's incident opens
        // or which it joins. On SQLite read before the transaction, which holds the one
        // writer's turn, so only writes (and what a race makes read again) happen inside; on
        // PostgreSQL inside it, where its plans are kept (`Db::begin_indexed`).
        let (mut tx, read) = match self.db.backend {
            Backend::Sqlite => {
                let mut conn = self.db.pool.acquire().await?;
                let read = read_payload(&mut conn, Backend::Sqlite, to, group, alerts, now).await?;
                drop(conn);
                (self.db.begin_indexed().await?, read)
            }
            Backend::Postgres => {
                let mut tx = self.db.begin_indexed().await?;
                let read = read_payload(&mut tx, Backend::Postgres, to, group, alerts, now).await?;
                (tx, read)
            }
        };
        let Read {
            mut stored,
            planned,
            has,
        } = read;
        let mut p = Applied {
            team_id,
            integration_id,
            group: Some(group),
            now,
            sender: to.source.label(),
            channels: has.channels,
            planned,
            ..Applied::default()
        };
        let beats = if has.switches {
            deadman::heartbeat_sources(self, &mut tx, team_id, alerts.values()).await?
        } else {
            HashMap::new()
        };
        // Alerts seen for the first time go in one statement: a round trip per alert was most
        // of a payload's cost on PostgreSQL. One that a concurrent delivery stored first is
        // applied with the known ones, as an update of what that delivery wrote.
        let (new, known): (Vec<&IncomingAlert>, Vec<&IncomingAlert>) = alerts
            .values()
            .partition(|a| !stored.contains_key(&a.fingerprint));
        let (mut applied, raced) = insert_new(&mut tx, &mut p, &new, &beats).await?;
        for alert in known.into_iter().chain(raced) {
            let stored = stored.remove(&alert.fingerprint);
            let heartbeat = beats.contains_key(&alert.fingerprint);
            let decision = apply_alert(&mut tx, &mut p, alert, stored, heartbeat).await?;
            applied.push((alert, decision));
        }
        let mut heard = BTreeSet::new();
        let mut discarded = 0;
        for (alert, decision) in applied {
            match decision {
                Ingest::Discard => discarded += 1,
                Ingest::Fire | Ingest::Refresh => {
                    heard.extend(beats.get(&alert.fingerprint).into_iter().flatten().cloned())
                }
                Ingest::Resolve | Ingest::StoreResolved => {}
            }
        }
        deadman::record_heartbeats(&mut tx, &heard, now).await?;
        let (opened, ladder) = (p.opened, p.ladder);
        let paged = p.finish(&mut tx).await?;
        let stamp = integration_id
            .map(|id| (id, !alerts.is_empty()))
            .filter(|&(id, alerted)| self.stamps.due(id, now, alerted));
        if let Some((id, alerted)) = stamp {
            stamp_integration(&mut tx, id, alerted, now).await?;
        }
        tx.commit().await?;
        if let Some((id, alerted)) = stamp {
            self.stamps.done(id, now, alerted);
        }
        match (paged, ladder) {
            (_, true) => self.wake_notifier(),
            (true, false) => self.wake_delivery(),
            (false, false) => {}
        }
        Ok(Committed { discarded, opened })
    }
}

/// What a payload's transaction works from, read before its writes.
struct Read {
    stored: HashMap<String, StoredRow>,
    planned: Option<GroupPlan>,
    has: TeamHas,
}

/// A payload's stored alerts, what its team has, and, when one of its alerts fires, its
/// group's plan (`GroupPlan`).
async fn read_payload(
    conn: &mut AnyConnection,
    backend: Backend,
    to: &Destination,
    group: &Group<'_>,
    alerts: &BTreeMap<String, IncomingAlert>,
    now: i64,
) -> Result<Read> {
    let stored = load_stored(conn, backend, to.team_id, alerts.keys()).await?;
    let has = team_has(conn, to.team_id).await?;
    let planned = match any_fires(&stored, alerts.values()) {
        true => Some(paging::plan_group(conn, backend, to.team_id, group.key, now).await?),
        false => None,
    };
    Ok(Read {
        stored,
        planned,
        has,
    })
}

/// What a committed payload did.
struct Committed {
    /// Alerts older than the stored instance.
    discarded: usize,
    /// Incidents it opened.
    opened: u64,
}

/// What one payload's transaction has done so far, summarised on the timeline once at the end.
#[derive(Default)]
pub(super) struct Applied<'a> {
    pub(super) team_id: i64,
    pub(super) integration_id: Option<i64>,
    pub(super) group: Option<&'a Group<'a>>,
    pub(super) now: i64,
    /// The source's name, as its resolutions are told on the timeline.
    pub(super) sender: &'static str,
    /// Whether the team has chat channels to announce to (`Destination::channels`).
    pub(super) channels: bool,
    /// The group's open incident, looked up or opened once per payload.
    pub(super) incident: Option<i64>,
    /// How the group's incident opens, or which it joins, as read before the transaction.
    pub(super) planned: Option<GroupPlan>,
    pub(super) fired: Vec<String>,
    pub(super) severity: Option<Severity>,
    pub(super) resolved: BTreeMap<i64, Vec<String>>,
    /// Incidents that may have nothing firing any more.
    pub(super) touched: BTreeSet<i64>,
    /// The severity of the incident this payload opened, if it opened one.
    pub(super) opened_severity: Option<Severity>,
    /// Whether a page may have been queued (an incident opened and paged someone, or resolved).
    pub(super) paged: bool,
    /// Whether an incident opened with a ladder, whose first level the notifier's due work
    /// enters: without one, the notifier is woken to deliver only (`Core::wake_delivery`).
    pub(super) ladder: bool,
    /// Timeline entries of an incident this payload opened, written with its summaries.
    pub(super) entries: Vec<Entry>,
    pub(super) opened: u64,
}

impl Applied<'_> {
    pub(super) async fn group_incident(
        &mut self,
        tx: &mut Tx,
        alert: &IncomingAlert,
    ) -> Result<i64> {
        if let Some(id) = self.incident {
            return Ok(id);
        }
        let group = self.group.expect("set at construction");
        let (id, took) = lifecycle::open_or_join(
            tx,
            self.team_id,
            group,
            alert,
            self.now,
            &mut self.entries,
            self.planned.take(),
        )
        .await?;
        let opened = took != Took::Joined;
        if let Took::Opened { ladder, paged } = took {
            self.ladder |= ladder;
            self.paged |= paged;
        }
        if opened {
            self.opened_severity = Some(Severity::from_label(
                alert.labels.get("severity").map(String::as_str),
            ));
        }
        self.incident = Some(id);
        self.opened += u64::from(opened);
        Ok(id)
    }

    /// Notes a written alert for the payload's timeline summaries and cascades.
    pub(super) fn record(
        &mut self,
        a: &IncomingAlert,
        decision: Ingest,
        previous_incident: Option<i64>,
        incident: Option<i64>,
        heartbeat: bool,
    ) {
        let name = format!(
            "{} ({})",
            a.labels
                .get("alertname")
                .map(String::as_str)
                .unwrap_or_default(),
            a.fingerprint.chars().take(8).collect::<String>()
        );
        match decision {
            Ingest::Fire => {
                // An alert that moved on from an older incident may leave it with nothing firing.
                if let Some(old) = previous_incident.filter(|old| Some(*old) != incident) {
                    self.touched.insert(old);
                }
                if !heartbeat {
                    self.fired.push(name);
                    let severity =
                        Severity::from_label(a.labels.get("severity").map(String::as_str));
                    self.severity = self.severity.max(Some(severity));
                }
            }
            Ingest::Resolve => {
                if let Some(incident) = previous_incident {
                    self.resolved.entry(incident).or_default().push(name);
                    self.touched.insert(incident);
                }
            }
            Ingest::Refresh | Ingest::StoreResolved | Ingest::Discard => {}
        }
    }

    /// Writes the payload's timeline summaries and cascades; true when a page may be queued.
    async fn finish(mut self, tx: &mut Tx) -> Result<bool> {
        let entry = |incident_id, kind, text| Entry {
            incident_id,
            at: self.now,
            kind,
            actor_id: None,
            text,
        };
        if let (Some(incident), false) = (self.incident, self.fired.is_empty()) {
            // An incident this payload opened already has its first alert's severity.
            if let Some(severity) = self.severity.filter(|s| Some(*s) > self.opened_severity) {
                lifecycle::raise_severity(tx, incident, severity).await?;
            }
            let text = summary("firing", &self.fired);
            self.entries
                .push(entry(incident, TimelineKind::AlertFiring, text));
        }
        for (incident, names) in &self.resolved {
            let text = summary(&format!("resolved by {}", self.sender), names);
            self.entries
                .push(entry(*incident, TimelineKind::AlertResolved, text));
        }
        if !self.entries.is_empty() {
            timeline::write(tx, &self.entries, self.channels).await?;
        }
        let mut paged = self.paged;
        for incident in self.touched {
            paged |=
                lifecycle::cascade(tx, incident, self.now, "every alert stopped firing").await?;
        }
        Ok(paged)
    }
}

/// "HighErrorRate (f7ca8b2a) firing", or "3 alerts firing: a (1), b (2), c (3)".
fn summary(what: &str, names: &[String]) -> String {
    match names {
        [one] => format!("{one} {what}"),
        many => {
            let shown: Vec<&str> = many.iter().take(5).map(String::as_str).collect();
            let more = many.len().saturating_sub(5);
            let tail = if more > 0 {
                format!(" and {more} more")
            } else {
                String::new()
            };
            format!("{} alerts {what}: {}{tail}", many.len(), shown.join(", "))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Stamps;

    #[test]
    fn a_second_is_stamped_once_and_again_when_an_alert_first_comes() {
        let stamps = Stamps::default();
        assert!(stamps.due(1, 100, false));
        stamps.done(1, 100, false);
        assert!(!stamps.due(1, 100, false));
        assert!(
            stamps.due(1, 100, true),
            "the alert time is not stamped yet"
        );
        stamps.done(1, 100, true);
        assert!(!stamps.due(1, 100, true) && !stamps.due(1, 100, false));
        assert!(stamps.due(2, 100, false), "another integration");
        assert!(stamps.due(1, 101, false), "the next second");
    }
}
