//! Dead man's switches: the death rule, the switch's wire shapes and their checks. The matcher
//! syntax itself is parsed in `matcher` (feature `matcher`, server only).

use crate::alerting::{IncidentState, Severity};
use crate::text::Label;
use crate::{Duration, Timestamp};
use serde::{Deserialize, Serialize};

pub const TIMEOUT_MIN: Duration = Duration::minutes(1);
pub const TIMEOUT_MAX: Duration = Duration::days(7);
/// Longest matcher text accepted.
pub const MATCHER_MAX: usize = 1000;
/// Switches per team: each is evaluated against every alert the team receives.
pub const MAX_SWITCHES: i64 = 50;
/// The label whose values get a status each, so a live cluster cannot hide a dead one.
pub const CLUSTER_LABEL: &str = "cluster";

/// Derived from the heartbeats: `Dormant` until a heartbeat has ever been seen (a switch made
/// before its alert is routed here must not page), then `Healthy` or `Dead`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub enum SwitchStatus {
    Healthy,
    Dead,
    Dormant,
}

/// The death rule, used by the sweeper to open incidents and by the list to show status:
/// a source is dead once `timeout` has passed since its last heartbeat (at exactly
/// `timeout` of silence it is already dead), or when it reported a failure (a heartbeat URL's
/// `/fail`) that no heartbeat followed.
pub fn status(
    last_heartbeat: Option<i64>,
    failed: bool,
    timeout: Duration,
    now: i64,
) -> SwitchStatus {
    match last_heartbeat {
        _ if failed => SwitchStatus::Dead,
        None => SwitchStatus::Dormant,
        Some(t) if now - t >= timeout.as_secs() => SwitchStatus::Dead,
        Some(_) => SwitchStatus::Healthy,
    }
}

/// A switch is dead when any of its sources is, so one live cluster never hides a dead one.
pub fn overall(sources: impl IntoIterator<Item = SwitchStatus>) -> SwitchStatus {
    sources
        .into_iter()
        .fold(SwitchStatus::Dormant, |acc, s| match (acc, s) {
            (SwitchStatus::Dead, _) | (_, SwitchStatus::Dead) => SwitchStatus::Dead,
            (SwitchStatus::Healthy, _) | (_, SwitchStatus::Healthy) => SwitchStatus::Healthy,
            _ => SwitchStatus::Dormant,
        })
}

/// The group key of the incident a dead source opens. Part of the storage contract: incidents
/// open across an upgrade are found again by it, so its format must never change.
pub fn group_key(switch_id: i64, cluster: &str) -> String {
    if cluster.is_empty() {
        format!("deadman/{switch_id}")
    } else {
        format!("deadman/{switch_id}/{cluster}")
    }
}

/// `POST` and `PUT /api/teams/{teamID}/deadman/switches[/{switchID}]`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct SwitchSpec {
    pub name: Label,
    /// Alertmanager matcher syntax, with an `alertname` matcher: `{alertname="Watchdog"}`.
    /// Required, unless the switch is fed by `pings`; then empty or left out.
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(max_length = 1000))]
    pub matcher: String,
    /// Fed by pings to a heartbeat URL (`/api/heartbeat/{key}`, for cron jobs and backups that
    /// cannot send alerts) instead of by alerts matching `matcher`. The URL is answered once,
    /// when the switch is made or turned to pings.
    #[serde(default)]
    pub pings: bool,
    /// Silence that counts as dead, 1m to 7d.
    pub timeout: Duration,
    /// Severity of the incident a dead switch opens; `critical` when left out.
    #[serde(default = "critical")]
    pub severity: Severity,
}

fn critical() -> Severity {
    Severity::Critical
}

impl SwitchSpec {
    /// The checks that need no parser; the matcher's syntax is checked by `matcher::Matcher`.
    pub fn validate(&self) -> Result<SwitchSpec, String> {
        let matcher = self.matcher.trim();
        if self.pings && !matcher.is_empty() {
            return Err("a switch fed by pings has no matcher: leave it empty".into());
        }
        if !self.pings && matcher.is_empty() {
            return Err("matcher is required, for example {alertname=\"Watchdog\"}".into());
        }
        if matcher.len() > MATCHER_MAX {
            return Err(format!("matcher must be at most {MATCHER_MAX} characters"));
        }
        if self.timeout < TIMEOUT_MIN || self.timeout > TIMEOUT_MAX {
            return Err(format!(
                "timeout must be between {TIMEOUT_MIN} and {TIMEOUT_MAX}"
            ));
        }
        Ok(SwitchSpec {
            name: self.name.clone(),
            matcher: matcher.to_string(),
            pings: self.pings,
            timeout: self.timeout,
            severity: self.severity,
        })
    }
}

/// One source of heartbeats: a value of the `cluster` label (`None`: heartbeats without one).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ClusterHeartbeat {
    pub cluster: Option<String>,
    pub status: SwitchStatus,
    pub last_heartbeat_at: Timestamp,
}

/// The incident a switch opened last.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct SwitchIncident {
    pub id: i64,
    pub state: IncidentState,
    pub created_at: Timestamp,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct DeadmanSwitch {
    pub id: i64,
    pub team_id: i64,
    pub name: String,
    /// Empty for a switch fed by pings.
    pub matcher: String,
    /// Fed by pings to its heartbeat URL rather than by alerts.
    pub pings: bool,
    /// The heartbeat URL, in the answer that made it only (creating the switch, or turning it
    /// to pings): Klaxon keeps a hash of its key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ping_url: Option<String>,
    /// A run that pinged `/start` and has not pinged success or `/fail` since.
    #[serde(default)]
    pub running_since: Option<Timestamp>,
    /// What the last `/fail` said (its body's first 1000 characters), while no heartbeat
    /// followed it.
    #[serde(default)]
    pub failure: Option<String>,
    pub timeout: Duration,
    pub severity: Severity,
    /// `Dead` if any source is dead, else `Healthy` once any heartbeat was seen, else `Dormant`.
    pub status: SwitchStatus,
    /// The newest heartbeat of any source.
    pub last_heartbeat_at: Option<Timestamp>,
    pub last_incident: Option<SwitchIncident>,
    /// One row per `cluster` value heard, present when there is more than one source.
    pub clusters: Vec<ClusterHeartbeat>,
    pub created_at: Timestamp,
}

#[cfg(feature = "matcher")]
pub mod matcher {
    //! Alertmanager's matcher syntax, parsed by `promql-parser` (Alertmanager's `{…}` form is
    //! PromQL's label-matcher set, with the same fully anchored regular expressions).

    use promql_parser::label::{MatchOp, Matchers};
    use promql_parser::parser::{self, Expr};
    use std::collections::BTreeMap;

    const LIKE: &str = r#"like {alertname="Watchdog", cluster=~"prod-.*"}"#;

    #[derive(Debug, Clone)]
    pub struct Matcher(Matchers);

    impl Matcher {
        /// Accepts `{alertname="Watchdog", cluster=~"prod-.*"}`, braces optional; it must
        /// select on `alertname` with `=` or `=~`, so a switch never watches every alert.
        pub fn parse(raw: &str) -> Result<Matcher, String> {
            let m = Matcher::parse_any(raw)?;
            let selects_alertname =
                m.0.matchers.iter().any(|m| {
                    m.name == "alertname" && matches!(m.op, MatchOp::Equal | MatchOp::Re(_))
                });
            if !selects_alertname {
                return Err(format!(
                    "matcher must contain an alertname matcher (alertname=\"…\" or \
                     alertname=~\"…\"), {LIKE}"
                ));
            }
            Ok(m)
        }

        /// Any set of label matchers, braces optional (routing rules match on any label).
        pub fn parse_any(raw: &str) -> Result<Matcher, String> {
            let text = raw.trim();
            let braced = if text.starts_with('{') {
                text.to_string()
            } else {
                format!("{{{text}}}")
            };
            let bad = |why: String| Err(format!("matcher {why}, {LIKE}"));
            let selector = match parser::parse(&braced) {
                Ok(Expr::VectorSelector(v)) => v,
                Ok(_) => return bad("must be label matchers in braces".into()),
                Err(e) => return bad(format!("is not valid ({e})")),
            };
            if selector.name.is_some() || selector.offset.is_some() || selector.at.is_some() {
                return bad("must be label matchers in braces".into());
            }
            if !selector.matchers.or_matchers.is_empty() {
                return bad("cannot use `or`".into());
            }
            Ok(Matcher(selector.matchers))
        }

        /// Every matcher holds; a missing label counts as empty, as in Alertmanager.
        pub fn matches(&self, labels: &BTreeMap<String, String>) -> bool {
            self.0
                .matchers
                .iter()
                .all(|m| m.is_match(labels.get(&m.name).map(String::as_str).unwrap_or("")))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dead_at_exactly_the_timeout() {
        let t = Duration::minutes(10);
        assert_eq!(status(None, false, t, 1_000), SwitchStatus::Dormant);
        assert_eq!(status(Some(1_000), false, t, 1_599), SwitchStatus::Healthy);
        assert_eq!(status(Some(1_000), false, t, 1_600), SwitchStatus::Dead);
        assert_eq!(status(Some(1_000), false, t, 9_999), SwitchStatus::Dead);
    }

    #[test]
    fn a_reported_failure_is_dead_at_once() {
        let t = Duration::minutes(10);
        assert_eq!(status(Some(1_000), true, t, 1_000), SwitchStatus::Dead);
    }

    #[test]
    fn one_dead_source_makes_the_switch_dead() {
        use SwitchStatus::*;
        assert_eq!(overall([]), Dormant);
        assert_eq!(overall([Healthy, Healthy]), Healthy);
        assert_eq!(overall([Healthy, Dead, Healthy]), Dead);
        assert_eq!(overall([Dormant, Healthy]), Healthy);
    }

    #[test]
    fn group_keys_never_change() {
        assert_eq!(group_key(7, ""), "deadman/7");
        assert_eq!(group_key(7, "prod-eu"), "deadman/7/prod-eu");
    }

    #[test]
    fn spec_checks() {
        let spec = |name: &str, matcher: &str, timeout: Duration| SwitchSpec {
            name: Label::parse(name).unwrap(),
            matcher: matcher.into(),
            pings: false,
            timeout,
            severity: Severity::Critical,
        };
        let ok = spec(
            " Watchdog ",
            " {alertname=\"Watchdog\"} ",
            Duration::minutes(5),
        );
        let v = ok.validate().unwrap();
        assert_eq!(v.name.as_str(), "Watchdog");
        assert_eq!(v.matcher, "{alertname=\"Watchdog\"}");
        let blank = r#"{"name": " ", "matcher": "{alertname=\"x\"}", "timeout": "5m"}"#;
        assert!(serde_json::from_str::<SwitchSpec>(blank).is_err());
        assert!(spec("w", "  ", Duration::minutes(5))
            .validate()
            .unwrap_err()
            .contains("matcher"));
        assert!(spec("w", "{alertname=\"x\"}", Duration::seconds(59))
            .validate()
            .unwrap_err()
            .contains("timeout"));
        assert!(spec("w", "{alertname=\"x\"}", Duration::days(8))
            .validate()
            .is_err());
        let pinged = SwitchSpec {
            pings: true,
            ..spec("backup", " ", Duration::days(1))
        };
        assert_eq!(pinged.validate().unwrap().matcher, "");
        let both = SwitchSpec {
            pings: true,
            ..spec("backup", "{alertname=\"x\"}", Duration::days(1))
        };
        assert!(both.validate().unwrap_err().contains("no matcher"));
        let json: SwitchSpec =
            serde_json::from_str(r#"{"name":"w","matcher":"{alertname=\"x\"}","timeout":"10m"}"#)
                .unwrap();
        assert_eq!(json.severity, Severity::Critical);
        assert!(serde_json::from_str::<SwitchSpec>(
            r#"{"name":"w","matcher":"m","timeout":"10m","severity":"loud"}"#
        )
        .is_err());
    }

    #[cfg(feature = "matcher")]
    #[test]
    fn matchers() {
        use matcher::Matcher;
        use std::collections::BTreeMap;
        let labels = |pairs: &[(&str, &str)]| -> BTreeMap<String, String> {
            pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect()
        };
        let m = Matcher::parse(r#"{alertname="Watchdog", cluster=~"prod-.*"}"#).unwrap();
        assert!(m.matches(&labels(&[
            ("alertname", "Watchdog"),
            ("cluster", "prod-eu")
        ])));
        assert!(!m.matches(&labels(&[("alertname", "Watchdog"), ("cluster", "dev")])));
        // Regular expressions are anchored, as in Alertmanager.
        assert!(!m.matches(&labels(&[
            ("alertname", "Watchdog"),
            ("cluster", "xprod-eu")
        ])));
        assert!(!m.matches(&labels(&[("alertname", "Watchdog")])));
        // Braces are optional; a missing label is empty.
        let m = Matcher::parse(r#"alertname="Watchdog", cluster!="dev""#).unwrap();
        assert!(m.matches(&labels(&[("alertname", "Watchdog")])));
        for bad in [
            r#"{cluster="prod"}"#,
            r#"{alertname!="Watchdog"}"#,
            r#"{alertname=Watchdog}"#,
            r#"Watchdog{}"#,
            r#"{alertname="a"} + 1"#,
            r#"{alertname="a"}[5m]"#,
            r#"{alertname="a", x=~"("}"#,
            r#"{alertname="a" or b="c"}"#,
            "{",
            "}",
        ] {
            let e = Matcher::parse(bad).unwrap_err();
            assert!(e.starts_with("matcher "), "{bad}: {e}");
        }
    }

    /// Hostile text never panics the parser: every string of up to four of these pieces.
    #[cfg(feature = "matcher")]
    #[test]
    fn matcher_parser_survives_garbage() {
        let pieces = [
            "{",
            "}",
            "alertname",
            "=",
            "=~",
            "!~",
            "\"",
            "\\",
            ",",
            "(",
            ")",
            "[5m]",
            " or ",
            "x",
            "é",
            "\u{0}",
            "offset",
            "@",
            "1",
            "'",
            "`",
            ".*",
            "|",
        ];
        let n = pieces.len();
        for i in 0..n.pow(4) {
            let mut text = String::new();
            let mut k = i;
            for _ in 0..4 {
                text.push_str(pieces[k % n]);
                k /= n;
            }
            let _ = matcher::Matcher::parse(&text);
        }
    }
}
