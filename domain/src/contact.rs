//! A person's contact methods: the roads a page takes to them (an ntfy topic, a browser's Web Push
//! subscription, an email address, a Matrix account, a signed webhook), each checked here once
//! for the server and the phone app.

use crate::text::{Email, Label, MatrixUser, PhoneNumber, Topic};
use crate::Timestamp;
use base64::Engine;
use serde::{Deserialize, Serialize};

/// At most this many methods a person.
pub const MAX_METHODS: usize = 20;
/// A verification code is refused after this many wrong guesses; a new one must be sent.
pub const CODE_ATTEMPTS: i64 = 5;
/// A verification code lives this long (seconds).
pub const CODE_TTL: i64 = 15 * 60;
/// A new code is sent at most once a minute for a method.
pub const CODE_RESEND_AFTER: i64 = 60;
/// Digits in a verification code.
pub const CODE_DIGITS: usize = 6;
/// The longest push endpoint accepted (bytes); push services' URLs are a few hundred.
pub const MAX_ENDPOINT: usize = 2048;

/// What kind of road a method is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub enum ContactKind {
    Ntfy,
    Webpush,
    Email,
    Matrix,
    Webhook,
    Sms,
    Voice,
    /// A person's private chat with the install's Telegram bot, made by linking their account.
    Telegram,
}

crate::words!(ContactKind, "contact method kind" {
    Ntfy => "ntfy",
    Webpush => "webpush",
    Email => "email",
    Matrix => "matrix",
    Webhook => "webhook",
    Sms => "sms",
    Voice => "voice",
    Telegram => "telegram",
});

/// A road a person can have, as the profile shows it. Its words come from the server's roads,
/// so a new road needs no change to the app.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RoadWords {
    pub kind: ContactKind,
    /// Beside a method in the list ("ntfy topic").
    pub listed_as: String,
    /// The label of a waiting method's code field ("Code from the email").
    pub code_from: String,
    /// The form that adds one here; `None` when this server cannot send its code or one is
    /// added another way (Web Push: "Page this phone").
    pub form: Option<AddForm>,
}

/// The profile's form that adds one road.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AddForm {
    /// The new method's name ("Matrix").
    pub name: String,
    /// The field's label ("Matrix account").
    pub field: String,
    /// The field's type: `text`, `url` or `email`.
    pub input: String,
    pub placeholder: String,
    /// What happens next, under the field.
    pub hint: String,
    pub button: String,
    /// Folded under this summary: a road few people add.
    pub folded: Option<String>,
}

/// One of a person's contact methods, as listed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ContactMethod {
    pub id: i64,
    pub user_id: i64,
    pub kind: ContactKind,
    pub name: String,
    /// The topic, the address or the Matrix user id; for Web Push the push service's origin and
    /// for a webhook its URL's origin: an endpoint or a URL can be a capability and is never
    /// shown again.
    pub target: String,
    /// Only a verified method is paged. An email address, a Matrix account and a webhook are
    /// verified by the code sent by that road; a topic and a subscription when added.
    pub verified: bool,
    pub created_at: Timestamp,
    /// Only in the answer that added a webhook: the secret its requests are signed with
    /// (`Klaxon-Signature`, as a team channel's webhook). It is never shown again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signing_secret: Option<String>,
}

/// Where one page goes. Its key is what the outbox's `topic` column holds (which orders a
/// destination's pages and holds its backoff): an ntfy topic as itself (the push topic, a team's
/// fallback topic or an ntfy method's), another road as `kind:method_id`; the row's `road` and
/// `method_id` columns name it typed. ntfy topics have no `:`, so the two never meet.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Destination {
    Ntfy(String),
    /// One of a person's contact methods of any other road.
    Method(ContactKind, i64),
}

impl Destination {
    pub fn parse(stored: &str) -> Destination {
        let method = stored.split_once(':').and_then(|(kind, id)| {
            let kind = ContactKind::parse(kind).filter(|k| *k != ContactKind::Ntfy)?;
            Some(Destination::Method(kind, id.parse::<i64>().ok()?))
        });
        method.unwrap_or_else(|| Destination::Ntfy(stored.to_string()))
    }

    /// The road of one of a person's methods.
    pub fn of_method(kind: ContactKind, id: i64, target: &str) -> Destination {
        match kind {
            ContactKind::Ntfy => Destination::Ntfy(target.to_string()),
            kind => Destination::Method(kind, id),
        }
    }

    pub fn kind(&self) -> ContactKind {
        match self {
            Destination::Ntfy(_) => ContactKind::Ntfy,
            Destination::Method(kind, _) => *kind,
        }
    }

    /// The contact method it names, for a road that is not an ntfy topic.
    pub fn method_id(&self) -> Option<i64> {
        match self {
            Destination::Ntfy(_) => None,
            Destination::Method(_, id) => Some(*id),
        }
    }
}

impl std::fmt::Display for Destination {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Destination::Ntfy(topic) => f.write_str(topic),
            Destination::Method(kind, id) => write!(f, "{}:{id}", kind.as_str()),
        }
    }
}

/// A browser's push subscription as `PushSubscription.toJSON()` gives it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct PushSubscription {
    /// The push service's URL for this subscription: `https` (plain `http` only to a loopback
    /// address), at most 2048 bytes.
    #[cfg_attr(feature = "openapi", schema(min_length = 8, max_length = 2048))]
    pub endpoint: String,
    pub keys: PushKeys,
}

/// The subscription's keys (RFC 8291), base64url as browsers give them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct PushKeys {
    /// The browser's P-256 public key, uncompressed (65 bytes; 87 characters unpadded).
    #[cfg_attr(
        feature = "openapi",
        schema(min_length = 87, max_length = 88, pattern = "^[A-Za-z0-9_-]{87}=?$")
    )]
    pub p256dh: String,
    /// The 16-byte authentication secret (22 characters unpadded).
    #[cfg_attr(
        feature = "openapi",
        schema(min_length = 22, max_length = 24, pattern = "^[A-Za-z0-9_-]{22}(==)?$")
    )]
    pub auth: String,
}

/// The road of a new method, named by `kind`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub enum Road {
    Ntfy {
        topic: Topic,
    },
    Webpush {
        subscription: PushSubscription,
    },
    Email {
        address: Email,
    },
    /// The bot opens a direct room with the account and invites it; pages are posted there.
    Matrix {
        user: MatrixUser,
    },
    /// Pages are posted to the URL as signed JSON (`WebhookPage`).
    Webhook {
        #[cfg_attr(
            feature = "openapi",
            schema(
                min_length = 10,
                max_length = 2048,
                pattern = "^ *[Hh][Tt][Tt][Pp][Ss]?://[!\"$-.0-9;->A-~][!\"$-.0->A-~]*([/?#][!-~]*)? *$"
            )
        )]
        url: String,
    },
    /// Pages are texted to the number, with reply codes that act on them.
    Sms {
        number: PhoneNumber,
        /// The install's provider to text by (`twilio`, `sms-gateway`); its default when absent.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        provider: Option<String>,
    },
    /// Pages ring the number and are read out, with keypresses that act on them.
    Voice {
        number: PhoneNumber,
        /// The install's provider to call by (`twilio`); its default when absent.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        provider: Option<String>,
    },
}

/// `POST /api/users/{id}/contact-methods`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct NewContactMethod {
    pub name: Label,
    #[serde(flatten)]
    pub road: Road,
}

/// `POST /api/users/{id}/contact-methods/{method_id}/verify`: the code sent to the address.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct VerifyCode {
    /// The six digits, spaces allowed.
    #[cfg_attr(
        feature = "openapi",
        schema(min_length = 6, max_length = 20, pattern = "^[0-9 ]+$")
    )]
    pub code: String,
}

/// What a person's webhook receives, version 1, signed as a team channel's webhook is
/// (`Klaxon-Signature`, `Klaxon-Delivery`) with `Klaxon-Event` the `event` word: `page` for a
/// page (its `kind` says which), `verify` for the code that verifies the method, `test` for a
/// test. An SMS gateway forwards `title` and `acknowledge_url`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct PersonalWebhook {
    /// 1.
    pub version: i64,
    /// `page`, `verify` or `test`.
    pub event: String,
    /// For a page: `opening`, `reminder`, `escalation`, `fallback`, `all_clear`, `handoff`, or
    /// `summary` for several pages in one.
    pub kind: Option<String>,
    /// The person paged (their username).
    pub to: String,
    pub title: String,
    pub message: String,
    /// The incident (or the page of the person's roads) in the app.
    pub url: Option<String>,
    /// For a page that wants an owner: a confirmation page a person opens (a GET never acts).
    pub acknowledge_url: Option<String>,
    /// The same acknowledgement for a program: `POST` it, no session needed, while the page is
    /// current.
    pub acknowledge_post_url: Option<String>,
    /// The six-digit code, for `verify` only.
    pub code: Option<String>,
    pub at: Timestamp,
}

/// A webhook method's URL as kept: printable ASCII, `http(s)` with a host and no user name, at
/// most 2048 characters with the spaces around it (dropped), as the schema's pattern says.
/// Whether its address may be called is the outbound policy's to say, when it is.
pub fn webhook_url(raw: &str) -> Result<String, String> {
    const WHY: &str =
        "url: must be an http or https URL of printable ASCII with a host and no user name, at most 2048 characters";
    let url = raw.trim_matches(' ');
    if raw.chars().count() > crate::channel::MAX_URL
        || !url.bytes().all(|b| (0x21..=0x7e).contains(&b))
    {
        return Err(WHY.into());
    }
    crate::channel::check_url(url).map_err(|_| WHY.to_string())?;
    Ok(url.to_string())
}

/// A subscription whose endpoint and keys have been checked: the decoded keys beside it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckedSubscription {
    pub endpoint: String,
    /// The push service's origin (`https://host[:port]`), what a listing shows.
    pub origin: String,
    pub p256dh: [u8; 65],
    pub auth: [u8; 16],
}

impl Road {
    pub fn kind(&self) -> ContactKind {
        match self {
            Road::Ntfy { .. } => ContactKind::Ntfy,
            Road::Webpush { .. } => ContactKind::Webpush,
            Road::Email { .. } => ContactKind::Email,
            Road::Matrix { .. } => ContactKind::Matrix,
            Road::Webhook { .. } => ContactKind::Webhook,
            Road::Sms { .. } => ContactKind::Sms,
            Road::Voice { .. } => ContactKind::Voice,
        }
    }
}

impl PushSubscription {
    /// Checks the endpoint (an absolute `https` URL with a host, or `http` to a loopback
    /// address, no credentials, at most `MAX_ENDPOINT` bytes) and decodes the keys. Whether
    /// the endpoint's address may be called is the outbound policy's to say, when it is.
    pub fn check(&self) -> Result<CheckedSubscription, String> {
        let endpoint = self.endpoint.as_str();
        if endpoint.len() > MAX_ENDPOINT {
            return Err(format!("endpoint: must be at most {MAX_ENDPOINT} bytes"));
        }
        let origin = push_origin(endpoint)?;
        let p256dh = decode_key::<65>(&self.keys.p256dh)
            .filter(|k| k[0] == 0x04)
            .ok_or("keys.p256dh: must be an uncompressed P-256 public key (65 bytes, base64url)")?;
        let auth =
            decode_key::<16>(&self.keys.auth).ok_or("keys.auth: must be 16 bytes, base64url")?;
        Ok(CheckedSubscription {
            endpoint: endpoint.to_string(),
            origin,
            p256dh,
            auth,
        })
    }
}

/// `scheme://host[:port]` of an endpoint that may receive pushes, else why not.
pub fn push_origin(endpoint: &str) -> Result<String, String> {
    const WHY: &str = "endpoint: must be an https URL (http only to a loopback address)";
    let (scheme, rest) = endpoint.split_once("://").ok_or(WHY)?;
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    if authority.is_empty() || authority.contains('@') {
        return Err(WHY.into());
    }
    if endpoint
        .chars()
        .any(|c| c.is_whitespace() || c.is_control())
    {
        return Err("endpoint: must not contain spaces or control characters".into());
    }
    let host = match authority.strip_prefix('[') {
        Some(v6) => v6.split(']').next().unwrap_or(""),
        None => authority.rsplit_once(':').map_or(authority, |(h, _)| h),
    };
    let loopback = host.eq_ignore_ascii_case("localhost")
        || host == "::1"
        || host
            .parse::<std::net::Ipv4Addr>()
            .is_ok_and(|a| a.is_loopback());
    match scheme.to_ascii_lowercase().as_str() {
        "https" => {}
        "http" if loopback => {}
        _ => return Err(WHY.into()),
    }
    Ok(format!(
        "{}://{}",
        scheme.to_ascii_lowercase(),
        authority.to_ascii_lowercase()
    ))
}

/// base64url of exactly `N` bytes, with its padding or none (browsers differ), never with wrong
/// padding: what the schema's pattern accepts, and only that.
fn decode_key<const N: usize>(text: &str) -> Option<[u8; N]> {
    let bare = (N * 4).div_ceil(3);
    let padded = N.div_ceil(3) * 4;
    let digits = match text.len() {
        len if len == bare => text,
        len if len == padded && text.as_bytes()[bare..].iter().all(|b| *b == b'=') => {
            text.get(..bare)?
        }
        _ => return None,
    };
    base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(digits)
        .ok()?
        .try_into()
        .ok()
}

/// A verification code as typed: spaces dropped, exactly `CODE_DIGITS` digits.
pub fn normalize_code(raw: &str) -> Option<String> {
    let code: String = raw.chars().filter(|c| *c != ' ').collect();
    (code.len() == CODE_DIGITS && code.bytes().all(|b| b.is_ascii_digit())).then_some(code)
}

/// The mailbox an address reaches, as mail servers commonly deliver: case folded, quotes
/// around the local part dropped, and a `+tag` subaddress dropped. Limits per address count by
/// this, so `"Victim"@x`, `victim+1@x` and `VICTIM@x` are one address.
pub fn mailbox_key(address: &str) -> String {
    let address = address.trim().to_lowercase();
    let (local, domain) = address.rsplit_once('@').unwrap_or((&address, ""));
    let local = local.trim_matches('"');
    let local = local.split('+').next().unwrap_or(local);
    format!("{local}@{domain}")
}

#[cfg(test)]
mod tests;
