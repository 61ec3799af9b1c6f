//! Chat accounts linked to people: an action pressed or typed in chat (Acknowledge, Resolve,
//! Snooze 1 h, Take it) acts as the person the chat account is linked to, with that person's
//! rights. A Slack account links itself with a one-time code from the profile
//! (`/klaxon link 123456`); an account links to one person.

use crate::Timestamp;
use serde::{Deserialize, Serialize};

/// How long a link code works.
pub const LINK_CODE_SECONDS: i64 = 10 * 60;

/// A linked chat account, as its person sees it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ChatLink {
    pub id: i64,
    /// `slack`.
    pub platform: String,
    /// The account as the platform names it ("@ana in T0123").
    pub shown: String,
    pub created_at: Timestamp,
}

/// A fresh link code, shown once: typed in chat as `/klaxon link <code>` before it expires.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct LinkCode {
    /// Six digits.
    pub code: String,
    pub expires_at: Timestamp,
}

/// What a button or a command asks of an incident.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChatAct {
    Acknowledge,
    Resolve,
    /// Snooze for an hour.
    Snooze,
    /// Assign to me.
    Take,
}

crate::words!(ChatAct, "chat action" {
    Acknowledge => "ack",
    Resolve => "resolve",
    Snooze => "snooze",
    Take => "take",
});

impl ChatAct {
    /// A button's label.
    pub fn label(self) -> &'static str {
        match self {
            ChatAct::Acknowledge => "Acknowledge",
            ChatAct::Resolve => "Resolve",
            ChatAct::Snooze => "Snooze 1 h",
            ChatAct::Take => "Take it",
        }
    }
}
