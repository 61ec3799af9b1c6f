//! The all-clear: when an incident resolves, everyone its pages reached hears so, by the roads
//! that reached them.

use super::enqueue::{enqueue_many, NewPage};
use super::reach::{fan_out, PagedTo};
use crate::db::Tx;
use crate::Result;
use klaxon_domain::paging::PageKind;
use std::collections::HashMap;

/// An incident as its all-clear needs it.
#[derive(sqlx::FromRow)]
pub(crate) struct Cleared {
    pub id: i64,
    pub team_id: i64,
    pub opening_sent: i64,
    pub page_topic: Option<String>,
    pub page_user_id: Option<i64>,
    pub page_owners: i64,
}

impl Cleared {
    /// What a statement returns to be read as a `Cleared`.
    pub const COLUMNS: &str = "id, team_id, opening_sent, page_topic, page_user_id, page_owners";
}

/// Resolved incidents: an all-clear to the opening topic of each whose opening page was sent.
/// The rows come from the `RETURNING` of the statement that resolved them, or of the one that
/// marked their opening page sent after they resolved; the two lock the incident row, so
/// whichever runs second sees the other's change, and each incident comes here once.
/// Returns the incidents whose all-clear it queued.
pub(crate) async fn all_clears(tx: &mut Tx, rows: &[Cleared], now: i64) -> Result<Vec<i64>> {
    let sent: Vec<&Cleared> = rows.iter().filter(|r| r.opening_sent == 1).collect();
    let fanned = fan_out(tx, &sent, |r| PagedTo {
        topic: r.page_topic.as_deref(),
        user_id: r.page_user_id,
        page_owners: r.page_owners,
        team_id: r.team_id,
    })
    .await?;
    // A person's all-clear goes by every road that reached them for the incident.
    let ids: Vec<i64> = sent.iter().map(|r| r.id).collect();
    let reached = sent_roads(tx, &ids).await?;
    let mut pages = Vec::new();
    for (r, topic, user_id) in fanned {
        let roads = user_id
            .and_then(|u| reached.get(&(r.id, u)))
            .cloned()
            .unwrap_or_else(|| vec![topic]);
        for topic in roads.into_iter().filter(|t| !t.is_empty()) {
            pages.push(NewPage {
                incident_id: r.id,
                kind: PageKind::AllClear,
                topic,
                user_id,
                detail: String::new(),
                topic_only: false,
            });
        }
    }
    pages.sort_by_key(|p| p.incident_id);
    let queued = enqueue_many(tx, &pages, now).await?;
    let mut cleared: Vec<i64> = pages
        .iter()
        .zip(queued)
        .filter(|(_, q)| *q)
        .map(|(p, _)| p.incident_id)
        .collect();
    cleared.dedup();
    Ok(cleared)
}

/// The roads by which each person was reached for each of `incidents`: the destinations of
/// their pages that were sent, by (incident, user).
async fn sent_roads(tx: &mut Tx, incidents: &[i64]) -> Result<HashMap<(i64, i64), Vec<String>>> {
    let rows: Vec<(i64, i64, String)> = tx
        .fetch_in(
            "SELECT DISTINCT incident_id, user_id, topic FROM pages WHERE state = 'sent' AND user_id IS NOT NULL \
             AND kind IN ('opening', 'reminder', 'escalation') AND incident_id IN ({ids}) ORDER BY incident_id, user_id, topic",
            &[],
            incidents,
        )
        .await?;
    let mut by: HashMap<(i64, i64), Vec<String>> = HashMap::new();
    for (incident, user, topic) in rows {
        by.entry((incident, user)).or_default().push(topic);
    }
    Ok(by)
}
