//! Chat accounts linked to people: an action pressed or typed in chat (Acknowledge, Resolve,
//! Snooze 1 h, Take it) acts as the person the chat account is linked to, with that person's
//! rights. A Slack, Mattermost, Telegram or Discord account links itself with a one-time code
//! from the profile (`/klaxon link 123456`; Telegram's `/link 123456`); a Matrix account is the
//! person's verified Matrix contact method. An account links to one person.

use crate::Timestamp;
use serde::{Deserialize, Serialize};

/// How long a link code works.
pub const LINK_CODE_SECONDS: i64 = 10 * 60;

/// A linked chat account, as its person sees it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ChatLink {
    pub id: i64,
    /// `slack`, `mattermost`, `telegram` or `discord`.
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

/// What a chat message asks of Klaxon.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Said {
    /// An action on an incident: the one named (`!ack 42`), else the one of the Klaxon message
    /// it answers. A resolve's further words are its resolution note.
    Act {
        act: ChatAct,
        incident: Option<i64>,
        note: Option<String>,
    },
    /// `!help` (or `help` in answer to Klaxon's message).
    Help,
    /// Not for Klaxon: people talking.
    Nothing,
}

/// Reads a chat message: a command (`!ack 42`, `!resolve 42 rolled back`, `!snooze 42`,
/// `!take 42`, `!help`), or, when it answers one of Klaxon's messages (`answering`: a reply or a
/// message in its thread), the same words without `!` and without a number. A reply's quoted
/// fallback (Matrix's `> ` lines) is not read.
pub fn read_said(text: &str, answering: bool) -> Said {
    let line = text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.starts_with('>'))
        .unwrap_or_default();
    let line = match line.strip_prefix('!') {
        Some(rest) => rest,
        None if answering => line,
        None => return Said::Nothing,
    };
    let mut words = line.splitn(2, char::is_whitespace);
    let word = words.next().unwrap_or_default();
    let rest = words.next().unwrap_or_default().trim();
    let act = match word
        .trim_end_matches(['.', '!', ':'])
        .to_lowercase()
        .as_str()
    {
        "ack" | "acknowledge" => ChatAct::Acknowledge,
        "resolve" => ChatAct::Resolve,
        "snooze" => ChatAct::Snooze,
        "take" => ChatAct::Take,
        "help" => return Said::Help,
        // Another bot's command, or people talking in the thread.
        _ => return Said::Nothing,
    };
    let mut after = rest.splitn(2, char::is_whitespace);
    let first = after.next().unwrap_or_default();
    let (incident, note) = match first.trim_start_matches('#').parse::<i64>() {
        Ok(id) if id > 0 => (Some(id), after.next().unwrap_or_default()),
        _ => (None, rest.trim_start()),
    };
    let note =
        (act == ChatAct::Resolve && !note.trim().is_empty()).then(|| note.trim().to_string());
    Said::Act {
        act,
        incident,
        note,
    }
}

/// Whether a reaction acknowledges: a check mark or a thumbs up, with or without the emoji
/// presentation selector.
pub fn reaction_acknowledges(key: &str) -> bool {
    matches!(key.trim_end_matches('\u{fe0f}'), "✅" | "✔" | "☑" | "👍")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn act(act: ChatAct, incident: Option<i64>, note: Option<&str>) -> Said {
        Said::Act {
            act,
            incident,
            note: note.map(str::to_string),
        }
    }

    #[test]
    fn commands_name_their_incident_and_a_resolve_keeps_its_note() {
        assert_eq!(
            read_said("!ack 42", false),
            act(ChatAct::Acknowledge, Some(42), None)
        );
        assert_eq!(
            read_said("!ACK #42", false),
            act(ChatAct::Acknowledge, Some(42), None)
        );
        assert_eq!(
            read_said("!resolve 42 rolled back", false),
            act(ChatAct::Resolve, Some(42), Some("rolled back"))
        );
        assert_eq!(
            read_said("!take 7", false),
            act(ChatAct::Take, Some(7), None)
        );
        assert_eq!(
            read_said("!snooze 7 later", false),
            act(ChatAct::Snooze, Some(7), None)
        );
        assert_eq!(
            read_said("!ack", false),
            act(ChatAct::Acknowledge, None, None)
        );
        assert_eq!(read_said("!help", false), Said::Help);
    }

    #[test]
    fn talk_and_other_bots_commands_are_not_for_klaxon() {
        assert_eq!(read_said("ack 42", false), Said::Nothing);
        assert_eq!(read_said("we should ack this", false), Said::Nothing);
        assert_eq!(read_said("!deploy prod", false), Said::Nothing);
        assert_eq!(read_said("", true), Said::Nothing);
    }

    #[test]
    fn an_answer_to_klaxons_message_acts_on_its_incident() {
        let reply =
            "> <@klaxon:example.org> Critical incident opened: Disk full\n\nresolve rolled back";
        assert_eq!(
            read_said(reply, true),
            act(ChatAct::Resolve, None, Some("rolled back"))
        );
        assert_eq!(
            read_said("Ack.", true),
            act(ChatAct::Acknowledge, None, None)
        );
        assert_eq!(read_said("thanks, looking", true), Said::Nothing);
        assert_eq!(read_said("help", true), Said::Help);
    }

    #[test]
    fn check_marks_and_thumbs_acknowledge() {
        assert!(reaction_acknowledges("✅"));
        assert!(reaction_acknowledges("✔\u{fe0f}"));
        assert!(reaction_acknowledges("👍"));
        assert!(!reaction_acknowledges("👀"));
    }
}
