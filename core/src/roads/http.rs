//! Reading an HTTP answer (or its failure) as a road's result: any 2xx is sent; anything else
//! is a failure that names the target by what it is (never its URL's secret parts, nor anything
//! the other side wrote) with the wait a rate limit asked for.

use super::{Failure, Sent};
use crate::outbound::{self, Answer, FailureKind, Outbound};

/// POSTs a JSON body to a chat service's webhook (`who` names it in a failure).
pub(super) async fn post_json(
    outbound: &Outbound,
    url: &str,
    who: &str,
    body: &serde_json::Value,
) -> Sent {
    let req = outbound
        .request(reqwest::Method::POST, url)
        .header("content-type", "application/json")
        .body(serde_json::to_vec(body).unwrap_or_default());
    answered(who, outbound.send(req).await)
}

/// The answer as a send's result. A failure is retried (an outage of that target), never for
/// good: a webhook that answers 4xx today may be fixed by its owner tomorrow.
pub fn answered(who: &str, answer: std::result::Result<Answer, outbound::Failure>) -> Sent {
    let (reason, wait) = match answer {
        Err(f) if f.kind == FailureKind::Policy => {
            (format!("{who} was not called: {}", f.sentence), None)
        }
        Err(f) => (format!("{who} {}", f.sentence), None),
        Ok(a) if a.status.is_success() => return Ok(()),
        Ok(a) => (
            format!(
                "{who} answered {} {}",
                a.status.as_u16(),
                a.status.canonical_reason().unwrap_or("")
            )
            .trim_end()
            .to_string(),
            retry_after(&a),
        ),
    };
    Err(Failure {
        reason,
        retry_after: wait,
        outage: true,
        rate_limited: wait.is_some(),
        ..Failure::default()
    })
}

/// The wait an answer asks for: `Retry-After` in seconds, else Matrix's `retry_after_ms`
/// (rounded up), at most a day.
pub fn retry_after(a: &Answer) -> Option<i64> {
    let header = a
        .headers
        .get(reqwest::header::RETRY_AFTER)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<i64>().ok());
    let matrix = a
        .json::<serde_json::Value>()
        .and_then(|v| v.get("retry_after_ms").and_then(|ms| ms.as_i64()))
        .map(|ms| (ms + 999) / 1000);
    header
        .or(matrix)
        .map(|s| s.clamp(1, klaxon_domain::paging::GIVE_UP_AFTER))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(status: u16, headers: &[(&str, &str)], body: &str) -> Answer {
        let mut map = reqwest::header::HeaderMap::new();
        for (k, v) in headers {
            map.insert(
                reqwest::header::HeaderName::from_bytes(k.as_bytes()).unwrap(),
                v.parse().unwrap(),
            );
        }
        Answer {
            status: reqwest::StatusCode::from_u16(status).unwrap(),
            headers: map,
            body: body.as_bytes().to_vec(),
        }
    }

    #[test]
    fn failures_name_the_channel_and_keep_the_answer_out() {
        let failed = answered(
            "the Slack-format webhook at https://hooks.slack.com",
            Ok(answer(
                429,
                &[("retry-after", "30")],
                "rate_limited: token xoxb-secret",
            )),
        )
        .expect_err("a 429 is a failure");
        assert_eq!(
            failed.reason,
            "the Slack-format webhook at https://hooks.slack.com answered 429 Too Many Requests"
        );
        assert_eq!(failed.retry_after, Some(30));
        assert!(failed.rate_limited && failed.outage && !failed.permanent);
        let matrix = answer(
            429,
            &[],
            r#"{"errcode":"M_LIMIT_EXCEEDED","error":"Too Many Requests","retry_after_ms":1500}"#,
        );
        assert_eq!(retry_after(&matrix), Some(2));
        assert!(answered("x", Ok(answer(202, &[], ""))).is_ok());
    }
}
