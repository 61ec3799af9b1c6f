//! Queueing announcements: an incident's event becomes one outbox row for each of its team's
//! channels that hears that event and that severity (a Matrix room once it is proven), written
//! by one statement in the transaction of the event, so an announcement is never lost and never
//! made for a change that rolled back. `channels` sends them. `timeline::timelines` calls `queue` with every batch of entries it writes, so
//! no change to an incident can forget it.

use crate::db::{json_rows, Col::*, Tx};
use crate::Result;
use klaxon_domain::channel::ChannelEvent;
use klaxon_domain::incident::TimelineKind;
use std::collections::HashSet;

/// The events that change what an incident's announcement shows (its state, who has it).
const EDITED: [ChannelEvent; 4] = [
    ChannelEvent::Acknowledged,
    ChannelEvent::Escalated,
    ChannelEvent::Resolved,
    ChannelEvent::Reassigned,
];

/// One event, as the fan-out statement reads it.
#[derive(serde::Serialize)]
pub(crate) struct Announce {
    pub incident_id: i64,
    pub event: &'static str,
    pub at: i64,
    pub actor_id: Option<i64>,
    pub text: String,
    /// Its place in the batch: rows are inserted in this order, so a channel hears an
    /// incident's events in the order they happened.
    pub ord: i64,
}

/// The channel event a timeline entry is, if any. An assignment written with the opening (the
/// first holder) is part of the opening, not a reassignment.
fn event_of(kind: TimelineKind) -> Option<ChannelEvent> {
    Some(match kind {
        TimelineKind::Opened => ChannelEvent::Opened,
        TimelineKind::Acknowledged => ChannelEvent::Acknowledged,
        TimelineKind::Escalated => ChannelEvent::Escalated,
        TimelineKind::Resolved => ChannelEvent::Resolved,
        TimelineKind::Assigned => ChannelEvent::Reassigned,
        _ => return None,
    })
}

/// A timeline entry as `queue` reads it (`timeline` writes the entries and hands them here;
/// this module imports nothing that writes the timeline).
pub(crate) struct Happened<'a> {
    pub incident_id: i64,
    pub kind: TimelineKind,
    pub at: i64,
    pub actor_id: Option<i64>,
    pub text: &'a str,
}

/// Queues the announcements a batch of timeline entries calls for.
pub(crate) async fn queue(tx: &mut Tx, entries: &[Happened<'_>]) -> Result<()> {
    let opened: HashSet<i64> = entries
        .iter()
        .filter(|e| e.kind == TimelineKind::Opened)
        .map(|e| e.incident_id)
        .collect();
    let rows: Vec<Announce> = entries
        .iter()
        .filter_map(|e| {
            let event = event_of(e.kind)?;
            if event == ChannelEvent::Reassigned && opened.contains(&e.incident_id) {
                return None;
            }
            Some((e, event))
        })
        .enumerate()
        .map(|(ord, (e, event))| Announce {
            incident_id: e.incident_id,
            event: event.as_str(),
            at: e.at,
            actor_id: e.actor_id,
            text: e.text.to_string(),
            ord: ord as i64,
        })
        .collect();
    announce(tx, &rows).await
}

/// Writes the rows of `announcements` for every channel that hears them.
pub(crate) async fn announce(tx: &mut Tx, announcements: &[Announce]) -> Result<()> {
    if announcements.is_empty() {
        return Ok(());
    }
    let source = json_rows(
        tx.backend,
        "e",
        &[
            Int("incident_id"),
            Text("event"),
            Int("at"),
            Int("actor_id"),
            Text("text"),
            Int("ord"),
        ],
    );
    // A channel that edits its messages and does not hear a change of state gets a quiet post:
    // its incident's first message there is edited, and nothing new is posted.
    let heard = "(',' || c.events || ',') LIKE ('%,' || e.event || ',%')";
    let edited: Vec<String> = EDITED.iter().map(|e| format!("'{}'", e.as_str())).collect();
    let edited = edited.join(", ");
    let sql = format!(
        "INSERT INTO channel_posts (channel_id, incident_id, event, at, actor_id, text, due_at, quiet) \
         SELECT c.id, e.incident_id, e.event, e.at, e.actor_id, e.text, e.at, \
         CASE WHEN {heard} THEN 0 ELSE 1 END FROM {source} \
         JOIN incidents i ON i.id = e.incident_id JOIN channels c ON c.team_id = i.team_id \
         WHERE (c.kind <> 'matrix' OR c.room_id IS NOT NULL) \
         AND ({heard} OR (c.edits = 1 AND e.event IN ({edited}))) \
         AND (c.severities = '' OR (',' || c.severities || ',') LIKE ('%,' || i.severity || ',%')) \
         ORDER BY e.ord, c.id"
    );
    let json = serde_json::to_string(announcements)
        .map_err(|e| crate::Error::Internal(format!("cannot encode rows: {e}")))?;
    let queued = sqlx::query(&sql).bind(json).execute(&mut **tx).await?;
    if queued.rows_affected() > 0 {
        tx.announced();
    }
    Ok(())
}

/// A note marked as the resolution, announced to the channels that hear it.
pub(crate) async fn resolution_note(
    tx: &mut Tx,
    incident_id: i64,
    at: i64,
    author: i64,
    text: &str,
) -> Result<()> {
    announce(
        tx,
        &[Announce {
            incident_id,
            event: ChannelEvent::ResolutionNote.as_str(),
            at,
            actor_id: Some(author),
            text: text.to_string(),
            ord: 0,
        }],
    )
    .await
}
