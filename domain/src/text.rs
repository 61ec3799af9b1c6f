//! Text a person gives Klaxon, parsed once. Each type can hold only a valid value, reads itself
//! from JSON through its check (so a bad body is refused before any handler runs), and states
//! its OpenAPI schema here, once. Errors are sentences without the field's name: JSON errors
//! get the field's path in front, and forms show the sentence beside the field.

use serde::{Deserialize, Serialize};
use std::fmt;

/// Not blank and no control characters: the one statement of that rule as a pattern.
#[cfg_attr(not(feature = "openapi"), allow(dead_code))]
const NOT_BLANK_NO_CONTROL: &str =
    "^[^\\x00-\\x1f\\x7f-\\x9f]*[^\\s\\x00-\\x1f\\x7f-\\x9f][^\\x00-\\x1f\\x7f-\\x9f]*$";

macro_rules! text_type {
    ($(#[$doc:meta])* $ty:ident, $parse:path, schema($min:expr, $max:expr, $pattern:expr, $desc:literal)) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
        #[serde(try_from = "String", into = "String")]
        pub struct $ty(String);

        impl $ty {
            pub fn parse(raw: &str) -> Result<$ty, String> {
                $parse(raw).map($ty)
            }
            pub fn as_str(&self) -> &str {
                &self.0
            }
            pub fn into_string(self) -> String {
                self.0
            }
        }
        impl TryFrom<String> for $ty {
            type Error = String;
            fn try_from(s: String) -> Result<$ty, String> {
                $ty::parse(&s)
            }
        }
        impl From<$ty> for String {
            fn from(v: $ty) -> String {
                v.0
            }
        }
        impl std::ops::Deref for $ty {
            type Target = str;
            fn deref(&self) -> &str {
                &self.0
            }
        }
        impl PartialEq<str> for $ty {
            fn eq(&self, other: &str) -> bool {
                self.0 == other
            }
        }
        impl PartialEq<&str> for $ty {
            fn eq(&self, other: &&str) -> bool {
                self.0 == *other
            }
        }
        impl PartialEq<String> for $ty {
            fn eq(&self, other: &String) -> bool {
                &self.0 == other
            }
        }
        impl fmt::Display for $ty {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }
        #[cfg(feature = "openapi")]
        impl utoipa::PartialSchema for $ty {
            fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
                string_schema($min, $max, $pattern, $desc)
            }
        }
        #[cfg(feature = "openapi")]
        impl utoipa::ToSchema for $ty {}
    };
}

#[cfg(feature = "openapi")]
fn string_schema(
    min: usize,
    max: usize,
    pattern: &str,
    description: &str,
) -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
    use utoipa::openapi::schema::{ObjectBuilder, Type};
    ObjectBuilder::new()
        .schema_type(Type::String)
        .min_length((min > 0).then_some(min))
        .max_length(Some(max))
        .pattern(Some(pattern))
        .description(Some(description))
        .into()
}

text_type!(
    /// A username: case-insensitive, kept lower-case, 1–64 of `a-z 0-9 . _ @ -`.
    Username, username, schema(1, 64, "^ *[A-Za-z0-9._@-]+ *$",
        "1 to 64 of `A-Z a-z 0-9 . _ @ -`, case-insensitive (kept lower-case); spaces around it are dropped.")
);
text_type!(
    /// A team's name, its identifier: kept lower-case, 1–64 of `a-z 0-9 - _`.
    TeamName, team_name, schema(1, 64, "^ *[A-Za-z0-9_-]+ *$",
        "1 to 64 of `A-Z a-z 0-9 - _` (kept lower-case); spaces around it are dropped.")
);
text_type!(
    /// A human-readable label (display name, key name, integration or switch name): trimmed,
    /// 1–100 characters, not blank, no control characters.
    Label, label, schema(1, 100, NOT_BLANK_NO_CONTROL,
        "1 to 100 characters after trimming, no control characters.")
);
text_type!(
    /// A label that may be left blank, where blank means "use the default" (a team's display
    /// name, which falls back to its name).
    LabelOrBlank, label_or_blank, schema(0, 100, "^[^\\x00-\\x1f\\x7f-\\x9f]*$",
        "Up to 100 characters, no control characters; blank is none.")
);
text_type!(
    /// A single sign-on group's name: trimmed, 1–256 characters, no control characters.
    GroupName, group_name, schema(1, 256, NOT_BLANK_NO_CONTROL,
        "1 to 256 characters after trimming, no control characters.")
);
text_type!(
    /// A password or token Klaxon signs in with elsewhere: kept exactly as given, 1–1000
    /// characters, no control characters.
    Secret, secret, schema(1, 1000, "^[^\\x00-\\x1f\\x7f-\\x9f]+$",
        "1 to 1000 characters, no control characters.")
);
text_type!(
    /// An ntfy topic, or the empty string for none: up to 64 of `A-Z a-z 0-9 _ -`.
    Topic, topic, schema(0, 64, "^ *[A-Za-z0-9_-]* *$",
        "An ntfy topic: up to 64 of `A-Z a-z 0-9 _ -`; empty is none; spaces around it are dropped.")
);
text_type!(
    /// An email address as Klaxon keeps it: trimmed, lower-case, one `@` with text on both
    /// sides, at most 254 bytes, no spaces or control characters.
    Email, email, schema(3, 254, "^ *[^@\\s\\x00-\\x1f\\x7f-\\x9f]+@[^@\\s\\x00-\\x1f\\x7f-\\x9f]+ *$",
        "An email address, at most 254 characters; spaces around it are dropped.")
);

text_type!(
    /// An IANA time zone's name (`Europe/Berlin`, `UTC`): 1–64 of `A-Z a-z 0-9 / _ + -`, not
    /// starting with `/`, no `..`. Whether the zone exists is the server's zone database's say.
    ZoneName, zone_name, schema(1, 64, "^[A-Za-z0-9_+-][A-Za-z0-9/_+-]*$",
        "An IANA time zone name such as Europe/Berlin: 1 to 64 of `A-Z a-z 0-9 / _ + -`.")
);
text_type!(
    /// A time of day on a wall clock, `HH:MM` from 00:00 to 23:59.
    ClockTime, clock_time, schema(5, 5, "^([01][0-9]|2[0-3]):[0-5][0-9]$",
        "A time of day as HH:MM, 00:00 to 23:59.")
);

text_type!(
    /// A Matrix user id, `@localpart:server`: at most 255 bytes of printable ASCII, the
    /// localpart without `:`. Kept as given (old accounts may have capitals).
    MatrixUser, matrix_user, schema(4, 255, "^ *@[!-9;-~]+:[!-~]+ *$",
        "A Matrix user id such as @ana:example.org, at most 255 characters; spaces around it are dropped.")
);

text_type!(
    /// A phone number in international form, kept as E.164 (`+` and 8 to 15 digits): written
    /// with its `+` and country code, spaces, dots, dashes and brackets allowed between digits.
    /// Whether the number is allocated and may be called is the server's number database's say.
    PhoneNumber, phone_number, schema(9, 32, "^ *\\+[1-9][0-9 ().-]*[0-9] *$",
        "A phone number with its country code, such as +44 20 7946 0000 (E.164 once the separators are dropped).")
);

impl LabelOrBlank {
    /// The label, or `None` when blank.
    pub fn label(&self) -> Option<Label> {
        (!self.0.is_empty()).then(|| Label(self.0.clone()))
    }
}

impl Topic {
    /// The topic, or `None` for the empty string.
    pub fn get(&self) -> Option<&str> {
        (!self.0.is_empty()).then_some(self.0.as_str())
    }
    pub fn into_option(self) -> Option<String> {
        (!self.0.is_empty()).then_some(self.0)
    }
}

fn matrix_user(raw: &str) -> Result<String, String> {
    const WHY: &str = "must be a Matrix user id such as @ana:example.org, at most 255 characters";
    let id = identifier(raw);
    let printable = |s: &str| !s.is_empty() && s.bytes().all(|b| (0x21..=0x7e).contains(&b));
    match id.strip_prefix('@').and_then(|rest| rest.split_once(':')) {
        Some((local, server))
            if raw.chars().count() <= 255 && printable(local) && printable(server) =>
        {
            Ok(id.to_string())
        }
        _ => Err(WHY.into()),
    }
}

fn phone_number(raw: &str) -> Result<String, String> {
    const WHY: &str =
        "must be a phone number with its country code, such as +44 20 7946 0000 (8 to 15 digits)";
    let written = identifier(raw);
    let Some(rest) = written.strip_prefix('+') else {
        return Err(WHY.into());
    };
    if raw.chars().count() > 32
        || !rest
            .chars()
            .all(|c| c.is_ascii_digit() || " ().-".contains(c))
    {
        return Err(WHY.into());
    }
    let digits: String = rest.chars().filter(char::is_ascii_digit).collect();
    let ends = rest.starts_with(|c: char| ('1'..='9').contains(&c))
        && rest.ends_with(|c: char| c.is_ascii_digit());
    if !ends || !(8..=15).contains(&digits.len()) {
        return Err(WHY.into());
    }
    Ok(format!("+{digits}"))
}

/// Identifiers drop the spaces a phone keyboard adds around a word, and only those: the
/// schema's pattern (` *…* *`) says the same, and its length counts them.
fn identifier(raw: &str) -> &str {
    raw.trim_matches(' ')
}

/// Blank as the schema's `\s` means it (JavaScript's white space: Unicode's, and U+FEFF).
fn trim_blank(raw: &str) -> &str {
    raw.trim_matches(|c: char| c.is_whitespace() || c == '\u{feff}')
}

fn username(raw: &str) -> Result<String, String> {
    let u = identifier(raw).to_lowercase();
    if u.is_empty() || raw.len() > 64 {
        return Err("must be 1 to 64 characters".into());
    }
    if !u
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "._@-".contains(c))
    {
        return Err("may contain only letters, digits and . _ @ -".into());
    }
    Ok(u)
}

fn team_name(raw: &str) -> Result<String, String> {
    let n = identifier(raw).to_lowercase();
    if n.is_empty() || raw.len() > 64 {
        return Err("must be 1 to 64 characters".into());
    }
    if !n
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    {
        return Err("may contain only letters, digits, - and _".into());
    }
    Ok(n)
}

fn label(raw: &str) -> Result<String, String> {
    free_text(raw, 100)
}

fn label_or_blank(raw: &str) -> Result<String, String> {
    match trim_blank(raw) {
        "" if !raw.chars().any(char::is_control) => Ok(String::new()),
        _ => free_text(raw, 100),
    }
}

fn group_name(raw: &str) -> Result<String, String> {
    free_text(raw, 256)
}

fn free_text(raw: &str, max: usize) -> Result<String, String> {
    // Checked as given, before trimming, as the schema states it: a control character is
    // refused even where trimming would drop it ("\nops"), and so is a value over `max`.
    if raw.chars().any(char::is_control) {
        return Err("must not contain control characters".into());
    }
    let s = trim_blank(raw);
    if s.is_empty() || raw.chars().count() > max {
        return Err(format!("must be 1 to {max} characters"));
    }
    Ok(s.to_string())
}

fn secret(raw: &str) -> Result<String, String> {
    if raw.is_empty() || raw.chars().count() > 1000 || raw.chars().any(char::is_control) {
        return Err("must be 1 to 1000 characters without control characters".into());
    }
    Ok(raw.to_string())
}

fn topic(raw: &str) -> Result<String, String> {
    let t = identifier(raw);
    if raw.len() > 64
        || !t
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    {
        return Err("must be up to 64 letters, digits, _ or -".into());
    }
    Ok(t.to_string())
}

fn zone_name(raw: &str) -> Result<String, String> {
    let ok = !raw.is_empty()
        && raw.len() <= 64
        && !raw.starts_with('/')
        && !raw.contains("..")
        && raw
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "/_+-".contains(c));
    if ok {
        Ok(raw.to_string())
    } else {
        Err("must be an IANA time zone name such as Europe/Berlin".into())
    }
}

fn clock_time(raw: &str) -> Result<String, String> {
    let ok = matches!(raw.as_bytes(), [h1, h2, b':', m1, m2]
        if h1.is_ascii_digit() && h2.is_ascii_digit() && m1.is_ascii_digit() && m2.is_ascii_digit()
        && (h1 - b'0') * 10 + (h2 - b'0') < 24 && *m1 < b'6');
    if ok {
        Ok(raw.to_string())
    } else {
        Err("must be a time of day as HH:MM, 00:00 to 23:59".into())
    }
}

impl ClockTime {
    /// Minutes after midnight.
    pub fn minutes(&self) -> u32 {
        let b = self.0.as_bytes();
        let n = |i: usize| u32::from(b[i] - b'0');
        (n(0) * 10 + n(1)) * 60 + n(3) * 10 + n(4)
    }
}

fn email(raw: &str) -> Result<String, String> {
    let e = identifier(raw).to_lowercase();
    let ok = raw.chars().count() <= 254
        && !e
            .chars()
            .any(|c| c.is_whitespace() || c.is_control() || c == '\u{feff}')
        && matches!(e.split_once('@'), Some((local, domain)) if !local.is_empty() && !domain.is_empty() && !domain.contains('@'));
    if ok {
        Ok(e)
    } else {
        Err("must look like name@example.com (at most 254 characters)".into())
    }
}

/// Text from alerts, people and notes as chat shows it: it mentions nobody and links nowhere.
/// A zero-width space after `@` keeps `@channel`, `@here`, `@everyone`, `@room` and
/// `@someone` as written but no mention (Slack, Mattermost, Rocket.Chat, Discord, Matrix), and
/// one inside `://`, `www.` and `](` keeps URLs and Markdown links from becoming links; Slack's
/// `<…>` syntax is escaped wherever the text is mrkdwn. Only Klaxon's own links are links.
pub fn quiet(text: &str) -> String {
    text.replace('@', "@\u{200B}")
        .replace("://", ":\u{200B}//")
        .replace("www.", "www\u{200B}.")
        .replace("](", "]\u{200B}(")
}

/// Text made safe to write into HTML by hand (element content or a quoted attribute): `<`, `>`,
/// `&` and quotes escaped. Mails, Matrix messages and the few pages built outside a view use it.
pub fn escape_html(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn usernames_are_lowercased_and_checked() {
        assert_eq!(
            Username::parse(" Alice@Example.com ").unwrap().as_str(),
            "alice@example.com"
        );
        for bad in ["", "a b", &"x".repeat(65), "ünïcode", "\talice", "   "] {
            assert!(Username::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn topics_labels_and_team_names() {
        assert_eq!(Topic::parse("").unwrap().get(), None);
        assert_eq!(
            Topic::parse("alice-pager").unwrap().get(),
            Some("alice-pager")
        );
        assert!(Topic::parse("a/b").is_err());
        assert!(Label::parse("  ").is_err());
        assert!(Label::parse("bell\u{7}").is_err());
        assert_eq!(Label::parse(" Payments ").unwrap().as_str(), "Payments");
        assert!(Label::parse(&"é".repeat(101)).is_err());
        assert!(GroupName::parse(&"é".repeat(256)).is_ok());
        // As the schema's pattern says: no control character even at the ends.
        assert!(GroupName::parse("\nops").is_err());
        assert!(Label::parse("payments\t").is_err());
        assert_eq!(Label::parse("  payments ").unwrap().to_string(), "payments");
        assert_eq!(
            TeamName::parse("Payments-EU").unwrap().as_str(),
            "payments-eu"
        );
        assert!(TeamName::parse("pay ments").is_err());
        // Lengths count the spaces, as the schema's `maxLength` does.
        assert!(TeamName::parse(&format!(" {} ", "x".repeat(63))).is_err());
        assert_eq!(Topic::parse("  ").unwrap().get(), None);
        assert!(Label::parse("\u{feff}").is_err());
        assert_eq!(LabelOrBlank::parse("  ").unwrap().label(), None);
        assert_eq!(
            LabelOrBlank::parse(" Ops ").unwrap().label(),
            Label::parse("Ops").ok()
        );
        assert!(LabelOrBlank::parse("a\u{7}").is_err());
        assert_eq!(
            Email::parse(" A@B.example ").unwrap().as_str(),
            "a@b.example"
        );
        assert!(Email::parse("a@b@c").is_err());
        assert_eq!(
            MatrixUser::parse(" @ana:example.org:8448 ")
                .unwrap()
                .as_str(),
            "@ana:example.org:8448"
        );
        for bad in [
            "ana:example.org",
            "@ana",
            "@:example.org",
            "@ana:",
            "@a na:x",
            "@ana:x\u{7}",
        ] {
            assert!(MatrixUser::parse(bad).is_err(), "{bad}");
        }
        assert!(MatrixUser::parse(&format!("@{}:x", "a".repeat(253))).is_err());
    }

    #[test]
    fn json_reads_through_the_check() {
        let name: Label = serde_json::from_str("\" Payments \"").unwrap();
        assert_eq!(name.as_str(), "Payments");
        let e = serde_json::from_str::<Label>("\"\\u0007\"").unwrap_err();
        assert!(e.to_string().contains("control characters"), "{e}");
        assert_eq!(serde_json::to_string(&name).unwrap(), "\"Payments\"");
    }

    /// The schema's pattern agrees with the parser on what it refuses and accepts.
    #[cfg(feature = "openapi")]
    #[test]
    fn label_schema_states_the_rule() {
        use utoipa::PartialSchema;
        let schema = serde_json::to_value(Label::schema()).unwrap();
        assert_eq!(schema["pattern"], NOT_BLANK_NO_CONTROL);
        assert_eq!(schema["maxLength"], 100);
        assert_eq!(schema["minLength"], 1);
    }
}
