//! Invite links and sign-up: the link's states and wire shapes, and the bounds of a new link.

use crate::settings::SignupMode;
use crate::team::Role;
use crate::Timestamp;
use serde::{Deserialize, Serialize};

/// A link lives a fixed week.
pub const INVITE_TTL: i64 = 7 * 86_400;
pub const MAX_USES_MIN: i64 = 1;
pub const MAX_USES_MAX: i64 = 100;

/// Where an invite link stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub enum InviteState {
    Usable,
    Expired,
    Revoked,
    UsedUp,
}

crate::words!(InviteState, "invite state" {
    Usable => "usable",
    Expired => "expired",
    Revoked => "revoked",
    UsedUp => "used_up",
});

impl InviteState {
    /// A revoked link says so whatever else is true of it; a used-up one before an expired one.
    pub fn derive(revoked: bool, uses: i64, max_uses: i64, expires_at: i64, now: i64) -> Self {
        if revoked {
            InviteState::Revoked
        } else if uses >= max_uses {
            InviteState::UsedUp
        } else if expires_at <= now {
            InviteState::Expired
        } else {
            InviteState::Usable
        }
    }
}

/// An invite link as listed: never the token, which only its creation answer shows.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Invite {
    pub id: i64,
    pub team_id: i64,
    pub role: Role,
    pub max_uses: i64,
    pub uses: i64,
    pub expires_at: Timestamp,
    /// The username of the person who made it; null when a service account did.
    pub created_by: Option<String>,
    pub created_at: Timestamp,
    pub state: InviteState,
}

/// A new invite link: the token and the link are shown only here.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct NewInvite {
    #[serde(flatten)]
    pub invite: Invite,
    pub token: String,
    /// `{public_url}/signup?invite={token}`.
    pub url: String,
}

/// The team a usable link joins.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct InviteTeam {
    pub id: i64,
    pub name: String,
    pub display_name: String,
}

/// `GET /api/signup`: what the sign-up page may offer. An unusable link (expired, revoked,
/// used up, or never issued) answers exactly like no link at all.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct SignupCheck {
    pub signup_mode: SignupMode,
    pub invite_usable: bool,
    pub team: Option<InviteTeam>,
    /// The role a usable link grants.
    pub role: Option<crate::team::Role>,
}

#[cfg(test)]
mod tests {
    use super::InviteState::{self, *};

    #[test]
    fn a_link_state_names_the_first_reason_it_cannot_be_used() {
        let now = 1_000;
        #[rustfmt::skip]
        let table = [
            // revoked, uses, max uses, expires at, state
            (false, 0, 1, now + 1, Usable),
            (false, 2, 3, now + 1, Usable),
            (false, 0, 1, now, Expired),
            (false, 1, 1, now + 1, UsedUp),
            (false, 1, 1, now - 1, UsedUp),
            (true, 0, 1, now + 1, Revoked),
            (true, 1, 1, now - 1, Revoked),
        ];
        for (revoked, uses, max, expires, state) in table {
            assert_eq!(InviteState::derive(revoked, uses, max, expires, now), state);
        }
    }
}
