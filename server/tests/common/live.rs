//! A test's browser tab on `GET /api/events`: the stream read as a browser's EventSource would.

use super::{Auth, TestApp};
use serde_json::Value;
use std::time::Duration;

/// One server-sent event.
#[derive(Debug, Clone, PartialEq)]
pub struct Heard {
    pub seq: i64,
    pub kind: String,
    pub data: Value,
}

pub struct Tab {
    res: reqwest::Response,
    buf: String,
}

/// Long enough for any replica's feed to pass an event on; a guard, never the expectation.
pub const WITHIN: Duration = Duration::from_secs(10);

impl TestApp {
    /// Opens a stream, resuming after `last` when given; panics unless it is answered 200.
    pub async fn events(&self, auth: &Auth, last: Option<i64>) -> Tab {
        let res = self.open_events(auth, last).await;
        assert_eq!(res.status(), 200, "the stream opens");
        assert_eq!(
            res.headers()["content-type"].to_str().unwrap(),
            "text/event-stream"
        );
        Tab {
            res,
            buf: String::new(),
        }
    }

    pub async fn open_events(&self, auth: &Auth, last: Option<i64>) -> reqwest::Response {
        self.open_events_at("", auth, last).await
    }

    /// Opens a stream with `query` (`?after=…`), as a page's first stream is opened.
    pub async fn open_events_at(
        &self,
        query: &str,
        auth: &Auth,
        last: Option<i64>,
    ) -> reqwest::Response {
        let mut req = self.client.get(format!("{}/api/events{query}", self.url));
        req = match auth {
            Auth::None => req,
            Auth::Key(k) => req.bearer_auth(k),
            Auth::Cookie(c) => req.header("cookie", format!("klaxon_session={c}")),
        };
        if let Some(l) = last {
            req = req.header("last-event-id", l.to_string());
        }
        req.send().await.expect("request sent")
    }
}

impl From<reqwest::Response> for Tab {
    fn from(res: reqwest::Response) -> Tab {
        Tab {
            res,
            buf: String::new(),
        }
    }
}

impl Tab {
    /// The next event (comments and the `retry:` field skipped), or `None` after `wait`.
    pub async fn next(&mut self, wait: Duration) -> Option<Heard> {
        let deadline = tokio::time::Instant::now() + wait;
        loop {
            while let Some(end) = self.buf.find("\n\n") {
                let block: String = self.buf.drain(..end + 2).collect();
                if let Some(e) = parse(&block) {
                    return Some(e);
                }
            }
            let chunk = tokio::time::timeout_at(deadline, self.res.chunk())
                .await
                .ok()?;
            match chunk.expect("the stream stays readable") {
                Some(bytes) => self.buf.push_str(&String::from_utf8_lossy(&bytes)),
                None => return None,
            }
        }
    }

    /// Reads until an event `wanted` accepts, returning it and what came before it.
    pub async fn until(&mut self, wanted: impl Fn(&Heard) -> bool) -> (Heard, Vec<Heard>) {
        let mut before = Vec::new();
        loop {
            let e = self
                .next(WITHIN)
                .await
                .unwrap_or_else(|| panic!("no awaited event; heard {before:?}"));
            if wanted(&e) {
                return (e, before);
            }
            before.push(e);
        }
    }

    /// True when the server has ended the stream (read to its end within `wait`).
    pub async fn ended(&mut self, wait: Duration) -> bool {
        let deadline = tokio::time::Instant::now() + wait;
        loop {
            match tokio::time::timeout_at(deadline, self.res.chunk()).await {
                Err(_) => return false,
                Ok(Ok(Some(_))) => continue,
                Ok(_) => return true,
            }
        }
    }
}

fn parse(block: &str) -> Option<Heard> {
    let (mut seq, mut kind, mut data) = (None, None, None);
    for line in block.lines() {
        if let Some(v) = line.strip_prefix("id:") {
            seq = v.trim().parse().ok();
        } else if let Some(v) = line.strip_prefix("event:") {
            kind = Some(v.trim().to_string());
        } else if let Some(v) = line.strip_prefix("data:") {
            data = serde_json::from_str(v.trim()).ok();
        }
    }
    Some(Heard {
        seq: seq?,
        kind: kind?,
        data: data?,
    })
}

/// `incident` event about `id`.
pub fn about_incident(id: i64) -> impl Fn(&Heard) -> bool {
    move |e| e.kind == "incident" && e.data["id"] == id
}
