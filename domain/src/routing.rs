//! An integration's routing rules: in order, the first whose matchers hold an alert's labels
//! decides what becomes of it: sent to another team, its severity set (a team's ladder says which
//! severities page at low urgency, so this is also how urgency is set), labels added, or dropped.
//! An alert no rule matches goes to the integration's team as it came. The decision is said on
//! the alert, naming the rule.

use crate::alerting::Severity;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Most rules an integration has.
pub const MAX_RULES: usize = 50;
/// Most labels one rule adds, and the longest value.
pub const MAX_RULE_LABELS: usize = 20;
const MAX_VALUE: usize = 256;

/// One rule.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "config", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct RoutingRule {
    /// Alertmanager's matcher syntax over the alert's labels, e.g.
    /// `{service=~"db-.*", severity="critical"}`; empty matches every alert.
    #[serde(default)]
    pub matchers: String,
    /// The name of another team to page instead.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub team: Option<String>,
    /// The severity the alert takes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub severity: Option<Severity>,
    /// Labels set on the alert (replacing one of the same name).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub labels: BTreeMap<String, String>,
    /// The alert is not taken in at all.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub drop: bool,
}

impl RoutingRule {
    /// What the rule does, in a few words ("to team db, severity critical").
    pub fn says(&self) -> String {
        if self.drop {
            return "dropped".into();
        }
        let mut parts = Vec::new();
        if let Some(t) = &self.team {
            parts.push(format!("to team {t}"));
        }
        if let Some(s) = self.severity {
            parts.push(format!("severity {}", s.as_str()));
        }
        if !self.labels.is_empty() {
            let set: Vec<String> = self
                .labels
                .iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect();
            parts.push(format!("labels {}", set.join(", ")));
        }
        if parts.is_empty() {
            "kept as it came".into()
        } else {
            parts.join(", ")
        }
    }
}

/// Checks every rule's bounds (matchers are parsed where they are compiled). `Err` names the
/// rule: `rules[2].labels: …`.
pub fn check(rules: &[RoutingRule]) -> Result<(), String> {
    if rules.len() > MAX_RULES {
        return Err(format!("rules: at most {MAX_RULES}, not {}", rules.len()));
    }
    for (i, r) in rules.iter().enumerate() {
        let at = format!("rules[{i}]");
        if r.drop && (r.team.is_some() || r.severity.is_some() || !r.labels.is_empty()) {
            return Err(format!(
                "{at}: a rule that drops does nothing else (no team, severity or labels)"
            ));
        }
        if r.labels.len() > MAX_RULE_LABELS {
            return Err(format!("{at}.labels: at most {MAX_RULE_LABELS}"));
        }
        for (name, value) in &r.labels {
            if !crate::mapping::label_name(name) || name == "alertname" {
                return Err(format!(
                    "{at}.labels: `{name}` cannot be set (a label name other than alertname)"
                ));
            }
            if value.chars().count() > MAX_VALUE {
                return Err(format!(
                    "{at}.labels.{name}: at most {MAX_VALUE} characters"
                ));
            }
        }
        if r.team.as_deref().is_some_and(|t| t.trim().is_empty()) {
            return Err(format!("{at}.team: a team's name, or none"));
        }
    }
    Ok(())
}

/// What the rules decided for one alert.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Decision {
    /// The rule that matched (0-based), none when no rule did.
    pub rule: Option<usize>,
    /// The team it goes to, when another.
    pub team: Option<String>,
    pub dropped: bool,
    /// The alert's labels after the rule.
    pub labels: BTreeMap<String, String>,
    /// As said on the alert: "routing rule 2 ({severity=\"critical\"}): to team db".
    pub said: Option<String>,
}

/// `PUT …/integrations/{id}/rules`: the whole list, in order (empty removes them).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct RulesChange {
    pub rules: Vec<RoutingRule>,
}

/// `POST …/integrations/{id}/rules/simulate`: a request as the integration's sender would post
/// it, and the rules to try (the stored ones when absent).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct RulesTrial {
    #[serde(default)]
    pub rules: Option<Vec<RoutingRule>>,
    /// The body, as text (at most 64 KB).
    #[cfg_attr(feature = "openapi", schema(max_length = 65536))]
    pub sample: String,
}

/// What the rules would do with one alert of the sample.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct SimulatedAlert {
    pub fingerprint: String,
    pub alertname: Option<String>,
    /// None for a resolve or an acknowledgement naming an alert by its key: it goes where that
    /// alert is.
    pub decision: Option<Decision>,
}

#[cfg(feature = "matcher")]
pub use compiled::Rules;

#[cfg(feature = "matcher")]
mod compiled {
    use super::*;
    use crate::deadman::matcher::Matcher;

    /// Rules with their matchers parsed.
    pub struct Rules(Vec<(RoutingRule, Option<Matcher>)>);

    impl Rules {
        /// `Err` names the first rule whose matchers do not parse or that is over its bounds.
        pub fn compile(rules: &[RoutingRule]) -> Result<Rules, String> {
            check(rules)?;
            let mut out = Vec::with_capacity(rules.len());
            for (i, r) in rules.iter().enumerate() {
                let matcher = match r.matchers.trim() {
                    "" | "{}" => None,
                    m => Some(
                        Matcher::parse_any(m).map_err(|e| format!("rules[{i}].matchers: {e}"))?,
                    ),
                };
                out.push((r.clone(), matcher));
            }
            Ok(Rules(out))
        }

        /// The first rule that matches `labels` decides.
        pub fn decide(&self, labels: &BTreeMap<String, String>) -> Decision {
            let found = self
                .0
                .iter()
                .enumerate()
                .find(|(_, (_, m))| m.as_ref().is_none_or(|m| m.matches(labels)));
            let Some((i, (rule, _))) = found else {
                return Decision {
                    rule: None,
                    team: None,
                    dropped: false,
                    labels: labels.clone(),
                    said: None,
                };
            };
            let mut after = labels.clone();
            if let Some(s) = rule.severity {
                after.insert("severity".into(), s.as_str().into());
            }
            after.extend(rule.labels.clone());
            let matchers = match rule.matchers.trim() {
                "" => "every alert".to_string(),
                m => m.to_string(),
            };
            Decision {
                rule: Some(i),
                team: rule.team.clone(),
                dropped: rule.drop,
                labels: after,
                said: Some(format!(
                    "routing rule {} ({matchers}): {}",
                    i + 1,
                    rule.says()
                )),
            }
        }
    }
}

#[cfg(all(test, feature = "matcher"))]
mod tests {
    use super::*;

    fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    fn rules() -> Vec<RoutingRule> {
        vec![
            RoutingRule {
                matchers: r#"{alertname="Heartbeat"}"#.into(),
                drop: true,
                ..Default::default()
            },
            RoutingRule {
                matchers: r#"{service=~"db-.*"}"#.into(),
                team: Some("db".into()),
                severity: Some(Severity::Critical),
                labels: labels(&[("routed", "yes")]),
                ..Default::default()
            },
            RoutingRule {
                matchers: String::new(),
                severity: Some(Severity::Info),
                ..Default::default()
            },
        ]
    }

    #[test]
    fn the_first_rule_that_matches_decides_and_says_so() {
        let r = Rules::compile(&rules()).unwrap();
        let db = r.decide(&labels(&[("alertname", "Slow"), ("service", "db-main")]));
        assert_eq!(
            (db.rule, db.team.as_deref(), db.dropped),
            (Some(1), Some("db"), false)
        );
        assert_eq!(db.labels["severity"], "critical");
        assert_eq!(db.labels["routed"], "yes");
        assert_eq!(
            db.said.as_deref(),
            Some(
                r#"routing rule 2 ({service=~"db-.*"}): to team db, severity critical, labels routed=yes"#
            )
        );
        let hb = r.decide(&labels(&[
            ("alertname", "Heartbeat"),
            ("service", "db-main"),
        ]));
        assert!(hb.dropped && hb.rule == Some(0));
        let other = r.decide(&labels(&[("alertname", "Slow")]));
        assert_eq!(
            (other.rule, other.labels["severity"].as_str()),
            (Some(2), "info")
        );
        assert_eq!(
            other.said.as_deref(),
            Some("routing rule 3 (every alert): severity info")
        );
        // No rules: the alert goes as it came, and nothing is said.
        let none = Rules::compile(&[]).unwrap().decide(&labels(&[("a", "b")]));
        assert_eq!((none.rule, none.said), (None, None));
    }

    #[test]
    fn bad_rules_are_named() {
        let mut bad = rules();
        bad[1].matchers = "{service=~".into();
        let e = Rules::compile(&bad).err().unwrap();
        assert!(e.starts_with("rules[1].matchers: "), "{e}");
        let mut both = rules();
        both[0].team = Some("db".into());
        assert!(check(&both)
            .unwrap_err()
            .starts_with("rules[0]: a rule that drops"));
        let mut name = rules();
        name[2].labels.insert("alertname".into(), "x".into());
        assert!(check(&name)
            .unwrap_err()
            .starts_with("rules[2].labels: `alertname`"));
        let many = vec![RoutingRule::default(); MAX_RULES + 1];
        assert_eq!(check(&many).unwrap_err(), "rules: at most 50, not 51");
    }
}
