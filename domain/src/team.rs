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
    /// At most 50 groups, each 1 to 256 characters without control characters.
    #[cfg_attr(
        feature = "openapi",
        schema(
            max_items = 50,
            min_length = 1,
            max_length = 256,
            pattern = "^[^\\x00-\\x1f\\x7f-\\x9f]*[^\\s\\x00-\\x1f\\x7f-\\x9f][^\\x00-\\x1f\\x7f-\\x9f]*$"
        )
    )]
    pub member_groups: Vec<String>,
    #[serde(default)]
    /// At most 50 groups, each 1 to 256 characters without control characters.
    #[cfg_attr(
        feature = "openapi",
        schema(
            max_items = 50,
            min_length = 1,
            max_length = 256,
            pattern = "^[^\\x00-\\x1f\\x7f-\\x9f]*[^\\s\\x00-\\x1f\\x7f-\\x9f][^\\x00-\\x1f\\x7f-\\x9f]*$"
        )
    )]
    pub owner_groups: Vec<String>,
}

/// Groups per role in a mapping.
pub const MAX_GROUPS: usize = 50;

impl OidcMapping {
    /// Each group 1–256 characters without control characters, at most `MAX_GROUPS` per role,
    /// trimmed and without repeats.
    pub fn validate(&self) -> Result<OidcMapping, String> {
        let clean = |field: &str, groups: &[String]| -> Result<Vec<String>, String> {
            if groups.len() > MAX_GROUPS {
                return Err(format!("{field} holds at most {MAX_GROUPS} groups"));
            }
            let mut out: Vec<String> = Vec::with_capacity(groups.len());
            for g in groups {
                let g = g.trim();
                if g.is_empty() || g.chars().count() > 256 || g.chars().any(char::is_control) {
                    return Err(format!(
                        "{field}: each group is 1 to 256 characters without control characters"
                    ));
                }
                if !out.iter().any(|o| o == g) {
                    out.push(g.to_string());
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
