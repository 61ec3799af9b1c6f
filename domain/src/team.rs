//! Teams and their members.

use crate::text::GroupName;
use crate::Timestamp;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "config", derive(schemars::JsonSchema))]
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
    pub oidc: OidcMapping,
    pub created_at: Timestamp,
}

/// Which single sign-on groups make someone a member or an owner of the team (read at each
/// sign-in by the single sign-on flow).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct OidcMapping {
    #[serde(default)]
    /// At most 50 groups.
    #[cfg_attr(feature = "openapi", schema(max_items = 50))]
    pub member_groups: Vec<GroupName>,
    #[serde(default)]
    /// At most 50 groups.
    #[cfg_attr(feature = "openapi", schema(max_items = 50))]
    pub owner_groups: Vec<GroupName>,
}

/// Groups per role in a mapping.
pub const MAX_GROUPS: usize = 50;

impl OidcMapping {
    /// At most `MAX_GROUPS` per role, without repeats (each group was checked as it was read).
    pub fn validate(&self) -> Result<OidcMapping, String> {
        let clean = |field: &str, groups: &[GroupName]| -> Result<Vec<GroupName>, String> {
            if groups.len() > MAX_GROUPS {
                return Err(format!("{field} holds at most {MAX_GROUPS} groups"));
            }
            let mut out: Vec<GroupName> = Vec::with_capacity(groups.len());
            for g in groups {
                if !out.contains(g) {
                    out.push(g.clone());
                }
            }
            Ok(out)
        };
        Ok(OidcMapping {
            member_groups: clean("member_groups", &self.member_groups)?,
            owner_groups: clean("owner_groups", &self.owner_groups)?,
        })
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Member {
    pub user_id: i64,
    pub username: String,
    pub role: Role,
    /// `oidc` when granted by provider groups, else `manual`.
    pub source: crate::sso::GrantSource,
}

/// A team as its page shows it: with whether the caller may manage it (its owners and
/// administrators), so the page offers exactly the forms the server would accept.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TeamView {
    #[serde(flatten)]
    pub team: Team,
    pub may_manage: bool,
    /// The first coming date nobody holds the team's pager.
    pub gap: Option<crate::schedule::CoverageGap>,
    /// The kinds of channel this install can announce on (its roads' settings decide).
    #[serde(default)]
    pub channel_kinds: Vec<crate::channel::ChannelKind>,
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
