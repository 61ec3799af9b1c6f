//! Alertmanager silences made from an incident: which matchers, for how long, and how Klaxon
//! signs in to the Alertmanager an integration names.

use crate::text::Secret;
use crate::{Duration, Timestamp};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Silences last from five minutes to thirty days.
pub const SILENCE_MIN: Duration = Duration::minutes(5);
pub const SILENCE_MAX: Duration = Duration::days(30);
/// Longest Alertmanager base URL, and longest credential part.
pub const MAX_URL: usize = 500;
pub const MAX_SECRET: usize = 1_000;

/// One equality matcher (`name="value"`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Matcher {
    pub name: String,
    pub value: String,
}

/// A silence an incident made and that has not ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Silence {
    /// Alertmanager's id of the silence.
    pub silence_id: String,
    pub ends_at: Timestamp,
    pub matchers: Vec<Matcher>,
}

/// `GET /api/incidents/{id}/silence`: what a silence made now would match, whether one can be
/// made, and the one in force.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct SilencePreview {
    /// The matchers a silence would get; empty when none can be built.
    pub matchers: Vec<Matcher>,
    /// Why no silence can be made, when none can (no Alertmanager URL, no shared alertname).
    pub unavailable: Option<String>,
    pub active: Option<Silence>,
}

/// How Klaxon signs in to an Alertmanager. Stored, used, never shown back.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(tag = "type", rename_all = "lowercase", deny_unknown_fields)]
pub enum AlertmanagerAuth {
    /// HTTP basic authentication (Alertmanager's own `basic_auth_users`).
    Basic {
        /// 1–1000 characters, no colon or control characters.
        #[cfg_attr(
            feature = "openapi",
            schema(
                min_length = 1,
                max_length = 1000,
                pattern = "^[^:\\x00-\\x1f\\x7f-\\x9f]+$"
            )
        )]
        username: String,
        password: Secret,
    },
    /// A bearer token, for an Alertmanager behind an authenticating proxy.
    Bearer { token: Secret },
}

impl AlertmanagerAuth {
    pub fn validate(&self) -> Result<(), String> {
        let part = |field: &str, v: &str| {
            if v.is_empty() || v.chars().count() > MAX_SECRET || v.chars().any(char::is_control) {
                Err(format!(
                    "alertmanager_auth.{field} must be 1 to {MAX_SECRET} characters without control characters"
                ))
            } else {
                Ok(())
            }
        };
        match self {
            AlertmanagerAuth::Basic { username, .. } => {
                part("username", username)?;
                if username.contains(':') {
                    return Err("alertmanager_auth.username must not contain a colon".into());
                }
                Ok(())
            }
            // The password and the token were checked as they were read.
            AlertmanagerAuth::Bearer { .. } => Ok(()),
        }
    }
}

/// An Alertmanager base URL as stored: http or https, a host, no credentials, query or
/// fragment, no trailing slash (the API paths are appended to it).
pub fn alertmanager_url(raw: &str) -> Result<String, String> {
    let raw = raw.trim();
    let bad = || {
        Err(format!(
            "alertmanager_url must be an http or https URL of at most {MAX_URL} characters, \
             without credentials, query or fragment, such as http://alertmanager:9093"
        ))
    };
    if raw.len() > MAX_URL || raw.chars().any(|c| c.is_control() || c.is_whitespace()) {
        return bad();
    }
    let Some((scheme, rest)) = raw.split_once("://") else {
        return bad();
    };
    let host = rest.split('/').next().unwrap_or_default();
    if !matches!(scheme.to_ascii_lowercase().as_str(), "http" | "https")
        || host.is_empty()
        || host.contains('@')
        || rest.contains(['?', '#'])
    {
        return bad();
    }
    Ok(raw.trim_end_matches('/').to_string())
}

/// The equality matchers every one of `alerts` (their label sets) carries with the same
/// value. `alertname` must be among them: without it the silence would reach far beyond the
/// incident (and an empty set would silence everything).
pub fn shared_matchers(alerts: &[BTreeMap<String, String>]) -> Result<Vec<Matcher>, String> {
    let Some((first, rest)) = alerts.split_first() else {
        return Err("the incident has no alerts to silence".into());
    };
    let matchers: Vec<Matcher> = first
        .iter()
        .filter(|(name, value)| {
            !value.is_empty() && rest.iter().all(|a| a.get(*name) == Some(*value))
        })
        .map(|(name, value)| Matcher {
            name: name.clone(),
            value: value.clone(),
        })
        .collect();
    if !matchers.iter().any(|m| m.name == "alertname") {
        return Err(
            "the incident's alerts share no alertname, so a silence would match far more than \
             this incident; silence them in Alertmanager one by one"
                .into(),
        );
    }
    Ok(matchers)
}

/// `name="value", …` for the timeline.
pub fn describe(matchers: &[Matcher]) -> String {
    matchers
        .iter()
        .map(|m| format!("{}=\"{}\"", m.name, m.value))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn matchers_are_the_labels_all_alerts_share() {
        let a = labels(&[
            ("alertname", "DiskFull"),
            ("instance", "db-1"),
            ("job", "node"),
        ]);
        let b = labels(&[
            ("alertname", "DiskFull"),
            ("instance", "db-2"),
            ("job", "node"),
        ]);
        let m = shared_matchers(&[a, b]).unwrap();
        assert_eq!(describe(&m), "alertname=\"DiskFull\", job=\"node\"");
    }

    #[test]
    fn no_shared_alertname_or_no_alerts_is_refused() {
        let a = labels(&[("alertname", "A"), ("job", "node")]);
        let b = labels(&[("alertname", "B"), ("job", "node")]);
        assert!(shared_matchers(&[a, b]).is_err());
        assert!(shared_matchers(&[]).is_err());
        assert!(shared_matchers(&[labels(&[("job", "node")])]).is_err());
    }

    #[test]
    fn urls_are_http_without_credentials() {
        assert_eq!(
            alertmanager_url(" http://am:9093/ ").unwrap(),
            "http://am:9093"
        );
        assert_eq!(
            alertmanager_url("https://ops.example/alertmanager").unwrap(),
            "https://ops.example/alertmanager"
        );
        for bad in [
            "",
            "am:9093",
            "ftp://am",
            "http://",
            "http://u:p@am",
            "http://am/?x=1",
            "http://am/#x",
            "http://a m",
        ] {
            assert!(alertmanager_url(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn credentials_are_bounded() {
        let ok = AlertmanagerAuth::Basic {
            username: "klaxon".into(),
            password: Secret::parse("s3cret").unwrap(),
        };
        assert!(ok.validate().is_ok());
        let colon = AlertmanagerAuth::Basic {
            username: "a:b".into(),
            password: Secret::parse("x").unwrap(),
        };
        assert!(colon.validate().is_err());
        assert!(
            serde_json::from_str::<AlertmanagerAuth>(r#"{"type":"bearer","token":""}"#).is_err()
        );
    }
}
