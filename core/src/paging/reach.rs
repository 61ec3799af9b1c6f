//! Who can be paged: a person's reach (their topic, their rules, whether they are a member and
//! enabled), a team's reachable owners, the holder of its pager at an instant, its escalation
//! policy, and everyone an incident's later pages go to (`fan_out`).

use crate::db::{fetch_in, Backend, Tx};
use crate::Result;
use klaxon_domain::paging::EscalationPolicy;
use sqlx::AnyConnection;
use std::collections::HashMap;

/// A user who can be paged now.
#[derive(Debug, Clone)]
pub struct Reached {
    pub user_id: i64,
    pub username: String,
    /// Their push topic; empty when they are reached by contact methods only. Their pages
    /// follow their notification rules (`roads`) either way.
    pub topic: String,
    /// They have nothing but their push topic (no steps, verified methods or quiet hours): a
    /// page goes to the topic at once without reading their rules, as before rules existed,
    /// which keeps an opening in a storm to the statements it had.
    pub topic_only: bool,
}

/// Whether a user can be paged, and if not, a short reason for the timeline.
pub(crate) async fn reach_user(
    conn: &mut AnyConnection,
    team_id: i64,
    user_id: i64,
) -> Result<Result<Reached, String>> {
    let row: Option<ReachRow> = sqlx::query_as(&format!(
        "SELECT {REACH_COLUMNS} FROM users u WHERE u.id = $2"
    ))
    .bind(team_id)
    .bind(user_id)
    .fetch_optional(&mut *conn)
    .await?;
    Ok(match row {
        None => Err(format!("user {user_id} no longer exists")),
        Some(row) => row.reach(user_id),
    })
}

/// What paging user `u` needs: name, topic, disabled flag, membership of team `$1`, whether
/// they have a verified contact method, and whether they have rules (steps or quiet hours).
pub(super) const REACH_COLUMNS: &str = "u.username, u.push_topic, u.disabled, \
    (SELECT 1 FROM team_members m WHERE m.team_id = $1 AND m.user_id = u.id) AS member, \
    (SELECT 1 FROM contact_methods c WHERE c.user_id = u.id AND c.verified_at IS NOT NULL LIMIT 1) AS methods, \
    (SELECT 1 FROM notification_steps s WHERE s.user_id = u.id LIMIT 1) AS steps, u.quiet_start";

/// A user's `REACH_COLUMNS`.
#[derive(sqlx::FromRow)]
pub(super) struct ReachRow {
    pub(super) username: String,
    pub(super) push_topic: Option<String>,
    pub(super) disabled: i64,
    pub(super) member: Option<i64>,
    pub(super) methods: Option<i64>,
    pub(super) steps: Option<i64>,
    pub(super) quiet_start: Option<String>,
}

impl ReachRow {
    pub(super) fn reach(self, user_id: i64) -> Result<Reached, String> {
        let name = self.username;
        match (self.member, self.disabled, self.push_topic, self.methods) {
            (None, _, _, _) => Err(format!("{name} is not in the team")),
            (_, 1, _, _) => Err(format!("{name} is disabled")),
            (_, _, None, None) => Err(format!(
                "{name} has no push topic and no verified contact method"
            )),
            (_, _, topic, methods) => Ok(Reached {
                user_id,
                username: name,
                topic_only: topic.is_some()
                    && methods.is_none()
                    && self.steps.is_none()
                    && self.quiet_start.is_none(),
                topic: topic.unwrap_or_default(),
            }),
        }
    }
}

/// The owners of each team who can be paged now (enabled, with a topic or a verified contact
/// method), by team, in name order.
pub(crate) async fn reachable_owners(
    tx: &mut Tx,
    team_ids: &[i64],
) -> Result<HashMap<i64, Vec<Reached>>> {
    let backend = tx.backend;
    owners_on(tx, backend, team_ids).await
}

/// `reachable_owners` on any connection (intake reads them before its transaction).
pub(super) async fn owners_on(
    conn: &mut AnyConnection,
    backend: Backend,
    team_ids: &[i64],
) -> Result<HashMap<i64, Vec<Reached>>> {
    let mut teams = team_ids.to_vec();
    teams.sort_unstable();
    teams.dedup();
    let rows: Vec<(i64, i64, String, String)> = fetch_in(
            conn,
            (backend, false),
            "SELECT m.team_id, u.id, u.username, COALESCE(u.push_topic, '') FROM team_members m JOIN users u ON u.id = m.user_id \
             WHERE m.role = 'owner' AND u.disabled = 0 AND m.team_id IN ({ids}) AND (u.push_topic IS NOT NULL \
               OR EXISTS (SELECT 1 FROM contact_methods c WHERE c.user_id = u.id AND c.verified_at IS NOT NULL)) \
             ORDER BY u.username",
            &[],
            &teams,
        )
        .await?;
    let mut by_team: HashMap<i64, Vec<Reached>> = HashMap::new();
    for (team_id, user_id, username, topic) in rows {
        by_team.entry(team_id).or_default().push(Reached {
            user_id,
            username,
            topic,
            topic_only: false,
        });
    }
    Ok(by_team)
}

/// Who holds the team's pager at `now` (a cover's person, else the day's holder).
pub(crate) async fn oncall_today(
    conn: &mut AnyConnection,
    team_id: i64,
    now: i64,
) -> Result<Option<i64>> {
    Ok(crate::oncall::holder_at(conn, team_id, now)
        .await?
        .map(|h| h.user_id))
}

/// The team's escalation policy; the empty policy when it has none.
pub(crate) async fn policy(conn: &mut AnyConnection, team_id: i64) -> Result<EscalationPolicy> {
    let row: Option<(String,)> =
        sqlx::query_as("SELECT policy FROM escalation_policies WHERE team_id = $1")
            .bind(team_id)
            .fetch_optional(&mut *conn)
            .await?;
    Ok(parse_policy(row.map(|r| r.0)))
}

/// A stored policy; the empty policy for none (or one no longer understood).
pub(super) fn parse_policy(stored: Option<String>) -> EscalationPolicy {
    stored
        .and_then(|p| serde_json::from_str(&p).ok())
        .unwrap_or_default()
}

/// Where an incident's opening page went, as its later pages (reminders, the all-clear) follow it.
pub(crate) struct PagedTo<'a> {
    pub topic: Option<&'a str>,
    pub user_id: Option<i64>,
    pub page_owners: i64,
    pub team_id: i64,
}

/// Each item with every recipient of its later pages: its opening topic, or when its owners
/// were paged, every owner who can be reached now.
pub(crate) async fn fan_out<'a, T>(
    tx: &mut Tx,
    items: &'a [T],
    paged_to: impl Fn(&T) -> PagedTo<'_>,
) -> Result<Vec<(&'a T, String, Option<i64>)>> {
    let owners_of: Vec<i64> = items
        .iter()
        .map(&paged_to)
        .filter(|p| p.topic.is_none() && p.page_owners == 1)
        .map(|p| p.team_id)
        .collect();
    let owners = reachable_owners(tx, &owners_of).await?;
    let mut out = Vec::new();
    for item in items {
        let p = paged_to(item);
        match p.topic {
            Some(topic) => out.push((item, topic.to_string(), p.user_id)),
            None if p.page_owners == 1 => {
                for o in owners.get(&p.team_id).into_iter().flatten() {
                    out.push((item, o.topic.clone(), Some(o.user_id)));
                }
            }
            None => {}
        }
    }
    Ok(out)
}
