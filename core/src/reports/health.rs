//! On-call health (`domain::health`): who held the pager, who was paged and how, who answered.

use super::acks::{ack_figures, AckFigures};
use super::nights::{count_pages, PageCount};
use super::{ReportQuery, PAGES_THAT_ASK};
use crate::db::fetch_in;
use crate::{oncall, Actor, Core, Error, Result};
use klaxon_domain::health::{
    hours, seconds_held, weigh, Held, OncallHealth, PersonHealth, Range, TeamHealth,
};
use klaxon_domain::oncall_day::TeamDays;
use klaxon_domain::Timestamp;
use sqlx::AnyConnection;
use std::collections::{BTreeMap, BTreeSet};

/// No ladder leaves a level sooner (`domain::paging::LEVEL_TIMEOUT_MIN`): an escalation entry
/// within this of the opening is the first level's own, entered as the incident opens.
const FIRST_LEVEL_WITHIN: i64 = 60;

impl Core {
    /// The team's on-call health over the range (default: the last four weeks), or one
    /// person's (`person`: a username of someone in the team).
    pub async fn oncall_health(
        &self,
        actor: &Actor,
        team_id: i64,
        q: ReportQuery,
    ) -> Result<OncallHealth> {
        self.team_access(actor, team_id).await?;
        let range = Range::check(self.now(), q.from, q.to).map_err(Error::Invalid)?;
        let _turn = self.reading_turn(actor).await;
        let mut conn = self.db.pool.acquire().await?;
        let only = match &q.person {
            Some(name) => Some(member_named(&mut conn, team_id, name).await?),
            None => None,
        };
        let team_days = oncall::team_days(&mut conn, team_id).await?;
        let (days, covers) = held(&mut conn, team_id, &team_days, range).await?;
        let held = seconds_held(range, &days, &covers);
        let team_zone = team_days.rule().zone_name().to_string();
        // The report holds at most two connections: its first goes back while the record is read.
        drop(conn);
        let record = Record::read(&self.db.pool, team_id, range, &team_zone).await?;
        let mut conn = self.db.pool.acquire().await?;

        let mut ids: BTreeSet<i64> = held.keys().copied().collect();
        ids.extend(record.pages.iter().map(|p| p.user_id));
        ids.extend(record.acks.people.iter().map(|a| a.0));
        ids.extend(record.resolvers.iter().filter_map(|r| r.0));
        ids.extend(record.passed.iter().map(|p| p.0));
        let ids: Vec<i64> = ids.into_iter().collect();
        let named: Vec<(i64, String, Option<String>)> = fetch_in(
            &mut conn,
            (self.db.backend, false),
            "SELECT id, username, time_zone FROM users WHERE id IN ({ids})",
            &[],
            &ids,
        )
        .await?;
        let mut people: BTreeMap<i64, PersonHealth> = named
            .into_iter()
            .map(|(id, username, zone)| {
                let person = PersonHealth {
                    user_id: id,
                    username,
                    time_zone: zone.unwrap_or_else(|| team_zone.clone()),
                    hours_on_call: hours(held.get(&id).copied().unwrap_or(0)),
                    ..PersonHealth::default()
                };
                (id, person)
            })
            .collect();
        let held_seconds: i64 = held.values().sum();
        let mut team = TeamHealth {
            incidents: record.incidents as u64,
            hours_on_call: hours(held_seconds),
            hours_uncovered: hours((range.to - range.from) - held_seconds),
            ..TeamHealth::default()
        };
        record.tally(&mut people, &mut team);
        let mut people: Vec<PersonHealth> = people.into_values().collect();
        weigh(&mut people);
        people.sort_by(|a, b| {
            b.pages
                .cmp(&a.pages)
                .then(b.hours_on_call.total_cmp(&a.hours_on_call))
                .then_with(|| a.username.cmp(&b.username))
        });
        if let Some(id) = only {
            people.retain(|p| p.user_id == id);
        }
        Ok(OncallHealth {
            team_id,
            from: Timestamp(range.from),
            to: Timestamp(range.to),
            team,
            people,
        })
    }
}

/// What the team's people did in the range, as stored.
struct Record {
    pages: Vec<PageCount>,
    /// (who, which incident) where the incident escalated past a page of theirs.
    passed: Vec<(i64, i64)>,
    /// Times to acknowledge, each person's and the team's.
    acks: AckFigures,
    /// (who, how many) resolved the incidents resolved in the range (none: its sender or the
    /// sweeper).
    resolvers: Vec<(Option<i64>, i64)>,
    /// Incidents opened in the range.
    incidents: i64,
}

impl Record {
    /// Reads the record on two connections at once (`reports::READS_AT_ONCE`): the pages by
    /// person, road and night on one, everything else on the other. Each half is a few hundred
    /// milliseconds over a busy year; one after the other they were over half a second.
    async fn read(
        pool: &sqlx::AnyPool,
        team_id: i64,
        range: Range,
        team_zone: &str,
    ) -> Result<Record> {
        let pages = async {
            let mut conn = pool.acquire().await?;
            count_pages(&mut conn, team_id, range, team_zone).await
        };
        let rest = async {
            let mut conn = pool.acquire().await?;
            Self::read_rest(&mut conn, team_id, range).await
        };
        let (pages, mut record) = tokio::try_join!(pages, rest)?;
        record.pages = pages;
        Ok(record)
    }

    /// Everything but the pages' counts.
    async fn read_rest(conn: &mut AnyConnection, team_id: i64, range: Range) -> Result<Record> {
        // An escalation entry after the page and before any acknowledgement, the first
        // level's own entry at the opening excluded. The first test needs only the page and
        // the escalations' small index, so most pages never visit their incident.
        let passed: Vec<(i64, i64)> = sqlx::query_as(&format!(
            "SELECT DISTINCT p.user_id, p.incident_id FROM pages p JOIN incidents i ON i.id = p.incident_id \
             WHERE p.team_id = $1 AND p.user_id IS NOT NULL AND p.kind IN {PAGES_THAT_ASK} \
             AND p.sent_at >= $2 AND p.sent_at < $3 \
             AND EXISTS (SELECT 1 FROM timeline e WHERE e.incident_id = p.incident_id \
             AND e.kind = 'escalated' AND e.at > p.created_at) \
             AND EXISTS (SELECT 1 FROM timeline t WHERE t.incident_id = i.id \
             AND t.kind = 'escalated' AND t.at > p.created_at \
             AND t.at >= i.created_at + {FIRST_LEVEL_WITHIN} \
             AND (i.acknowledged_at IS NULL OR t.at <= i.acknowledged_at))"
        ))
        .bind(team_id)
        .bind(range.from)
        .bind(range.to)
        .fetch_all(&mut *conn)
        .await?;
        let acks = ack_figures(conn, team_id, range).await?;
        // Each incident's last resolution names who resolved it.
        let resolvers: Vec<(Option<i64>, i64)> = sqlx::query_as(
            "SELECT t.actor_id, COUNT(*) FROM incidents i \
             JOIN timeline t ON t.incident_id = i.id AND t.kind = 'resolved' \
             WHERE i.team_id = $1 AND i.resolved_at >= $2 AND i.resolved_at < $3 \
             AND NOT EXISTS (SELECT 1 FROM timeline l WHERE l.incident_id = i.id \
             AND l.kind = 'resolved' AND l.id > t.id) GROUP BY t.actor_id",
        )
        .bind(team_id)
        .bind(range.from)
        .bind(range.to)
        .fetch_all(&mut *conn)
        .await?;
        let (incidents,): (i64,) = sqlx::query_as(
            "SELECT COUNT(*) FROM incidents WHERE team_id = $1 AND created_at >= $2 AND created_at < $3",
        )
        .bind(team_id)
        .bind(range.from)
        .bind(range.to)
        .fetch_one(&mut *conn)
        .await?;
        Ok(Record {
            pages: Vec::new(),
            passed,
            acks,
            resolvers,
            incidents,
        })
    }

    /// Adds the record to each person's figures and the team's.
    fn tally(&self, people: &mut BTreeMap<i64, PersonHealth>, team: &mut TeamHealth) {
        for count in &self.pages {
            let Some(p) = people.get_mut(&count.user_id) else {
                continue;
            };
            let n = count.pages as u64;
            p.pages += n;
            *p.pages_by_road.entry(count.road.clone()).or_default() += n;
            team.pages += n;
            if count.night == 1 {
                p.night_pages += n;
                team.night_pages += n;
            }
        }
        let mut passed = BTreeSet::new();
        for (user_id, incident_id) in &self.passed {
            passed.insert(*incident_id);
            if let Some(p) = people.get_mut(user_id) {
                p.escalated_past += 1;
            }
        }
        team.escalated_past = passed.len() as u64;
        team.time_to_acknowledge = self.acks.team;
        for (user_id, times) in &self.acks.people {
            if let Some(p) = people.get_mut(user_id) {
                p.acknowledged = times.count;
                p.time_to_acknowledge = *times;
            }
        }
        for (user_id, resolved) in &self.resolvers {
            if let Some(p) = user_id.and_then(|id| people.get_mut(&id)) {
                p.resolved += *resolved as u64;
            }
        }
    }
}

/// The id of a team member by username; a clear error for anyone else.
async fn member_named(conn: &mut AnyConnection, team_id: i64, name: &str) -> Result<i64> {
    let found: Option<(i64,)> = sqlx::query_as(
        "SELECT u.id FROM users u JOIN team_members m ON m.user_id = u.id \
         WHERE m.team_id = $1 AND u.username = $2",
    )
    .bind(team_id)
    .bind(name)
    .fetch_optional(conn)
    .await?;
    found
        .map(|(id,)| id)
        .ok_or_else(|| Error::Invalid(format!("person: {name} is not a member of this team")))
}

/// The schedule days and covers that overlap the range, as who held the pager when.
async fn held(
    conn: &mut AnyConnection,
    team_id: i64,
    days: &TeamDays,
    range: Range,
) -> Result<(Vec<Held>, Vec<Held>)> {
    let first = days.day_of(range.from).to_string();
    let last = days.day_of(range.to - 1).to_string();
    let rows: Vec<(String, i64)> = sqlx::query_as(
        "SELECT date, user_id FROM schedule WHERE team_id = $1 AND date >= $2 AND date <= $3",
    )
    .bind(team_id)
    .bind(first)
    .bind(last)
    .fetch_all(&mut *conn)
    .await?;
    let day_holders = rows
        .into_iter()
        .filter_map(|(date, user_id)| {
            let (start, end) = days.day_bounds(date.parse().ok()?);
            Some(Held {
                user_id,
                start,
                end,
            })
        })
        .collect();
    let covers: Vec<(i64, i64, i64)> = sqlx::query_as(
        "SELECT user_id, starts_at, ends_at FROM covers \
         WHERE team_id = $1 AND ends_at > $2 AND starts_at < $3",
    )
    .bind(team_id)
    .bind(range.from)
    .bind(range.to)
    .fetch_all(&mut *conn)
    .await?;
    let covers = covers
        .into_iter()
        .map(|(user_id, start, end)| Held {
            user_id,
            start,
            end,
        })
        .collect();
    Ok((day_holders, covers))
}
