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

use crate::db::{insert_json, insert_rows, list, rows_per_statement, Col::*, Tx};
use crate::incidents::lifecycle::{timeline, timelines, Entry};
use crate::Result;
use klaxon_domain::paging::{EscalationPolicy, PageKind};
use sqlx::AnyConnection;
use std::collections::{HashMap, HashSet};

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

/// A page to queue, for `enqueue_many`.
pub(crate) struct NewPage {
    pub incident_id: i64,
    pub kind: PageKind,
    pub topic: String,
    pub user_id: Option<i64>,
    pub detail: String,
}

/// Queues a page; false when the rule below held it back.
pub(crate) async fn enqueue(
    tx: &mut Tx,
    incident_id: i64,
    kind: PageKind,
    topic: &str,
    user_id: Option<i64>,
    detail: &str,
    now: i64,
) -> Result<bool> {
    let page = NewPage {
        incident_id,
        kind,
        topic: topic.to_string(),
        user_id,
        detail: detail.to_string(),
    };
    Ok(enqueue_many(tx, &[page], now).await?[0])
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
    let mut waiting: HashSet<(i64, String)> = HashSet::new();
    for chunk in asking.chunks(rows_per_statement(tx.backend, 1)) {
        let sql = format!(
            "SELECT incident_id, topic FROM pages WHERE state = 'pending' AND kind <> 'all_clear' AND incident_id IN ({})",
            list(tx.backend, chunk.len(), 1)
        );
        let mut q = sqlx::query_as::<_, (i64, String)>(&sql).persistent(chunk.len() == 1);
        for id in chunk {
            q = q.bind(id);
        }
        waiting.extend(q.fetch_all(&mut **tx).await?);
    }
    let mut queued = Vec::with_capacity(pages.len());
    let mut kept = Vec::with_capacity(pages.len());
    for page in pages {
        let key = (page.incident_id, page.topic.clone());
        let wants_owner = page.kind.wants_owner();
        if wants_owner && waiting.contains(&key) {
            queued.push(false);
            continue;
        }
        if wants_owner {
            waiting.insert(key);
        }
        queued.push(true);
        kept.push(page);
    }
    #[derive(serde::Serialize)]
    struct Row<'a> {
        incident_id: i64,
        kind: &'a str,
        topic: &'a str,
        user_id: Option<i64>,
        detail: &'a str,
        due_at: i64,
        created_at: i64,
    }
    let rows: Vec<Row> = kept
        .iter()
        .map(|p| Row {
            incident_id: p.incident_id,
            kind: p.kind.as_str(),
            topic: &p.topic,
            user_id: p.user_id,
            detail: &p.detail,
            due_at: now,
            created_at: now,
        })
        .collect();
    let sql = insert_rows(
        tx.backend,
        "pages",
        &[
            Int("incident_id"),
            Text("kind"),
            Text("topic"),
            Int("user_id"),
            Text("detail"),
            Int("due_at"),
            Int("created_at"),
        ],
    );
    insert_json(tx, &sql, &rows).await?;
    Ok(queued)
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

/// The columns `all_clears` reads, in `Cleared` order.
pub(crate) const CLEARED: &str = "id, opening_sent, page_topic, page_user_id";

/// An incident as its all-clear needs it: id, opening_sent, page_topic, page_user_id.
pub(crate) type Cleared = (i64, i64, Option<String>, Option<i64>);

/// Resolved incidents: an all-clear to the opening topic of each whose opening page was sent.
/// The rows come from the `RETURNING` of the statement that resolved them, or of the one that
/// marked their opening page sent after they resolved; the two lock the incident row, so
/// whichever runs second sees the other's change, and each incident comes here once.
/// Returns the incidents whose all-clear it queued.
pub(crate) async fn all_clears(tx: &mut Tx, rows: &[Cleared], now: i64) -> Result<Vec<i64>> {
    let mut pages: Vec<NewPage> = rows
        .iter()
        .filter(|(_, sent, _, _)| *sent == 1)
        .filter_map(|(incident_id, _, topic, user_id)| {
            Some(NewPage {
                incident_id: *incident_id,
                kind: PageKind::AllClear,
                topic: topic.clone()?,
                user_id: *user_id,
                detail: String::new(),
            })
        })
        .collect();
    pages.sort_by_key(|p| p.incident_id);
    let queued = enqueue_many(tx, &pages, now).await?;
    Ok(pages
        .iter()
        .zip(queued)
        .filter(|(_, q)| *q)
        .map(|(p, _)| p.incident_id)
        .collect())
}

/// A reminder to queue, for `remind_many`.
pub(crate) struct Reminder {
    pub incident_id: i64,
    pub topic: String,
    pub user_id: Option<i64>,
    pub why: String,
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
        })
        .collect();
    enqueue_many(tx, &pages, now).await?;
    let mut users: Vec<i64> = reminders.iter().filter_map(|r| r.user_id).collect();
    users.sort_unstable();
    users.dedup();
    let mut names = HashMap::new();
    for chunk in users.chunks(rows_per_statement(tx.backend, 1)) {
        let sql = format!(
            "SELECT id, username FROM users WHERE id IN ({})",
            list(tx.backend, chunk.len(), 1)
        );
        let mut q = sqlx::query_as::<_, (i64, String)>(&sql).persistent(chunk.len() == 1);
        for id in chunk {
            q = q.bind(id);
        }
        names.extend(q.fetch_all(&mut **tx).await?);
    }
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
                kind: "reminder",
                actor_id: None,
                text: format!("reminded {who}: {}", r.why),
            }
        })
        .collect();
    timelines(tx, &entries).await
}

/// The columns `resume_many` reads, in `Paused` order.
pub(crate) const PAUSED: &str =
    "id, state, archived_at, reminded_at, esc_step, esc_due_at, page_topic, page_user_id";

/// An incident's paging state: id, state, archived_at, reminded_at, esc_step, esc_due_at,
/// page_topic, page_user_id.
pub(crate) type Paused = (
    i64,
    String,
    Option<i64>,
    Option<i64>,
    Option<i64>,
    Option<i64>,
    Option<String>,
    Option<i64>,
);

/// A snooze ended (expired or lifted by hand) on a still-untouched incident: paging resumes
/// where it paused, paging again at once — the current ladder level is re-entered with its
/// timeout restarted, or a reminder goes to the opening topic. Returns true when it queued work.
pub(crate) async fn resume(tx: &mut Tx, incident_id: i64, now: i64) -> Result<bool> {
    let row: Paused = sqlx::query_as(&format!("SELECT {PAUSED} FROM incidents WHERE id = $1"))
        .bind(incident_id)
        .fetch_one(&mut **tx)
        .await?;
    Ok(resume_many(tx, &[row], now).await? == 1)
}

/// `resume` for a batch of incidents whose snooze ended; returns how many queued work.
pub(crate) async fn resume_many(tx: &mut Tx, rows: &[Paused], now: i64) -> Result<usize> {
    let mut ladder = Vec::new();
    let mut reminders = Vec::new();
    for (id, state, archived, reminded_at, step, due, topic, user) in rows {
        if state != "triggered" || archived.is_some() {
            continue;
        }
        if step.is_some() && due.is_some() {
            ladder.push(*id);
        } else if let (Some(_), Some(topic)) = (reminded_at, topic) {
            reminders.push(Reminder {
                incident_id: *id,
                topic: topic.clone(),
                user_id: *user,
                why: "snooze ended".into(),
            });
        }
    }
    // The current level again: one step back (the step counts levels entered), due now.
    update_ids(
        tx,
        "UPDATE incidents SET esc_step = CASE WHEN esc_step > 0 THEN esc_step - 1 ELSE 0 END, esc_due_at = $1 WHERE id IN",
        now,
        &ladder,
    )
    .await?;
    let reminded: Vec<i64> = reminders.iter().map(|r| r.incident_id).collect();
    update_ids(
        tx,
        "UPDATE incidents SET reminded_at = $1 WHERE id IN",
        now,
        &reminded,
    )
    .await?;
    remind_many(tx, &reminders, now).await?;
    Ok(ladder.len() + reminders.len())
}

/// Runs `head ($2, …)` over `ids` in chunks, with `value` as `$1`.
pub(crate) async fn update_ids(tx: &mut Tx, head: &str, value: i64, ids: &[i64]) -> Result<u64> {
    let mut done = 0;
    for chunk in ids.chunks(rows_per_statement(tx.backend, 1) - 1) {
        let sql = format!("{head} ({})", list(tx.backend, chunk.len(), 2));
        let mut q = sqlx::query(&sql).persistent(chunk.len() == 1).bind(value);
        for id in chunk {
            q = q.bind(id);
        }
        done += q.execute(&mut **tx).await?.rows_affected();
    }
    Ok(done)
}
