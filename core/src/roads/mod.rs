//! The roads a message takes to people: an ntfy topic, a browser's Web Push subscription, an
//! email address, a Matrix account or room, a signed webhook, a phone number texted or rung
//! (`phone`'s providers), a Slack-format or a Teams webhook.
//! Each is one file here implementing `Road`, and is registered once in `registry`; paging, the
//! announcer, tests and verification codes ask the registry for a road by its name and hand it
//! a neutral `Message`. The switch is on the kind of message, inside each road; nothing outside
//! this room switches on the road.
//!
//! - `message`: what is sent (a page, a code, a test, a team announcement), road-neutral.
//! - One result type, `Sent`: sent, or a `Failure` with its sentence, the wait a service asked
//!   for, whether it is for good, whether the target is gone.

pub mod announcement;
mod chat;
pub mod discord;
pub mod email;
mod http;
pub mod matrix;
pub mod mattermost;
pub mod message;
pub mod ntfy;
pub mod phone;
pub mod posts;
mod registry;
pub mod slack;
mod sms;
mod teams;
pub mod telegram;
mod voice;
pub mod webhook;
pub mod webpush;

pub use http::answered;
pub use message::{Ack, Message, Page, Tone};
pub use registry::{RoadSettings, Roads};

use crate::Core;

/// What a road is, for the profile, the team page, the timeline and the outbox.
#[derive(Debug)]
pub struct Info {
    /// Its name where it is stored (`contact_methods.kind`, `channels.kind`) and in the API.
    pub name: &'static str,
    /// Its name in a sentence ("Web Push failed: …").
    pub label: &'static str,
    /// A person can add it to their contact methods; how the profile shows it.
    pub personal: Option<Profile>,
    /// A team can announce its incidents on it.
    pub channel: bool,
    /// A person's target waits for a code sent by this road before it is paged: an address, an
    /// account or a URL could be anyone's. A topic is the person's choice and a subscription is
    /// the browser's own.
    pub needs_code: bool,
    /// Every target of it goes through one service of the install (the ntfy server, the mail
    /// server, the homeserver): one send getting through shows that the service answers again
    /// for all of them. A Web Push subscription or a webhook is a service of its own.
    pub shared_service: bool,
    /// Its messages are signed with a secret made for each target, shown once when it is added.
    pub signed: bool,
    /// A target takes at most this many pages a minute, fewer than the install's bundling
    /// allows (a text costs money and a phone buzzes for each): more go as one summary.
    pub per_minute: Option<i64>,
}

/// How the profile shows a road a person can have, in the road's own words, so the app names no
/// road itself.
#[derive(Debug)]
pub struct Profile {
    /// Beside a method in the list ("ntfy topic").
    pub listed_as: &'static str,
    /// The label of a waiting method's code field ("Code from the email"); empty for a road
    /// that needs no code.
    pub code_from: &'static str,
    /// Made when the person links their chat account in a private chat with the install's bot
    /// (Telegram), never added through the API.
    pub in_chat: bool,
    /// The form that adds one, or `None` when one is added another way (Web Push: "Page this
    /// phone").
    pub form: Option<Form>,
}

/// The profile's form that adds one road (`klaxon_domain::contact::AddForm`).
#[derive(Debug)]
pub struct Form {
    pub name: &'static str,
    pub field: &'static str,
    pub input: &'static str,
    pub placeholder: &'static str,
    pub hint: &'static str,
    pub button: &'static str,
    pub folded: Option<&'static str>,
}

/// Whose road a target is: a person's own (Web Push and webhooks reach only public addresses,
/// unless `KLAXON_OUTBOUND_ALLOW_PERSONAL`), or a team's channel (`KLAXON_OUTBOUND_ALLOW`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Owner {
    Person,
    Team,
}

/// Where one message goes: what a road needs of a contact method or a channel.
#[derive(Debug, Clone)]
pub struct To {
    /// The topic, the address, the Matrix user or room id, the subscription's endpoint or the URL.
    pub target: String,
    /// A webhook's signing secret.
    pub secret: Option<String>,
    /// A Web Push subscription's keys (`p256dh`, `auth`).
    pub keys: Option<(String, String)>,
    /// A person's Matrix direct room, once the bot opened it.
    pub room: Option<String>,
    /// The contact method, for a person's road (`None` for a topic or a team channel).
    pub method_id: Option<i64>,
    /// The provider a phone number's method names (`roads::phone`); the install's default
    /// when `None`.
    pub provider: Option<String>,
    pub owner: Owner,
    /// The person's username, or the team's name.
    pub name: String,
    /// The same on every retry of one message: the webhook's `Klaxon-Delivery`, and prefixed,
    /// the Matrix transaction id, so a retry after a lost answer is one event.
    pub delivery: String,
}

/// Why a message did not get through, in words for the timeline, a channel's state and a test's
/// 502.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Failure {
    pub reason: String,
    /// Seconds the service asked to wait (`Retry-After`, Matrix's `retry_after_ms`).
    pub retry_after: Option<i64>,
    /// The service failed (unreachable, 5xx) or refused the target for now (429), not this
    /// message: the page is retried as soon as another send succeeds, and later pages to its
    /// target wait behind it.
    pub outage: bool,
    /// The service refused the target for now (429): its pages wait for `retry_after`.
    pub rate_limited: bool,
    /// Refused for good (a 4xx other than 429, an address the mail server refuses): not
    /// retried, and its person's next step goes at once.
    pub permanent: bool,
    /// The target no longer exists (a Web Push subscription answered 404 or 410): its contact
    /// method is removed.
    pub gone: bool,
}

/// What came of one send.
pub type Sent = std::result::Result<(), Failure>;

impl Failure {
    /// A failure for good: no retry, the next road goes.
    pub fn permanent(reason: impl Into<String>) -> Failure {
        Failure {
            reason: reason.into(),
            permanent: true,
            ..Failure::default()
        }
    }

    /// The service could not be reached or failed: retried, later messages wait behind it.
    pub fn outage(reason: impl Into<String>) -> Failure {
        Failure {
            reason: reason.into(),
            outage: true,
            ..Failure::default()
        }
    }

    /// The road's service is not configured on this install.
    pub fn unconfigured(what: &str, setting: &str) -> Failure {
        Failure::permanent(format!("no {what} is configured ({setting})"))
    }

    /// A message this road does not carry (a code to a team's Slack channel).
    fn not_carried(road: &str) -> Failure {
        Failure::permanent(format!("{road} does not carry this message"))
    }

    /// The failure with the service's wait in its sentence, for a caller who is answered now.
    pub fn sentence(&self) -> String {
        match self.retry_after {
            Some(wait) => format!("{}; it asks to wait {wait} s", self.reason),
            None => self.reason.clone(),
        }
    }
}

/// One road. Implemented once per file in this room and registered in `registry`.
#[async_trait::async_trait]
pub trait Road: Send + Sync {
    fn info(&self) -> &'static Info;

    /// Why this install cannot use the road (the setting to give), or `None` when it can.
    fn unconfigured(&self) -> Option<String>;

    /// A target as given by a person or a team owner (already of its kind's form: an address, a
    /// topic), checked as this install can reach it, and in the form stored. The sentence is the
    /// answer's 400.
    fn check(
        &self,
        _core: &Core,
        _owner: Owner,
        target: &str,
    ) -> std::result::Result<String, String> {
        Ok(target.to_string())
    }

    /// The target as rate limits count it: an address by the mailbox it reaches, however it is
    /// written.
    fn counted_as(&self, target: &str) -> String {
        target.to_string()
    }

    /// The target as it may be shown again to its owner: an endpoint or a URL can be a
    /// capability.
    fn shown(&self, target: &str) -> String {
        target.to_string()
    }

    /// The target as an administrator or a teammate sees it: a phone number masked.
    fn shown_to_others(&self, target: &str) -> String {
        self.shown(target)
    }

    /// Whether an incident's first message in a channel of `target` is edited in place as the
    /// incident moves, even for events the channel does not hear (`Message::Update`).
    fn edits(&self, _target: &str) -> bool {
        false
    }

    /// Sends one message, rendered this road's way.
    async fn send(&self, core: &Core, to: &To, message: &Message<'_>) -> Sent;
}
