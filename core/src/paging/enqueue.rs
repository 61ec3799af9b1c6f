//! Writing pages to the outbox: one statement for many pages, each skipped when the same page
//! already waits, with the timeline entries they call for.

use super::roads;
use crate::db::{insert_json, json_rows, Col::*, Tx};
use crate::timeline::timelines;
use crate::Result;
use klaxon_domain::contact::Destination;
use klaxon_domain::paging::PageKind;
use std::collections::{HashMap, HashSet};

/// A page to queue, for `enqueue_many`.
pub(crate) struct NewPage {
    pub incident_id: i64,
    pub kind: PageKind,
    pub topic: String,
    pub user_id: Option<i64>,
    pub detail: String,
    /// The person is known to have nothing but `topic` (`Reached::topic_only`).
    pub topic_only: bool,
}

/// Queues pages in one insert; returns, for each, whether it was queued. A page that
/// asks for an owner is not queued twice to one topic while the first still waits (one queued
/// earlier in the same batch counts), so a slow push service never stacks pages on one phone.
pub(crate) async fn enqueue_many(tx: &mut Tx, pages: &[NewPage], now: i64) -> Result<Vec<bool>> {
    let mut asking: Vec<i64> = pages
        .iter()
        .filter(|p| p.kind.wants_owner())
        .map(|p| p.incident_id)
        .collect();
    asking.sort_unstable();
    asking.dedup();
    let waiting: HashSet<(i64, String)> = tx
        .fetch_in::<(i64, String)>(
            "SELECT incident_id, topic FROM pages WHERE state = 'pending' AND kind <> 'all_clear' AND incident_id IN ({ids})",
            &[],
            &asking,
        )
        .await?
        .into_iter()
        .collect();
    enqueue_after(tx, pages, waiting, now, HashMap::new()).await
}

/// `enqueue_many` once the pages already waiting (incident, topic) are known. A page to a
/// person becomes one row per road of their notification rules (`roads`), each due at its
/// step's delay; a page is queued when any of its rows is. `people` are those whose roads
/// were read already.
pub(super) async fn enqueue_after(
    tx: &mut Tx,
    pages: &[NewPage],
    mut waiting: HashSet<(i64, String)>,
    now: i64,
    people: HashMap<i64, roads::Person>,
) -> Result<Vec<bool>> {
    let personal: Vec<&NewPage> = pages.iter().filter(|p| roads::follows_rules(p)).collect();
    let (mut expanded, entries) = if personal.is_empty() {
        (Vec::new(), Vec::new())
    } else {
        roads::expand(tx, &personal, now, people).await?
    };
    expanded.reverse();
    #[derive(serde::Serialize)]
    struct Row<'a> {
        incident_id: i64,
        kind: &'a str,
        topic: String,
        road: &'static str,
        method_id: Option<i64>,
        user_id: Option<i64>,
        detail: &'a str,
        due_at: i64,
        created_at: i64,
    }
    let mut queued = Vec::with_capacity(pages.len());
    let mut rows = Vec::with_capacity(pages.len());
    for page in pages {
        let roads = if roads::follows_rules(page) {
            expanded.pop().unwrap_or_default()
        } else {
            vec![roads::Row {
                to: Destination::parse(&page.topic),
                due_at: now,
            }]
        };
        let wants_owner = page.kind.wants_owner();
        let mut any = false;
        for road in roads {
            let key = (page.incident_id, road.to.to_string());
            if wants_owner && !waiting.insert(key.clone()) {
                continue;
            }
            any = true;
            rows.push(Row {
                incident_id: page.incident_id,
                kind: page.kind.as_str(),
                topic: key.1,
                road: road.to.kind().as_str(),
                method_id: road.to.method_id(),
                user_id: page.user_id,
                detail: &page.detail,
                due_at: road.due_at,
                created_at: now,
            });
        }
        queued.push(any);
    }
    let cols = [
        Int("incident_id"),
        Text("kind"),
        Text("topic"),
        Text("road"),
        Int("method_id"),
        Int("user_id"),
        Text("detail"),
        Int("due_at"),
        Int("created_at"),
    ];
    // Each page names its incident's team, read in the same statement: reports count a team's
    // pages from one index (migration 0052).
    let sql = format!(
        "INSERT INTO pages (incident_id, kind, topic, road, method_id, user_id, detail, due_at, created_at, team_id) \
         SELECT r.incident_id, r.kind, r.topic, r.road, r.method_id, r.user_id, r.detail, r.due_at, r.created_at, \
         (SELECT i.team_id FROM incidents i WHERE i.id = r.incident_id) FROM {}",
        json_rows(tx.backend, "r", &cols)
    );
    insert_json(tx, &sql, &rows).await?;
    timelines(tx, &entries).await?;
    Ok(queued)
}
