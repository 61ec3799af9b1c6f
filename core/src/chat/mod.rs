//! Acting on incidents from chat: a chat account linked once to a person (`links`), and what a
//! button or a command asks for done as that person, with that person's rights (`act`). Each
//! platform's requests are checked as it documents before anything is read from them (`slack`:
//! `X-Slack-Signature`, HMAC-SHA256 of the timestamp and the body by the app's signing secret,
//! the timestamp within five minutes); one that fails changes nothing, is logged and is
//! answered 401.

pub mod act;
pub mod links;
pub mod matrix;
pub mod mattermost;
pub mod slack;
pub mod telegram;

pub use act::ChatOutcome;
