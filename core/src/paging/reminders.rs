//! Reminders: an unacknowledged incident without a ladder pages its first recipients again.

use super::enqueue::{enqueue_many, NewPage};
use super::reach::{fan_out, PagedTo};
use crate::db::Tx;
use crate::timeline::{timelines, Entry};
use crate::Result;
use klaxon_domain::incident::TimelineKind;
use klaxon_domain::paging::PageKind;
use std::collections::HashMap;

/// A reminder to queue, for `remind_many`.
pub(crate) struct Reminder {
    pub incident_id: i64,
    pub topic: String,
    pub user_id: Option<i64>,
    pub why: String,
}

/// An incident owed a reminder, with where its pages go and why it is reminded.
pub(crate) struct Owed {
    pub incident_id: i64,
    pub team_id: i64,
    pub topic: Option<String>,
    pub user_id: Option<i64>,
    pub page_owners: i64,
    pub why: String,
}

/// Reminders to each incident's recipients (`fan_out`).
pub(crate) async fn reminders_to(tx: &mut Tx, due: Vec<Owed>) -> Result<Vec<Reminder>> {
    let fanned = fan_out(tx, &due, |d| PagedTo {
        topic: d.topic.as_deref(),
        user_id: d.user_id,
        page_owners: d.page_owners,
        team_id: d.team_id,
    })
    .await?;
    Ok(fanned
        .into_iter()
        .map(|(d, topic, user_id)| Reminder {
            incident_id: d.incident_id,
            topic,
            user_id,
            why: d.why.clone(),
        })
        .collect())
}

/// Re-pages the opening topics, with a timeline entry each. The caller has moved
/// `reminded_at` to now.
pub(crate) async fn remind_many(tx: &mut Tx, reminders: &[Reminder], now: i64) -> Result<()> {
    let pages: Vec<NewPage> = reminders
        .iter()
        .map(|r| NewPage {
            incident_id: r.incident_id,
            kind: PageKind::Reminder,
            topic: r.topic.clone(),
            user_id: r.user_id,
            detail: r.why.clone(),
            topic_only: false,
        })
        .collect();
    enqueue_many(tx, &pages, now).await?;
    let mut users: Vec<i64> = reminders.iter().filter_map(|r| r.user_id).collect();
    users.sort_unstable();
    users.dedup();
    let names: HashMap<i64, String> = tx
        .fetch_in::<(i64, String)>(
            "SELECT id, username FROM users WHERE id IN ({ids})",
            &[],
            &users,
        )
        .await?
        .into_iter()
        .collect();
    let entries: Vec<Entry> = reminders
        .iter()
        .map(|r| {
            let who = match r.user_id {
                Some(u) => names
                    .get(&u)
                    .cloned()
                    .unwrap_or_else(|| "the opening topic".into()),
                None => format!("the fallback topic {}", r.topic),
            };
            Entry {
                incident_id: r.incident_id,
                at: now,
                kind: TimelineKind::Reminder,
                actor_id: None,
                text: format!("reminded {who}: {}", r.why),
            }
        })
        .collect();
    timelines(tx, &entries).await
}
