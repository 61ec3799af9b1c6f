//! The limits that protect people and the bill, counted in the database so every replica counts
//! alike: per method at most one text a minute and three calls in fifteen minutes (pages beyond
//! wait, and go together as one summary when they may, as GoAlert does); per install at most
//! `KLAXON_PHONE_HOURLY_LIMIT` texts and calls a clock hour (beyond it a page fails and its
//! person's next road goes). Codes and tests count toward the install's ceiling (they cost the
//! same) but not toward a method's: a code asked for just before a page must not hold the page
//! back.
//!
//! The install's count is one row an hour taken by a conditional upsert: replicas sending at the
//! same instant cannot both pass the last free place, and it costs the same however many went.
//! A method's count reads its own sends, which go one after another in the number's lane.

use crate::db::Tx;
use crate::roads::Failure;
use crate::Core;

pub const TEXTS_PER_MINUTE: i64 = 1;
pub const CALLS_PER_QUARTER: i64 = 3;
/// The default of `KLAXON_PHONE_HOURLY_LIMIT`.
pub const HOURLY_LIMIT: i64 = 100;

impl Core {
    /// The sweeper's: pages counted more than an hour ago, hours past, reply codes lapsed,
    /// callbacks seen more than a day ago (kept out of the sends themselves, which go one after
    /// another to a number).
    pub(crate) async fn forget_phone_rows(&self, now: i64) -> crate::Result<()> {
        for (sql, before) in [
            ("DELETE FROM phone_sends WHERE at <= $1", now - 3600),
            ("DELETE FROM phone_hours WHERE hour < $1", now / 3600),
            ("DELETE FROM phone_replies WHERE expires_at <= $1", now),
            ("DELETE FROM phone_seen WHERE at <= $1", now - 86_400),
        ] {
            sqlx::query(sql).bind(before).execute(&self.db.pool).await?;
        }
        Ok(())
    }
}

/// Which of the two a send is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Text,
    Call,
}

impl Kind {
    fn road(self) -> &'static str {
        match self {
            Kind::Text => "sms",
            Kind::Call => "voice",
        }
    }

    /// The window a method's sends are counted over, and how many fit in it.
    fn per_method(self) -> (i64, i64) {
        match self {
            Kind::Text => (60, TEXTS_PER_MINUTE),
            Kind::Call => (15 * 60, CALLS_PER_QUARTER),
        }
    }
}

/// The database's failure while counting, as a send's.
pub(crate) fn db_failure(e: impl std::fmt::Display) -> Failure {
    Failure::outage(format!("the database failed counting sends: {e}"))
}

/// Takes one send of `kind` from the ceilings in `tx`, or says why not: a page to `method_id`
/// from the method's and the install's, another message (`method_id` `None`) from the
/// install's. A page held by its method's limit takes nothing from the install's.
pub async fn reserve(
    core: &Core,
    tx: &mut Tx,
    method_id: Option<i64>,
    kind: Kind,
) -> Result<(), Failure> {
    let now = core.now();
    if let Some(id) = method_id.filter(|_| core.config.roads.phone_number_limits) {
        let (window, most) = kind.per_method();
        let (count, first): (i64, Option<i64>) = sqlx::query_as(
            "SELECT COUNT(*), MIN(at) FROM phone_sends WHERE method_id = $1 AND road = $2 AND at > $3",
        )
        .bind(id)
        .bind(kind.road())
        .bind(now - window)
        .fetch_one(&mut **tx)
        .await
        .map_err(db_failure)?;
        if count >= most {
            let wait = first.map_or(window, |at| at + window - now).max(1);
            let what = match kind {
                Kind::Text => "one text a minute",
                Kind::Call => "three calls in 15 minutes",
            };
            return Err(Failure {
                reason: format!("a number gets at most {what}"),
                retry_after: Some(wait),
                outage: true,
                rate_limited: true,
                ..Failure::default()
            });
        }
    }
    let limit = core.config.roads.phone_hourly_limit;
    let taken = if limit > 0 {
        sqlx::query(
            "INSERT INTO phone_hours (hour, sends) VALUES ($1, 1) ON CONFLICT (hour) \
             DO UPDATE SET sends = phone_hours.sends + 1 WHERE phone_hours.sends < $2",
        )
        .bind(now / 3600)
        .bind(limit)
        .execute(&mut **tx)
        .await
        .map_err(db_failure)?
        .rows_affected()
    } else {
        0
    };
    if taken == 0 {
        return Err(Failure::permanent(format!(
            "this install's ceiling of {limit} texts and calls an hour is reached (KLAXON_PHONE_HOURLY_LIMIT)"
        )));
    }
    if let Some(id) = method_id {
        sqlx::query("INSERT INTO phone_sends (method_id, road, at) VALUES ($1, $2, $3)")
            .bind(id)
            .bind(kind.road())
            .bind(now)
            .execute(&mut **tx)
            .await
            .map_err(db_failure)?;
    }
    Ok(())
}
