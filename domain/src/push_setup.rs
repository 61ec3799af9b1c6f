//! Getting a newcomer's phone paged: the ntfy server and topic to subscribe to, the ntfy app's
//! subscribe link, and a private topic nobody can guess.

use crate::Timestamp;
use serde::{Deserialize, Serialize};

/// Characters of the random part of a private topic: 20 of 36 is about 103 bits, out of reach of
/// anyone guessing topics on a public ntfy server.
pub const PRIVATE_TOPIC_RANDOM: usize = 20;

/// What the profile's push card shows.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PushSetup {
    /// The ntfy server pages are published to (`KLAXON_NTFY_URL`); `None` when Klaxon has none.
    pub server: Option<String>,
    pub topic: Option<String>,
    /// `ntfy://host/topic`, which opens the ntfy app subscribed to the topic.
    pub subscribe_link: Option<String>,
    /// The topic in ntfy's web app (`https://host/topic`).
    pub web_link: Option<String>,
    /// When a test page last reached one of the person's roads.
    pub test_page_at: Option<Timestamp>,
}

/// A private topic: `klaxon-` and `random` (lowercase letters and digits, drawn by the caller).
pub fn private_topic(random: &str) -> String {
    format!("klaxon-{random}")
}

/// The ntfy app's link that subscribes to `topic` on `server` and opens it, as ntfy documents
/// it for its Android app (docs/subscribe/phone.md, "ntfy:// links"): `ntfy://<host>/<topic>`,
/// with `secure=false` for a plain-HTTP server and `display` for the name the app shows.
/// `None` when `server` is not an http(s) URL.
pub fn subscribe_link(server: &str, topic: &str) -> Option<String> {
    let (rest, secure) = if let Some(r) = server.strip_prefix("https://") {
        (r, true)
    } else if let Some(r) = server.strip_prefix("http://") {
        (r, false)
    } else {
        return None;
    };
    let host = rest.trim_end_matches('/');
    if host.is_empty() || topic.is_empty() {
        return None;
    }
    let plain = if secure { "" } else { "&secure=false" };
    Some(format!("ntfy://{host}/{topic}?display=Klaxon{plain}"))
}

/// The topic in ntfy's web app.
pub fn web_link(server: &str, topic: &str) -> String {
    format!("{}/{topic}", server.trim_end_matches('/'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_follow_ntfys_documented_form() {
        assert_eq!(
            subscribe_link("https://ntfy.sh", "klaxon-abc").as_deref(),
            Some("ntfy://ntfy.sh/klaxon-abc?display=Klaxon")
        );
        assert_eq!(
            subscribe_link("http://10.0.0.5:8090/", "t").as_deref(),
            Some("ntfy://10.0.0.5:8090/t?display=Klaxon&secure=false")
        );
        assert_eq!(subscribe_link("ftp://x", "t"), None);
        assert_eq!(subscribe_link("https://", "t"), None);
        assert_eq!(web_link("https://ntfy.sh/", "t"), "https://ntfy.sh/t");
    }

    #[test]
    fn a_private_topic_is_a_valid_topic() {
        let t = private_topic("abcdefghij0123456789");
        assert!(crate::text::Topic::parse(&t).is_ok());
        assert!(t.len() <= 64);
    }
}
