//! Paging: who gets woken and when. Every page is a row of the `pages` outbox written in the
//! transaction of the event that caused it (an incident opening, a reminder, a ladder level,
//! a resolve); the notifier delivers the rows. This module holds the in-transaction half.
//!
//! The opening topic is chosen in this order: the assignee's own topic (today's on-call, when
//! enabled and subscribed); else the team's fallback topic from its escalation policy (a shared
//! topic, so that page has no Acknowledge button); else, for a team without a ladder, every
//! owner who can be reached, each with a page of their own; else nobody is paged and the
//! timeline says why. Reminders and the all-clear reuse the opening topic (or the owners).

mod bundle;
pub mod claim;
mod delivery;
mod due;
pub mod escalation;
mod failover;
mod handover;
pub mod message;
pub mod notifier;
pub mod ntfy;
pub(crate) mod personal;
mod plan;
mod publish;
pub(crate) mod roads;
mod send;
mod test_page;
pub mod tokens;
pub mod webpush;

use crate::db::{insert_json, insert_rows, Col::*, Tx};
use crate::timeline::{timelines, Entry};
use crate::Result;
use klaxon_domain::alerting::IncidentState;
use klaxon_domain::incident::TimelineKind;
use klaxon_domain::paging::{EscalationPolicy, PageKind};
use sqlx::AnyConnection;
use std::collections::{HashMap, HashSet};

pub(crate) use handover::handed_over;

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

/// Who holds the team's pager now, and whether they can be paged.
pub(crate) struct Holder {
    pub user_id: i64,
    pub username: String,
    pub reach: Result<Reached, String>,
    /// Why they hold it, for the timeline: "on call today", or the cover they hold it by.
    pub why: String,
}

/// What opening an incident of a team's group needs, read in at most two queries because
/// intake opens incidents at storm rates and every statement is a round trip.
pub(crate) struct BeforeOpening {
    /// The group's open incident, which a firing alert joins instead.
    pub open: Option<i64>,
    /// The holder at that instant (a cover's person, else the day's), with whether they can
    /// be paged; not read when the group has an open incident.
    pub holder: Option<Holder>,
    pub policy: EscalationPolicy,
}

/// Reads `BeforeOpening` for the group `group_key` of team `team_id` at `now`.
pub(crate) async fn before_opening(
    tx: &mut Tx,
    team_id: i64,
    group_key: &str,
    now: i64,
) -> Result<BeforeOpening> {
    #[derive(sqlx::FromRow)]
    struct Team {
        open_id: Option<i64>,
        policy: Option<String>,
        #[sqlx(flatten)]
        rule: crate::oncall::RuleRow,
        cover_id: Option<i64>,
        cover_user: Option<i64>,
        cover_ends: Option<i64>,
        covered_name: Option<String>,
    }
    let team: Team = sqlx::query_as(&format!(
        "SELECT (SELECT id FROM incidents WHERE team_id = $1 AND group_key = $2 AND state <> 'resolved') AS open_id, \
         (SELECT policy FROM escalation_policies WHERE team_id = $1) AS policy, {rule}, \
         c.id AS cover_id, c.user_id AS cover_user, c.ends_at AS cover_ends, cu.username AS covered_name \
         FROM teams t LEFT JOIN covers c ON c.team_id = t.id AND c.starts_at <= $3 AND c.ends_at > $3 \
         LEFT JOIN users cu ON cu.id = c.covered_id WHERE t.id = $1 ORDER BY c.starts_at LIMIT 1",
        rule = crate::oncall::RULE_COLUMNS
    ))
    .bind(team_id)
    .bind(group_key)
    .bind(now)
    .fetch_one(&mut **tx)
    .await?;
    let policy = parse_policy(team.policy);
    if team.open_id.is_some() {
        return Ok(BeforeOpening {
            open: team.open_id,
            holder: None,
            policy,
        });
    }
    let cover = match (team.cover_id, team.cover_user, team.cover_ends) {
        (Some(id), Some(user_id), Some(ends_at)) => Some(crate::oncall::ActiveCover {
            id,
            user_id,
            ends_at,
        }),
        _ => None,
    };
    let days = team.rule.days();
    let date = days.day_of(now).to_string();
    let why = match &cover {
        Some(c) => crate::oncall::cover_words(&days, team.covered_name.as_deref(), c.ends_at),
        None => "on call today".to_string(),
    };
    #[derive(sqlx::FromRow)]
    struct Row {
        user_id: Option<i64>,
        username: Option<String>,
        push_topic: Option<String>,
        disabled: Option<i64>,
        member: Option<i64>,
        methods: Option<i64>,
        steps: Option<i64>,
        quiet_start: Option<String>,
    }
    let row: Row = sqlx::query_as(&format!(
        "SELECT u.id AS user_id, {REACH_COLUMNS} \
         FROM (SELECT 1 AS one) one LEFT JOIN schedule s ON s.team_id = $1 AND s.date = $2 \
         LEFT JOIN users u ON u.id = COALESCE($3, s.user_id)"
    ))
    .bind(team_id)
    .bind(&date)
    .bind(cover.as_ref().map(|c| c.user_id))
    .fetch_one(&mut **tx)
    .await?;
    let holder = match (row.user_id, row.username, row.disabled) {
        (Some(user_id), Some(username), Some(disabled)) => {
            let user = ReachRow {
                username,
                push_topic: row.push_topic,
                disabled,
                member: row.member,
                methods: row.methods,
                steps: row.steps,
                quiet_start: row.quiet_start,
            };
            Some(Holder {
                user_id,
                username: user.username.clone(),
                reach: user.reach(user_id),
                why,
            })
        }
        _ => None,
    };
    Ok(BeforeOpening {
        open: None,
        holder,
        policy,
    })
}

/// What paging user `u` needs: name, topic, disabled flag, membership of team `$1`, whether
/// they have a verified contact method, and whether they have rules (steps or quiet hours).
const REACH_COLUMNS: &str = "u.username, u.push_topic, u.disabled, \
    (SELECT 1 FROM team_members m WHERE m.team_id = $1 AND m.user_id = u.id) AS member, \
    (SELECT 1 FROM contact_methods c WHERE c.user_id = u.id AND c.verified_at IS NOT NULL LIMIT 1) AS methods, \
    (SELECT 1 FROM notification_steps s WHERE s.user_id = u.id LIMIT 1) AS steps, u.quiet_start";

/// A user's `REACH_COLUMNS`.
#[derive(sqlx::FromRow)]
struct ReachRow {
    username: String,
    push_topic: Option<String>,
    disabled: i64,
    member: Option<i64>,
    methods: Option<i64>,
    steps: Option<i64>,
    quiet_start: Option<String>,
}

impl ReachRow {
    fn reach(self, user_id: i64) -> Result<Reached, String> {
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
    let mut teams = team_ids.to_vec();
    teams.sort_unstable();
    teams.dedup();
    let rows: Vec<(i64, i64, String, String)> = tx
        .fetch_in(
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

/// A maintenance window of the team that was to end at `old_end` ended at `now`: what it held
/// is due now, and the timers it pushed back move back by what was left of it.
pub(crate) async fn release_held(tx: &mut Tx, team_id: i64, old_end: i64, now: i64) -> Result<()> {
    sqlx::query(
        "UPDATE pages SET due_at = $1 WHERE state = 'pending' AND due_at = $2 \
         AND incident_id IN (SELECT id FROM incidents WHERE team_id = $3)",
    )
    .bind(now)
    .bind(old_end)
    .bind(team_id)
    .execute(&mut **tx)
    .await?;
    sqlx::query("UPDATE incidents SET reminded_at = $1 WHERE team_id = $2 AND reminded_at = $3")
        .bind(now)
        .bind(team_id)
        .bind(old_end)
        .execute(&mut **tx)
        .await?;
    sqlx::query(
        "UPDATE incidents SET esc_due_at = esc_due_at - $1 WHERE team_id = $2 AND esc_due_at > $3",
    )
    .bind(old_end - now)
    .bind(team_id)
    .bind(old_end)
    .execute(&mut **tx)
    .await?;
    Ok(())
}

/// A person left a team: their pages of its incidents that still wait are cancelled, so no
/// later step of their rules pages someone who is no longer a responder there, and their covers
/// of it are gone.
pub(crate) async fn left_team(tx: &mut Tx, user_id: i64, team_id: i64) -> Result<()> {
    // Nor do they hold its pager by a cover any more (one in force ends now).
    sqlx::query("DELETE FROM covers WHERE team_id = $1 AND user_id = $2")
        .bind(team_id)
        .bind(user_id)
        .execute(&mut **tx)
        .await?;
    sqlx::query(
        "UPDATE pages SET state = 'cancelled', last_error = 'not sent: left the team', claimed_by = NULL \
         WHERE state = 'pending' AND user_id = $1 AND kind IN ('opening', 'reminder', 'escalation') \
         AND incident_id IN (SELECT id FROM incidents WHERE team_id = $2)",
    )
    .bind(user_id)
    .bind(team_id)
    .execute(&mut **tx)
    .await?;
    Ok(())
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
fn parse_policy(stored: Option<String>) -> EscalationPolicy {
    stored
        .and_then(|p| serde_json::from_str(&p).ok())
        .unwrap_or_default()
}

/// A page to queue, for `enqueue_many`.
pub(crate) struct NewPage {
    pub incident_id: i64,
    pub kind: PageKind,
    pub topic: String,
    pub user_id: Option<i64>,
    pub detail: String,
    /// The person is known to have nothing but `topic` (`Reached::topic_only`).
    pub topic_only: bool,
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
    let waiting: HashSet<(i64, String)> = tx
        .fetch_in::<(i64, String)>(
            "SELECT incident_id, topic FROM pages WHERE state = 'pending' AND kind <> 'all_clear' AND incident_id IN ({ids})",
            &[],
            &asking,
        )
        .await?
        .into_iter()
        .collect();
    enqueue_after(tx, pages, waiting, now).await
}

/// `enqueue_many` once the pages already waiting (incident, topic) are known. A page to a
/// person becomes one row per road of their notification rules (`roads`), each due at its
/// step's delay; a page is queued when any of its rows is.
async fn enqueue_after(
    tx: &mut Tx,
    pages: &[NewPage],
    mut waiting: HashSet<(i64, String)>,
    now: i64,
) -> Result<Vec<bool>> {
    let personal: Vec<&NewPage> = pages.iter().filter(|p| roads::follows_rules(p)).collect();
    let (mut expanded, entries) = if personal.is_empty() {
        (Vec::new(), Vec::new())
    } else {
        roads::expand(tx, &personal, now).await?
    };
    expanded.reverse();
    #[derive(serde::Serialize)]
    struct Row<'a> {
        incident_id: i64,
        kind: &'a str,
        topic: String,
        user_id: Option<i64>,
        detail: &'a str,
        due_at: i64,
        created_at: i64,
    }
    let mut queued = Vec::with_capacity(pages.len());
    let mut rows = Vec::with_capacity(pages.len());
    for page in pages {
        let roads = if roads::follows_rules(page) {
            expanded.pop().unwrap_or_default()
        } else {
            vec![roads::Row {
                topic: page.topic.clone(),
                due_at: now,
            }]
        };
        let wants_owner = page.kind.wants_owner();
        let mut any = false;
        for road in roads {
            let key = (page.incident_id, road.topic);
            if wants_owner && !waiting.insert(key.clone()) {
                continue;
            }
            any = true;
            rows.push(Row {
                incident_id: page.incident_id,
                kind: page.kind.as_str(),
                topic: key.1,
                user_id: page.user_id,
                detail: &page.detail,
                due_at: road.due_at,
                created_at: now,
            });
        }
        queued.push(any);
    }
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
    timelines(tx, &entries).await?;
    Ok(queued)
}

/// Where an incident's opening page goes.
enum Choice {
    User(Reached),
    Fallback(String, String),
    Owners(Vec<Reached>, String),
    Nobody(String),
}

/// How a new incident is paged: chosen before its row is written, so the insert carries the
/// opening topic and the reminder or ladder start, and `queue_opening` queues its pages.
pub(crate) struct Opening {
    pub page_topic: Option<String>,
    pub page_user_id: Option<i64>,
    pub page_owners: bool,
    /// When reminders count from: set when someone is paged and the team has no ladder.
    pub reminded_at: Option<i64>,
    /// The team has a ladder: its first level is due at once (entered by the notifier).
    pub ladder: bool,
    /// (topic, person, whether they have nothing but that topic).
    pages: Vec<(String, Option<i64>, bool)>,
    kind: TimelineKind,
    text: String,
}

/// Chooses the opening topic of a new incident of `team_id` whose assignee is `assignee`.
pub(crate) async fn plan_opening(
    tx: &mut Tx,
    team_id: i64,
    assignee: Option<Result<Reached, String>>,
    policy: &EscalationPolicy,
    now: i64,
) -> Result<Opening> {
    let ladder = !policy.levels.is_empty();
    let assignee = assignee.unwrap_or_else(|| Err("nobody is on call today".to_string()));
    let choice = match (assignee, &policy.fallback_topic) {
        (Ok(r), _) => Choice::User(r),
        (Err(why), Some(topic)) => Choice::Fallback(topic.to_string(), why),
        // A ladder pages its first level at once; without one the owners are the last resort.
        (Err(why), None) if ladder => Choice::Nobody(why),
        (Err(why), None) => match reachable_owners(tx, &[team_id]).await?.remove(&team_id) {
            Some(owners) => Choice::Owners(owners, why),
            None => Choice::Nobody(why),
        },
    };
    let (page_topic, page_user_id, page_owners, pages, text) = match choice {
        Choice::User(r) => (
            Some(r.topic.clone()),
            Some(r.user_id),
            false,
            vec![(r.topic, Some(r.user_id), r.topic_only)],
            format!("paging {}", r.username),
        ),
        Choice::Fallback(topic, why) => (
            Some(topic.clone()),
            None,
            false,
            vec![(topic.clone(), None, false)],
            format!("{why}: paging the fallback topic {topic}"),
        ),
        Choice::Owners(owners, why) => {
            let names: Vec<&str> = owners.iter().map(|o| o.username.as_str()).collect();
            let text = format!(
                "{why} and the team has no fallback topic: paging its owners {}",
                names.join(", ")
            );
            let pages = owners
                .iter()
                .map(|o| (o.topic.clone(), Some(o.user_id), o.topic_only));
            (None, None, true, pages.collect(), text)
        }
        Choice::Nobody(why) if ladder => (
            None,
            None,
            false,
            Vec::new(),
            format!("{why}: the escalation ladder pages its first level"),
        ),
        Choice::Nobody(why) => (
            None,
            None,
            false,
            Vec::new(),
            format!(
                "nobody paged: {why}, the team has no fallback topic and no owner can be reached"
            ),
        ),
    };
    let kind = if pages.is_empty() && !ladder {
        TimelineKind::NobodyReachable
    } else {
        TimelineKind::Paged
    };
    Ok(Opening {
        reminded_at: (!pages.is_empty() && !ladder).then_some(now),
        page_topic,
        page_user_id,
        page_owners,
        ladder,
        pages,
        kind,
        text,
    })
}

/// Queues a new incident's opening pages, and adds what was chosen to its timeline `entries`.
pub(crate) async fn queue_opening(
    tx: &mut Tx,
    incident_id: i64,
    opening: Opening,
    now: i64,
    entries: &mut Vec<Entry>,
) -> Result<()> {
    let pages: Vec<NewPage> = opening
        .pages
        .into_iter()
        .map(|(topic, user_id, topic_only)| NewPage {
            incident_id,
            kind: PageKind::Opening,
            topic,
            user_id,
            detail: String::new(),
            topic_only,
        })
        .collect();
    // Nothing of an incident opened in this transaction can be waiting.
    enqueue_after(tx, &pages, HashSet::new(), now).await?;
    entries.push(Entry {
        incident_id,
        at: now,
        kind: opening.kind,
        actor_id: None,
        text: opening.text,
    });
    Ok(())
}

/// An incident as its all-clear needs it.
#[derive(sqlx::FromRow)]
pub(crate) struct Cleared {
    pub id: i64,
    pub team_id: i64,
    pub opening_sent: i64,
    pub page_topic: Option<String>,
    pub page_user_id: Option<i64>,
    pub page_owners: i64,
}

impl Cleared {
    /// What a statement returns to be read as a `Cleared`.
    pub const COLUMNS: &str = "id, team_id, opening_sent, page_topic, page_user_id, page_owners";
}

/// Resolved incidents: an all-clear to the opening topic of each whose opening page was sent.
/// The rows come from the `RETURNING` of the statement that resolved them, or of the one that
/// marked their opening page sent after they resolved; the two lock the incident row, so
/// whichever runs second sees the other's change, and each incident comes here once.
/// Returns the incidents whose all-clear it queued.
pub(crate) async fn all_clears(tx: &mut Tx, rows: &[Cleared], now: i64) -> Result<Vec<i64>> {
    let sent: Vec<&Cleared> = rows.iter().filter(|r| r.opening_sent == 1).collect();
    let fanned = fan_out(tx, &sent, |r| PagedTo {
        topic: r.page_topic.as_deref(),
        user_id: r.page_user_id,
        page_owners: r.page_owners,
        team_id: r.team_id,
    })
    .await?;
    // A person's all-clear goes by every road that reached them for the incident.
    let ids: Vec<i64> = sent.iter().map(|r| r.id).collect();
    let reached = sent_roads(tx, &ids).await?;
    let mut pages = Vec::new();
    for (r, topic, user_id) in fanned {
        let roads = user_id
            .and_then(|u| reached.get(&(r.id, u)))
            .cloned()
            .unwrap_or_else(|| vec![topic]);
        for topic in roads.into_iter().filter(|t| !t.is_empty()) {
            pages.push(NewPage {
                incident_id: r.id,
                kind: PageKind::AllClear,
                topic,
                user_id,
                detail: String::new(),
                topic_only: false,
            });
        }
    }
    pages.sort_by_key(|p| p.incident_id);
    let queued = enqueue_many(tx, &pages, now).await?;
    let mut cleared: Vec<i64> = pages
        .iter()
        .zip(queued)
        .filter(|(_, q)| *q)
        .map(|(p, _)| p.incident_id)
        .collect();
    cleared.dedup();
    Ok(cleared)
}

/// The roads by which each person was reached for each of `incidents`: the destinations of
/// their pages that were sent, by (incident, user).
async fn sent_roads(tx: &mut Tx, incidents: &[i64]) -> Result<HashMap<(i64, i64), Vec<String>>> {
    let rows: Vec<(i64, i64, String)> = tx
        .fetch_in(
            "SELECT DISTINCT incident_id, user_id, topic FROM pages WHERE state = 'sent' AND user_id IS NOT NULL \
             AND kind IN ('opening', 'reminder', 'escalation') AND incident_id IN ({ids}) ORDER BY incident_id, user_id, topic",
            &[],
            incidents,
        )
        .await?;
    let mut by: HashMap<(i64, i64), Vec<String>> = HashMap::new();
    for (incident, user, topic) in rows {
        by.entry((incident, user)).or_default().push(topic);
    }
    Ok(by)
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

/// A reminder to queue, for `remind_many`.
pub(crate) struct Reminder {
    pub incident_id: i64,
    pub topic: String,
    pub user_id: Option<i64>,
    pub why: String,
}

/// An incident owed a reminder, with where its pages go and why it is reminded.
pub(crate) struct Owed {
    pub incident_id: i64,
    pub team_id: i64,
    pub topic: Option<String>,
    pub user_id: Option<i64>,
    pub page_owners: i64,
    pub why: String,
}

/// Reminders to each incident's recipients (`fan_out`).
pub(crate) async fn reminders_to(tx: &mut Tx, due: Vec<Owed>) -> Result<Vec<Reminder>> {
    let fanned = fan_out(tx, &due, |d| PagedTo {
        topic: d.topic.as_deref(),
        user_id: d.user_id,
        page_owners: d.page_owners,
        team_id: d.team_id,
    })
    .await?;
    Ok(fanned
        .into_iter()
        .map(|(d, topic, user_id)| Reminder {
            incident_id: d.incident_id,
            topic,
            user_id,
            why: d.why.clone(),
        })
        .collect())
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
            topic_only: false,
        })
        .collect();
    enqueue_many(tx, &pages, now).await?;
    let mut users: Vec<i64> = reminders.iter().filter_map(|r| r.user_id).collect();
    users.sort_unstable();
    users.dedup();
    let names: HashMap<i64, String> = tx
        .fetch_in::<(i64, String)>(
            "SELECT id, username FROM users WHERE id IN ({ids})",
            &[],
            &users,
        )
        .await?
        .into_iter()
        .collect();
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
                kind: TimelineKind::Reminder,
                actor_id: None,
                text: format!("reminded {who}: {}", r.why),
            }
        })
        .collect();
    timelines(tx, &entries).await
}

/// An incident's paging state, as resuming it after a snooze needs it.
#[derive(sqlx::FromRow)]
pub(crate) struct Paused {
    pub id: i64,
    pub team_id: i64,
    pub page_owners: i64,
    #[sqlx(try_from = "String")]
    pub state: IncidentState,
    pub archived_at: Option<i64>,
    pub reminded_at: Option<i64>,
    pub esc_step: Option<i64>,
    pub esc_due_at: Option<i64>,
    pub page_topic: Option<String>,
    pub page_user_id: Option<i64>,
}

impl Paused {
    /// What a statement returns to be read as a `Paused`.
    pub const COLUMNS: &str =
        "id, team_id, page_owners, state, archived_at, reminded_at, esc_step, esc_due_at, page_topic, page_user_id";
}

/// A snooze ended (expired or lifted by hand) on a still-untouched incident: paging resumes
/// where it paused, paging again at once — the current ladder level is re-entered with its
/// timeout restarted, or a reminder goes to the opening topic. Returns true when it queued work.
pub(crate) async fn resume(tx: &mut Tx, incident_id: i64, now: i64) -> Result<bool> {
    let row: Paused = sqlx::query_as(&format!(
        "SELECT {} FROM incidents WHERE id = $1",
        Paused::COLUMNS
    ))
    .bind(incident_id)
    .fetch_one(&mut **tx)
    .await?;
    Ok(resume_many(tx, &[row], now).await? == 1)
}

/// `resume` for a batch of incidents whose snooze ended; returns how many queued work.
pub(crate) async fn resume_many(tx: &mut Tx, rows: &[Paused], now: i64) -> Result<usize> {
    let mut ladder = Vec::new();
    let mut due = Vec::new();
    for r in rows {
        if r.state != IncidentState::Triggered || r.archived_at.is_some() {
            continue;
        }
        if r.esc_step.is_some() && r.esc_due_at.is_some() {
            ladder.push(r.id);
        } else if r.reminded_at.is_some() && (r.page_topic.is_some() || r.page_owners == 1) {
            due.push(Owed {
                incident_id: r.id,
                team_id: r.team_id,
                topic: r.page_topic.clone(),
                user_id: r.page_user_id,
                page_owners: r.page_owners,
                why: "snooze ended".to_string(),
            });
        }
    }
    let reminders = reminders_to(tx, due).await?;
    // The current level again: one step back (the step counts levels entered), due now.
    tx.execute_in(
        "UPDATE incidents SET esc_step = CASE WHEN esc_step > 0 THEN esc_step - 1 ELSE 0 END, esc_due_at = $1 WHERE id IN ({ids})",
        &[now.into()],
        &ladder,
    )
    .await?;
    let mut reminded: Vec<i64> = reminders.iter().map(|r| r.incident_id).collect();
    reminded.dedup();
    tx.execute_in(
        "UPDATE incidents SET reminded_at = $1 WHERE id IN ({ids})",
        &[now.into()],
        &reminded,
    )
    .await?;
    remind_many(tx, &reminders, now).await?;
    Ok(ladder.len() + reminded.len())
}
