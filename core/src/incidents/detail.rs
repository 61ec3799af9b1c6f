//! One incident with everything around it: its alerts, notes, timeline and paging history,
//! similar resolved incidents, and — for the incident page — what the caller may do to it.

use super::reads::{AlertRow, IncidentRow, ALERT_COLUMNS, INCIDENT_COLUMNS};
use crate::{Actor, Core, Result};
use klaxon_domain::incident::{
    Alert, Incident, IncidentDetail, IncidentRights, IncidentView, Note, SimilarIncident,
    TimelineEntry, TimelineKind,
};
use klaxon_domain::paging::{Page, PageKind, PageStatus};
use klaxon_domain::Timestamp;

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
    recipient: Option<String>,
    topic: String,
    #[sqlx(try_from = "String")]
    state: PageStatus,
    attempts: i64,
    last_error: Option<String>,
    due_at: i64,
    created_at: i64,
    sent_at: Option<i64>,
}

impl From<PageRow> for Page {
    fn from(r: PageRow) -> Page {
        // A page to a person names them; a shared topic is named instead.
        let shared = r.recipient.is_none();
        Page {
            id: r.id,
            kind: r.kind,
            recipient: r.recipient,
            topic: shared.then_some(r.topic),
            status: r.state,
            attempts: r.attempts,
            last_error: r.last_error,
            next_attempt_at: (r.state == PageStatus::Pending).then_some(Timestamp(r.due_at)),
            created_at: Timestamp(r.created_at),
            sent_at: r.sent_at.map(Timestamp),
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
        Ok(IncidentView {
            now,
            me: actor.user_id,
            team_name: self.team_by_id(team_id).await?.display_name,
            detail: self.detail_of(incident).await?,
            similar,
            assignable: self.members_of(team_id).await?,
            may,
            silence: self.preview_silence_of(id).await?,
        })
    }

    async fn detail_of(&self, incident: Incident) -> Result<IncidentDetail> {
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
        Ok(IncidentDetail {
            incident,
            alerts: alerts.into_iter().map(Alert::from).collect(),
            notes: self.notes(id).await?,
            pages: self.pages(id).await?,
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

    /// The paging history of an incident, oldest first.
    async fn pages(&self, incident_id: i64) -> Result<Vec<Page>> {
        let rows: Vec<PageRow> = sqlx::query_as(
            "SELECT p.id, p.kind, (SELECT username FROM users WHERE id = p.user_id) AS recipient, p.topic, p.state, \
             p.attempts, p.last_error, p.due_at, p.created_at, p.sent_at FROM pages p WHERE p.incident_id = $1 ORDER BY p.id",
        )
        .bind(incident_id)
        .fetch_all(&self.db.pool)
        .await?;
        Ok(rows.into_iter().map(Page::from).collect())
    }

    /// Resolved incidents of the same team and signature that have notes; ones with a
    /// resolution note first, then the newest.
    pub async fn similar_incidents(&self, actor: &Actor, id: i64) -> Result<Vec<SimilarIncident>> {
        let incident = self.incident(actor, id).await?;
        self.similar_to(&incident).await
    }

    async fn similar_to(&self, incident: &Incident) -> Result<Vec<SimilarIncident>> {
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
