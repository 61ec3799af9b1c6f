//! What happens to incidents inside another operation's transaction: opening or joining one
//! for a firing alert (queueing its opening page), raising severity, and the cascade resolve
//! (queueing the all-clear). Their timeline entries are written through `crate::timeline`.

use crate::db::Tx;
use crate::paging::{self, all_clears, Cleared, GroupPlan, Planned};
use crate::timeline::{timelines, Entry};
use crate::Result;
use klaxon_domain::alerting::{signature, IncomingAlert, Severity};
use klaxon_domain::incident::TimelineKind;
use std::collections::BTreeMap;

/// The sender's grouping of a payload: its group key and group labels.
pub struct Group<'a> {
    pub key: &'a str,
    pub labels: &'a BTreeMap<String, String>,
    /// The integration the group's alerts came through (none for a dead man's switch): kept
    /// with the incident it opens, for the noise report.
    pub integration_id: Option<i64>,
}

fn title(alert: &IncomingAlert) -> String {
    let name = alert
        .labels
        .get("alertname")
        .map(String::as_str)
        .unwrap_or("alert");
    let summary = alert
        .annotations
        .get("summary")
        .or_else(|| alert.annotations.get("description"));
    let t = match summary {
        Some(s) if !s.trim().is_empty() => format!("{name}: {}", s.trim()),
        _ => name.to_string(),
    };
    t.chars().take(200).collect()
}

/// What `open_or_join` did with a group.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Took {
    /// Joined its open incident.
    Joined,
    /// Opened a new one; with `ladder`, its ladder's first level is due at once (the
    /// notifier's due work enters it, `Core::wake_notifier`); `paged` when its opening queued a
    /// page (nobody to page queues none, and wakes nobody).
    Opened { ladder: bool, paged: bool },
}

/// The open incident of this group, or a new one. A unique index allows one open incident per
/// (team, group key), so concurrent deliveries of the same group converge on one incident.
/// Returns the incident's id and what this call did (`Took`). An opening's timeline entries are added
/// to `entries` for the caller to write with its own, in one insert. `planned` is what the
/// caller read before its transaction (`paging::plan_group`): an opening plan is used as read
/// (a race is settled by the index); a join is read again, as its incident may have resolved.
pub(crate) async fn open_or_join(
    tx: &mut Tx,
    team_id: i64,
    group: &Group<'_>,
    alert: &IncomingAlert,
    now: i64,
    entries: &mut Vec<Entry>,
    mut planned: Option<GroupPlan>,
) -> Result<(i64, Took)> {
    for _ in 0..3 {
        let plan = match planned.take() {
            Some(GroupPlan::Open(p)) => GroupPlan::Open(p),
            _ => {
                let backend = tx.backend;
                paging::plan_group(tx, backend, team_id, group.key, now).await?
            }
        };
        let Planned { holder, opening } = match plan {
            GroupPlan::Join(id) => {
                raise_severity(
                    tx,
                    id,
                    Severity::from_label(alert.labels.get("severity").map(String::as_str)),
                )
                .await?;
                return Ok((id, Took::Joined));
            }
            GroupPlan::Open(p) => *p,
        };
        let alertname = alert
            .labels
            .get("alertname")
            .map(String::as_str)
            .unwrap_or("alert");
        let labels = if group.labels.is_empty() {
            &alert.labels
        } else {
            group.labels
        };
        let severity = Severity::from_label(alert.labels.get("severity").map(String::as_str));
        // Who is paged is chosen before the insert, so the row carries it: an opening is a
        // dozen statements otherwise, most of intake's cost on PostgreSQL.
        let created: Option<(i64,)> = sqlx::query_as(
            "INSERT INTO incidents (team_id, title, state, severity, group_key, signature, assignee_id, created_at, \
             page_topic, page_user_id, page_owners, reminded_at, esc_step, esc_due_at, integration_id) \
             VALUES ($1, $2, 'triggered', $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14) ON CONFLICT DO NOTHING RETURNING id",
        )
        .bind(team_id)
        .bind(title(alert))
        .bind(severity.as_str())
        .bind(group.key)
        .bind(signature(alertname, labels))
        .bind(holder.as_ref().map(|h| h.user_id))
        .bind(now)
        .bind(opening.page_topic.as_deref())
        .bind(opening.page_user_id)
        .bind(i64::from(opening.page_owners))
        .bind(opening.reminded_at)
        .bind(opening.ladder.then_some(0i64))
        .bind(opening.ladder.then_some(now))
        .bind(group.integration_id)
        .fetch_optional(&mut **tx)
        .await?;
        if let Some((id,)) = created {
            let entry = |kind, text: String| Entry {
                incident_id: id,
                at: now,
                kind,
                actor_id: None,
                text,
            };
            entries.push(entry(TimelineKind::Opened, title(alert)));
            if let Some(h) = &holder {
                entries.push(entry(
                    TimelineKind::Assigned,
                    format!("assigned to {}, {}", h.username, h.why),
                ));
            }
            let ladder = opening.ladder;
            let paged = paging::queue_opening(tx, id, opening, now, entries).await?;
            return Ok((id, Took::Opened { ladder, paged }));
        }
        // Another transaction opened it between our look and our insert: join that one.
    }
    Err(crate::Error::Busy)
}

/// Severity is the high-water mark of the incident's alerts: it only rises.
pub async fn raise_severity(tx: &mut Tx, incident_id: i64, severity: Severity) -> Result<()> {
    let lower = match severity {
        Severity::Critical => "('info', 'warning')",
        Severity::Warning => "('info')",
        Severity::Info => return Ok(()),
    };
    // `lower` is one of two fixed lists, never input.
    sqlx::query(&format!(
        "UPDATE incidents SET severity = $1 WHERE id = $2 AND severity IN {lower}"
    ))
    .bind(severity.as_str())
    .bind(incident_id)
    .execute(&mut **tx)
    .await?;
    Ok(())
}

/// Resolves the incident when every alert under it has stopped firing. Returns true when it did.
pub async fn cascade(tx: &mut Tx, incident_id: i64, now: i64, why: &str) -> Result<bool> {
    Ok(!cascade_many(tx, &[incident_id], now, why).await?.is_empty())
}

/// `cascade` for a batch: resolves those of the incidents with nothing firing (in one
/// conditional update per chunk), writes their timeline entries and queues their all-clears.
/// Returns the incidents it resolved, in id order.
pub async fn cascade_many(
    tx: &mut Tx,
    incident_ids: &[i64],
    now: i64,
    why: &str,
) -> Result<Vec<i64>> {
    // `LIMIT 1 OFFSET 0` keeps PostgreSQL from turning the `NOT EXISTS` into an anti-join
    // that hashes every firing alert (it did, for batches of a thousand): it probes the
    // alerts of each incident by index instead, as SQLite does.
    let mut cleared: Vec<Cleared> = tx
        .fetch_in(
            &format!(
                "UPDATE incidents SET state = 'resolved', resolved_at = $1 WHERE id IN ({{ids}}) AND state <> 'resolved' \
                 AND NOT EXISTS (SELECT 1 FROM alerts a WHERE a.incident_id = incidents.id AND a.status = 'firing' \
                 LIMIT 1 OFFSET 0) RETURNING {}",
                Cleared::COLUMNS
            ),
            &[now.into()],
            incident_ids,
        )
        .await?;
    cleared.sort_by_key(|r| r.id);
    let entries: Vec<Entry> = cleared
        .iter()
        .map(|r| Entry {
            incident_id: r.id,
            at: now,
            kind: TimelineKind::Resolved,
            actor_id: None,
            text: why.to_string(),
        })
        .collect();
    timelines(tx, &entries).await?;
    all_clears(tx, &cleared, now).await?;
    Ok(cleared.into_iter().map(|r| r.id).collect())
}
