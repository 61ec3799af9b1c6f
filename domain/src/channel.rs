//! Team channels: where a team's incidents are announced for everyone watching (a Matrix room,
//! a Slack-format or Teams webhook, or Klaxon's own signed webhook), and which events each hears.
//! Checked here once for the server and the phone app.

use crate::alerting::Severity;
use crate::text::Label;
use crate::Timestamp;
use serde::{Deserialize, Serialize};

/// At most this many channels a team.
pub const MAX_CHANNELS: usize = 20;
/// The longest webhook URL accepted (bytes).
pub const MAX_URL: usize = 2048;
/// The longest Matrix room id or alias (the specification's limit, in bytes).
pub const MAX_ROOM: usize = 255;
/// A signed webhook's receiver should refuse a delivery whose `t` is further than this from its
/// own clock (seconds): the replay window.
pub const SIGNATURE_TOLERANCE: i64 = 300;
/// The version of the signed webhook's event body; a change that is not an added field makes
/// a new version.
pub const EVENT_VERSION: i64 = 1;

/// Where a channel posts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "config", derive(schemars::JsonSchema))]
pub enum ChannelKind {
    /// A room, through the install's Matrix bot.
    Matrix,
    /// A Slack-format incoming webhook (Slack, Mattermost, Rocket.Chat, Discord's `…/slack`).
    Slack,
    /// A Microsoft Teams workflow webhook (an Adaptive Card).
    Teams,
    /// Klaxon's own JSON event, signed with HMAC-SHA256.
    Webhook,
    /// A Mattermost incoming webhook, its messages with buttons that act in Klaxon
    /// (`KLAXON_MATTERMOST_TOKEN`).
    Mattermost,
    /// A Telegram group or channel, through the install's bot (`KLAXON_TELEGRAM_BOT_TOKEN`).
    Telegram,
    /// A Discord channel, through the install's bot (`KLAXON_DISCORD_BOT_TOKEN`).
    Discord,
}

crate::words!(ChannelKind, "channel kind" {
    Matrix => "matrix",
    Slack => "slack",
    Teams => "teams",
    Webhook => "webhook",
    Mattermost => "mattermost",
    Telegram => "telegram",
    Discord => "discord",
});

/// What happened to an incident, as a channel hears it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "config", derive(schemars::JsonSchema))]
pub enum ChannelEvent {
    Opened,
    Acknowledged,
    Escalated,
    Resolved,
    /// Someone else has it now (assigned, taken over, a swap).
    Reassigned,
    /// A note was marked as what fixed it.
    ResolutionNote,
}

crate::words!(ChannelEvent, "channel event" {
    Opened => "opened",
    Acknowledged => "acknowledged",
    Escalated => "escalated",
    Resolved => "resolved",
    Reassigned => "reassigned",
    ResolutionNote => "resolution_note",
});

impl ChannelKind {
    /// How the app names it.
    pub fn label(self) -> &'static str {
        match self {
            ChannelKind::Matrix => "Matrix room",
            ChannelKind::Slack => {
                "Slack, Mattermost, Rocket.Chat or Discord (Slack-format webhook)"
            }
            ChannelKind::Teams => "Microsoft Teams (workflow webhook)",
            ChannelKind::Webhook => "Signed webhook (Klaxon's JSON event)",
            ChannelKind::Mattermost => "Mattermost (incoming webhook, with buttons)",
            ChannelKind::Telegram => "Telegram group or channel (Klaxon's bot)",
            ChannelKind::Discord => "Discord channel (Klaxon's bot)",
        }
    }
}

impl ChannelEvent {
    /// How the app names it.
    pub fn label(self) -> &'static str {
        match self {
            ChannelEvent::Opened => "Opened",
            ChannelEvent::Acknowledged => "Acknowledged",
            ChannelEvent::Escalated => "Escalated",
            ChannelEvent::Resolved => "Resolved",
            ChannelEvent::Reassigned => "Reassigned",
            ChannelEvent::ResolutionNote => "Resolution note",
        }
    }

    /// The event in a sentence's words ("opened", "acknowledged", "has a resolution note").
    pub fn phrase(self) -> &'static str {
        match self {
            ChannelEvent::Opened => "opened",
            ChannelEvent::Acknowledged => "acknowledged",
            ChannelEvent::Escalated => "escalated",
            ChannelEvent::Resolved => "resolved",
            ChannelEvent::Reassigned => "reassigned",
            ChannelEvent::ResolutionNote => "has a resolution note",
        }
    }

    /// Events that want an owner: their message offers Acknowledge.
    pub fn asks_for_owner(self) -> bool {
        matches!(self, ChannelEvent::Opened | ChannelEvent::Escalated)
    }
}

/// Whether a channel's posts get through.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub enum ChannelState {
    /// Nothing sent yet.
    New,
    /// The last post got through.
    Ok,
    /// The last attempt failed; `last_error` says how. Posts are retried.
    Failing,
    /// A Matrix room nobody has proven yet: it hears nothing until someone with power in the
    /// room posts `proof_code` there and the channel is checked
    /// (`POST /api/teams/{team_id}/channels/{channel_id}/verify`).
    Unproven,
}

/// A team channel, as listed. The URL of a webhook is a secret (whoever has a Slack or Teams
/// webhook URL can post to the room) and is never shown again: `target` is its origin.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Channel {
    pub id: i64,
    pub team_id: i64,
    pub name: String,
    pub kind: ChannelKind,
    /// The room for Matrix, the chat or channel id for Telegram and Discord, and for Slack and
    /// Mattermost a channel's id as given; a webhook URL's `scheme://host[:port]` otherwise.
    pub target: String,
    /// What it hears, in the order of `ChannelEvent`.
    pub events: Vec<ChannelEvent>,
    /// The severities it hears; empty is every severity.
    pub severities: Vec<Severity>,
    pub state: ChannelState,
    /// Why the last attempt failed, while `failing`.
    pub last_error: Option<String>,
    /// When the first of the failures in a row happened, while `failing`.
    pub failing_since: Option<Timestamp>,
    pub last_sent_at: Option<Timestamp>,
    /// Posts waiting to go (or to be retried).
    pub waiting: i64,
    /// While a Matrix room is `unproven`: the one-time code to post in it.
    pub proof_code: Option<String>,
    pub created_at: Timestamp,
}

/// `POST /api/teams/{team_id}/channels`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct NewChannel {
    pub name: Label,
    pub kind: ChannelKind,
    /// For `matrix` a room id (`!abc:example.org`, or `!abc` in room version 12) or alias
    /// (`#ops:example.org`), at most 255 bytes; for `telegram` a chat id (`-1001234567890`) or
    /// `@channel`; for `discord` a channel id (17 to 20 digits); for `slack` a channel id
    /// (`C0123ABCD`, needs `KLAXON_SLACK_BOT_TOKEN`; messages are then edited in place) or an
    /// incoming webhook's URL; for `mattermost` a channel id (26 lower-case letters and digits,
    /// needs the bot's `KLAXON_MATTERMOST_URL` and `_BOT_TOKEN`) or a webhook's URL; for the
    /// others the webhook's `http(s)` URL, at most 2048 bytes. Write-only for webhooks.
    #[cfg_attr(feature = "openapi", schema(min_length = 2, max_length = 2048))]
    pub target: String,
    /// What it hears; absent is every event.
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(min_items = 1, max_items = 6))]
    pub events: Option<Vec<ChannelEvent>>,
    /// The severities it hears; absent or empty is every severity.
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(max_items = 3))]
    pub severities: Option<Vec<Severity>>,
}

/// `PATCH /api/teams/{team_id}/channels/{channel_id}`: absent fields are kept. A new `target`
/// replaces the URL (or room); a webhook's signing secret is kept.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ChannelChange {
    #[serde(default)]
    pub name: Option<Label>,
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(min_length = 2, max_length = 2048))]
    pub target: Option<String>,
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(min_items = 1, max_items = 6))]
    pub events: Option<Vec<ChannelEvent>>,
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(max_items = 3))]
    pub severities: Option<Vec<Severity>>,
}

/// A new channel; for a signed webhook, its signing secret, shown in this answer only.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct NewChannelAnswer {
    #[serde(flatten)]
    pub channel: Channel,
    /// The HMAC-SHA256 key of the `Klaxon-Signature` header (`webhook` only).
    pub signing_secret: Option<String>,
}

/// Klaxon's signed webhook body, version 1: what happened, to which incident (as
/// `GET /api/incidents/{id}` shows it), and where to see it. Sent as `application/json` with
/// `Klaxon-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")>`, `Klaxon-Event`
/// (the event's word) and `Klaxon-Delivery` (the same on every retry of one delivery).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct WebhookEvent {
    /// 1.
    pub version: i64,
    /// Unique per delivery; the `Klaxon-Delivery` header.
    pub delivery: i64,
    pub event: ChannelEvent,
    /// When it happened.
    pub at: Timestamp,
    pub team: WebhookTeam,
    pub incident: crate::incident::Incident,
    /// Who did it; none when Klaxon did (an alert, the ladder, the sweeper).
    pub actor: Option<String>,
    /// The sentence the incident's timeline has for it.
    pub text: String,
    /// The incident in the app.
    pub url: String,
    /// Where a responder acknowledges (signed in; the page asks before it acts), for the
    /// events that want an owner.
    pub acknowledge_url: Option<String>,
    /// For a storm summary: the other incidents the message stands for (their ids), beyond
    /// `incident`. Empty otherwise.
    #[serde(default)]
    pub also: Vec<i64>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct WebhookTeam {
    pub id: i64,
    pub name: String,
}

/// The events and severities as given: duplicates dropped, sorted; absent events are all.
pub fn normalize_events(events: Option<Vec<ChannelEvent>>) -> Result<Vec<ChannelEvent>, String> {
    let mut events = events.unwrap_or_else(|| ChannelEvent::ALL.to_vec());
    if events.is_empty() {
        return Err("events: a channel must hear at least one event".into());
    }
    if events.len() > ChannelEvent::ALL.len() {
        return Err(format!(
            "events: at most {} events",
            ChannelEvent::ALL.len()
        ));
    }
    events.sort();
    events.dedup();
    Ok(events)
}

pub fn normalize_severities(severities: Option<Vec<Severity>>) -> Result<Vec<Severity>, String> {
    let mut severities = severities.unwrap_or_default();
    if severities.len() > Severity::ALL.len() {
        return Err(format!(
            "severities: at most {} severities",
            Severity::ALL.len()
        ));
    }
    severities.sort();
    severities.dedup();
    // Every severity is the same as none named.
    if severities.len() == Severity::ALL.len() {
        severities.clear();
    }
    Ok(severities)
}

/// Words joined by commas, as the `events` and `severities` columns hold them.
pub fn join_words<T: Copy>(words: &[T], word: fn(T) -> &'static str) -> String {
    words.iter().map(|w| word(*w)).collect::<Vec<_>>().join(",")
}

/// Words read back from a column; unknown words are skipped (the column is only written here).
pub fn split_words<T>(column: &str, parse: fn(&str) -> Option<T>) -> Vec<T> {
    column.split(',').filter_map(parse).collect()
}

/// Checks a target for its kind and returns it as kept: a room id or alias for Matrix, an
/// `http(s)` URL with a host and no credentials for the others. Whether the URL's address may
/// be called is the outbound policy's to say.
pub fn check_target(kind: ChannelKind, target: &str) -> Result<String, String> {
    let target = target.trim();
    if target.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err("target: must not contain spaces or control characters".into());
    }
    match kind {
        ChannelKind::Matrix => check_room(target),
        ChannelKind::Telegram => check_chat(target),
        ChannelKind::Discord => check_snowflake(target),
        _ if is_channel_id(kind, target) => Ok(target.to_string()),
        _ => check_url(target).map(|_| target.to_string()),
    }
}

/// Whether a Slack or Mattermost target is a channel's id, posted to by the install's app or
/// bot (and its messages then edited as the incident moves), rather than an incoming webhook:
/// Slack's `C0123ABCD` (`C`, `G` or `D` and 8 to 12 capitals and digits), Mattermost's 26
/// lower-case letters and digits.
pub fn is_channel_id(kind: ChannelKind, target: &str) -> bool {
    let b = target.as_bytes();
    match kind {
        ChannelKind::Slack => {
            (9..=13).contains(&b.len())
                && matches!(b[0], b'C' | b'G' | b'D')
                && b[1..]
                    .iter()
                    .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit())
        }
        ChannelKind::Mattermost => {
            b.len() == 26
                && b.iter()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
        }
        _ => false,
    }
}

/// A Discord channel's id (a snowflake: 17 to 20 digits).
fn check_snowflake(id: &str) -> Result<String, String> {
    if (17..=20).contains(&id.len()) && id.bytes().all(|b| b.is_ascii_digit()) {
        Ok(id.to_string())
    } else {
        Err("target: a Discord channel id (17 to 20 digits: Copy Channel ID)".into())
    }
}

/// A Telegram chat: its numeric id (`-1001234567890`) or a public channel's `@username`.
fn check_chat(chat: &str) -> Result<String, String> {
    let id = chat.strip_prefix('-').unwrap_or(chat);
    let numeric = !id.is_empty() && id.len() <= 20 && id.bytes().all(|b| b.is_ascii_digit());
    let name = chat.strip_prefix('@').is_some_and(|n| {
        (5..=32).contains(&n.len()) && n.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
    });
    if numeric || name {
        Ok(chat.to_string())
    } else {
        Err("target: a Telegram chat id (-1001234567890) or a channel's @username".into())
    }
}

fn check_room(room: &str) -> Result<String, String> {
    const WHY: &str =
        "target: a Matrix room id (!abc:example.org) or alias (#ops:example.org), at most 255 bytes";
    if room.len() < 2 || room.len() > MAX_ROOM {
        return Err(WHY.into());
    }
    match room.as_bytes()[0] {
        b'!' => Ok(room.to_string()),
        b'#' if room
            .split_once(':')
            .is_some_and(|(l, s)| l.len() > 1 && !s.is_empty()) =>
        {
            Ok(room.to_string())
        }
        _ => Err(WHY.into()),
    }
}

/// `scheme://host[:port]` of a webhook URL, else why it is not one.
pub fn check_url(url: &str) -> Result<String, String> {
    const WHY: &str = "target: must be an http or https URL with a host and no user name";
    if url.len() > MAX_URL {
        return Err(format!("target: must be at most {MAX_URL} bytes"));
    }
    let (scheme, rest) = url.split_once("://").ok_or(WHY)?;
    let scheme = scheme.to_ascii_lowercase();
    if scheme != "http" && scheme != "https" {
        return Err(WHY.into());
    }
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    if authority.is_empty() || authority.contains('@') || authority.starts_with(':') {
        return Err(WHY.into());
    }
    Ok(format!("{scheme}://{}", authority.to_ascii_lowercase()))
}

/// What a listing shows of a target: a Matrix room as it is, a URL's origin only.
pub fn shown_target(kind: ChannelKind, target: &str) -> String {
    match kind {
        ChannelKind::Matrix | ChannelKind::Telegram | ChannelKind::Discord => target.to_string(),
        _ if is_channel_id(kind, target) => target.to_string(),
        _ => check_url(target).unwrap_or_else(|_| "(not a URL)".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_default_to_all_and_severities_to_none_named() {
        assert_eq!(normalize_events(None).unwrap(), ChannelEvent::ALL.to_vec());
        assert!(normalize_events(Some(vec![])).is_err());
        assert_eq!(
            normalize_events(Some(vec![
                ChannelEvent::Resolved,
                ChannelEvent::Opened,
                ChannelEvent::Opened
            ]))
            .unwrap(),
            vec![ChannelEvent::Opened, ChannelEvent::Resolved]
        );
        assert!(normalize_events(Some(vec![ChannelEvent::Opened; 7])).is_err());
        assert_eq!(normalize_severities(None).unwrap(), vec![]);
        assert_eq!(
            normalize_severities(Some(vec![Severity::Critical, Severity::Info])).unwrap(),
            vec![Severity::Info, Severity::Critical]
        );
        assert_eq!(
            normalize_severities(Some(Severity::ALL.to_vec())).unwrap(),
            vec![]
        );
        assert!(normalize_severities(Some(vec![Severity::Info; 4])).is_err());
        let column = join_words(
            &[ChannelEvent::Opened, ChannelEvent::ResolutionNote],
            ChannelEvent::as_str,
        );
        assert_eq!(column, "opened,resolution_note");
        assert_eq!(
            split_words(&column, ChannelEvent::parse),
            vec![ChannelEvent::Opened, ChannelEvent::ResolutionNote]
        );
        assert_eq!(split_words("", Severity::parse), vec![]);
    }

    #[test]
    fn slack_and_mattermost_take_a_channel_id_or_a_webhook() {
        for id in ["C0123ABCD", "G01234567890"] {
            assert_eq!(check_target(ChannelKind::Slack, id).unwrap(), id);
            assert_eq!(shown_target(ChannelKind::Slack, id), id);
        }
        for bad in ["c0123abcd", "C01", "X0123ABCD", "C0123ABCD-"] {
            assert!(check_target(ChannelKind::Slack, bad).is_err(), "{bad}");
        }
        let mm = "4xp9fdt77pncbef59f4k1qe83o";
        assert_eq!(check_target(ChannelKind::Mattermost, mm).unwrap(), mm);
        assert!(check_target(ChannelKind::Mattermost, &mm.to_uppercase()).is_err());
        assert!(!is_channel_id(ChannelKind::Teams, "C0123ABCD"));
        assert!(check_target(ChannelKind::Teams, "C0123ABCD").is_err());
    }

    #[test]
    fn targets_are_checked_for_their_kind() {
        let slack = "https://hooks.slack.com/services/T000/B000/XXXX";
        assert_eq!(check_target(ChannelKind::Slack, slack).unwrap(), slack);
        assert_eq!(
            shown_target(ChannelKind::Slack, slack),
            "https://hooks.slack.com"
        );
        assert_eq!(
            shown_target(
                ChannelKind::Webhook,
                "http://Gateway.Example:8080/sms?key=1"
            ),
            "http://gateway.example:8080"
        );
        for bad in [
            "ftp://x.example/hook",
            "https://user:pw@x.example/hook",
            "https:///nohost",
            "hooks.slack.com/services/x",
            "https://x.example/a b",
        ] {
            assert!(check_target(ChannelKind::Webhook, bad).is_err(), "{bad}");
        }
        assert!(check_target(
            ChannelKind::Teams,
            &format!("https://x.example/{}", "a".repeat(2048))
        )
        .is_err());
        for room in [
            "!abc:example.org",
            "!Nwn3VZG5Rd1K6hxHg0H3nx9OI5S3B1xHIzzzGSKXPHM",
            "#ops:example.org",
        ] {
            assert_eq!(check_target(ChannelKind::Matrix, room).unwrap(), room);
        }
        for bad in ["ops", "#ops", "#:x", "@alice:example.org", "!"] {
            assert!(check_target(ChannelKind::Matrix, bad).is_err(), "{bad}");
        }
        assert!(check_target(ChannelKind::Matrix, &format!("!{}", "a".repeat(255))).is_err());
        for chat in ["-1001234567890", "42", "@klaxon_ops"] {
            assert_eq!(check_target(ChannelKind::Telegram, chat).unwrap(), chat);
        }
        assert!(check_target(ChannelKind::Discord, "1234567890123456789").is_ok());
        assert!(check_target(ChannelKind::Discord, "#ops").is_err());
        for bad in ["", "-", "@ab", "ops", "https://t.me/ops", "@a-b-c-d"] {
            assert!(check_target(ChannelKind::Telegram, bad).is_err(), "{bad}");
        }
    }
}
