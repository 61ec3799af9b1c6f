//! Moving a page to a person's next road when one fails. A page that failed for good, or that
//! has been retried for `FAIL_OVER_AFTER`, brings the person's next pending step for the
//! incident forward to now. When no road is left and none reached them, they count as nobody
//! reachable for that page: a running ladder moves to its next level at once; without one, the
//! team's fallback topic is paged, or else its other owners.

use super::plan::Claimed;
use super::{enqueue_many, reachable_owners, NewPage};
use crate::db::Tx;
use crate::roads::{Failure, Roads};
use crate::timeline::timeline;
use crate::Result;
use klaxon_domain::incident::TimelineKind;
use klaxon_domain::paging::{EscalationPolicy, PageKind};
use klaxon_domain::rules::FAIL_OVER_AFTER;

/// Called for each page whose delivery failed this pass, after its failure was recorded;
/// `given_up` when it will not be retried. True when it made a page due now, so the notifier
/// goes again at once rather than at its next pass.
pub(super) async fn fail_over(
    tx: &mut Tx,
    roads: &Roads,
    page: &Claimed,
    e: &Failure,
    given_up: bool,
    now: i64,
) -> Result<bool> {
    let (Some(incident_id), Some(user_id)) = (page.incident_id, page.user_id) else {
        return Ok(false);
    };
    let failing = given_up || now - page.first_due_at >= FAIL_OVER_AFTER;
    if !page.kind.wants_owner() || page.failed_over == 1 || !failing {
        return Ok(false);
    }
    sqlx::query("UPDATE pages SET failed_over = 1 WHERE id = $1")
        .bind(page.id)
        .execute(&mut **tx)
        .await?;
    let next: Option<(String,)> = sqlx::query_as(
        "UPDATE pages SET due_at = $1 WHERE id = (SELECT id FROM pages WHERE incident_id = $2 AND user_id = $3 \
         AND state = 'pending' AND id <> $4 AND due_at > $1 AND kind IN ('opening', 'reminder', 'escalation') \
         ORDER BY due_at, id LIMIT 1) RETURNING road",
    )
    .bind(now)
    .bind(incident_id)
    .bind(user_id)
    .bind(page.id)
    .fetch_optional(&mut **tx)
    .await?;
    let failed = roads.label(&page.road);
    if let Some((next,)) = next {
        let text = format!(
            "{failed} failed: {}; {} tried next",
            e.reason,
            roads.label(&next)
        );
        timeline(tx, incident_id, now, TimelineKind::PushFailed, None, &text).await?;
        return Ok(true);
    }
    // A page still retrying may yet get through: only one given up leaves its person unreached.
    if !given_up {
        return Ok(false);
    }
    // Another road may still be trying, or have got through, since this page was queued.
    let (left,): (i64,) = sqlx::query_as(
        "SELECT COUNT(*) FROM pages WHERE incident_id = $1 AND user_id = $2 AND id <> $3 \
         AND kind IN ('opening', 'reminder', 'escalation') AND created_at >= $4 \
         AND (state = 'sent' OR (state = 'pending' AND failed_over = 0))",
    )
    .bind(incident_id)
    .bind(user_id)
    .bind(page.id)
    .bind(page.created_at)
    .fetch_one(&mut **tx)
    .await?;
    if left > 0 {
        return Ok(false);
    }
    nobody_reachable(
        tx,
        page,
        incident_id,
        user_id,
        &format!("{failed} failed: {}", e.reason),
        now,
    )
    .await?;
    Ok(true)
}

impl crate::Core {
    /// A provider reported after taking it that page `page_id` did not reach its person (a call
    /// not answered or answered by voicemail, a text not delivered): the page is failed, and
    /// its person's next road goes now, as after a failure for good. A report for a page no
    /// longer `sent` (a replay, or a second report) changes nothing. True when it acted.
    pub(crate) async fn failed_after_sending(&self, page_id: i64, reason: &str) -> Result<bool> {
        let now = self.now();
        let mut tx = self.db.begin().await?;
        let page: Option<Claimed> = sqlx::query_as(&format!(
            "UPDATE pages SET state = 'failed', last_error = $1 WHERE id = $2 AND state = 'sent' \
             RETURNING {}",
            Claimed::COLUMNS
        ))
        .bind(reason)
        .bind(page_id)
        .fetch_optional(&mut *tx)
        .await?;
        let Some(page) = page else {
            return Ok(false);
        };
        let failure = Failure::permanent(reason);
        let woke = fail_over(&mut tx, &self.roads, &page, &failure, true, now).await?;
        if !woke {
            if let Some(incident_id) = page.incident_id {
                let text = format!("{} failed: {reason}", self.roads.label(&page.road));
                timeline(
                    &mut tx,
                    incident_id,
                    now,
                    TimelineKind::PushFailed,
                    None,
                    &text,
                )
                .await?;
            }
        }
        tx.commit().await?;
        if woke {
            self.wake_notifier();
        }
        Ok(true)
    }
}

/// Every road to the person failed for this page: the escalation rules take over.
async fn nobody_reachable(
    tx: &mut Tx,
    page: &Claimed,
    incident_id: i64,
    user_id: i64,
    why: &str,
    now: i64,
) -> Result<()> {
    #[derive(sqlx::FromRow)]
    struct Incident {
        team_id: i64,
        state: String,
        archived_at: Option<i64>,
        esc_due_at: Option<i64>,
        username: Option<String>,
        policy: Option<String>,
    }
    let Some(i): Option<Incident> = sqlx::query_as(
        "SELECT i.team_id, i.state, i.archived_at, i.esc_due_at, \
         (SELECT username FROM users WHERE id = $2) AS username, \
         (SELECT policy FROM escalation_policies p WHERE p.team_id = i.team_id) AS policy \
         FROM incidents i WHERE i.id = $1",
    )
    .bind(incident_id)
    .bind(user_id)
    .fetch_optional(&mut **tx)
    .await?
    else {
        return Ok(());
    };
    if i.state != "triggered" || i.archived_at.is_some() {
        return Ok(());
    }
    let who = i.username.unwrap_or_else(|| format!("user {user_id}"));
    let lead = format!("{who} could not be reached by any road ({why})");
    if i.esc_due_at.is_some() {
        sqlx::query("UPDATE incidents SET esc_due_at = $1 WHERE id = $2 AND esc_due_at > $1")
            .bind(now)
            .bind(incident_id)
            .execute(&mut **tx)
            .await?;
        let text = format!("{lead}: the escalation ladder moves to its next level now");
        return timeline(
            tx,
            incident_id,
            now,
            TimelineKind::NobodyReachable,
            None,
            &text,
        )
        .await;
    }
    let policy: EscalationPolicy = i
        .policy
        .and_then(|p| serde_json::from_str(&p).ok())
        .unwrap_or_default();
    let (pages, text): (Vec<NewPage>, String) = if let Some(topic) = policy.fallback_topic {
        let topic = topic.into_string();
        let text = format!("{lead}: paging the fallback topic {topic}");
        let page = NewPage {
            incident_id,
            kind: page.kind,
            topic,
            user_id: None,
            detail: page.detail.clone(),
            topic_only: false,
        };
        (vec![page], text)
    } else {
        let owners: Vec<_> = reachable_owners(tx, &[i.team_id])
            .await?
            .remove(&i.team_id)
            .unwrap_or_default()
            .into_iter()
            .filter(|o| o.user_id != user_id)
            .collect();
        let names: Vec<&str> = owners.iter().map(|o| o.username.as_str()).collect();
        let text = if owners.is_empty() {
            format!("{lead}, the team has no fallback topic and no other owner can be reached")
        } else {
            format!("{lead}: paging the team's owners {}", names.join(", "))
        };
        let pages = owners
            .iter()
            .map(|o| NewPage {
                incident_id,
                kind: if page.kind == PageKind::Escalation {
                    PageKind::Escalation
                } else {
                    PageKind::Opening
                },
                topic: o.topic.clone(),
                user_id: Some(o.user_id),
                detail: page.detail.clone(),
                topic_only: false,
            })
            .collect();
        (pages, text)
    };
    enqueue_many(tx, &pages, now).await?;
    timeline(
        tx,
        incident_id,
        now,
        TimelineKind::NobodyReachable,
        None,
        &text,
    )
    .await
}

/// Removes the contact method a page went to when its road says the target is gone (a Web Push
/// subscription the browser dropped): nothing more is sent to it. A test finding it gone does the
/// same.
pub(crate) async fn forget_gone(tx: &mut Tx, method_id: i64) -> Result<()> {
    sqlx::query("DELETE FROM contact_methods WHERE id = $1")
        .bind(method_id)
        .execute(&mut **tx)
        .await?;
    Ok(())
}
