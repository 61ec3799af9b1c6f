//! Alert noise (`domain::noise`): the team's incidents opened in the range, weighed per alert
//! and integration, each row with the one action that would quiet it and where to take it.

use super::{ReportQuery, PAGES_THAT_ASK};
use crate::db::fetch_in;
use crate::{Actor, Core, Error, Result};
use klaxon_domain::health::Range;
use klaxon_domain::noise::{
    tally, AlertNoise, Counted, NoiseRow, Quieting, FLAPPING_WITHIN, REOPENED_WITHIN,
};
use klaxon_domain::Timestamp;
use std::collections::HashMap;

#[derive(sqlx::FromRow)]
struct CountedRow {
    signature: String,
    integration_id: Option<i64>,
    incidents: i64,
    pages: i64,
    flapping: i64,
    unacknowledged: i64,
    latest: i64,
}

impl Core {
    /// The team's alert noise over the range (default: the last four weeks).
    pub async fn alert_noise(
        &self,
        actor: &Actor,
        team_id: i64,
        q: ReportQuery,
    ) -> Result<AlertNoise> {
        self.team_access(actor, team_id).await?;
        let range = Range::check(self.now(), q.from, q.to).map_err(Error::Invalid)?;
        let _turn = self.reading_turn(actor).await;
        let counted = count(&self.db.pool, team_id, range).await?;
        let mut conn = self.db.pool.acquire().await?;
        let mut rows = tally(&counted);
        let ids: Vec<i64> = rows.iter().filter_map(|r| r.integration_id).collect();
        let names: HashMap<i64, String> = fetch_in::<(i64, String)>(
            &mut conn,
            (self.db.backend, false),
            "SELECT id, name FROM integrations WHERE id IN ({ids})",
            &[],
            &ids,
        )
        .await?
        .into_iter()
        .collect();
        for row in &mut rows {
            row.integration = row.integration_id.and_then(|id| names.get(&id).cloned());
            let (action, url) = self.quieting_action(&mut conn, team_id, row).await?;
            row.action = action;
            row.action_url = url;
        }
        Ok(AlertNoise {
            team_id,
            from: Timestamp(range.from),
            to: Timestamp(range.to),
            incidents: counted.iter().map(|c| c.incidents).sum(),
            flapping: counted.iter().map(|c| c.flapping).sum(),
            rows,
        })
    }

    /// The sentence and link of a row's action: its source graph (the link its sender gave
    /// with its latest incident's alerts), the integration's routing rules, or its latest
    /// incident, where Silence is.
    async fn quieting_action(
        &self,
        conn: &mut sqlx::AnyConnection,
        team_id: i64,
        row: &NoiseRow,
    ) -> Result<(String, String)> {
        let base = &self.config.public_url;
        let latest = row.latest_incident;
        if row.quieting == Quieting::Source {
            let link: Option<(Option<String>,)> = sqlx::query_as(
                "SELECT generator_url FROM alerts WHERE incident_id = $1 \
                 AND generator_url IS NOT NULL ORDER BY id DESC LIMIT 1",
            )
            .bind(latest)
            .fetch_optional(&mut *conn)
            .await?;
            if let Some((Some(url),)) = link {
                let action = "It resolves itself: at its source, wait longer before it fires \
                              (a `for:` of a few minutes) or raise its threshold";
                return Ok((action.into(), url));
            }
        }
        if let (Quieting::Route, Some(id)) = (row.quieting, row.integration_id) {
            let action = "Nobody acknowledges its pages: send it at a lower severity with a \
                          routing rule on its integration";
            return Ok((
                action.into(),
                format!("{base}/teams/{team_id}#integration-{id}"),
            ));
        }
        let action = match row.quieting {
            Quieting::Source => {
                "It resolves itself: silence it from its latest incident, and \
                                 make it wait longer before it fires at its source"
            }
            _ => "Silence it from its latest incident while it is fixed",
        };
        Ok((action.into(), format!("{base}/incidents/{latest}#silence")))
    }
}

/// The team's incidents opened in the range, counted per signature and integration by the
/// database (the definitions are `domain::noise`'s), on two connections at once
/// (`reports::READS_AT_ONCE`): the incidents with their pages, and which were reopened (an index
/// probe each: `OFFSET 0` keeps PostgreSQL from making the test a hash join of the team's
/// incidents on their signature, 25 million pairs over a year). Only the sums come back.
async fn count(pool: &sqlx::AnyPool, team_id: i64, range: Range) -> Result<Vec<Counted>> {
    // Each incident's pages are joined and grouped rather than counted by a subquery, which
    // both databases would run twice (once for the count, once for "paged and never
    // acknowledged"); whether anyone acted is asked only of incidents that resolved quickly.
    let counted = async {
        let mut conn = pool.acquire().await?;
        let rows: Vec<CountedRow> = sqlx::query_as(&format!(
            "SELECT signature, integration_id, COUNT(*) AS incidents, \
             CAST(SUM(pages) AS BIGINT) AS pages, SUM(flapping) AS flapping, \
             SUM(CASE WHEN pages > 0 AND acknowledged_at IS NULL THEN 1 ELSE 0 END) AS unacknowledged, \
             MAX(id) AS latest \
             FROM (SELECT i.id, i.signature, i.integration_id, i.acknowledged_at, COUNT(p.id) AS pages, \
              CASE WHEN i.resolved_at IS NOT NULL AND i.resolved_at - i.created_at < {FLAPPING_WITHIN} \
               AND NOT EXISTS (SELECT 1 FROM timeline t WHERE t.incident_id = i.id \
               AND t.actor_id IS NOT NULL) THEN 1 ELSE 0 END AS flapping \
             FROM incidents i LEFT JOIN pages p ON p.incident_id = i.id AND p.kind IN {PAGES_THAT_ASK} \
              AND p.sent_at IS NOT NULL \
             WHERE i.team_id = $1 AND i.created_at >= $2 AND i.created_at < $3 \
             GROUP BY i.id, i.signature, i.integration_id, i.created_at, i.resolved_at, \
              i.acknowledged_at) x \
             GROUP BY signature, integration_id"
        ))
        .bind(team_id)
        .bind(range.from)
        .bind(range.to)
        .fetch_all(&mut *conn)
        .await?;
        Ok::<_, crate::Error>(rows)
    };
    let reopened = async {
        let mut conn = pool.acquire().await?;
        let rows: Vec<(String, Option<i64>, i64)> = sqlx::query_as(&format!(
            "SELECT i.signature, i.integration_id, COUNT(*) FROM incidents i \
             WHERE i.team_id = $1 AND i.created_at >= $2 AND i.created_at < $3 \
             AND EXISTS (SELECT 1 FROM incidents j WHERE j.team_id = i.team_id \
              AND j.signature = i.signature AND j.id < i.id \
              AND j.resolved_at >= i.created_at - {REOPENED_WITHIN} AND j.resolved_at <= i.created_at \
              LIMIT 1 OFFSET 0) \
             GROUP BY i.signature, i.integration_id"
        ))
        .bind(team_id)
        .bind(range.from)
        .bind(range.to)
        .fetch_all(&mut *conn)
        .await?;
        Ok(rows)
    };
    let (counted, reopened) = tokio::try_join!(counted, reopened)?;
    let reopened: HashMap<(String, Option<i64>), i64> = reopened
        .into_iter()
        .map(|(signature, integration_id, n)| ((signature, integration_id), n))
        .collect();
    Ok(counted
        .into_iter()
        .map(|r| Counted {
            reopened: reopened
                .get(&(r.signature.clone(), r.integration_id))
                .map_or(0, |n| *n as u64),
            signature: r.signature,
            integration_id: r.integration_id,
            incidents: r.incidents as u64,
            pages: r.pages as u64,
            flapping: r.flapping as u64,
            unacknowledged: r.unacknowledged as u64,
            latest: r.latest,
        })
        .collect())
}
