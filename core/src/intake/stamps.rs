//! The integration's last webhook and last alert times: written last in a payload's
//! transaction, and at most once a second per integration and replica.

use super::Destination;
use crate::db::Tx;
use crate::{Core, Result};
use std::collections::HashMap;

/// Moves the integration's last webhook time (and with usable alerts its last alert time) to
/// `now`. Last in the transaction, and only when the second has moved on: the row lock an update
/// takes is held until commit, so stamping every payload serialized each integration's payloads
/// behind one another's commits on PostgreSQL (measured: most of intake's waiting).
pub async fn stamp_integration(tx: &mut Tx, id: i64, alerted: bool, now: i64) -> Result<()> {
    let sql = if alerted {
        "UPDATE integrations SET last_webhook_at = $1, last_alert_at = $1 WHERE id = $2 \
         AND (COALESCE(last_webhook_at, 0) < $1 OR COALESCE(last_alert_at, 0) < $1)"
    } else {
        "UPDATE integrations SET last_webhook_at = $1 WHERE id = $2 AND COALESCE(last_webhook_at, 0) < $1"
    };
    sqlx::query(sql)
        .bind(now)
        .bind(id)
        .execute(&mut **tx)
        .await?;
    Ok(())
}

impl Core {
    /// Stamps the integration's last webhook time for a request that took in no alert (a
    /// sender's acknowledgement, a change event, an event naming no alert it could act on).
    pub(crate) async fn stamp_request(&self, to: &Destination) -> Result<()> {
        let Some(id) = to.integration_id else {
            return Ok(());
        };
        let now = self.now();
        if !self.stamps.due(id, now, false) {
            return Ok(());
        }
        let mut tx = self.db.begin().await?;
        stamp_integration(&mut tx, id, false, now).await?;
        tx.commit().await?;
        self.stamps.done(id, now, false);
        Ok(())
    }
}

/// The second each integration's times were last stamped by this replica, and whether with an
/// alert: a payload in a second already stamped skips the statement (a round trip inside the
/// writer's turn). Another replica's stamp is not known here; the statement's own condition
/// then skips the write.
#[derive(Default)]
pub(crate) struct Stamps(std::sync::Mutex<HashMap<i64, (i64, bool)>>);

impl Stamps {
    /// Whether a payload of integration `id` at second `now` still has a stamp to write.
    pub(super) fn due(&self, id: i64, now: i64, alerted: bool) -> bool {
        let stamped = self.0.lock().map(|m| m.get(&id).copied()).ok().flatten();
        !matches!(stamped, Some((at, with_alert)) if at >= now && (with_alert || !alerted))
    }

    /// Notes a committed stamp.
    pub(super) fn done(&self, id: i64, now: i64, alerted: bool) {
        if let Ok(mut stamps) = self.0.lock() {
            // Integrations deleted since are forgotten now and then; the map stays small.
            if stamps.len() >= 10_000 {
                stamps.clear();
            }
            let entry = stamps.entry(id).or_insert((now, alerted));
            if entry.0 < now {
                *entry = (now, alerted);
            } else if entry.0 == now {
                entry.1 |= alerted;
            }
        }
    }
}
