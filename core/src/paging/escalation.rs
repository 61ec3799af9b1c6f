//! The escalation ladder: the team's policy (read by members, replaced by owners) and the
//! notifier's step that enters the next level of an unacknowledged incident.

use super::{enqueue, oncall_today, policy, reach_user, Reached};
use crate::db::Tx;
use crate::incidents::lifecycle::timeline;
use crate::{Actor, Core, Error, Result};
use klaxon_domain::paging::{EscalationPolicy, PageKind, Target};
use sqlx::AnyConnection;

impl Core {
    pub async fn escalation_policy(&self, actor: &Actor, team_id: i64) -> Result<EscalationPolicy> {
        self.require_team_member(actor, team_id).await?;
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
            let row: Option<(i64,)> = sqlx::query_as(
                "SELECT s.user_id FROM schedule s JOIN users u ON u.id = s.user_id \
                 WHERE s.team_id = $1 AND s.date >= $2 AND u.disabled = 0 AND u.push_topic IS NOT NULL LIMIT 1",
            )
            .bind(team_id)
            .bind(klaxon_domain::incident::utc_date(now))
            .fetch_optional(&mut *conn)
            .await?;
            row.map(|_| ())
                .ok_or_else(|| "nobody with a push topic is on the rota today or later".into())
        }
    })
}

/// Who a level reaches now, and why the others cannot be reached.
async fn reach_level(
    conn: &mut AnyConnection,
    team_id: i64,
    targets: &[Target],
    now: i64,
) -> Result<(Vec<(Reached, bool)>, Vec<String>)> {
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

/// The notifier's escalation step for one incident whose step `step` is due: enter that
/// level (paging each reachable target with its own page), pass levels nobody can be
/// reached on, and after the last step page the fallback topic once. The caller has already
/// claimed the step with a conditional update, so this runs once per step.
pub(crate) async fn enter(
    tx: &mut Tx,
    incident_id: i64,
    team_id: i64,
    mut step: i64,
    now: i64,
) -> Result<()> {
    let policy = policy(tx, team_id).await?;
    if policy.levels.is_empty() {
        // The ladder was removed after this incident opened: remind from now on instead.
        sqlx::query("UPDATE incidents SET esc_step = NULL, esc_due_at = NULL, reminded_at = $1 WHERE id = $2 AND page_topic IS NOT NULL")
            .bind(now)
            .bind(incident_id)
            .execute(&mut **tx)
            .await?;
        return Ok(());
    }
    loop {
        let Some((level, round)) = policy.step(step) else {
            return exhausted(tx, incident_id, &policy, step, now).await;
        };
        let n = level + 1;
        let round_text = if round > 0 {
            format!(" (round {})", round + 1)
        } else {
            String::new()
        };
        let (reached, missing) =
            reach_level(tx, team_id, &policy.levels[level].targets, now).await?;
        if reached.is_empty() {
            timeline(
                tx,
                incident_id,
                now,
                "nobody_reachable",
                None,
                &format!(
                    "level {n}{round_text}: nobody reachable ({})",
                    missing.join("; ")
                ),
            )
            .await?;
            step += 1;
            continue;
        }
        let mut names = Vec::new();
        for (r, oncall) in &reached {
            let queued = enqueue(
                tx,
                incident_id,
                PageKind::Escalation,
                &r.topic,
                Some(r.user_id),
                &format!("level {n}"),
                now,
            )
            .await?;
            let mut name = r.username.clone();
            if *oncall {
                name.push_str(" (on call)");
            }
            if !queued {
                name.push_str(" (already being paged)");
            }
            names.push(name);
        }
        let mut text = format!("level {n}{round_text}: paging {}", names.join(", "));
        if !missing.is_empty() {
            text.push_str(&format!("; not reachable: {}", missing.join("; ")));
        }
        timeline(tx, incident_id, now, "escalated", None, &text).await?;
        sqlx::query("UPDATE incidents SET esc_step = $1, esc_due_at = $2 WHERE id = $3")
            .bind(step + 1)
            .bind(now + policy.levels[level].timeout.as_secs())
            .bind(incident_id)
            .execute(&mut **tx)
            .await?;
        return Ok(());
    }
}

/// Every level and repeat has passed: page the fallback topic once and leave the incident open.
async fn exhausted(
    tx: &mut Tx,
    incident_id: i64,
    policy: &EscalationPolicy,
    step: i64,
    now: i64,
) -> Result<()> {
    let text = match &policy.fallback_topic {
        Some(topic) => {
            enqueue(tx, incident_id, PageKind::Fallback, topic, None, "", now).await?;
            format!("escalation exhausted: paged the fallback topic {topic}")
        }
        None => "escalation exhausted: the team has no fallback topic".to_string(),
    };
    timeline(tx, incident_id, now, "escalation_exhausted", None, &text).await?;
    sqlx::query("UPDATE incidents SET esc_step = $1, esc_due_at = NULL WHERE id = $2")
        .bind(step)
        .bind(incident_id)
        .execute(&mut **tx)
        .await?;
    Ok(())
}
