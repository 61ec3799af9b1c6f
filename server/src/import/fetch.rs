//! Reading another system's REST API: its token in one header, its rate limit honoured (a 429
//! is retried after its `Retry-After`, up to five times), a refused token said in one sentence;
//! through the command line's outbound policy (`klaxon_core::outbound::cli`): a `next` link to
//! another origin is refused, a redirect is not followed, answers are read up to a cap.

use klaxon_core::outbound::cli;
use serde_json::Value;
use std::sync::Mutex;
use std::time::Duration;

/// The longest `Retry-After` waited for; a longer one is waited as this.
const MAX_WAIT: u64 = 60;
const TRIES: usize = 6;
/// Pages read of one list at most: a `next` link that never ends is an error, not a loop.
pub const MAX_PAGES: usize = 1000;

/// The error for a list longer than `MAX_PAGES` pages.
pub fn too_many_pages(vendor: &str, path: &str) -> String {
    format!("{vendor} kept sending more pages of {path} (over {MAX_PAGES}); stopped")
}

pub struct Api {
    vendor: &'static str,
    base: String,
    header: (&'static str, String),
    http: reqwest::Client,
    /// Every wait a 429 asked for, in seconds.
    pub waits: Mutex<Vec<u64>>,
    /// Off in tests, which check the waits asked for instead of spending them.
    pub sleep: bool,
}

impl Api {
    pub fn new(
        vendor: &'static str,
        base: &str,
        header: (&'static str, String),
    ) -> Result<Api, String> {
        let http = cli::client()?;
        Ok(Api {
            vendor,
            base: base.trim_end_matches('/').to_string(),
            header,
            http,
            waits: Mutex::new(Vec::new()),
            sleep: true,
        })
    }

    /// `path` on this API; a full URL (as a `next` link is) only on the API's own origin, so
    /// the token never goes to a host an answer names.
    pub fn url(&self, path: &str) -> Result<String, String> {
        if path.starts_with("http://") || path.starts_with("https://") {
            if !cli::same_origin(path, &self.base) {
                return Err(format!(
                    "{} sent a link to another host ({path}); it is not followed, so the token stays with {}",
                    self.vendor, self.base
                ));
            }
            Ok(path.to_string())
        } else {
            Ok(format!("{}{path}", self.base))
        }
    }

    pub async fn get(&self, url: &str) -> Result<Value, String> {
        for _ in 0..TRIES {
            let res = self
                .http
                .get(url)
                .header(self.header.0, &self.header.1)
                .header(
                    "accept",
                    "application/json, application/vnd.pagerduty+json;version=2",
                )
                .send()
                .await
                .map_err(|e| format!("cannot reach {} at {}: {e}", self.vendor, self.base))?;
            let status = res.status().as_u16();
            match status {
                200..=299 => {
                    let body = cli::body(res, self.vendor).await?;
                    return serde_json::from_slice(&body).map_err(|e| format!("{} sent an answer that is not JSON ({url}): {e}", self.vendor));
                }
                401 | 403 => {
                    return Err(format!(
                        "{} refused the token ({status}): check it, and that it may read users, teams, schedules and escalation policies",
                        self.vendor
                    ))
                }
                429 => {
                    let wait = res
                        .headers()
                        .get("retry-after")
                        .or_else(|| res.headers().get("ratelimit-reset"))
                        .and_then(|v| v.to_str().ok())
                        .and_then(|v| v.trim().parse::<u64>().ok())
                        .unwrap_or(1)
                        .min(MAX_WAIT);
                    self.waits.lock().expect("waits").push(wait);
                    if self.sleep {
                        tokio::time::sleep(Duration::from_secs(wait)).await;
                    }
                }
                300..=399 => return Err(cli::body(res, self.vendor).await.unwrap_err()),
                _ => return Err(format!("{} answered {status} to {url}", self.vendor)),
            }
        }
        Err(format!(
            "{} kept answering 429 (too many requests) to {url}; try again later",
            self.vendor
        ))
    }
}

impl Api {
    /// Every item of the list at `path` under `items`, following the link at `next` (a JSON
    /// pointer such as `/next` or `/paging/next`) page by page, at most `MAX_PAGES`.
    pub async fn follow(&self, path: &str, items: &str, next: &str) -> Result<Vec<Value>, String> {
        let mut out = Vec::new();
        let mut url = Some(self.url(path)?);
        for _ in 0..MAX_PAGES {
            let Some(u) = url else { return Ok(out) };
            let page = self.get(&u).await?;
            out.extend(page[items].as_array().cloned().unwrap_or_default());
            url = match page.pointer(next).and_then(Value::as_str) {
                Some(n) => Some(self.url(n)?),
                None => None,
            };
        }
        match url {
            None => Ok(out),
            Some(_) => Err(too_many_pages(self.vendor, path)),
        }
    }
}

/// A field of an answer as text; empty when absent.
pub fn text(v: &Value, field: &str) -> String {
    v[field].as_str().unwrap_or_default().to_string()
}

/// An RFC 3339 field as Unix seconds.
pub fn instant(v: &Value) -> Option<i64> {
    klaxon_domain::Timestamp::parse(v.as_str()?).map(|t| t.0)
}
