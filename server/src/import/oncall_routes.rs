//! An integration's routes as routing rules. OnCall (and PagerDuty's service) sends an alert to an
//! escalation chain, which the import made into a team's ladder: a route to another team's chain
//! becomes a rule sending the alert to that team. OnCall matches a route on the request itself
//! (<https://grafana.com/docs/oncall/latest/oncall-api-reference/routes/>: a Python regex searched
//! in `json.dumps(payload)`, or a Jinja template that renders `1`, `true` or `ok`), Klaxon's rules
//! on an alert's labels: for a generic webhook, its templates compute a label `oncall_route`
//! (which route matched first, OnCall's test written in Jinja) that the rules match; for other
//! kinds the routes are reported for their matchers to be written by hand.

use super::{Integration, Report, RouteTerm};
use klaxon_domain::mapping::WebhookTemplates;
use klaxon_domain::routing::RoutingRule;
use std::collections::HashMap;

/// The label a webhook's templates set to the number of the route that matched (1, 2, …).
pub const ROUTE_LABEL: &str = "oncall_route";

/// The rules for `i` of team `own`, given the team each policy went to; `templates` (a generic
/// webhook's) gain the route label when a rule needs it.
pub fn rules(
    i: &Integration,
    own: &str,
    team_of: &HashMap<String, String>,
    templates: Option<&mut WebhookTemplates>,
    report: &mut Report,
) -> Vec<RoutingRule> {
    // A route to the integration's own team needs no rule (its ladder pages), unless an earlier
    // match must hold the alert there: the label says which route matched first.
    let elsewhere = |policy: &Option<String>| {
        let team = team_of.get(policy.as_ref()?)?;
        (team != own).then(|| team.clone())
    };
    let mut rules = Vec::new();
    if i.routes.iter().any(|r| elsewhere(&r.policy).is_some()) {
        match templates {
            Some(t) => rules = labelled(i, t, &elsewhere, report),
            None => {
                for (n, r) in i.routes.iter().enumerate() {
                    let (how, term) = match &r.term {
                        RouteTerm::Regex(x) => ("regex", x),
                        RouteTerm::Jinja(x) => ("template", x),
                    };
                    report.no_equivalent.push(format!(
                        "integration \"{}\": route {} ({how} `{term}`) went to another team's chain; OnCall matched it on the whole request and Klaxon's routing rules match labels: write its matchers in the file",
                        i.name,
                        n + 1
                    ));
                }
            }
        }
    }
    if let Some(team) = elsewhere(&i.default_policy) {
        // What no route takes goes to the team of the default route's chain.
        rules.push(RoutingRule {
            team: Some(team),
            ..Default::default()
        });
    }
    rules
}

/// Routes as a label the templates compute and one rule per route to another team.
fn labelled(
    i: &Integration,
    t: &mut WebhookTemplates,
    elsewhere: &dyn Fn(&Option<String>) -> Option<String>,
    report: &mut Report,
) -> Vec<RoutingRule> {
    let mut sets = String::new();
    let mut tests = String::new();
    let mut rules = Vec::new();
    for (k, r) in i.routes.iter().enumerate() {
        let n = k + 1;
        let test = match &r.term {
            RouteTerm::Regex(x) if regex::Regex::new(x).is_err() => {
                report.no_equivalent.push(format!(
                    "integration \"{}\": route {n}'s regex `{x}` is Python's and not one Klaxon reads (look-arounds, back-references): the route was left out",
                    i.name
                ));
                continue;
            }
            RouteTerm::Regex(x) => format!("request | regex_search({})", quoted(x)),
            RouteTerm::Jinja(x) => {
                sets.push_str(&format!("{{%- set route{n} -%}}{x}{{%- endset -%}}"));
                format!("route{n} | trim | lower in [\"1\", \"true\", \"ok\"]")
            }
        };
        let word = if tests.is_empty() { "if" } else { "elif" };
        tests.push_str(&format!("{{%- {word} {test} -%}}{n}"));
        if let Some(team) = elsewhere(&r.policy) {
            rules.push(RoutingRule {
                matchers: format!("{{{ROUTE_LABEL}=\"{n}\"}}"),
                team: Some(team),
                ..Default::default()
            });
        }
    }
    if rules.is_empty() {
        return rules;
    }
    let label = format!("{{%- set request = payload | json_dumps -%}}{sets}{tests}{{%- endif -%}}");
    t.labels.insert(ROUTE_LABEL.into(), label);
    if let Err(e) = t.check_bounds() {
        t.labels.remove(ROUTE_LABEL);
        report.no_equivalent.push(format!(
            "integration \"{}\": its routes do not fit in a label template ({e}): write them as routing rules in the file",
            i.name
        ));
        return Vec::new();
    }
    report.approximated.push(format!(
        "integration \"{}\": its {} routes became a label `{ROUTE_LABEL}` its templates compute (OnCall's tests, in order) and routing rules on it; regexes run as Rust's `regex`, not Python's `re`",
        i.name,
        i.routes.len()
    ));
    rules
}

/// `s` as a Jinja string literal.
fn quoted(s: &str) -> String {
    format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""))
}
