//! Administrator-edited settings: keys, defaults and bounds, validated before anything is written.

use crate::Duration;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "config", derive(schemars::JsonSchema))]
pub enum SignupMode {
    #[default]
    InviteOnly,
    Open,
}

crate::words!(SignupMode, "sign-up mode" {
    InviteOnly => "invite_only",
    Open => "open",
});

pub const SIGNUP_MODE: &str = "signup_mode";
pub const NOTIFY_REPEAT_INTERVAL: &str = "notify_repeat_interval";
pub const STALE_AFTER: &str = "stale_after";
pub const ARCHIVE_AFTER: &str = "archive_after";

/// The bounds of one duration setting.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Bounds {
    pub min: Duration,
    pub max: Duration,
}

/// Every duration setting with its default and bounds; the one table the server and UI read.
pub const DURATION_SETTINGS: [(&str, Duration, Bounds); 3] = [
    (
        NOTIFY_REPEAT_INTERVAL,
        Duration::minutes(30),
        Bounds {
            min: Duration::minutes(1),
            max: Duration::hours(24),
        },
    ),
    (
        STALE_AFTER,
        Duration::hours(6),
        Bounds {
            min: Duration::minutes(5),
            max: Duration::days(30),
        },
    ),
    (
        ARCHIVE_AFTER,
        Duration::days(7),
        Bounds {
            min: Duration::hours(1),
            max: Duration::days(365),
        },
    ),
];

/// The current settings, as the loops and the API read them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Settings {
    pub signup_mode: SignupMode,
    pub notify_repeat_interval: Duration,
    pub stale_after: Duration,
    pub archive_after: Duration,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            signup_mode: SignupMode::InviteOnly,
            notify_repeat_interval: DURATION_SETTINGS[0].1,
            stale_after: DURATION_SETTINGS[1].1,
            archive_after: DURATION_SETTINGS[2].1,
        }
    }
}

impl Settings {
    /// Builds settings from stored rows. A missing or unparseable value falls back to its
    /// default; for `signup_mode` that default is `invite_only`, the safe choice.
    pub fn from_stored<'a>(rows: impl IntoIterator<Item = (&'a str, &'a str)>) -> Settings {
        let mut s = Settings::default();
        for (key, value) in rows {
            if key == SIGNUP_MODE {
                s.signup_mode = SignupMode::parse(value).unwrap_or_default();
            } else if let Some(d) = check_duration(key, value).ok().flatten() {
                *s.duration_mut(key) = d;
            }
        }
        s
    }

    fn duration_mut(&mut self, key: &str) -> &mut Duration {
        match key {
            NOTIFY_REPEAT_INTERVAL => &mut self.notify_repeat_interval,
            STALE_AFTER => &mut self.stale_after,
            _ => &mut self.archive_after,
        }
    }

    /// The stored text of every key.
    pub fn to_stored(&self) -> Vec<(&'static str, String)> {
        vec![
            (SIGNUP_MODE, self.signup_mode.as_str().to_string()),
            (
                NOTIFY_REPEAT_INTERVAL,
                self.notify_repeat_interval.to_string(),
            ),
            (STALE_AFTER, self.stale_after.to_string()),
            (ARCHIVE_AFTER, self.archive_after.to_string()),
        ]
    }
}

/// Whether `key` names a setting.
pub fn is_setting(key: &str) -> bool {
    key == SIGNUP_MODE || DURATION_SETTINGS.iter().any(|(k, _, _)| *k == key)
}

/// `Ok(Some(d))` for a duration key with a valid in-bounds value, `Ok(None)` for a key that
/// is not a duration setting, `Err` with what is wrong, to follow the key's name.
fn check_duration(key: &str, value: &str) -> Result<Option<Duration>, String> {
    let Some((_, _, b)) = DURATION_SETTINGS.iter().find(|(k, _, _)| *k == key) else {
        return Ok(None);
    };
    let d: Duration = value.parse().map_err(|e| format!(": {e}"))?;
    if d < b.min || d > b.max {
        return Err(format!(" must be between {} and {}", b.min, b.max));
    }
    Ok(Some(d))
}

/// A value refused: its key and what is wrong, written to follow the key's name (the API's
/// sentence) or the form's label (`form_refusal`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    pub key: String,
    pub says: String,
}

/// Every refused value of `update` and the settings it would leave.
fn refusals(
    current: &Settings,
    update: &BTreeMap<String, serde_json::Value>,
) -> (Settings, Vec<Refusal>) {
    let mut next = *current;
    // Every bad value is named at once, so a form is fixed in one go.
    let mut wrong = Vec::new();
    let mut refuse = |key: &str, says: String| {
        wrong.push(Refusal {
            key: key.to_string(),
            says,
        })
    };
    for (key, value) in update {
        let text = match value.as_str() {
            Some(text) => text,
            None if is_setting(key) => {
                refuse(key, " must be a string".into());
                continue;
            }
            None => {
                refuse("", format!("unknown setting \"{key}\""));
                continue;
            }
        };
        if key == SIGNUP_MODE {
            match SignupMode::parse(text) {
                Some(mode) => next.signup_mode = mode,
                None => refuse(key, format!(" must be invite_only or open, not \"{text}\"")),
            }
        } else {
            match check_duration(key, text) {
                Ok(Some(d)) => *next.duration_mut(key) = d,
                Ok(None) => refuse("", format!("unknown setting \"{key}\"")),
                Err(says) => refuse(key, says),
            }
        }
    }
    (next, wrong)
}

/// Validates a whole update before any of it is applied: unknown keys, wrong types and
/// out-of-bounds values are refused, each named by its key.
pub fn validate_update(
    current: &Settings,
    update: &BTreeMap<String, serde_json::Value>,
) -> Result<Settings, String> {
    match refusals(current, update) {
        (next, wrong) if wrong.is_empty() => Ok(next),
        (_, wrong) => Err(wrong
            .iter()
            .map(|r| format!("{}{}", r.key, r.says))
            .collect::<Vec<_>>()
            .join("; ")),
    }
}

/// What the settings form says of `update`'s refused values, each named by its label as the
/// form shows it; `None` when every value is good.
pub fn form_refusal(update: &BTreeMap<String, serde_json::Value>) -> Option<String> {
    let (_, wrong) = refusals(&Settings::default(), update);
    (!wrong.is_empty()).then(|| {
        wrong
            .iter()
            .map(|r| format!("“{}”{}", label(&r.key), r.says))
            .collect::<Vec<_>>()
            .join(". ")
    })
}

/// A setting as the administrators' form names it.
pub fn label(key: &str) -> &'static str {
    match key {
        SIGNUP_MODE => "Who may create an account",
        NOTIFY_REPEAT_INTERVAL => "Page again every",
        STALE_AFTER => "Expire a firing alert not heard of for",
        ARCHIVE_AFTER => "Hide resolved alerts after",
        _ => "Setting",
    }
}

/// Bounds of every duration setting, keyed by name, for `GET /api/admin/settings`.
pub fn bounds() -> BTreeMap<String, Bounds> {
    DURATION_SETTINGS
        .iter()
        .map(|(k, _, b)| (k.to_string(), *b))
        .collect()
}

/// Validates one seed value given at start (environment or flag).
pub fn validate_seed(key: &str, value: &str) -> Result<(), String> {
    if key == SIGNUP_MODE {
        return SignupMode::parse(value)
            .map(|_| ())
            .ok_or_else(|| format!("signup_mode must be invite_only or open, not \"{value}\""));
    }
    check_duration(key, value)
        .map_err(|says| format!("{key}{says}"))?
        .map(|_| ())
        .ok_or_else(|| format!("unknown setting \"{key}\""))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_bad_value_is_named_at_once() {
        let why = validate_update(
            &Settings::default(),
            &update(json!({"stale_after": "soon", "archive_after": "1s", "signup_mode": "x"})),
        )
        .unwrap_err();
        assert!(why.contains("stale_after"), "{why}");
        assert!(why.contains("archive_after"), "{why}");
        assert!(why.contains("signup_mode"), "{why}");
        assert_eq!(why.matches("; ").count(), 2, "{why}");
    }

    fn update(v: serde_json::Value) -> BTreeMap<String, serde_json::Value> {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn unparseable_signup_mode_is_invite_only() {
        let s = Settings::from_stored([(SIGNUP_MODE, "opne"), (STALE_AFTER, "2h")]);
        assert_eq!(s.signup_mode, SignupMode::InviteOnly);
        assert_eq!(s.stale_after, Duration::hours(2));
        let s = Settings::from_stored([(SIGNUP_MODE, "open")]);
        assert_eq!(s.signup_mode, SignupMode::Open);
    }

    #[test]
    fn out_of_bounds_stored_value_falls_back_to_default() {
        let s = Settings::from_stored([(NOTIFY_REPEAT_INTERVAL, "5s")]);
        assert_eq!(s.notify_repeat_interval, Duration::minutes(30));
    }

    #[test]
    fn update_is_all_or_nothing() {
        let cur = Settings::default();
        let ok = validate_update(
            &cur,
            &update(json!({"stale_after": "1h", "signup_mode": "open"})),
        )
        .unwrap();
        assert_eq!(ok.stale_after, Duration::hours(1));
        assert_eq!(ok.signup_mode, SignupMode::Open);
        for bad in [
            json!({"stale_after": "1h", "archive_after": "400d"}),
            json!({"stale_after": "1h", "nope": "1h"}),
            json!({"notify_repeat_interval": 60}),
            json!({"notify_repeat_interval": "59s"}),
            json!({"signup_mode": "closed"}),
        ] {
            assert!(
                validate_update(&cur, &update(bad.clone())).is_err(),
                "{bad}"
            );
        }
    }

    #[test]
    fn an_unknown_key_is_named_whatever_its_value() {
        let cur = Settings::default();
        for value in [json!("1h"), json!({"x": 1}), json!(null)] {
            assert_eq!(
                validate_update(&cur, &update(json!({"": value}))).unwrap_err(),
                "unknown setting \"\""
            );
        }
        assert_eq!(
            validate_update(&cur, &update(json!({"stale_after": 60}))).unwrap_err(),
            "stale_after must be a string"
        );
    }

    #[test]
    fn the_form_names_each_bad_value_by_its_label() {
        let said = form_refusal(&update(json!({
            "signup_mode": "open",
            "notify_repeat_interval": "5s",
            "stale_after": "soon",
            "archive_after": "7d",
        })))
        .unwrap();
        assert_eq!(
            said,
            "“Page again every” must be between 1m and 1d. \
             “Expire a firing alert not heard of for”: \"soon\" is not a duration like 90s, 15m, 1h30m or 7d"
        );
        assert!(!said.contains('_'), "{said}");
        let good = json!({"signup_mode": "open", "stale_after": "2h"});
        assert_eq!(form_refusal(&update(good)), None);
    }

    #[test]
    fn bounds_are_inclusive() {
        let cur = Settings::default();
        assert!(validate_update(&cur, &update(json!({"notify_repeat_interval": "1m"}))).is_ok());
        assert!(validate_update(&cur, &update(json!({"notify_repeat_interval": "24h"}))).is_ok());
        assert!(
            validate_update(&cur, &update(json!({"notify_repeat_interval": "24h1s"}))).is_err()
        );
    }
}

/// `GET /api/admin/settings`: values, bounds, and whether push and SSO are configured
/// (never their addresses or secrets).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct AdminSettings {
    pub settings: Settings,
    pub bounds: BTreeMap<String, Bounds>,
    pub push: PushStatus,
    pub oidc: OidcStatus,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct PushStatus {
    pub configured: bool,
    pub token_configured: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct OidcStatus {
    pub configured: bool,
    /// The provider answered discovery; while false, Klaxon keeps retrying.
    pub available: bool,
}
