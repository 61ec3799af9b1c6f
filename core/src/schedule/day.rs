//! A team's on-call day settings: its zone and hand-off time (`domain::oncall_day`).

use crate::oncall::{team_days, RuleRow, RULE_COLUMNS};
use crate::{Actor, Core, Error, Result};
use klaxon_domain::oncall_day::{HandOff, OncallDay, OncallDayChange};

impl Core {
    /// Any member.
    pub async fn oncall_day(&self, actor: &Actor, team_id: i64) -> Result<OncallDay> {
        self.team_access(actor, team_id).await?;
        let mut conn = self.db.pool.acquire().await?;
        let days = team_days(&mut conn, team_id).await?;
        Ok(OncallDay::of(&days, self.now()))
    }

    /// Team owners. Every stored date keeps its holder; the change takes effect from the next
    /// hand-off (the day in progress ends at the later of the old and the new hand-off). With
    /// `dry_run`, the answer is the effect and nothing is stored.
    pub async fn set_oncall_day(
        &self,
        actor: &Actor,
        team_id: i64,
        change: OncallDayChange,
    ) -> Result<OncallDay> {
        self.require_team_owner(actor, team_id).await?;
        let rule = HandOff::new(&change.time_zone, &change.handoff_time).map_err(Error::Invalid)?;
        let now = self.now();
        let mut tx = self.db.begin().await?;
        // Holds the team's row, so two changes at once are applied one after the other.
        sqlx::query("UPDATE teams SET id = id WHERE id = $1")
            .bind(team_id)
            .execute(&mut *tx)
            .await?;
        let row: RuleRow = sqlx::query_as(&format!(
            "SELECT {RULE_COLUMNS} FROM teams t WHERE t.id = $1"
        ))
        .bind(team_id)
        .fetch_one(&mut *tx)
        .await?;
        let before = row.days();
        let same = before.rule().zone_name() == rule.zone_name() && before.rule().at() == rule.at();
        let days = if same {
            before
        } else {
            before.change_to(rule, now)
        };
        if !change.dry_run && !same {
            let (earlier, from) = days.earlier().expect("a change keeps the earlier rule");
            sqlx::query(
                "UPDATE teams SET time_zone = $1, handoff_time = $2, earlier_time_zone = $3, \
                 earlier_handoff_time = $4, rule_from = $5 WHERE id = $6",
            )
            .bind(days.rule().zone_name())
            .bind(days.rule().at())
            .bind(earlier.zone_name())
            .bind(earlier.at())
            .bind(from.to_string())
            .bind(team_id)
            .execute(&mut *tx)
            .await?;
            tx.commit().await?;
        }
        Ok(OncallDay::of(&days, now))
    }
}
