//! Single sign-on: where a grant comes from, and why a sign-in through the provider was refused.

use serde::{Deserialize, Serialize};

/// Where a team membership or an administrator flag comes from: made by hand, or granted by
/// the identity provider's groups (then only the provider changes it, at each sign-in).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub enum GrantSource {
    #[default]
    Manual,
    Oidc,
}

crate::words!(GrantSource, "grant source" {
    Manual => "manual",
    Oidc => "oidc",
});

/// Why a browser sign-in through the provider ended back on the sign-in page
/// (`/login?sso_error=<word>`), which shows the sentence.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SsoRefusal {
    NotAllowed,
    Disabled,
    NoEmail,
    Cancelled,
    Unavailable,
    TooMany,
    Failed,
}

crate::words!(SsoRefusal, "single sign-on refusal" {
    NotAllowed => "not_allowed",
    Disabled => "disabled",
    NoEmail => "no_email",
    Cancelled => "cancelled",
    Unavailable => "unavailable",
    TooMany => "too_many",
    Failed => "failed",
});

impl SsoRefusal {
    pub fn sentence(self) -> &'static str {
        match self {
            SsoRefusal::NotAllowed => {
                "Your account at the identity provider is not in a group allowed to use Klaxon. \
                 Ask your administrator to add you."
            }
            SsoRefusal::Disabled => "This Klaxon account is disabled. Ask a Klaxon administrator.",
            SsoRefusal::NoEmail => {
                "The identity provider did not share your email address, which Klaxon needs to \
                 create your account."
            }
            SsoRefusal::Cancelled => "Sign-in was cancelled at the identity provider.",
            SsoRefusal::Unavailable => {
                "Single sign-on is unavailable: Klaxon cannot reach the identity provider right \
                 now. Try again in a minute."
            }
            SsoRefusal::TooMany => {
                "Too many sign-ins were started from your address. Wait a few minutes and try again."
            }
            SsoRefusal::Failed => {
                "Single sign-on could not be completed (the sign-in was too old, already used, or \
                 not started here). Start again from this page."
            }
        }
    }
}

/// Group names as a provider sends them: a list, or one string (some providers send a lone
/// group that way). Anything else means no groups.
pub fn groups_from_claim(claim: Option<&serde_json::Value>) -> Vec<String> {
    match claim {
        Some(serde_json::Value::Array(items)) => items
            .iter()
            .filter_map(|g| g.as_str())
            .map(str::to_string)
            .collect(),
        Some(serde_json::Value::String(g)) => vec![g.clone()],
        _ => Vec::new(),
    }
}

/// A username made from what the provider says: `preferred_username`, else the email's local
/// part, reduced to the characters usernames allow. `None` when nothing usable is left.
pub fn username_base(preferred: Option<&str>, email: Option<&str>) -> Option<String> {
    let clean = |s: &str| -> String {
        s.trim()
            .to_lowercase()
            .chars()
            .filter(|c| c.is_ascii_alphanumeric() || "._-".contains(*c))
            .take(56)
            .collect()
    };
    let from_email = || email.and_then(|e| e.split('@').next()).map(clean);
    preferred
        .map(clean)
        .filter(|u| !u.is_empty())
        .or_else(from_email)
        .filter(|u| !u.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn groups_are_a_list_or_one_string() {
        assert_eq!(groups_from_claim(Some(&json!(["a", "b", 3]))), ["a", "b"]);
        assert_eq!(groups_from_claim(Some(&json!("ops"))), ["ops"]);
        assert!(groups_from_claim(Some(&json!({"a": 1}))).is_empty());
        assert!(groups_from_claim(None).is_empty());
    }

    #[test]
    fn usernames_come_from_the_preferred_name_then_the_email() {
        assert_eq!(username_base(Some("Alice"), None).as_deref(), Some("alice"));
        assert_eq!(
            username_base(Some("  "), Some("Bob.Smith+x@example.com")).as_deref(),
            Some("bob.smithx")
        );
        assert_eq!(
            username_base(Some("名前"), Some("c@x.org")).as_deref(),
            Some("c")
        );
        assert_eq!(username_base(None, None), None);
        assert_eq!(username_base(Some("!!"), Some("@x")), None);
    }

    #[test]
    fn every_refusal_has_a_sentence() {
        for r in SsoRefusal::ALL {
            assert!(r.sentence().ends_with('.'));
        }
    }
}
