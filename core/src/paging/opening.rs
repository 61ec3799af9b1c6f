//! Opening an incident: who holds the pager when it opens, where its first page goes (the
//! holder, the ladder's fallback topic, every reachable owner, or nobody with the reason), and
//! the pages and timeline entries that opening queues.

use super::enqueue::{enqueue_after, NewPage};
use super::reach::{owners_on, parse_policy, ReachRow, Reached, REACH_COLUMNS};
use super::roads::{person_columns, Person, PersonRow};
use crate::db::{Backend, Tx};
use crate::timeline::Entry;
use crate::Result;
use klaxon_domain::incident::TimelineKind;
use klaxon_domain::paging::{EscalationPolicy, PageKind};
use sqlx::AnyConnection;
use std::collections::{HashMap, HashSet};

/// Who holds the team's pager now, and whether they can be paged.
pub(crate) struct Holder {
    pub user_id: i64,
    pub username: String,
    pub reach: Result<Reached, String>,
    /// Why they hold it, for the timeline: "on call today", or the cover they hold it by.
    pub why: String,
}

/// What opening or joining a group's incident needs. On SQLite intake reads it before its
/// transaction, outside the writer's turn, because it opens incidents at storm rates and every
/// statement inside the turn holds every other writer back; inside, only the insert remains
/// (a unique index settles a race with a concurrent opening, and a join is read again).
pub(crate) enum GroupPlan {
    /// The group's open incident, which a firing alert joins.
    Join(i64),
    /// Nothing of the group is open: who holds the pager and how a new incident is paged.
    Open(Box<Planned>),
}

/// How a group's new incident opens: its assignee and its opening pages.
pub(crate) struct Planned {
    pub holder: Option<Holder>,
    pub opening: Opening,
}

/// Reads the `GroupPlan` of group `group_key` of team `team_id` at `now`: one query when the
/// group has an open incident, two or three otherwise.
pub(crate) async fn plan_group(
    conn: &mut AnyConnection,
    backend: Backend,
    team_id: i64,
    group_key: &str,
    now: i64,
) -> Result<GroupPlan> {
    let before = before_opening(conn, backend, team_id, group_key, now).await?;
    if let Some(id) = before.open {
        return Ok(GroupPlan::Join(id));
    }
    let reach = before.holder.as_ref().map(|h| h.reach.clone());
    let mut opening = plan_opening(conn, backend, team_id, reach, &before.policy, now).await?;
    opening.people.extend(before.person);
    Ok(GroupPlan::Open(Box::new(Planned {
        holder: before.holder,
        opening,
    })))
}

/// The group's open incident, or who holds the pager and the team's policy.
struct BeforeOpening {
    /// The group's open incident, which a firing alert joins instead.
    open: Option<i64>,
    /// The holder at that instant (a cover's person, else the day's), with whether they can
    /// be paged; not read when the group has an open incident.
    holder: Option<Holder>,
    /// The holder's roads, read with them.
    person: Option<(i64, Person)>,
    policy: EscalationPolicy,
}

/// Reads `BeforeOpening` for the group `group_key` of team `team_id` at `now`.
async fn before_opening(
    conn: &mut AnyConnection,
    backend: Backend,
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
    .fetch_one(&mut *conn)
    .await?;
    let policy = parse_policy(team.policy);
    if team.open_id.is_some() {
        return Ok(BeforeOpening {
            open: team.open_id,
            holder: None,
            person: None,
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
        #[sqlx(flatten)]
        roads: PersonRow,
    }
    let row: Row = sqlx::query_as(&format!(
        "SELECT u.id AS user_id, {REACH_COLUMNS}, {} \
         FROM (SELECT 1 AS one) one LEFT JOIN schedule s ON s.team_id = $1 AND s.date = $2 \
         LEFT JOIN users u ON u.id = COALESCE($3, s.user_id)",
        person_columns(backend)
    ))
    .bind(team_id)
    .bind(&date)
    .bind(cover.as_ref().map(|c| c.user_id))
    .fetch_one(&mut *conn)
    .await?;
    let mut person = None;
    let holder = match (row.user_id, row.username, row.disabled) {
        (Some(user_id), Some(username), Some(disabled)) => {
            person = row
                .roads
                .person(
                    &username,
                    row.push_topic.as_deref(),
                    row.quiet_start.as_deref(),
                )
                .map(|p| (user_id, p));
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
        person,
        policy,
    })
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
    /// People whose roads were read with the plan (the holder).
    people: HashMap<i64, Person>,
    kind: TimelineKind,
    text: String,
}

/// Chooses the opening topic of a new incident of `team_id` whose assignee is `assignee`.
async fn plan_opening(
    conn: &mut AnyConnection,
    backend: Backend,
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
        (Err(why), None) => match owners_on(conn, backend, &[team_id]).await?.remove(&team_id) {
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
        people: HashMap::new(),
        kind,
        text,
    })
}

/// Queues a new incident's opening pages, and adds what was chosen to its timeline `entries`.
/// Returns whether a page was queued.
pub(crate) async fn queue_opening(
    tx: &mut Tx,
    incident_id: i64,
    opening: Opening,
    now: i64,
    entries: &mut Vec<Entry>,
) -> Result<bool> {
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
    let queued = enqueue_after(tx, &pages, HashSet::new(), now, opening.people).await?;
    entries.push(Entry {
        incident_id,
        at: now,
        kind: opening.kind,
        actor_id: None,
        text: opening.text,
    });
    Ok(queued.contains(&true))
}
