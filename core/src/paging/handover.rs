//! Pages follow an incident to its new assignee ("Assign", "Take over now").

use super::{enqueue_many, reach_user, NewPage};
use crate::db::Tx;
use crate::timeline::{timelines, Entry};
use crate::Result;
use klaxon_domain::incident::TimelineKind;
use klaxon_domain::paging::PageKind;

/// An incident handed over, as the hand-over needs it.
#[derive(sqlx::FromRow)]
struct Handed {
    id: i64,
    opening_sent: i64,
    snoozed_until: Option<i64>,
}

/// Incidents of a team handed to `user_id`. When that person can be reached, the untouched
/// (triggered) ones page them: their reminders and all-clear go to them from now on, reminders
/// start again from now (a ladder keeps its own time), a page still waiting to go out (queued,
/// or held by a maintenance window) is replaced by one to them, and an incident never paged gets
/// its opening page. A snoozed incident pages them when the snooze ends. When they cannot be
/// reached, pages keep going where they went and the timeline says why.
pub(crate) async fn handed_over(
    tx: &mut Tx,
    team_id: i64,
    incidents: &[i64],
    user_id: i64,
    now: i64,
) -> Result<()> {
    let incidents: Vec<i64> = tx
        .fetch_in::<(i64,)>(
            "SELECT id FROM incidents WHERE state = 'triggered' AND archived_at IS NULL AND id IN ({ids})",
            &[],
            incidents,
        )
        .await?
        .into_iter()
        .map(|r| r.0)
        .collect();
    if incidents.is_empty() {
        return Ok(());
    }
    let reached = match reach_user(tx, team_id, user_id).await? {
        Ok(r) => r,
        Err(why) => {
            let entries: Vec<Entry> = incidents
                .iter()
                .map(|&incident_id| Entry {
                    incident_id,
                    at: now,
                    kind: TimelineKind::NobodyReachable,
                    actor_id: None,
                    text: format!("{why}: pages keep going where they went"),
                })
                .collect();
            return timelines(tx, &entries).await;
        }
    };
    let mut handed: Vec<Handed> = tx
        .fetch_in(
            "UPDATE incidents SET page_topic = $1, page_user_id = $2, page_owners = 0, \
             reminded_at = CASE WHEN esc_step IS NOT NULL THEN reminded_at \
               WHEN reminded_at > $3 THEN reminded_at ELSE $3 END \
             WHERE id IN ({ids}) RETURNING id, opening_sent, snoozed_until",
            &[reached.topic.as_str().into(), user_id.into(), now.into()],
            &incidents,
        )
        .await?;
    handed.sort_by_key(|h| h.id);
    let ids: Vec<i64> = handed.iter().map(|h| h.id).collect();
    // What still waits for the previous recipient goes to the new one instead (a page being
    // published now is left to finish).
    tx.execute_in(
        "UPDATE pages SET state = 'cancelled', last_error = 'handed over', claimed_by = NULL \
         WHERE state = 'pending' AND kind IN ('opening', 'reminder') \
         AND (claimed_until IS NULL OR claimed_until < $1) AND incident_id IN ({ids})",
        &[now.into()],
        &ids,
    )
    .await?;
    let pages: Vec<NewPage> = handed
        .iter()
        .filter(|h| h.snoozed_until.is_none())
        .map(|h| {
            let (kind, detail) = match h.opening_sent {
                1 => (PageKind::Reminder, "assigned to you"),
                _ => (PageKind::Opening, ""),
            };
            NewPage {
                incident_id: h.id,
                kind,
                topic: reached.topic.clone(),
                user_id: Some(user_id),
                detail: detail.to_string(),
                topic_only: reached.topic_only,
            }
        })
        .collect();
    enqueue_many(tx, &pages, now).await?;
    let entries: Vec<Entry> = handed
        .iter()
        .map(|h| Entry {
            incident_id: h.id,
            at: now,
            kind: TimelineKind::Paged,
            actor_id: None,
            text: if h.snoozed_until.is_some() {
                format!("{} is paged when the snooze ends", reached.username)
            } else {
                format!("paging {}, the new assignee", reached.username)
            },
        })
        .collect();
    timelines(tx, &entries).await
}
