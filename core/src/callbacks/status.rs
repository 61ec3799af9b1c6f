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
    /// Acts on a report that delivery `delivery` (`page-{id}`) did not reach its person.
    /// Reports on tests and codes, and on pages no longer `sent`, change nothing.
    pub(super) async fn delivery_not_reached(&self, delivery: &str, reason: &str) -> Result<()> {
        let Some(page_id) = delivery
            .strip_prefix("page-")
            .and_then(|id| id.parse::<i64>().ok())
        else {
            return Ok(());
        };
        self.failed_after_sending(page_id, reason).await.map(drop)
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
