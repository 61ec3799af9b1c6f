//! Times to acknowledge over a range: the median and 90th percentile by nearest rank
//! (`domain::health::AckTimes`) for each person and the team. A busy year is a hundred
//! thousand acknowledgements; the database counts them by person and number of seconds, so a
//! few hundred rows come back (ranking in SQL with window functions was slower on SQLite).

use crate::Result;
use klaxon_domain::health::{AckTimes, Range};
use sqlx::AnyConnection;
use std::collections::BTreeMap;

/// Each acknowledger's figures, and the team's (all acknowledgements by a person).
pub(super) struct AckFigures {
    pub team: AckTimes,
    pub people: Vec<(i64, AckTimes)>,
}

/// Reads the figures of the acknowledgements by people of team `team_id`'s incidents in the
/// range.
pub(super) async fn ack_figures(
    conn: &mut AnyConnection,
    team_id: i64,
    range: Range,
) -> Result<AckFigures> {
    let rows: Vec<(i64, i64, i64)> = sqlx::query_as(
        "SELECT acknowledged_by, acknowledged_at - created_at, COUNT(*) FROM incidents \
         WHERE team_id = $1 AND acknowledged_by IS NOT NULL \
         AND acknowledged_at >= $2 AND acknowledged_at < $3 \
         GROUP BY acknowledged_by, acknowledged_at - created_at",
    )
    .bind(team_id)
    .bind(range.from)
    .bind(range.to)
    .fetch_all(&mut *conn)
    .await?;
    let mut by_person: BTreeMap<i64, Vec<(i64, u64)>> = BTreeMap::new();
    let mut all = Vec::with_capacity(rows.len());
    for (who, seconds, n) in rows {
        by_person.entry(who).or_default().push((seconds, n as u64));
        all.push((seconds, n as u64));
    }
    Ok(AckFigures {
        team: AckTimes::of_counts(&all),
        people: by_person
            .into_iter()
            .map(|(who, counts)| (who, AckTimes::of_counts(&counts)))
            .collect(),
    })
}
