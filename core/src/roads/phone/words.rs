//! What a text and a call say, whoever carries them. A text is short (one or two SMS
//! segments): the page's subject, its link and its reply codes. A call says what broke in words
//! (severity, team, title, who it is for), then its menu.

use crate::roads::message::{Message, Page, Tone, IGNORE, TEST_TITLE};
use klaxon_domain::alerting::Severity;

/// The keys of a call's menu and the words of a text's replies.
pub const ACKNOWLEDGE: char = '4';
pub const ESCALATE: char = '5';
pub const RESOLVE: char = '6';
pub const REPEAT: char = '1';

/// A text's subject is cut here, so subject, link and codes fit two SMS segments.
const MAX_SUBJECT: usize = 120;

/// The text for `message`; `reply` is the page's reply code when it has one to act on.
pub fn text(message: &Message<'_>, public_url: &str, reply: Option<&str>) -> Option<String> {
    Some(match message {
        Message::Page(page) => page_text(page, reply),
        Message::Code(code) => format!(
            "Klaxon code: {code}. Enter it within {} minutes to get pages by text here. {IGNORE}",
            klaxon_domain::contact::CODE_TTL / 60
        ),
        Message::Test => format!("{TEST_TITLE}: pages reach this number. {public_url}/me"),
        Message::Announcement(_) | Message::Update(_) => return None,
    })
}

fn page_text(page: &Page, reply: Option<&str>) -> String {
    let mut subject: String = page.subject.chars().take(MAX_SUBJECT).collect();
    if subject.len() < page.subject.len() {
        // Not '…': one character outside the GSM alphabet halves what a segment holds.
        subject.push_str("...");
    }
    let mut out = subject;
    if let Some(link) = &page.link {
        out.push('\n');
        out.push_str(link);
    }
    if let Some(code) = reply {
        let all = page.ack.as_ref().is_some_and(|a| a.all);
        let what = if all { " all" } else { "" };
        out.push_str(&format!(
            "\nReply {ACKNOWLEDGE} {code} to acknowledge{what}, {RESOLVE} {code} to resolve{what}"
        ));
    }
    out
}

/// A reply as a person texts it: a key and a code ("4 a7", "4a7", "ACK a7" is not one).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reply {
    Act {
        key: char,
        code: String,
    },
    /// STOP, UNSUBSCRIBE, …: the carriers' words for "text me no more".
    Stop,
    /// START, UNSTOP: texts may come again.
    Start,
    Help,
    Unknown,
}

impl Reply {
    pub fn read(body: &str) -> Reply {
        let words = body.trim().to_ascii_lowercase();
        match words.as_str() {
            "stop" | "stopall" | "unsubscribe" | "cancel" | "end" | "quit" => return Reply::Stop,
            "start" | "unstop" | "yes" => return Reply::Start,
            "help" | "info" => return Reply::Help,
            _ => {}
        }
        let mut chars = words.chars();
        let key = chars.next().unwrap_or(' ');
        let code: String = chars.as_str().trim().to_string();
        let code_ok =
            (2..=4).contains(&code.len()) && code.chars().all(|c| c.is_ascii_alphanumeric());
        if [ACKNOWLEDGE, RESOLVE].contains(&key) && code_ok {
            Reply::Act { key, code }
        } else {
            Reply::Unknown
        }
    }
}

/// The answer to a text Klaxon cannot read.
pub const HELP: &str =
    "Klaxon: reply 4 and a page's code to acknowledge it (4 a7), 6 and the code to resolve it. STOP ends texts.";

/// Severity in words, for a call.
pub fn severity_words(severity: Severity) -> &'static str {
    match severity {
        Severity::Critical => "Critical alert",
        Severity::Warning => "Warning",
        Severity::Info => "For information",
    }
}

/// What a call says of one incident, before its menu.
pub fn spoken_incident(severity: Severity, team: &str, title: &str, person: &str) -> String {
    format!(
        "{}, for team {team}: {title}. This is Klaxon, calling {person}.",
        severity_words(severity)
    )
}

/// What a call says of a summary of several open incidents.
pub fn spoken_summary(open: i64, team: &str, person: &str) -> String {
    format!("This is Klaxon, calling {person}. You have {open} open incidents for team {team}.")
}

/// The menu after it; `all` for a summary.
pub fn spoken_menu(all: bool) -> String {
    let what = if all { " all" } else { "" };
    format!(
        "Press {ACKNOWLEDGE} to acknowledge{what}, {RESOLVE} to resolve{what}, {ESCALATE} to escalate now, {REPEAT} to hear it again."
    )
}

/// What a call says for a message without a menu: a code digit by digit, twice.
pub fn spoken(message: &Message<'_>) -> Option<String> {
    Some(match message {
        Message::Code(code) => {
            let digits: Vec<String> = code.chars().map(String::from).collect();
            let digits = digits.join(", ");
            format!("Your Klaxon code is {digits}. Again: {digits}. Goodbye.")
        }
        Message::Test => {
            "This is a Klaxon test call. Pages will ring this number. Goodbye.".to_string()
        }
        Message::Page(page) => match page.tone {
            Tone::Resolved | Tone::Notice => format!("Klaxon: {}. Goodbye.", page.subject),
            Tone::Alert(_) => return None,
        },
        Message::Announcement(_) | Message::Update(_) => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replies_are_read_as_a_key_and_a_code_or_a_carrier_word() {
        let act = |key, code: &str| Reply::Act {
            key,
            code: code.into(),
        };
        assert_eq!(Reply::read("4 a7"), act('4', "a7"));
        assert_eq!(Reply::read(" 6A7 "), act('6', "a7"));
        assert_eq!(Reply::read("STOP"), Reply::Stop);
        assert_eq!(Reply::read("Start"), Reply::Start);
        assert_eq!(Reply::read("help"), Reply::Help);
        for other in ["5 a7", "4", "4 a", "hello", "4 a7!", ""] {
            assert_eq!(Reply::read(other), Reply::Unknown, "{other}");
        }
    }

    #[test]
    fn a_page_text_is_short_and_says_its_codes() {
        let page = Page {
            kind: "opening",
            title: "x".into(),
            text: "long".repeat(100),
            tone: Tone::Alert(Severity::Critical),
            subject: format!("[CRITICAL] payments: {}", "DiskFull ".repeat(30)),
            link: Some("https://klaxon.example/incidents/7".into()),
            ack: Some(crate::roads::Ack {
                token: "t".into(),
                all: false,
            }),
            tag: "incident-7".into(),
            incident_id: Some(7),
        };
        let text = text(&Message::Page(&page), "https://klaxon.example", Some("a7")).unwrap();
        assert!(text.chars().count() <= 250, "{}", text.chars().count());
        assert!(
            text.ends_with("Reply 4 a7 to acknowledge, 6 a7 to resolve"),
            "{text}"
        );
        assert!(text.contains("https://klaxon.example/incidents/7"));
        assert_eq!(crate::roads::phone::segments(&text), 2);
        assert_eq!(crate::roads::phone::segments("short"), 1);
        assert_eq!(crate::roads::phone::segments(&"é".repeat(160)), 1);
        assert_eq!(crate::roads::phone::segments(&"é".repeat(161)), 2);
        assert_eq!(crate::roads::phone::segments(&"[".repeat(80)), 1);
        assert_eq!(crate::roads::phone::segments(&"[".repeat(81)), 2);
        assert_eq!(crate::roads::phone::segments(&"🔥".repeat(35)), 1);
        assert_eq!(crate::roads::phone::segments(&"🔥".repeat(36)), 2);
        let spoken = spoken(&Message::Code("120345")).unwrap();
        assert!(
            spoken.starts_with("Your Klaxon code is 1, 2, 0, 3, 4, 5."),
            "{spoken}"
        );
    }
}
