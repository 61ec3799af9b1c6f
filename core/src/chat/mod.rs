//! Acting on incidents from chat: a chat account linked once to a person (`links`: a one-time
//! code; for Matrix, the person's verified Matrix contact method), and what a button, a command,
//! a reply or a reaction asks for done as that person, with that person's rights (`act`). Each
//! platform's requests are checked as it documents before anything is read from them, and one
//! that fails changes nothing, is logged and is answered 401: Slack's `X-Slack-Signature`
//! (`slack`), Mattermost's signed button context and command token (`mattermost`), Telegram's
//! webhook secret (`telegram`), Discord's Ed25519 signature (`discord`); Matrix is read from the
//! bot's own rooms (`matrix`).

pub mod act;
pub mod discord;
pub mod links;
pub mod matrix;
pub mod mattermost;
pub mod slack;
pub mod telegram;

pub use act::ChatOutcome;
