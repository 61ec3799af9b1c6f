//! An incident's timeline: entries written inside the transaction of whatever they record, one
//! or many in one insert. Every module that changes an incident writes here; this module imports
//! none of them (only `announcements`, which imports nothing that changes an incident).

use crate::announcements::{self, Happened};
use crate::db::{insert_json, insert_rows, Col::*, Tx};
use crate::Result;
use klaxon_domain::incident::TimelineKind;

/// One timeline entry, for `timelines`.
#[derive(serde::Serialize)]
pub struct Entry {
    pub incident_id: i64,
    pub at: i64,
    pub kind: TimelineKind,
    pub actor_id: Option<i64>,
    pub text: String,
}

pub async fn timeline(
    tx: &mut Tx,
    incident_id: i64,
    at: i64,
    kind: TimelineKind,
    actor_id: Option<i64>,
    text: &str,
) -> Result<()> {
    timelines(
        tx,
        &[Entry {
            incident_id,
            at,
            kind,
            actor_id,
            text: text.to_string(),
        }],
    )
    .await
}

/// Writes timeline entries in one insert, in order, and queues the team channels'
/// announcements they call for (`announcements`).
pub async fn timelines(tx: &mut Tx, entries: &[Entry]) -> Result<()> {
    write(tx, entries, true).await
}

/// `timelines`, for a caller that knows whether the team has a channel to announce to: without
/// one, the announcements' statement (a round trip in a writer's turn) is not made.
pub(crate) async fn write(tx: &mut Tx, entries: &[Entry], channels: bool) -> Result<()> {
    let sql = insert_rows(
        tx.backend,
        "timeline",
        &[
            Int("incident_id"),
            Int("at"),
            Text("kind"),
            Int("actor_id"),
            Text("text"),
        ],
    );
    insert_json(tx, &sql, entries).await?;
    if !channels {
        return Ok(());
    }
    let happened: Vec<Happened> = entries
        .iter()
        .map(|e| Happened {
            incident_id: e.incident_id,
            kind: e.kind,
            at: e.at,
            actor_id: e.actor_id,
            text: &e.text,
        })
        .collect();
    announcements::queue(tx, &happened).await
}
