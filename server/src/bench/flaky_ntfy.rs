//! The chaos run's ntfy: a stand-in (ntfy cannot run here) that takes JSON publishes the way
//! ntfy's `POST /` does, records every push it accepted, and misbehaves in bursts the way a
//! real push service under load does — 429 with or without `Retry-After`, 500, slow answers.
//! Its error bodies are ntfy's own JSON shape (`{"code":42901,"http":429,"error":…}`, from
//! ntfy's `server/errors.go`).

use super::err;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::Value;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How the stand-in answers for now.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Mode {
    Normal,
    /// 429, with `Retry-After` in seconds when given.
    Throttle(Option<u64>),
    /// 500.
    Fail,
    /// 200 after this long (less than Klaxon's 10 s request limit).
    Slow(Duration),
}

impl Mode {
    pub fn describe(&self) -> String {
        match self {
            Mode::Normal => "normal".into(),
            Mode::Throttle(Some(s)) => format!("ntfy 429, Retry-After {s}"),
            Mode::Throttle(None) => "ntfy 429".into(),
            Mode::Fail => "ntfy 500".into(),
            Mode::Slow(d) => format!("ntfy slow ({:.1} s)", d.as_secs_f64()),
        }
    }
}

/// One push ntfy accepted: when its request arrived, when it was answered 200, and what it said.
#[derive(Clone, Debug)]
pub(super) struct Push {
    pub arrived: Instant,
    pub answered: Instant,
    pub topic: String,
    pub title: String,
    pub message: String,
    pub click: String,
    /// The Acknowledge action's URL, when the push had one.
    pub ack_url: Option<String>,
}

impl Push {
    /// The incident a single push is about (`…/incidents/{id}`).
    pub fn incident(&self) -> Option<i64> {
        self.click.rsplit_once("/incidents/")?.1.parse().ok()
    }

    /// The bundle a summary push lists (`…/?bundle={id}`).
    pub fn bundle(&self) -> Option<i64> {
        self.click.rsplit_once("?bundle=")?.1.parse().ok()
    }

    /// Whether the push asks someone to take an incident: not an all-clear, not a hand-off.
    pub fn asks_for_owner(&self) -> bool {
        !self.title.starts_with("[RESOLVED]") && self.title != "On-call hand-off"
    }

    /// Whether a single push is an incident's opening page (see `message::compose`).
    pub fn is_opening(&self) -> bool {
        self.asks_for_owner()
            && self.incident().is_some()
            && !["Reminder:", "Escalated to you", "Nobody acknowledged"]
                .iter()
                .any(|p| self.message.starts_with(p))
    }
}

#[derive(Clone)]
pub(super) struct FlakyNtfy {
    mode: Arc<Mutex<Mode>>,
    pushes: Arc<Mutex<Vec<Push>>>,
    /// Requests answered other than 200, by kind, for the report.
    refused: Arc<Mutex<[usize; 2]>>,
}

impl FlakyNtfy {
    pub fn new() -> FlakyNtfy {
        FlakyNtfy {
            mode: Arc::new(Mutex::new(Mode::Normal)),
            pushes: Arc::default(),
            refused: Arc::default(),
        }
    }

    pub async fn serve(&self) -> Result<String, String> {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .map_err(err)?;
        let url = format!("http://{}", listener.local_addr().map_err(err)?);
        let router = axum::Router::new()
            .route("/", axum::routing::post(publish))
            .with_state(self.clone());
        tokio::spawn(async move { axum::serve(listener, router).await });
        Ok(url)
    }

    pub fn set(&self, mode: Mode) {
        *self.mode.lock().unwrap() = mode;
    }

    pub fn pushes(&self) -> Vec<Push> {
        self.pushes.lock().unwrap().clone()
    }

    /// (429s, 500s) answered.
    pub fn refused(&self) -> (usize, usize) {
        let r = self.refused.lock().unwrap();
        (r[0], r[1])
    }
}

fn ntfy_error(status: StatusCode, code: u32, text: &str) -> Response {
    let body = serde_json::json!({"code": code, "http": status.as_u16(), "error": text});
    (status, axum::Json(body)).into_response()
}

async fn publish(State(n): State<FlakyNtfy>, body: Bytes) -> Response {
    let arrived = Instant::now();
    let Ok(json) = serde_json::from_slice::<Value>(&body) else {
        return ntfy_error(
            StatusCode::BAD_REQUEST,
            40001,
            "invalid request: body must be JSON",
        );
    };
    let (Some(topic), Some(title)) = (json["topic"].as_str(), json["title"].as_str()) else {
        return ntfy_error(
            StatusCode::BAD_REQUEST,
            40009,
            "invalid request: topic missing",
        );
    };
    let mode = *n.mode.lock().unwrap();
    match mode {
        Mode::Throttle(retry_after) => {
            n.refused.lock().unwrap()[0] += 1;
            let mut r = ntfy_error(
                StatusCode::TOO_MANY_REQUESTS,
                42901,
                "limit reached: too many requests",
            );
            if let Some(s) = retry_after {
                let mut headers = HeaderMap::new();
                headers.insert("retry-after", HeaderValue::from(s));
                r.headers_mut().extend(headers);
            }
            return r;
        }
        Mode::Fail => {
            n.refused.lock().unwrap()[1] += 1;
            return ntfy_error(
                StatusCode::INTERNAL_SERVER_ERROR,
                50001,
                "internal server error",
            );
        }
        // Recorded once answered, whether or not the publisher is still there to hear it.
        Mode::Slow(d) => tokio::time::sleep(d).await,
        Mode::Normal => {}
    }
    let ack_url = json["actions"]
        .as_array()
        .and_then(|a| a.first())
        .and_then(|a| a["url"].as_str())
        .map(str::to_string);
    let push = Push {
        arrived,
        answered: Instant::now(),
        topic: topic.to_string(),
        title: title.to_string(),
        message: json["message"].as_str().unwrap_or_default().to_string(),
        click: json["click"].as_str().unwrap_or_default().to_string(),
        ack_url,
    };
    n.pushes.lock().unwrap().push(push);
    let id = format!("{:x}", arrived.elapsed().as_nanos());
    axum::Json(serde_json::json!({"id": id, "event": "message", "topic": topic})).into_response()
}
