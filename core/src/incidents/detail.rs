//! One incident with everything around it: its alerts, notes, timeline and paging history,
//! similar resolved incidents, and — for the incident page — what the caller may do to it.

use super::reads::{AlertRow, IncidentRow, ALERT_COLUMNS, INCIDENT_COLUMNS};
use crate::{Actor, Core, Result};
use klaxon_domain::contact::{ContactKind, Destination};
use klaxon_domain::incident::{Alert, Incident, Note, TimelineEntry, TimelineKind};
use klaxon_domain::incident_page::{IncidentDetail, IncidentRights, IncidentView, SimilarIncident};
use klaxon_domain::paging::{plan_delivery, Delivery, IncidentNow, Page, PageKind, PageStatus};
use klaxon_domain::Timestamp;
use std::collections::HashMap;

#[derive(sqlx::FromRow)]
struct NoteRow {
    id: i64,
    author: Option<String>,
    text: String,
    resolution: i64,
    created_at: i64,
}

#[derive(sqlx::FromRow)]
struct TimelineRow {
    id: i64,
    at: i64,
    #[sqlx(try_from = "String")]
    kind: TimelineKind,
    actor: Option<String>,
    text: String,
}

#[derive(sqlx::FromRow)]
struct PageRow {
    id: i64,
    #[sqlx(try_from = "String")]
    kind: PageKind,
    user_id: Option<i64>,
    recipient: Option<String>,
    push_topic: Option<String>,
    topic: String,
    #[sqlx(try_from = "String")]
    road: ContactKind,
    method_id: Option<i64>,
    #[sqlx(try_from = "String")]
    state: PageStatus,
    attempts: i64,
    last_error: Option<String>,
    due_at: i64,
    created_at: i64,
    sent_at: Option<i64>,
}

impl PageRow {
    /// The page as the incident's history shows it: `method` is the name of the person's contact
    /// method its destination is, and `now` the incident's state, which cancels a waiting page.
    fn into_page(self, method: Option<&String>, now: Option<(&IncidentNow, i64)>) -> Page {
        // A page to a person names them and their road; a shared topic is named instead.
        let shared = self.recipient.is_none();
        let via = match (shared, method) {
            (true, _) => None,
            (false, _) if self.push_topic.as_deref() == Some(self.topic.as_str()) => {
                Some("push topic".into())
            }
            (false, Some(name)) => Some(name.clone()),
            (false, None) if self.method_id.is_some() => Some("a removed method".into()),
            (false, None) => Some("ntfy".into()),
        };
        let (status, last_error) = match (self.state, now) {
            (PageStatus::Pending, Some((incident, at))) => {
                match plan_delivery(self.kind, !shared, Some(incident), at) {
                    Delivery::Cancel(why) => (PageStatus::Cancelled, Some(why.to_string())),
                    Delivery::Send { .. } => (PageStatus::Pending, self.last_error),
                }
            }
            (state, _) => (state, self.last_error),
        };
        Page {
            id: self.id,
            kind: self.kind,
            recipient: self.recipient,
            topic: shared.then_some(self.topic),
            road: self.road,
            via,
            status,
            attempts: self.attempts,
            last_error,
            next_attempt_at: (status == PageStatus::Pending).then_some(Timestamp(self.due_at)),
            created_at: Timestamp(self.created_at),
            sent_at: self.sent_at.map(Timestamp),
        }
    }
}

impl Core {
    pub async fn incident_detail(&self, actor: &Actor, id: i64) -> Result<IncidentDetail> {
        let incident = self.incident(actor, id).await?;
        self.detail_of(incident).await
    }

    /// The incident page's one read: the detail, similar incidents, who it can be assigned
    /// to, the team's name, and what the caller may do (any member may work an incident).
    pub async fn incident_view(&self, actor: &Actor, id: i64) -> Result<IncidentView> {
        let incident = self.incident(actor, id).await?;
        let now = Timestamp(self.now());
        let team_id = incident.team_id;
        let may = IncidentRights::of_member(&incident, now);
        let similar = self.similar_to(&incident).await?;
        let next = self.next_step(&incident, now.0).await?;
        Ok(IncidentView {
            now,
            me: actor.user_id,
            team_name: self.team_by_id(team_id).await?.display_name,
            detail: self.detail_of(incident).await?,
            similar,
            assignable: self.members_of(team_id).await?,
            may,
            silence: self.preview_silence_of(id).await?,
            next,
        })
    }

    pub(crate) async fn detail_of(&self, incident: Incident) -> Result<IncidentDetail> {
        let id = incident.id;
        let alerts: Vec<AlertRow> = sqlx::query_as(&format!(
            "SELECT {ALERT_COLUMNS} FROM alerts WHERE incident_id = $1 ORDER BY id"
        ))
        .bind(id)
        .fetch_all(&self.db.pool)
        .await?;
        let timeline: Vec<TimelineRow> = sqlx::query_as(
            "SELECT t.id, t.at, t.kind, (SELECT username FROM users WHERE id = t.actor_id) AS actor, t.text \
             FROM timeline t WHERE t.incident_id = $1 ORDER BY t.id",
        )
        .bind(id)
        .fetch_all(&self.db.pool)
        .await?;
        let pages = self.pages(&incident).await?;
        let changes_before = self
            .changes_before(incident.team_id, incident.created_at.0)
            .await?;
        Ok(IncidentDetail {
            changes_before,
            incident,
            alerts: alerts.into_iter().map(Alert::from).collect(),
            notes: self.notes(id).await?,
            pages,
            silence: self.active_silence(id).await?,
            timeline: timeline
                .into_iter()
                .map(|r| TimelineEntry {
                    id: r.id,
                    at: Timestamp(r.at),
                    kind: r.kind,
                    actor: r.actor,
                    text: r.text,
                })
                .collect(),
        })
    }

    async fn notes(&self, incident_id: i64) -> Result<Vec<Note>> {
        let rows: Vec<NoteRow> = sqlx::query_as(
            "SELECT n.id, (SELECT username FROM users WHERE id = n.author_id) AS author, n.text, n.resolution, n.created_at \
             FROM incident_notes n WHERE n.incident_id = $1 ORDER BY n.id",
        )
        .bind(incident_id)
        .fetch_all(&self.db.pool)
        .await?;
        Ok(rows
            .into_iter()
            .map(|r| Note {
                id: r.id,
                author: r.author,
                text: r.text,
                resolution: r.resolution != 0,
                created_at: Timestamp(r.created_at),
            })
            .collect())
    }

    /// The paging history of an incident, oldest first, per person and road.
    async fn pages(&self, incident: &Incident) -> Result<Vec<Page>> {
        let rows: Vec<PageRow> = sqlx::query_as(
            "SELECT p.id, p.kind, p.user_id, u.username AS recipient, u.push_topic, p.topic, p.road, p.method_id, p.state, \
             p.attempts, p.last_error, p.due_at, p.created_at, p.sent_at FROM pages p \
             LEFT JOIN users u ON u.id = p.user_id WHERE p.incident_id = $1 ORDER BY p.id",
        )
        .bind(incident.id)
        .fetch_all(&self.db.pool)
        .await?;
        // The people's methods, by the destination each is: a page to one names it.
        let mut users: Vec<i64> = rows.iter().filter_map(|r| r.user_id).collect();
        users.sort_unstable();
        users.dedup();
        let names: HashMap<(i64, String), String> = self
            .db
            .fetch_in::<(i64, i64, String, String, String)>(
                "SELECT user_id, id, kind, target, name FROM contact_methods WHERE user_id IN ({ids})",
                &[],
                &users,
            )
            .await?
            .into_iter()
            .filter_map(|(user, id, kind, target, name)| {
                let kind = ContactKind::parse(&kind)?;
                Some(((user, Destination::of_method(kind, id, &target).to_string()), name))
            })
            .collect();
        let state = IncidentNow {
            state: incident.state,
            archived: incident.archived,
            snoozed_until: incident.snoozed_until.map(|t| t.0),
        };
        let now = self.now();
        Ok(rows
            .into_iter()
            .map(|r| {
                let method = r.user_id.and_then(|u| names.get(&(u, r.topic.clone())));
                r.into_page(method, Some((&state, now)))
            })
            .collect())
    }

    /// Resolved incidents of the same team and signature that have notes; ones with a
    /// resolution note first, then the newest.
    pub async fn similar_incidents(&self, actor: &Actor, id: i64) -> Result<Vec<SimilarIncident>> {
        let incident = self.incident(actor, id).await?;
        self.similar_to(&incident).await
    }

    pub(crate) async fn similar_to(&self, incident: &Incident) -> Result<Vec<SimilarIncident>> {
        let rows: Vec<IncidentRow> = sqlx::query_as(&format!(
            "SELECT {INCIDENT_COLUMNS} FROM incidents i WHERE i.team_id = $1 AND i.signature = $2 AND i.id <> $3 \
             AND i.state = 'resolved' AND EXISTS (SELECT 1 FROM incident_notes n WHERE n.incident_id = i.id) \
             ORDER BY (SELECT MAX(n.resolution) FROM incident_notes n WHERE n.incident_id = i.id) DESC, i.id DESC LIMIT 20"
        ))
        .bind(incident.team_id)
        .bind(&incident.signature)
        .bind(incident.id)
        .fetch_all(&self.db.pool)
        .await?;
        let mut out = Vec::with_capacity(rows.len());
        for r in rows {
            let incident = Incident::from(r);
            let notes = self.notes(incident.id).await?;
            out.push(SimilarIncident { incident, notes });
        }
        Ok(out)
    }
}
