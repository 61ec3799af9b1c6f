//! What is sent, whatever road carries it. Each road renders these its own way (ntfy's JSON, a
//! Web Push payload, a mail, a Matrix message, a webhook's body, a Slack or Teams card).

use super::announcement::Announcement;
use klaxon_domain::alerting::Severity;

/// One message. A road that does not carry a kind (a code to a Slack channel) fails it for good.
pub enum Message<'a> {
    /// A page, a summary of pages or a hand-off notice to a person or a shared topic.
    Page(&'a Page),
    /// A code that proves a new contact method is the person's.
    Code(&'a str),
    /// "Send a test" on a person's contact method.
    Test,
    /// A team's incident events, or its channel's test, to the channel.
    Announcement(&'a Announcement),
    /// An incident's messages already in a channel that edits them (`Road::edits`), edited to
    /// show it as it is now after an event the channel does not hear; nothing new is posted.
    Update(&'a Announcement),
}

impl Message<'_> {
    /// The webhook's `Klaxon-Event` for a person's road.
    pub fn event_word(&self) -> &'static str {
        match self {
            Message::Page(_) => "page",
            Message::Code(_) => "verify",
            Message::Test => "test",
            Message::Announcement(a) | Message::Update(a) => a.event_word(),
        }
    }
}

/// How loud a page is: ntfy's priority and tag, a mail subject's first word.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tone {
    Alert(Severity),
    Resolved,
    /// A hand-off notice.
    Notice,
}

/// What acknowledges a page: the raw token of `POST /api/notify/ack/{token}` (a program, ntfy's
/// and Web Push's button) and of the confirmation page `/ack/{token}` (a person in a mail or a
/// chat: opening it acknowledges nothing until they confirm).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ack {
    pub token: String,
    /// A summary's one token for all of its incidents ("Acknowledge all").
    pub all: bool,
}

/// A page as composed by paging (`paging::message`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Page {
    /// `opening`, `reminder`, `escalation`, `fallback`, `all_clear`, `handoff` or `summary`.
    pub kind: &'static str,
    pub title: String,
    pub text: String,
    pub tone: Tone,
    /// A mail's subject: the title with the team named.
    pub subject: String,
    /// Where a tap or click goes: the incident, a summary's list, the team's rota.
    pub link: Option<String>,
    pub ack: Option<Ack>,
    /// One notification per tag on a device: an incident's all-clear replaces its page.
    pub tag: String,
    /// The incident a page is about (not a summary's or a notice's): an answer to it in chat
    /// acts on it.
    pub incident_id: Option<i64>,
}

impl Page {
    /// `POST` acknowledges: for a program, and for ntfy's and Web Push's buttons.
    pub fn ack_post(&self, public_url: &str) -> Option<String> {
        self.ack
            .as_ref()
            .map(|a| format!("{public_url}/api/notify/ack/{}", a.token))
    }

    /// The confirmation page a person opens from a mail or a chat (a GET never acts).
    pub fn ack_page(&self, public_url: &str) -> Option<String> {
        self.ack
            .as_ref()
            .map(|a| format!("{public_url}/ack/{}", a.token))
    }
}

/// What a person's message says on a road of plain words (mail, Matrix, a webhook): a page, a
/// code or a test, with its links written out.
pub(super) struct Words {
    pub title: String,
    pub text: String,
    pub link: Option<String>,
    pub ack_page: Option<String>,
    pub ack_post: Option<String>,
    pub code: Option<String>,
    /// A page's kind (`opening`, …, `summary`).
    pub kind: Option<&'static str>,
}

impl Words {
    /// `None` for an announcement, which is a team's, not a person's.
    pub fn of(message: &Message<'_>, public_url: &str, test: &str) -> Option<Words> {
        let profile = Some(format!("{public_url}/me"));
        Some(match message {
            Message::Page(p) => Words {
                title: p.title.clone(),
                text: p.text.clone(),
                link: p.link.clone(),
                ack_page: p.ack_page(public_url),
                ack_post: p.ack_post(public_url),
                code: None,
                kind: Some(p.kind),
            },
            Message::Code(code) => Words {
                title: "Your Klaxon verification code".into(),
                text: format!(
                    "Enter {code} in Klaxon within {} minutes to receive pages here.\n\n{IGNORE}",
                    klaxon_domain::contact::CODE_TTL / 60
                ),
                link: profile,
                ack_page: None,
                ack_post: None,
                code: Some(code.to_string()),
                kind: None,
            },
            Message::Test => Words {
                title: TEST_TITLE.into(),
                text: test.into(),
                link: profile,
                ack_page: None,
                ack_post: None,
                code: None,
                kind: None,
            },
            Message::Announcement(_) | Message::Update(_) => return None,
        })
    }
}

/// A test's title on every road.
pub(super) const TEST_TITLE: &str = "Klaxon test page";

/// Said under every code.
pub(super) const IGNORE: &str = "If you did not ask for it, ignore this message: nothing more is sent here unless the code is entered.";
