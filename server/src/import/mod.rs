//! `klaxon import oncall|pagerduty|opsgenie`: reads another paging system through its public
//! REST API and writes a Klaxon configuration file for review, with a report of what had no
//! equivalent and what was approximated. Each vendor's module reads its API into `Source`, one
//! neutral shape; `to_file` turns that into the file.

pub mod fetch;
pub mod oncall;
mod oncall_routes;
mod oncall_templates;
pub mod opsgenie;
pub mod pagerduty;
mod to_file;

pub use to_file::{to_file, Accounts};

use clap::{Args, ValueEnum};
use klaxon_domain::config::{
    AlertSourceSpec, ConfigFile, CoverSpec, EscalationLevel, EscalationSpec, EscalationTarget,
    MemberSpec, RotationSpec, TargetKind, TeamSpec,
};
use klaxon_domain::incident::IntegrationKind;
use klaxon_domain::mapping::WebhookTemplates;
use klaxon_domain::sso::username_base;
use klaxon_domain::team::Role;
use klaxon_domain::Timestamp;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::PathBuf;

#[derive(Clone, Copy, ValueEnum)]
pub enum Vendor {
    /// Grafana OnCall (public API v1).
    Oncall,
    /// PagerDuty (REST API v2).
    Pagerduty,
    /// Opsgenie (REST API v2).
    Opsgenie,
}

#[derive(Args)]
pub struct ImportArgs {
    pub vendor: Vendor,
    /// The other system's API: OnCall's URL (e.g. https://oncall.example.com), or PagerDuty's
    /// and Opsgenie's (defaults https://api.pagerduty.com, https://api.opsgenie.com).
    #[arg(long, env = "KLAXON_IMPORT_URL")]
    pub url: Option<String>,
    /// Its API token (OnCall's API key, PagerDuty's REST API key, Opsgenie's API key).
    #[arg(long, env = "KLAXON_IMPORT_TOKEN", hide_env_values = true)]
    pub token: String,
    /// Write the Klaxon file here (default: print it).
    #[arg(short, long)]
    pub output: Option<PathBuf>,
    /// Write the report here (default: standard error).
    #[arg(long)]
    pub report: Option<PathBuf>,
    /// Match people by email to this Klaxon's accounts (needs an administrator's key, who sees
    /// emails); without it, usernames are suggested from emails.
    #[arg(long, env = "KLAXON_SERVER")]
    pub server: Option<String>,
    #[arg(long, env = "KLAXON_API_KEY", hide_env_values = true)]
    pub api_key: Option<String>,
}

/// A person in the other system.
#[derive(Debug, Clone)]
pub struct User {
    pub id: String,
    pub email: String,
}

#[derive(Debug, Clone)]
pub struct Team {
    pub id: String,
    pub name: String,
    /// (user id, manages the team).
    pub members: Vec<(String, bool)>,
}

/// A rotation layer: `users` take turns of `turn_seconds` from `start`.
#[derive(Debug, Clone)]
pub struct Layer {
    pub name: String,
    pub start: i64,
    pub turn_seconds: i64,
    pub users: Vec<String>,
    /// It only covers part of each day or week (restrictions): approximated as whole days.
    pub restricted: bool,
}

#[derive(Debug, Clone)]
pub struct Override {
    pub user: String,
    pub start: i64,
    pub end: i64,
}

impl Override {
    /// The overrides of an answer's list, each `{user: {id}, <start>, <end>}` with RFC 3339
    /// times (PagerDuty's and Opsgenie's shape); one without both times is skipped.
    pub fn all_of(list: &serde_json::Value, start: &str, end: &str) -> Vec<Override> {
        list.as_array()
            .into_iter()
            .flatten()
            .filter_map(|o| {
                Some(Override {
                    user: fetch::text(&o["user"], "id"),
                    start: fetch::instant(&o[start])?,
                    end: fetch::instant(&o[end])?,
                })
            })
            .collect()
    }
}

#[derive(Debug, Clone)]
pub struct Schedule {
    pub id: String,
    pub name: String,
    pub team: Option<String>,
    pub time_zone: String,
    pub layers: Vec<Layer>,
    pub overrides: Vec<Override>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Target {
    User(String),
    Schedule(String),
    /// Something Klaxon has no equivalent for (a team, a group, a webhook): its description.
    Other(String),
}

#[derive(Debug, Clone)]
pub struct Level {
    /// How long this level waits before the next, in seconds.
    pub wait: i64,
    pub targets: Vec<Target>,
}

#[derive(Debug, Clone, Default)]
pub struct Policy {
    /// The other system's id, which its integrations' routes name.
    pub id: String,
    pub name: String,
    pub team: Option<String>,
    pub levels: Vec<Level>,
    pub repeat: u32,
}

#[derive(Debug, Clone, Default)]
pub struct Integration {
    pub name: String,
    pub team: Option<String>,
    /// The other system's word for its kind.
    pub kind: String,
    /// Its own templates, for a sender Klaxon reads as a generic webhook (OnCall's), with what
    /// they approximate.
    pub templates: Option<(WebhookTemplates, Vec<String>)>,
    /// Its routes in order, each to a policy (OnCall's); none for other vendors.
    pub routes: Vec<Route>,
    /// The policy that takes what no route matches.
    pub default_policy: Option<String>,
}

/// One of an integration's routes: what it matches, and the policy it sends to.
#[derive(Debug, Clone, PartialEq)]
pub struct Route {
    pub term: RouteTerm,
    pub policy: Option<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum RouteTerm {
    /// A regular expression searched for in the request as JSON text.
    Regex(String),
    /// A Jinja template that renders true (`1`, `true` or `ok`) when the route matches.
    Jinja(String),
}

/// What an importer read, in one shape for every vendor.
#[derive(Debug, Clone, Default)]
pub struct Source {
    pub users: Vec<User>,
    pub teams: Vec<Team>,
    pub schedules: Vec<Schedule>,
    pub policies: Vec<Policy>,
    pub integrations: Vec<Integration>,
    /// What the vendor's reader already knows it could not carry over.
    pub notes: Vec<String>,
}

/// What came of an import, for the person reviewing the file.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Report {
    /// People with no Klaxon account yet: (email, the username the file names them by).
    pub to_invite: Vec<(String, String)>,
    pub approximated: Vec<String>,
    pub no_equivalent: Vec<String>,
}

impl std::fmt::Display for Report {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(f, "# Import report")?;
        let list =
            |f: &mut std::fmt::Formatter<'_>, title: &str, items: &[String]| -> std::fmt::Result {
                writeln!(f, "\n## {title}")?;
                if items.is_empty() {
                    writeln!(f, "Nothing.")?;
                }
                for i in items {
                    writeln!(f, "- {i}")?;
                }
                Ok(())
            };
        let invites: Vec<String> = self
            .to_invite
            .iter()
            .map(|(email, name)| format!("{email}: invite them; the file names them {name}"))
            .collect();
        list(f, "People to invite before `klaxon apply`", &invites)?;
        list(f, "Approximated", &self.approximated)?;
        list(
            f,
            "No equivalent in Klaxon (not imported)",
            &self.no_equivalent,
        )
    }
}

/// The other system's API, with its token where it wants it.
pub fn api_for(vendor: Vendor, url: Option<&str>, token: &str) -> Result<fetch::Api, String> {
    match vendor {
        Vendor::Oncall => {
            let url = url.ok_or("--url is needed for Grafana OnCall (its base URL)")?;
            fetch::Api::new("Grafana OnCall", url, ("authorization", token.to_string()))
        }
        Vendor::Pagerduty => fetch::Api::new(
            "PagerDuty",
            url.unwrap_or("https://api.pagerduty.com"),
            ("authorization", format!("Token token={token}")),
        ),
        Vendor::Opsgenie => fetch::Api::new(
            "Opsgenie",
            url.unwrap_or("https://api.opsgenie.com"),
            ("authorization", format!("GenieKey {token}")),
        ),
    }
}

/// Reads the other system into `Source`.
pub async fn read(vendor: Vendor, api: &fetch::Api, now: i64) -> Result<Source, String> {
    match vendor {
        Vendor::Oncall => oncall::read(api).await,
        Vendor::Pagerduty => pagerduty::read(api, now).await,
        Vendor::Opsgenie => opsgenie::read(api, now).await,
    }
}

/// `klaxon import`.
pub async fn run(args: ImportArgs) -> Result<i32, String> {
    let now = jiff::Timestamp::now().as_second();
    let api = api_for(args.vendor, args.url.as_deref(), &args.token)?;
    let source = read(args.vendor, &api, now).await?;
    let accounts = match (&args.server, &args.api_key) {
        (Some(server), Some(key)) => klaxon_accounts(server, key).await?,
        _ => Accounts::default(),
    };
    let (file, report) = to_file(&source, &accounts, now);
    let text = crate::config_file::yaml::write(&file);
    match &args.output {
        Some(p) => {
            std::fs::write(p, text).map_err(|e| format!("cannot write {}: {e}", p.display()))?
        }
        None => print!("{text}"),
    }
    match &args.report {
        Some(p) => std::fs::write(p, report.to_string())
            .map_err(|e| format!("cannot write {}: {e}", p.display()))?,
        None => eprint!("{report}"),
    }
    Ok(0)
}

/// Klaxon's accounts, as an administrator sees them (with emails).
pub async fn klaxon_accounts(server: &str, key: &str) -> Result<Accounts, String> {
    let api = fetch::Api::new("Klaxon", server, ("authorization", format!("Bearer {key}")))?;
    let users = api.get(&api.url("/api/users")?).await?;
    let mut accounts = Accounts::default();
    for u in users.as_array().into_iter().flatten() {
        let Some(name) = u["username"].as_str() else {
            continue;
        };
        accounts.names.insert(name.to_string());
        if let Some(email) = u["email"].as_str() {
            accounts
                .by_email
                .insert(email.to_lowercase(), name.to_string());
        }
    }
    Ok(accounts)
}
