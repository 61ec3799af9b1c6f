//! Users, API keys and the signed-in user's own view.

use crate::sso::GrantSource;
use crate::team::Role;
use crate::Timestamp;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub enum AccountKind {
    Human,
    Service,
}

crate::words!(AccountKind, "account kind" {
    Human => "human",
    Service => "service",
});

/// What a service account may act on: the whole install, or one team.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub enum Scope {
    Instance,
    Team,
}

impl Scope {
    /// A service account bound to a team is team-scoped; one bound to none, instance-scoped.
    pub fn of(kind: AccountKind, team_id: Option<i64>) -> Option<Scope> {
        match (kind, team_id) {
            (AccountKind::Human, _) => None,
            (AccountKind::Service, Some(_)) => Some(Scope::Team),
            (AccountKind::Service, None) => Some(Scope::Instance),
        }
    }
}

/// A user as every API answer shows it. `is_admin` is always present.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct User {
    pub id: i64,
    pub username: String,
    pub is_admin: bool,
    pub disabled: bool,
    pub kind: AccountKind,
    /// A service account's scope; absent for people.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub scope: Option<Scope>,
    /// The team a team-scoped service account is bound to.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub team_id: Option<i64>,
    /// `oidc` while the administrator flag is granted by the identity provider's groups
    /// (only the provider changes it then), `manual` otherwise.
    pub source: GrantSource,
    /// True once the account signs in through the identity provider.
    #[serde(default)]
    pub sso: bool,
    /// Used once, to link a hand-made account at its first single sign-on. Shown only to the
    /// user and to administrators, like the push topic.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub email: Option<String>,
    /// Shown only to the user and to administrators; absent otherwise and when unset.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub push_topic: Option<String>,
    pub created_at: Timestamp,
}

/// One of the caller's teams, as listed in `GET /api/me`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct MyTeam {
    pub id: i64,
    pub name: String,
    pub display_name: String,
    pub role: Role,
    pub source: GrantSource,
}

/// `GET /api/me`: the user, their teams and per-user UI state.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Me {
    #[serde(flatten)]
    pub user: User,
    pub teams: Vec<MyTeam>,
    pub onboarding_dismissed_at: Option<Timestamp>,
    /// The person's time zone (set with their notification rules), in which the app shows
    /// times; absent when they have not set one.
    #[serde(default)]
    pub time_zone: Option<String>,
    /// When a test page last reached one of the person's roads (the first-steps card ticks it).
    #[serde(default)]
    pub test_page_at: Option<Timestamp>,
    /// The person has a road to a phone: a push topic, or a verified ntfy topic or Web Push
    /// subscription.
    #[serde(default)]
    pub pages_reach_phone: bool,
}

/// An API key as listed: never the secret, only its first characters.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ApiKeyInfo {
    pub id: i64,
    pub name: String,
    pub prefix: String,
    pub created_at: Timestamp,
    pub last_used_at: Option<Timestamp>,
}

/// A freshly minted API key: the only time the raw key is shown.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct NewApiKey {
    pub id: i64,
    pub name: String,
    pub key: String,
}

/// `POST /api/bootstrap` answer: the first administrator and a key shown once.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Bootstrapped {
    pub user: User,
    pub api_key: String,
}

/// `GET /api/auth/config`: what the sign-in page needs to know.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct AuthConfig {
    pub password_login: bool,
    /// Single sign-on is configured.
    pub oidc: bool,
    /// Configured and its provider answered discovery: the button works.
    #[serde(default)]
    pub oidc_available: bool,
    /// The provider's name for the "Sign in with …" button.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub oidc_name: Option<String>,
    pub signup_mode: crate::settings::SignupMode,
    /// True while no user exists, so the page can explain bootstrapping.
    pub needs_bootstrap: bool,
}

/// A person or service account as the administrator's console lists it, with what the console
/// may offer to change.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConsoleUser {
    pub user: User,
    /// The administrator looking at the console.
    pub you: bool,
    /// Whether the administrator flag can be granted or revoked here (not one's own, not one
    /// the identity provider grants, only humans hold it).
    pub may_change_admin: bool,
}

/// The administrator's console: users, teams and settings, read in one core call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AdminView {
    pub users: Vec<ConsoleUser>,
    pub teams: Vec<crate::team::TeamSummary>,
    pub settings: crate::settings::AdminSettings,
}

/// A team's service account with its keys (never their secrets), as the team's access page
/// lists them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServiceAccount {
    pub user: User,
    pub keys: Vec<ApiKeyInfo>,
}
