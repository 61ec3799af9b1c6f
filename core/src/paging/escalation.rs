//! The escalation ladder: the team's policy (read by members, replaced by owners) and the
//! notifier's step that enters the next level of an unacknowledged incident.

use super::{enqueue_many, oncall_today, policy, reach_user, NewPage, Reached};
use crate::db::Tx;
use crate::timeline::{timelines, Entry};
use crate::{Actor, Core, Error, Result};
use klaxon_domain::incident::TimelineKind;
use klaxon_domain::paging::{EscalationPolicy, PageKind, Target};
use sqlx::AnyConnection;
use std::collections::{hash_map, BTreeMap, HashMap};

impl Core {
    pub async fn escalation_policy(&self, actor: &Actor, team_id: i64) -> Result<EscalationPolicy> {
        self.team_access(actor, team_id).await?;
        let mut conn = self.db.pool.acquire().await?;
        policy(&mut conn, team_id).await
    }

    /// Replaces the team's ladder. Every level must have a target that can be paged now: a
    /// member who is enabled and has a topic, or a rota naming such a person today or later.
    /// Incidents already open keep the mode (ladder or reminders) they opened with.
    pub async fn set_escalation_policy(
        &self,
        actor: &Actor,
        team_id: i64,
        policy: &EscalationPolicy,
    ) -> Result<EscalationPolicy> {
        self.require_team_owner(actor, team_id).await?;
        let policy = policy.validate().map_err(Error::Invalid)?;
        let now = self.now();
        let mut conn = self.db.pool.acquire().await?;
        for (i, level) in policy.levels.iter().enumerate() {
            for target in &level.targets {
                if let Target::User { user_id } = target {
                    let row: Option<(i64,)> = sqlx::query_as(
                        "SELECT user_id FROM team_members WHERE team_id = $1 AND user_id = $2",
                    )
                    .bind(team_id)
                    .bind(user_id)
                    .fetch_optional(&mut *conn)
                    .await?;
                    if row.is_none() {
                        return Err(Error::Invalid(format!(
                            "level {}: user {user_id} is not a member of the team",
                            i + 1
                        )));
                    }
                }
            }
            let mut why = Vec::new();
            for target in &level.targets {
                match reachable_at_save(&mut conn, team_id, *target, now).await? {
                    Ok(()) => {
                        why.clear();
                        break;
                    }
                    Err(reason) => why.push(reason),
                }
            }
            if !why.is_empty() {
                return Err(Error::Invalid(format!(
                    "level {}: no reachable target ({})",
                    i + 1,
                    why.join("; ")
                )));
            }
        }
        let json = serde_json::to_string(&policy)
            .map_err(|e| Error::Internal(format!("policy encoding: {e}")))?;
        sqlx::query(
            "INSERT INTO escalation_policies (team_id, policy, updated_at) VALUES ($1, $2, $3) \
             ON CONFLICT (team_id) DO UPDATE SET policy = $2, updated_at = $3",
        )
        .bind(team_id)
        .bind(json)
        .bind(now)
        .execute(&mut *conn)
        .await?;
        Ok(policy)
    }
}

async fn reachable_at_save(
    conn: &mut AnyConnection,
    team_id: i64,
    target: Target,
    now: i64,
) -> Result<Result<(), String>> {
    Ok(match target {
        Target::User { user_id } => reach_user(conn, team_id, user_id).await?.map(|_| ()),
        Target::Oncall => {
            let today = crate::oncall::today(conn, team_id, now).await?;
            let row: Option<(i64,)> = sqlx::query_as(
                "SELECT s.user_id FROM schedule s JOIN users u ON u.id = s.user_id \
                 WHERE s.team_id = $1 AND s.date >= $2 AND u.disabled = 0 AND (u.push_topic IS NOT NULL \
                   OR EXISTS (SELECT 1 FROM contact_methods c WHERE c.user_id = u.id AND c.verified_at IS NOT NULL)) LIMIT 1",
            )
            .bind(team_id)
            .bind(today)
            .fetch_optional(&mut *conn)
            .await?;
            row.map(|_| ())
                .ok_or_else(|| "nobody with a push topic or a verified contact method is on the rota today or later".into())
        }
    })
}

/// Who a level reaches (each with whether as today's on-call), and why the others cannot be.
type LevelReach = (Vec<(Reached, bool)>, Vec<String>);

/// Who a level reaches now, and why the others cannot be reached.
async fn reach_level(
    conn: &mut AnyConnection,
    team_id: i64,
    targets: &[Target],
    now: i64,
) -> Result<LevelReach> {
    let mut reached: Vec<(Reached, bool)> = Vec::new();
    let mut missing = Vec::new();
    for target in targets {
        let (user, oncall) = match target {
            Target::User { user_id } => (Some(*user_id), false),
            Target::Oncall => (oncall_today(conn, team_id, now).await?, true),
        };
        let Some(user) = user else {
            missing.push("nobody is on call today".to_string());
            continue;
        };
        match reach_user(conn, team_id, user).await? {
            Ok(r) if reached.iter().any(|(x, _)| x.user_id == r.user_id) => {}
            Ok(r) => reached.push((r, oncall)),
            Err(why) => missing.push(why),
        }
    }
    Ok((reached, missing))
}

/// What entering a due step comes to for one incident.
enum Entered {
    /// The ladder was removed after the incident opened.
    NoLadder,
    /// Level `level` was paged: its pages are `pages` in the batch's page list.
    Level {
        level: usize,
        round: u32,
        step: i64,
        pages: std::ops::Range<usize>,
        /// Who each page is for, in words.
        names: Vec<String>,
        missing: Vec<String>,
    },
    /// Every level and repeat has passed.
    Exhausted { step: i64 },
}

/// A ladder step due on an incident.
#[derive(sqlx::FromRow)]
pub(crate) struct DueStep {
    pub id: i64,
    pub team_id: i64,
    pub esc_step: i64,
}

/// The notifier's escalation step for a batch of incidents whose step is due: enter that level (paging each reachable target with its own page), pass levels
/// nobody can be reached on, and after the last step page the fallback topic once and leave
/// the incident open. The caller has already claimed the steps with a conditional update, so
/// this runs once per step. Policies and reachability are read once per team and level.
pub(crate) async fn enter_many(tx: &mut Tx, due: &[DueStep], now: i64) -> Result<()> {
    let mut policies: HashMap<i64, EscalationPolicy> = HashMap::new();
    let mut reach: HashMap<(i64, usize), LevelReach> = HashMap::new();
    let mut passed = Vec::new();
    let mut pages = Vec::new();
    let mut entered = Vec::with_capacity(due.len());
    for &DueStep {
        id: incident_id,
        team_id,
        esc_step: mut step,
    } in due
    {
        if let hash_map::Entry::Vacant(e) = policies.entry(team_id) {
            e.insert(policy(tx, team_id).await?);
        }
        let policy = &policies[&team_id];
        if policy.levels.is_empty() {
            entered.push((incident_id, team_id, Entered::NoLadder));
            continue;
        }
        let outcome = loop {
            let Some((level, round)) = policy.step(step) else {
                if let Some(topic) = &policy.fallback_topic {
                    pages.push(NewPage {
                        incident_id,
                        kind: PageKind::Fallback,
                        topic: topic.to_string(),
                        user_id: None,
                        detail: String::new(),
                        topic_only: false,
                    });
                }
                break Entered::Exhausted { step };
            };
            if let hash_map::Entry::Vacant(e) = reach.entry((team_id, level)) {
                e.insert(reach_level(tx, team_id, &policy.levels[level].targets, now).await?);
            }
            let (reached, missing) = &reach[&(team_id, level)];
            if reached.is_empty() {
                passed.push(Entry {
                    incident_id,
                    at: now,
                    kind: TimelineKind::NobodyReachable,
                    actor_id: None,
                    text: format!(
                        "level {}{}: nobody reachable ({})",
                        level + 1,
                        round_text(round),
                        missing.join("; ")
                    ),
                });
                step += 1;
                continue;
            }
            let first = pages.len();
            for (r, _) in reached {
                pages.push(NewPage {
                    incident_id,
                    kind: PageKind::Escalation,
                    topic: r.topic.clone(),
                    user_id: Some(r.user_id),
                    detail: format!("level {}", level + 1),
                    topic_only: r.topic_only,
                });
            }
            let names = reached
                .iter()
                .map(|(r, oncall)| match oncall {
                    true => format!("{} (on call)", r.username),
                    false => r.username.clone(),
                })
                .collect();
            break Entered::Level {
                level,
                round,
                step,
                pages: first..pages.len(),
                names,
                missing: missing.clone(),
            };
        };
        entered.push((incident_id, team_id, outcome));
    }
    timelines(tx, &passed).await?;
    let queued = enqueue_many(tx, &pages, now).await?;

    record_entered(tx, entered, &policies, &queued, now).await
}

/// Writes what entering the steps did: each incident's timeline entry (who a level pages, or that
/// the ladder is exhausted), its next step and when it is due, one update per distinct pair; an
/// incident whose team's ladder was removed is reminded from now on instead.
async fn record_entered(
    tx: &mut Tx,
    entered: Vec<(i64, i64, Entered)>,
    policies: &HashMap<i64, EscalationPolicy>,
    queued: &[bool],
    now: i64,
) -> Result<()> {
    let mut entries = Vec::new();
    let mut no_ladder = Vec::new();
    // (esc_step, esc_due_at) → incidents: one update per distinct pair.
    let mut steps: BTreeMap<(i64, Option<i64>), Vec<i64>> = BTreeMap::new();
    for (incident_id, team_id, outcome) in entered {
        let policy = &policies[&team_id];
        match outcome {
            Entered::NoLadder => no_ladder.push(incident_id),
            Entered::Level {
                level,
                round,
                step,
                pages: range,
                names,
                missing,
            } => {
                let names: Vec<String> = range
                    .zip(names)
                    .map(|(i, name)| match queued[i] {
                        true => name,
                        false => format!("{name} (already being paged)"),
                    })
                    .collect();
                let mut text = format!(
                    "level {}{}: paging {}",
                    level + 1,
                    round_text(round),
                    names.join(", ")
                );
                if !missing.is_empty() {
                    text.push_str(&format!("; not reachable: {}", missing.join("; ")));
                }
                entries.push(Entry {
                    incident_id,
                    at: now,
                    kind: TimelineKind::Escalated,
                    actor_id: None,
                    text,
                });
                steps
                    .entry((step + 1, Some(now + policy.levels[level].timeout.as_secs())))
                    .or_default()
                    .push(incident_id);
            }
            Entered::Exhausted { step } => {
                let text = match &policy.fallback_topic {
                    Some(topic) => {
                        format!("escalation exhausted: paged the fallback topic {topic}")
                    }
                    None => "escalation exhausted: the team has no fallback topic".to_string(),
                };
                entries.push(Entry {
                    incident_id,
                    at: now,
                    kind: TimelineKind::EscalationExhausted,
                    actor_id: None,
                    text,
                });
                steps.entry((step, None)).or_default().push(incident_id);
            }
        }
    }
    timelines(tx, &entries).await?;
    for ((step, due_at), ids) in steps {
        tx.execute_in(
            "UPDATE incidents SET esc_step = $1, esc_due_at = $2 WHERE id IN ({ids})",
            &[step.into(), due_at.into()],
            &ids,
        )
        .await?;
    }
    // The ladder was removed after these opened: remind from now on instead.
    tx.execute_in(
        "UPDATE incidents SET esc_step = NULL, esc_due_at = NULL, reminded_at = $1 WHERE page_topic IS NOT NULL AND id IN ({ids})",
        &[now.into()],
        &no_ladder,
    )
    .await?;
    Ok(())
}

fn round_text(round: u32) -> String {
    if round > 0 {
        format!(" (round {})", round + 1)
    } else {
        String::new()
    }
}
