//! A team's record over a range (`domain::export`): its incidents, pages and alerts, read from
//! the stored rows themselves (no copy that could drift), a page of rows at a time by id, for the
//! team's members (`authz::team_access`).

use crate::{Actor, Core, Error, Result};
use klaxon_domain::export::{AlertRecord, Export, IncidentRecord, PageRecord, Window};
use klaxon_domain::Timestamp;

fn at(t: Option<i64>) -> Option<Timestamp> {
    t.map(Timestamp)
}

/// Keeps `limit` rows and names the next page's `after` when there were more.
fn paged<T>(mut rows: Vec<(i64, T)>, limit: i64) -> Export<T> {
    let more = rows.len() as i64 > limit;
    rows.truncate(limit as usize);
    let next_after = more.then(|| rows.last().map(|(id, _)| *id)).flatten();
    Export {
        rows: rows.into_iter().map(|(_, r)| r).collect(),
        next_after,
    }
}

type IncidentRow = (
    i64,
    String,
    String,
    String,
    i64,
    Option<i64>,
    Option<String>,
    Option<i64>,
    i64,
);
type PageRow = (
    i64,
    Option<i64>,
    String,
    Option<String>,
    String,
    String,
    i64,
    Option<i64>,
    i64,
    Option<String>,
);
type AlertRow = (
    i64,
    Option<i64>,
    String,
    String,
    String,
    i64,
    Option<i64>,
    i64,
    Option<String>,
);

impl Core {
    /// Checks the caller may read the team and the window asked for.
    async fn export_window(
        &self,
        actor: &Actor,
        team_id: i64,
        window: ExportQuery,
    ) -> Result<Window> {
        self.team_access(actor, team_id).await?;
        Window::check(
            self.now(),
            window.from,
            window.to,
            window.after,
            window.limit,
        )
        .map_err(Error::Invalid)
    }

    /// Incidents opened in the window.
    pub async fn export_incidents(
        &self,
        actor: &Actor,
        team_id: i64,
        q: ExportQuery,
    ) -> Result<Export<IncidentRecord>> {
        let w = self.export_window(actor, team_id, q).await?;
        let rows: Vec<IncidentRow> = sqlx::query_as(
            "SELECT i.id, i.title, i.severity, i.state, i.created_at, i.acknowledged_at, \
             (SELECT username FROM users WHERE id = i.acknowledged_by), i.resolved_at, \
             (SELECT COUNT(*) FROM alerts a WHERE a.incident_id = i.id) \
             FROM incidents i WHERE i.team_id = $1 AND i.id > $2 \
             AND i.created_at >= $3 AND i.created_at < $4 ORDER BY i.id LIMIT $5",
        )
        .bind(team_id)
        .bind(w.after)
        .bind(w.from)
        .bind(w.to)
        .bind(w.limit + 1)
        .fetch_all(&self.db.pool)
        .await?;
        let rows = rows.into_iter().map(|r| {
            let (id, title, severity, state, opened, acked, by, resolved, alerts) = r;
            let record = IncidentRecord {
                id,
                title,
                severity,
                state,
                opened_at: Timestamp(opened),
                acknowledged_at: at(acked),
                acknowledged_by: by,
                resolved_at: at(resolved),
                seconds_to_acknowledge: acked.map(|t| t - opened),
                seconds_to_resolve: resolved.map(|t| t - opened),
                alerts,
            };
            (id, record)
        });
        Ok(paged(rows.collect(), w.limit))
    }

    /// Pages queued in the window: the team's incidents' pages and its hand-off notices.
    pub async fn export_pages(
        &self,
        actor: &Actor,
        team_id: i64,
        q: ExportQuery,
    ) -> Result<Export<PageRecord>> {
        let w = self.export_window(actor, team_id, q).await?;
        let rows: Vec<PageRow> = sqlx::query_as(
            "SELECT p.id, p.incident_id, p.kind, (SELECT username FROM users WHERE id = p.user_id), \
             p.road, p.state, p.created_at, p.sent_at, p.attempts, p.last_error \
             FROM pages p LEFT JOIN incidents i ON i.id = p.incident_id \
             WHERE COALESCE(i.team_id, p.team_id) = $1 AND p.id > $2 \
             AND p.created_at >= $3 AND p.created_at < $4 ORDER BY p.id LIMIT $5",
        )
        .bind(team_id)
        .bind(w.after)
        .bind(w.from)
        .bind(w.to)
        .bind(w.limit + 1)
        .fetch_all(&self.db.pool)
        .await?;
        let rows = rows.into_iter().map(|r| {
            let (id, incident_id, kind, person, road, state, queued, sent, attempts, error) = r;
            let record = PageRecord {
                id,
                incident_id,
                kind,
                person,
                road,
                state,
                queued_at: Timestamp(queued),
                sent_at: at(sent),
                attempts,
                error,
            };
            (id, record)
        });
        Ok(paged(rows.collect(), w.limit))
    }

    /// Alerts last received in the window.
    pub async fn export_alerts(
        &self,
        actor: &Actor,
        team_id: i64,
        q: ExportQuery,
    ) -> Result<Export<AlertRecord>> {
        let w = self.export_window(actor, team_id, q).await?;
        let rows: Vec<AlertRow> = sqlx::query_as(
            "SELECT a.id, a.incident_id, a.alertname, a.fingerprint, a.status, a.starts_at, \
             a.ends_at, a.received_at, (SELECT name FROM integrations WHERE id = a.integration_id) \
             FROM alerts a WHERE a.team_id = $1 AND a.id > $2 \
             AND a.received_at >= $3 AND a.received_at < $4 ORDER BY a.id LIMIT $5",
        )
        .bind(team_id)
        .bind(w.after)
        .bind(w.from)
        .bind(w.to)
        .bind(w.limit + 1)
        .fetch_all(&self.db.pool)
        .await?;
        let rows = rows.into_iter().map(|r| {
            let (id, incident_id, alertname, fingerprint, status, starts, ends, received, via) = r;
            let record = AlertRecord {
                id,
                incident_id,
                alertname,
                fingerprint,
                status,
                starts_at: Timestamp(starts),
                ends_at: at(ends),
                received_at: Timestamp(received),
                integration: via,
            };
            (id, record)
        });
        Ok(paged(rows.collect(), w.limit))
    }
}

/// What an export was asked for, as given (checked by `Window::check`).
#[derive(Debug, Clone, Copy, Default)]
pub struct ExportQuery {
    pub from: Option<i64>,
    pub to: Option<i64>,
    pub after: Option<i64>,
    pub limit: Option<i64>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_page_names_the_next_only_when_there_are_more_rows() {
        let rows = |n: i64| (1..=n).map(|i| (i * 10, i)).collect::<Vec<_>>();
        let full = paged(rows(3), 2);
        assert_eq!((full.rows, full.next_after), (vec![1, 2], Some(20)));
        let last = paged(rows(2), 2);
        assert_eq!((last.rows, last.next_after), (vec![1, 2], None));
    }
}
