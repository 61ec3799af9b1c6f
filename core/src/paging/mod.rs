//! Paging: who gets woken and when. Every page is a row of the `pages` outbox written in the
//! transaction of the event that caused it (an incident opening, a reminder, a ladder level,
//! a resolve); the notifier delivers the rows. This module holds the in-transaction half.
//!
//! The opening topic is chosen in this order: the assignee's own topic (today's on-call, when
//! enabled and subscribed); else the team's fallback topic from its escalation policy (a shared
//! topic, so that page has no Acknowledge button); else nobody is paged and the timeline says
//! why. Reminders and the all-clear reuse the opening topic.

pub mod escalation;
pub mod message;
pub mod notifier;
pub mod ntfy;
pub mod tokens;

use crate::db::Tx;
use crate::incidents::lifecycle::timeline;
use crate::Result;
use klaxon_domain::paging::{EscalationPolicy, PageKind};
use sqlx::AnyConnection;

/// A user who can be paged now.
#[derive(Debug, Clone)]
pub struct Reached {
    pub user_id: i64,
    pub username: String,
    pub topic: String,
}

/// Whether a user can be paged, and if not, a short reason for the timeline.
pub(crate) async fn reach_user(
    conn: &mut AnyConnection,
    team_id: i64,
    user_id: i64,
) -> Result<Result<Reached, String>> {
    let row: Option<(String, Option<String>, i64, Option<i64>)> = sqlx::query_as(
        "SELECT u.username, u.push_topic, u.disabled, \
         (SELECT 1 FROM team_members m WHERE m.team_id = $1 AND m.user_id = u.id) FROM users u WHERE u.id = $2",
    )
    .bind(team_id)
    .bind(user_id)
    .fetch_optional(&mut *conn)
    .await?;
    Ok(match row {
        None => Err(format!("user {user_id} no longer exists")),
        Some((name, _, _, None)) => Err(format!("{name} is not in the team")),
        Some((name, _, 1, _)) => Err(format!("{name} is disabled")),
        Some((name, None, _, _)) => Err(format!("{name} has no push topic")),
        Some((username, Some(topic), _, _)) => Ok(Reached {
            user_id,
            username,
            topic,
        }),
    })
}

/// Today's holder of the team's rota (UTC date).
pub(crate) async fn oncall_today(
    conn: &mut AnyConnection,
    team_id: i64,
    now: i64,
) -> Result<Option<i64>> {
    let row: Option<(i64,)> =
        sqlx::query_as("SELECT user_id FROM schedule WHERE team_id = $1 AND date = $2")
            .bind(team_id)
            .bind(klaxon_domain::incident::utc_date(now))
            .fetch_optional(&mut *conn)
            .await?;
    Ok(row.map(|r| r.0))
}

/// The team's escalation policy; the empty policy when it has none.
pub(crate) async fn policy(conn: &mut AnyConnection, team_id: i64) -> Result<EscalationPolicy> {
    let row: Option<(String,)> =
        sqlx::query_as("SELECT policy FROM escalation_policies WHERE team_id = $1")
            .bind(team_id)
            .fetch_optional(&mut *conn)
            .await?;
    Ok(row
        .and_then(|(p,)| serde_json::from_str(&p).ok())
        .unwrap_or_default())
}

/// Queues a page. A page that asks for an owner is not queued twice to one topic while the
/// first still waits, so a slow push service never stacks pages on one phone.
pub(crate) async fn enqueue(
    tx: &mut Tx,
    incident_id: i64,
    kind: PageKind,
    topic: &str,
    user_id: Option<i64>,
    detail: &str,
    now: i64,
) -> Result<bool> {
    let waiting: Option<(i64,)> = sqlx::query_as(
        "SELECT id FROM pages WHERE incident_id = $1 AND topic = $2 AND state = 'pending' AND kind <> 'all_clear'",
    )
    .bind(incident_id)
    .bind(topic)
    .fetch_optional(&mut **tx)
    .await?;
    if kind.wants_owner() && waiting.is_some() {
        return Ok(false);
    }
    sqlx::query(
        "INSERT INTO pages (incident_id, kind, topic, user_id, detail, due_at, created_at) VALUES ($1, $2, $3, $4, $5, $6, $6)",
    )
    .bind(incident_id)
    .bind(kind.as_str())
    .bind(topic)
    .bind(user_id)
    .bind(detail)
    .bind(now)
    .execute(&mut **tx)
    .await?;
    Ok(true)
}

/// A new incident: choose the opening topic, queue the opening page, and start reminders or,
/// when the team has a ladder, put it on level 1 (entered by the notifier on its next pass).
pub(crate) async fn opened(
    tx: &mut Tx,
    incident_id: i64,
    team_id: i64,
    assignee: Option<i64>,
    now: i64,
) -> Result<()> {
    let policy = policy(tx, team_id).await?;
    let ladder = !policy.levels.is_empty();
    let assignee = match assignee {
        Some(user) => reach_user(tx, team_id, user).await?,
        None => Err("nobody is on call today".to_string()),
    };
    let chosen = match (assignee, &policy.fallback_topic) {
        (Ok(r), _) => Some((r.topic, Some(r.user_id), format!("paging {}", r.username))),
        (Err(why), Some(topic)) => Some((
            topic.clone(),
            None,
            format!("{why}: paging the fallback topic {topic}"),
        )),
        (Err(why), None) => {
            timeline(
                tx,
                incident_id,
                now,
                "nobody_reachable",
                None,
                &format!("nobody paged: {why} and the team has no fallback topic"),
            )
            .await?;
            None
        }
    };
    if let Some((topic, user, text)) = chosen {
        sqlx::query(
            "UPDATE incidents SET page_topic = $1, page_user_id = $2, reminded_at = $3 WHERE id = $4",
        )
        .bind(&topic)
        .bind(user)
        .bind(if ladder { None } else { Some(now) })
        .bind(incident_id)
        .execute(&mut **tx)
        .await?;
        enqueue(tx, incident_id, PageKind::Opening, &topic, user, "", now).await?;
        timeline(tx, incident_id, now, "paged", None, &text).await?;
    }
    if ladder {
        sqlx::query("UPDATE incidents SET esc_step = 0, esc_due_at = $1 WHERE id = $2")
            .bind(now)
            .bind(incident_id)
            .execute(&mut **tx)
            .await?;
    }
    Ok(())
}

/// A resolved incident: an all-clear to the opening topic, only if the opening page was sent.
/// Also called when an opening page is confirmed sent after its incident resolved.
pub(crate) async fn resolved(tx: &mut Tx, incident_id: i64, now: i64) -> Result<bool> {
    let (state, topic, user, sent): (String, Option<String>, Option<i64>, i64) = sqlx::query_as(
        "SELECT state, page_topic, page_user_id, opening_sent FROM incidents WHERE id = $1",
    )
    .bind(incident_id)
    .fetch_one(&mut **tx)
    .await?;
    let (Some(topic), 1, "resolved") = (topic, sent, state.as_str()) else {
        return Ok(false);
    };
    let already: Option<(i64,)> =
        sqlx::query_as("SELECT id FROM pages WHERE incident_id = $1 AND kind = 'all_clear'")
            .bind(incident_id)
            .fetch_optional(&mut **tx)
            .await?;
    if already.is_some() {
        return Ok(false);
    }
    enqueue(tx, incident_id, PageKind::AllClear, &topic, user, "", now).await
}

/// Re-pages the opening topic. The caller has moved `reminded_at` to now.
pub(crate) async fn remind(
    tx: &mut Tx,
    incident_id: i64,
    topic: &str,
    user_id: Option<i64>,
    why: &str,
    now: i64,
) -> Result<()> {
    enqueue(
        tx,
        incident_id,
        PageKind::Reminder,
        topic,
        user_id,
        why,
        now,
    )
    .await?;
    let who = match user_id {
        Some(u) => sqlx::query_as::<_, (String,)>("SELECT username FROM users WHERE id = $1")
            .bind(u)
            .fetch_optional(&mut **tx)
            .await?
            .map(|r| r.0)
            .unwrap_or_else(|| "the opening topic".into()),
        None => format!("the fallback topic {topic}"),
    };
    timeline(
        tx,
        incident_id,
        now,
        "reminder",
        None,
        &format!("reminded {who}: {why}"),
    )
    .await
}

/// A snooze ended (expired or lifted by hand) on a still-untouched incident: paging resumes
/// where it paused, paging again at once — the current ladder level is re-entered with its
/// timeout restarted, or a reminder goes to the opening topic. Returns true when it queued work.
pub(crate) async fn resume(tx: &mut Tx, incident_id: i64, now: i64) -> Result<bool> {
    type Row = (
        String,
        Option<i64>,
        Option<i64>,
        Option<i64>,
        Option<i64>,
        Option<String>,
        Option<i64>,
    );
    let (state, archived, reminded_at, step, due, topic, user): Row = sqlx::query_as(
        "SELECT state, archived_at, reminded_at, esc_step, esc_due_at, page_topic, page_user_id FROM incidents WHERE id = $1",
    )
    .bind(incident_id)
    .fetch_one(&mut **tx)
    .await?;
    if state != "triggered" || archived.is_some() {
        return Ok(false);
    }
    if let (Some(step), Some(_)) = (step, due) {
        sqlx::query("UPDATE incidents SET esc_step = $1, esc_due_at = $2 WHERE id = $3")
            .bind((step - 1).max(0))
            .bind(now)
            .bind(incident_id)
            .execute(&mut **tx)
            .await?;
        return Ok(true);
    }
    if let (Some(_), Some(topic)) = (reminded_at, topic) {
        sqlx::query("UPDATE incidents SET reminded_at = $1 WHERE id = $2")
            .bind(now)
            .bind(incident_id)
            .execute(&mut **tx)
            .await?;
        remind(tx, incident_id, &topic, user, "snooze ended", now).await?;
        return Ok(true);
    }
    Ok(false)
}
