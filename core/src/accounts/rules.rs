//! A person's notification rules, time zone and quiet hours (`domain::rules`), read and replaced
//! whole by that person or an administrator. Paging reads them in `paging::roads`.

use crate::paging::roads::known_zone;
use crate::{Actor, Core, Error, Result};
use klaxon_domain::rules::{NotificationRules, QuietHours, Step, Urgency};
use klaxon_domain::text::{ClockTime, ZoneName};

impl Core {
    /// The user's rules; without any, the default (every verified road at once).
    pub async fn notification_rules(
        &self,
        actor: &Actor,
        user_id: i64,
    ) -> Result<NotificationRules> {
        self.acting_for(actor, user_id).await?;
        let (time_zone, start, end): (Option<String>, Option<String>, Option<String>) =
            sqlx::query_as("SELECT time_zone, quiet_start, quiet_end FROM users WHERE id = $1")
                .bind(user_id)
                .fetch_one(&self.db.pool)
                .await?;
        let steps: Vec<(String, i64, Option<i64>)> = sqlx::query_as(
            "SELECT urgency, after_minutes, method_id FROM notification_steps WHERE user_id = $1 ORDER BY position",
        )
        .bind(user_id)
        .fetch_all(&self.db.pool)
        .await?;
        let mut rules = NotificationRules {
            time_zone: time_zone.and_then(|z| ZoneName::parse(&z).ok()),
            quiet_hours: match (start, end) {
                (Some(s), Some(e)) => Some(QuietHours {
                    start: ClockTime::parse(&s).map_err(Error::Internal)?,
                    end: ClockTime::parse(&e).map_err(Error::Internal)?,
                }),
                _ => None,
            },
            ..NotificationRules::default()
        };
        for (urgency, after, method_id) in steps {
            let step = Step {
                after_minutes: after as u32,
                method_id,
            };
            match Urgency::parse(&urgency) {
                Some(Urgency::Low) => rules.low.push(step),
                _ => rules.high.push(step),
            }
        }
        Ok(rules)
    }

    /// Replaces the user's rules, time zone and quiet hours. Every step names one of the user's
    /// own methods (or none, their push topic); a method not yet verified is skipped until it is.
    pub async fn set_notification_rules(
        &self,
        actor: &Actor,
        user_id: i64,
        rules: &NotificationRules,
    ) -> Result<NotificationRules> {
        self.acting_for(actor, user_id).await?;
        rules.validate().map_err(Error::Invalid)?;
        if let Some(zone) = &rules.time_zone {
            if !known_zone(zone) {
                return Err(Error::Invalid(format!(
                    "time_zone: {zone} is not in the time zone database"
                )));
            }
        }
        let mut tx = self.db.begin().await?;
        // Holds the user's row: two saves at once leave one whole set of rules, not a mix.
        sqlx::query(
            "UPDATE users SET time_zone = $1, quiet_start = $2, quiet_end = $3 WHERE id = $4",
        )
        .bind(rules.time_zone.as_deref())
        .bind(rules.quiet_hours.as_ref().map(|q| q.start.as_str()))
        .bind(rules.quiet_hours.as_ref().map(|q| q.end.as_str()))
        .bind(user_id)
        .execute(&mut *tx)
        .await?;
        let own: Vec<(i64,)> = sqlx::query_as("SELECT id FROM contact_methods WHERE user_id = $1")
            .bind(user_id)
            .fetch_all(&mut *tx)
            .await?;
        for (urgency, steps) in [("high", &rules.high), ("low", &rules.low)] {
            for (i, step) in steps.iter().enumerate() {
                if let Some(m) = step.method_id {
                    if !own.iter().any(|(id,)| *id == m) {
                        return Err(Error::Invalid(format!(
                            "{urgency}: step {}: method {m} is not one of this person's contact methods",
                            i + 1
                        )));
                    }
                }
            }
        }
        sqlx::query("DELETE FROM notification_steps WHERE user_id = $1")
            .bind(user_id)
            .execute(&mut *tx)
            .await?;
        for (urgency, steps) in [("high", &rules.high), ("low", &rules.low)] {
            for (position, step) in steps.iter().enumerate() {
                sqlx::query(
                    "INSERT INTO notification_steps (user_id, urgency, position, after_minutes, method_id) \
                     VALUES ($1, $2, $3, $4, $5)",
                )
                .bind(user_id)
                .bind(urgency)
                .bind(position as i64)
                .bind(i64::from(step.after_minutes))
                .bind(step.method_id)
                .execute(&mut *tx)
                .await?;
            }
        }
        tx.commit().await?;
        self.notification_rules(actor, user_id).await
    }
}
