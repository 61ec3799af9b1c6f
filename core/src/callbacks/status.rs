//! A provider's report on one send, read as reached or not. Not reached (no answer, busy, a
//! voicemail, a text undelivered) fails the page and hands its person to their next road at
//! once (`paging::failover`), instead of at the page's next retry.

use crate::{Core, Result};

/// What a report says of a send: `None` when it reached its person or is not final yet.
pub(super) fn not_reached(
    call_status: Option<&str>,
    answered_by: Option<&str>,
    message_status: Option<&str>,
    error_code: Option<&str>,
) -> Option<String> {
    let error = error_code
        .filter(|c| !c.is_empty())
        .map(|c| format!(" (error {c})"))
        .unwrap_or_default();
    if let Some(status) = message_status {
        return matches!(status, "failed" | "undelivered")
            .then(|| format!("the text was {status}{error}"));
    }
    match call_status? {
        "busy" => Some("the line was busy".into()),
        "no-answer" => Some("the call was not answered".into()),
        "failed" | "canceled" => Some(format!("the call could not be made{error}")),
        "completed" if answered_by.is_some_and(|a| a.starts_with("machine") || a == "fax") => {
            Some("the call went to voicemail".into())
        }
        _ => None,
    }
}

impl Core {
    /// Acts on a report that delivery `delivery` (`page-{id}`) did not reach its person. A
    /// provider can report before the send's own answer is recorded (a busy line answers in
    /// milliseconds): the report is kept, and acted on once the page is recorded as sent, by
    /// this replica's next notifier pass. Reports on tests and codes change nothing.
    pub(super) async fn delivery_not_reached(&self, delivery: &str, reason: &str) -> Result<()> {
        let Some(page_id) = delivery
            .strip_prefix("page-")
            .and_then(|id| id.parse::<i64>().ok())
        else {
            return Ok(());
        };
        sqlx::query(
            "INSERT INTO phone_reports (page_id, reason, at) VALUES ($1, $2, $3) \
             ON CONFLICT (page_id) DO NOTHING",
        )
        .bind(page_id)
        .bind(reason)
        .bind(self.now())
        .execute(&self.db.pool)
        .await?;
        self.apply_phone_reports().await
    }

    /// Acts on the kept reports whose page is now recorded as sent; forgets those whose page
    /// failed, was cancelled or is gone, and those a day old; notes whether any still wait.
    pub(crate) async fn apply_phone_reports(&self) -> Result<()> {
        let now = self.now();
        let kept: Vec<(i64, String, i64, Option<String>)> = sqlx::query_as(
            "SELECT r.page_id, r.reason, r.at, p.state FROM phone_reports r \
             LEFT JOIN pages p ON p.id = r.page_id ORDER BY r.page_id",
        )
        .fetch_all(&self.db.pool)
        .await?;
        let mut waiting = false;
        for (page_id, reason, at, state) in kept {
            match state.as_deref() {
                Some("sent") => {
                    self.failed_after_sending(page_id, &reason).await?;
                }
                Some("pending") if now - at < 86_400 => {
                    waiting = true;
                    continue;
                }
                _ => {}
            }
            sqlx::query("DELETE FROM phone_reports WHERE page_id = $1")
                .bind(page_id)
                .execute(&self.db.pool)
                .await?;
        }
        self.phone_reports_waiting
            .store(waiting, std::sync::atomic::Ordering::Release);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::not_reached;

    #[test]
    fn a_voicemail_or_no_answer_is_not_reached_and_a_person_is() {
        assert_eq!(
            not_reached(Some("no-answer"), None, None, None).as_deref(),
            Some("the call was not answered")
        );
        assert_eq!(
            not_reached(Some("completed"), Some("machine_end_beep"), None, None).as_deref(),
            Some("the call went to voicemail")
        );
        assert_eq!(
            not_reached(Some("completed"), Some("human"), None, None),
            None
        );
        assert_eq!(not_reached(Some("ringing"), None, None, None), None);
        assert_eq!(
            not_reached(None, None, Some("undelivered"), Some("30003")).as_deref(),
            Some("the text was undelivered (error 30003)")
        );
        assert_eq!(not_reached(None, None, Some("delivered"), None), None);
    }
}
