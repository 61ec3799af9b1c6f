//! ntfy: the install's push server (`KLAXON_NTFY_URL`, `KLAXON_NTFY_TOKEN`), a topic per person
//! or team. JSON publish to the server's root URL with a bearer token; a page's Acknowledge is an
//! `http` action button that POSTs the token.

use super::message::{Message, Page, Tone, TEST_TITLE};
use super::{Failure, Form, Info, Profile, Road, Sent, To};
use crate::outbound::Outbound;
use crate::Core;
use klaxon_domain::alerting::Severity;
use serde::Serialize;

static INFO: Info = Info {
    name: "ntfy",
    label: "ntfy",
    personal: Some(Profile {
        listed_as: "ntfy topic",
        code_from: "",
        in_chat: false,
        form: Some(Form {
            name: "Backup ntfy",
            field: "Another ntfy topic",
            input: "text",
            placeholder: "",
            hint: "",
            button: "Add topic",
            folded: None,
        }),
    }),
    channel: false,
    needs_code: false,
    shared_service: true,
    signed: false,
    per_minute: None,
};

/// The road; `None` without `KLAXON_NTFY_URL`.
pub struct NtfyRoad(pub Option<Ntfy>);

#[async_trait::async_trait]
impl Road for NtfyRoad {
    fn info(&self) -> &'static Info {
        &INFO
    }

    fn unconfigured(&self) -> Option<String> {
        self.0
            .is_none()
            .then(|| "no push service is configured (KLAXON_NTFY_URL)".into())
    }

    async fn send(&self, core: &Core, to: &To, message: &Message<'_>) -> Sent {
        let Some(ntfy) = &self.0 else {
            return Err(Failure {
                reason: self.unconfigured().unwrap_or_default(),
                ..Failure::default()
            });
        };
        let publish = match message {
            Message::Page(page) => Publish::page(&to.target, page, &core.config.public_url),
            Message::Test => Publish {
                topic: to.target.clone(),
                title: TEST_TITLE.into(),
                message:
                    "Pages reach this phone. Keep the ntfy app allowed to make sound at night."
                        .into(),
                tags: vec!["bell".into()],
                priority: 4,
                click: Some(format!("{}/me", core.config.public_url)),
                actions: Vec::new(),
            },
            Message::Code(_) | Message::Announcement(_) | Message::Update(_) => {
                return Err(Failure::not_carried("ntfy"))
            }
        };
        ntfy.publish(&publish).await
    }
}

impl Publish {
    /// A page as ntfy shows it: its tag and priority by its tone; Acknowledge as a button.
    fn page(topic: &str, page: &Page, public_url: &str) -> Publish {
        let (tag, priority) = match page.tone {
            Tone::Alert(Severity::Critical) => ("rotating_light", 5),
            Tone::Alert(Severity::Warning) => ("warning", 4),
            Tone::Alert(Severity::Info) => ("information_source", 3),
            Tone::Resolved => ("white_check_mark", 3),
            Tone::Notice => ("calendar", 3),
        };
        let actions = match (&page.ack, page.ack_post(public_url)) {
            (Some(ack), Some(url)) if ack.all => vec![Action::acknowledge_all(url)],
            (Some(_), Some(url)) => vec![Action::acknowledge(url)],
            _ => Vec::new(),
        };
        Publish {
            topic: topic.to_string(),
            title: page.title.clone(),
            message: page.text.clone(),
            tags: vec![tag.to_string()],
            priority,
            click: page.link.clone(),
            actions,
        }
    }
}

/// ntfy refuses messages over 4096 bytes; the whole JSON body stays under it.
pub const MAX_MESSAGE_BYTES: usize = 4096;

/// One ntfy JSON publish.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Publish {
    pub topic: String,
    pub title: String,
    pub message: String,
    pub tags: Vec<String>,
    pub priority: u8,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub click: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub actions: Vec<Action>,
}

/// An `http` action button; ntfy POSTs to `url` when it is tapped.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Action {
    pub action: &'static str,
    pub label: String,
    pub url: String,
    pub method: &'static str,
    pub clear: bool,
}

impl Action {
    pub fn acknowledge(url: String) -> Action {
        Action {
            action: "http",
            label: "Acknowledge".into(),
            url,
            method: "POST",
            clear: true,
        }
    }

    /// A summary push's button: one token acknowledges every incident of the summary.
    pub fn acknowledge_all(url: String) -> Action {
        Action {
            label: "Acknowledge all".into(),
            ..Action::acknowledge(url)
        }
    }
}

impl Publish {
    /// The JSON body, with the message text (then the title) cut at a character boundary so
    /// the whole body fits ntfy's limit.
    pub fn to_body(&self) -> Vec<u8> {
        let mut m = self.clone();
        loop {
            let body = serde_json::to_vec(&m).unwrap_or_default();
            let over = body.len().saturating_sub(MAX_MESSAGE_BYTES);
            if over == 0 {
                return body;
            }
            // JSON escaping can make a character cost up to 6 bytes: cut generously, then re-check.
            let field = if m.message.len() > 16 {
                &mut m.message
            } else {
                &mut m.title
            };
            let keep = field.len().saturating_sub(over + 4);
            let mut cut = keep;
            while cut > 0 && !field.is_char_boundary(cut) {
                cut -= 1;
            }
            field.truncate(cut);
            field.push('…');
        }
    }
}

pub struct Ntfy {
    client: Outbound,
    url: String,
    token: Option<String>,
}

impl Ntfy {
    pub fn new(url: &str, token: Option<&str>) -> Ntfy {
        Ntfy {
            // The administrator's server: no address policy, but no redirects and a capped read.
            client: Outbound::trusted(),
            url: url.trim_end_matches('/').to_string(),
            token: token.map(str::to_string),
        }
    }

    pub async fn publish(&self, message: &Publish) -> Sent {
        let mut req = self
            .client
            .request(reqwest::Method::POST, &format!("{}/", self.url))
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .body(message.to_body());
        if let Some(token) = &self.token {
            req = req.bearer_auth(token);
        }
        let res = self.client.send(req).await.map_err(|f| {
            Failure::outage(format!(
                "cannot reach ntfy at {}: it {}",
                self.url, f.sentence
            ))
        })?;
        let status = res.status;
        if status.is_success() {
            return Ok(());
        }
        let retry_after = res
            .headers
            .get(reqwest::header::RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<i64>().ok())
            .filter(|s| *s >= 0);
        // ntfy answers errors as {"code":40101,"http":401,"error":"unauthorized"}: its own
        // short reason is kept; any other body is not repeated.
        let detail = res
            .json::<serde_json::Value>()
            .and_then(|v| {
                v["error"]
                    .as_str()
                    .map(|e| e.chars().take(200).collect::<String>())
            })
            .map(|e| format!(": {}", e.trim()))
            .unwrap_or_default();
        // ntfy limits a visitor, or with subscriber-based limits a topic, after a burst; a
        // 429 is about that topic, not the whole service.
        let rate_limited = status == reqwest::StatusCode::TOO_MANY_REQUESTS;
        Err(Failure {
            reason: format!("ntfy answered {}{detail}", status.as_u16()),
            retry_after: if rate_limited { retry_after } else { None },
            outage: rate_limited || status.is_server_error(),
            rate_limited,
            permanent: status.is_client_error() && !rate_limited,
            gone: false,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(text: String) -> Publish {
        Publish {
            topic: "alice".into(),
            title: "[CRITICAL] DiskFull: disk is full".into(),
            message: text,
            tags: vec!["rotating_light".into()],
            priority: 5,
            click: Some("http://klaxon/incidents/1".into()),
            actions: vec![Action::acknowledge("http://klaxon/api/notify/ack/x".into())],
        }
    }

    #[test]
    fn long_messages_fit_ntfy_limit_and_stay_valid_json() {
        for text in [
            "x".repeat(10_000),
            "é\"\\\n".repeat(3_000),
            "🔥".repeat(5_000),
        ] {
            let body = message(text).to_body();
            assert!(body.len() <= MAX_MESSAGE_BYTES, "{}", body.len());
            let v: serde_json::Value = serde_json::from_slice(&body).unwrap();
            assert!(v["message"].as_str().unwrap().ends_with('…'));
            assert_eq!(v["actions"][0]["label"], "Acknowledge");
        }
        let short = message("short".into()).to_body();
        let v: serde_json::Value = serde_json::from_slice(&short).unwrap();
        assert_eq!(v["message"], "short");
        assert_eq!(v["actions"][0]["clear"], true);
    }
}
