//! Pages counted by person, road and whether each came in that person's night, by the database:
//! a year of a busy team is hundreds of thousands of pages, too many to read row by row. Each
//! zone's wall clock over the range (`domain::health::wall_clock`: an offset, changing where
//! clocks change) becomes arithmetic on `sent_at`, so the counts are exact on both databases.

use super::PAGES_THAT_ASK;
use crate::Result;
use klaxon_domain::health::{wall_clock, Range, NIGHT_FROM_HOUR, NIGHT_UNTIL_HOUR};
use sqlx::AnyConnection;
use std::collections::{BTreeMap, BTreeSet};

/// Pages that asked someone to act, by person, road and whether it came in their night.
#[derive(sqlx::FromRow)]
pub(super) struct PageCount {
    pub user_id: i64,
    pub road: String,
    pub night: i64,
    pub pages: i64,
}

/// The team's counts over the range. Each member is read on their own zone's clock and anyone
/// else on the team's; a page to someone who has left and had a zone of their own is counted
/// again for them alone, on theirs.
pub(super) async fn count_pages(
    conn: &mut AnyConnection,
    team_id: i64,
    range: Range,
    team_zone: &str,
) -> Result<Vec<PageCount>> {
    let zoned: Vec<(i64, String)> = sqlx::query_as(
        "SELECT u.id, u.time_zone FROM users u JOIN team_members m ON m.user_id = u.id \
         WHERE m.team_id = $1 AND u.time_zone IS NOT NULL",
    )
    .bind(team_id)
    .fetch_all(&mut *conn)
    .await?;
    let mut by_zone: BTreeMap<String, Vec<i64>> = BTreeMap::new();
    for (id, zone) in &zoned {
        if zone != team_zone {
            by_zone.entry(zone.clone()).or_default().push(*id);
        }
    }
    let mut counts = read(conn, team_id, range, team_zone, &by_zone, None).await?;

    let read_on_own_clock: BTreeSet<i64> = zoned.iter().map(|(id, _)| *id).collect();
    let others: BTreeSet<i64> = counts
        .iter()
        .map(|c| c.user_id)
        .filter(|id| !read_on_own_clock.contains(id))
        .collect();
    for id in others {
        let (zone,): (Option<String>,) =
            sqlx::query_as("SELECT time_zone FROM users WHERE id = $1")
                .bind(id)
                .fetch_one(&mut *conn)
                .await?;
        let Some(zone) = zone.filter(|z| z != team_zone) else {
            continue;
        };
        let own = BTreeMap::from([(zone, vec![id])]);
        let again = read(conn, team_id, range, team_zone, &own, Some(id)).await?;
        counts.retain(|c| c.user_id != id);
        counts.extend(again);
    }
    Ok(counts)
}

async fn read(
    conn: &mut AnyConnection,
    team_id: i64,
    range: Range,
    team_zone: &str,
    by_zone: &BTreeMap<String, Vec<i64>>,
    only: Option<i64>,
) -> Result<Vec<PageCount>> {
    let team_clock = offset_sql(&wall_clock(Some(team_zone), range));
    let offset = if by_zone.is_empty() {
        team_clock
    } else {
        let mut sql = String::from("CASE");
        for (zone, ids) in by_zone {
            let ids: Vec<String> = ids.iter().map(i64::to_string).collect();
            let clock = offset_sql(&wall_clock(Some(zone), range));
            sql += &format!(" WHEN p.user_id IN ({}) THEN {clock}", ids.join(", "));
        }
        sql + &format!(" ELSE {team_clock} END")
    };
    let (night_until, night_from) = (
        i64::from(NIGHT_UNTIL_HOUR) * 3600,
        i64::from(NIGHT_FROM_HOUR) * 3600,
    );
    let one = if only.is_some() {
        " AND p.user_id = $4"
    } else {
        ""
    };
    // Only numbers are written into the statement: ids and offsets.
    let sql = format!(
        "SELECT user_id, road, \
         CASE WHEN s < {night_until} OR s >= {night_from} THEN 1 ELSE 0 END AS night, COUNT(*) AS pages \
         FROM (SELECT p.user_id, p.road, ((p.sent_at + ({offset})) % 86400 + 86400) % 86400 AS s \
         FROM pages p \
         WHERE p.team_id = $1 AND p.user_id IS NOT NULL AND p.kind IN {PAGES_THAT_ASK} \
         AND p.sent_at >= $2 AND p.sent_at < $3{one}) x \
         GROUP BY user_id, road, CASE WHEN s < {night_until} OR s >= {night_from} THEN 1 ELSE 0 END"
    );
    let mut q = sqlx::query_as(&sql)
        .persistent(false)
        .bind(team_id)
        .bind(range.from)
        .bind(range.to);
    if let Some(id) = only {
        q = q.bind(id);
    }
    Ok(q.fetch_all(conn).await?)
}

/// One zone's offset from UTC at `p.sent_at`, as SQL: its spans, latest last.
fn offset_sql(spans: &[(i64, i32)]) -> String {
    let Some((_, last)) = spans.last() else {
        return "0".into();
    };
    if spans.len() == 1 {
        return last.to_string();
    }
    let mut sql = String::from("CASE");
    for pair in spans.windows(2) {
        sql += &format!(" WHEN p.sent_at < {} THEN {}", pair[1].0, pair[0].1);
    }
    sql + &format!(" ELSE {last} END")
}
