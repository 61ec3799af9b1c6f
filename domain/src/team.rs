//! Teams and their members.

use crate::Timestamp;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub enum Role {
    Member,
    Owner,
}

crate::words!(Role, "team role" {
    Member => "member",
    Owner => "owner",
});

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Team {
    pub id: i64,
    pub name: String,
    pub display_name: String,
    pub created_at: Timestamp,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Member {
    pub user_id: i64,
    pub username: String,
    pub role: Role,
    /// `oidc` when granted by provider groups, else `manual`.
    pub source: String,
}

/// A team as its page shows it: with whether the caller may manage it (its owners and
/// administrators), so the page offers exactly the forms the server would accept.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TeamView {
    #[serde(flatten)]
    pub team: Team,
    pub may_manage: bool,
}

/// A team as the administrator's listing shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct TeamSummary {
    #[serde(flatten)]
    pub team: Team,
    pub member_count: i64,
    pub open_incidents: i64,
}
