//! Who may do what, decided here and nowhere else. Operations call these checks first.

use crate::{Actor, Core, Error, Result};
use klaxon_domain::account::AccountKind;
use klaxon_domain::team::Role;

pub fn require_human(actor: &Actor) -> Result<()> {
    if actor.kind == AccountKind::Human {
        Ok(())
    } else {
        Err(Error::forbidden("this endpoint is for human accounts only"))
    }
}

pub fn require_admin(actor: &Actor) -> Result<()> {
    if actor.is_admin {
        Ok(())
    } else {
        Err(Error::forbidden("this requires an administrator"))
    }
}

/// The install's configuration as a whole (its settings, every team's set-up as a file): an
/// administrator, or an instance-scoped service account (the operator, `klaxon apply`), which
/// can already manage every team.
pub fn require_instance_config(actor: &Actor) -> Result<()> {
    if actor.is_admin || lists_every_team(actor) {
        Ok(())
    } else {
        Err(Error::forbidden(
            "this requires an administrator or an instance-scoped service account",
        ))
    }
}

/// Administrator actions on accounts are also human-only, whatever a service account's scope.
pub fn require_human_admin(actor: &Actor) -> Result<()> {
    require_human(actor)?;
    require_admin(actor)
}

/// A person's password, push topic and API keys: that person or an administrator, and never a
/// service account (whose keys are managed under `/api/service-accounts`).
pub fn require_self_or_admin(actor: &Actor, user_id: i64) -> Result<()> {
    require_human(actor)?;
    if actor.user_id == user_id || actor.is_admin {
        Ok(())
    } else {
        Err(Error::forbidden(
            "only the user themselves or an administrator may do this",
        ))
    }
}

/// A user's private fields (the push topic, whose name is all a stranger needs to read their
/// pages on a public ntfy server): shown to that user and to administrators only.
pub fn may_see_private_fields(actor: &Actor, user_id: i64) -> bool {
    actor.user_id == user_id || actor.is_admin
}

/// That an operation is open to every signed-in caller, human or service account: it takes
/// this instead of checking anything, so its signature says so.
#[derive(Debug, Clone, Copy)]
pub struct SignedIn;

/// Any authenticated actor passes.
pub fn signed_in(_: &Actor) -> SignedIn {
    SignedIn
}

/// Humans and instance-scoped service accounts may create teams; a team-scoped account may not.
pub fn require_may_create_team(actor: &Actor) -> Result<()> {
    if actor.team_scope.is_some() {
        Err(Error::forbidden(
            "a team-scoped service account cannot create teams",
        ))
    } else {
        Ok(())
    }
}

/// An instance-scoped service account (the operator) looks teams up across the install, to
/// adopt one it made before; people list the teams they are in.
pub fn lists_every_team(actor: &Actor) -> bool {
    actor.kind == AccountKind::Service && actor.team_scope.is_none()
}

/// An administrator may list every team's incidents on the incident list, teams they are not
/// in included (each of those is open to them one by one already, through `team_access`).
pub fn lists_every_teams_incidents(actor: &Actor) -> bool {
    actor.is_admin && actor.is_human()
}

/// Administrators and instance-scoped service accounts see every account in the roster; anyone
/// else sees the accounts of their own teams (`accounts::list_users`).
pub fn sees_every_account(actor: &Actor) -> bool {
    actor.is_admin || lists_every_team(actor)
}

/// The team's owner may remove anyone; a member may leave.
pub fn require_may_remove_member(actor: &Actor, access: TeamAccess, user_id: i64) -> Result<()> {
    if access.is_owner() || user_id == actor.user_id {
        Ok(())
    } else {
        Err(Error::forbidden("this requires the team's owner role"))
    }
}

/// A date's holder may offer or withdraw it; the team's owner may do it for anyone.
pub fn require_may_offer(actor: &Actor, access: TeamAccess, holder: i64) -> Result<()> {
    if access.is_owner() || holder == actor.user_id {
        Ok(())
    } else {
        Err(Error::forbidden(
            "only the date's holder or the team's owner may offer it",
        ))
    }
}

/// Giving dates to someone else, or removing a date someone else holds, is the team owner's;
/// a member gives and removes only their own (swaps are how members trade).
pub fn require_own_date_or_owner(actor: &Actor, access: TeamAccess, holder: i64) -> Result<()> {
    if access.is_owner() || holder == actor.user_id {
        Ok(())
    } else {
        Err(Error::forbidden(
            "only the team's owner may give or remove someone else's dates; offer a date to swap it",
        ))
    }
}

/// A partial-day cover is made or ended by the person covering, the person covered, or an
/// owner.
/// Putting someone on the pager is theirs to agree to: a cover is made by the person who
/// covers, or by an owner.
pub fn require_cover_maker(actor: &Actor, access: TeamAccess, covering: i64) -> Result<()> {
    if access.is_owner() || actor.user_id == covering {
        Ok(())
    } else {
        Err(Error::forbidden(
            "only the person who covers or the team's owner may make a cover",
        ))
    }
}

pub fn require_cover_party_or_owner(
    actor: &Actor,
    access: TeamAccess,
    covering: i64,
    covered: Option<i64>,
) -> Result<()> {
    if access.is_owner() || actor.user_id == covering || covered == Some(actor.user_id) {
        Ok(())
    } else {
        Err(Error::forbidden(
            "only the person covering, the person covered or the team's owner may do this",
        ))
    }
}

/// Taking a date for someone else, or one nobody offered, is the team owner's.
pub fn require_may_hand_out(access: TeamAccess) -> Result<()> {
    if access.is_owner() {
        Ok(())
    } else {
        Err(Error::forbidden(
            "only the team's owner may give a date to someone else",
        ))
    }
}

/// How the actor stands in one team.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TeamAccess {
    Member(Role),
    /// A team-scoped service account over its own team: owner-equivalent.
    Scoped,
    /// An administrator who is not a member: passes owner checks so a team can be repaired.
    Admin,
}

impl TeamAccess {
    pub fn is_owner(self) -> bool {
        !matches!(self, TeamAccess::Member(Role::Member))
    }
}

impl Core {
    /// The actor's access to a team. A team the actor is not in answers `NotFound`, never
    /// `Forbidden`, so team ids reveal nothing.
    pub async fn team_access(&self, actor: &Actor, team_id: i64) -> Result<TeamAccess> {
        if let Some(scope) = actor.team_scope {
            return if scope == team_id {
                Ok(TeamAccess::Scoped)
            } else {
                Err(Error::NotFound)
            };
        }
        #[derive(sqlx::FromRow)]
        struct Membership {
            #[sqlx(try_from = "String")]
            role: Role,
        }
        let membership: Option<Membership> =
            sqlx::query_as("SELECT role FROM team_members WHERE team_id = $1 AND user_id = $2")
                .bind(team_id)
                .bind(actor.user_id)
                .fetch_optional(&self.db.pool)
                .await?;
        match membership.map(|m| m.role) {
            Some(role) => Ok(TeamAccess::Member(role)),
            None if actor.is_admin && self.team_exists(team_id).await? => Ok(TeamAccess::Admin),
            None => Err(Error::NotFound),
        }
    }

    pub async fn require_team_owner(&self, actor: &Actor, team_id: i64) -> Result<TeamAccess> {
        let access = self.team_access(actor, team_id).await?;
        if access.is_owner() {
            Ok(access)
        } else {
            Err(Error::forbidden("this requires the team's owner role"))
        }
    }

    /// An integration's routing rules are set by its team's owner, or by an instance-scoped
    /// service account (`klaxon apply`), which can already act in every team.
    pub async fn require_rules_setter(&self, actor: &Actor, team_id: i64) -> Result<()> {
        if lists_every_team(actor) {
            return if self.team_exists(team_id).await? {
                Ok(())
            } else {
                Err(Error::NotFound)
            };
        }
        self.require_team_owner(actor, team_id).await.map(|_| ())
    }

    /// Whether rules set by `actor` may send alerts to the team `target`: one the actor is in
    /// (any, for an administrator or an instance-scoped service account).
    pub async fn may_route_to(&self, actor: &Actor, target: i64) -> Result<bool> {
        if lists_every_team(actor) {
            return Ok(true);
        }
        match self.team_access(actor, target).await {
            Ok(_) => Ok(true),
            Err(Error::NotFound) => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// Team-scoped service accounts of `team_id`: whoever passes owner checks there (its owners,
    /// administrators, its own team-scoped account), and any instance-scoped service account.
    pub async fn require_may_manage_service_accounts(
        &self,
        actor: &Actor,
        team_id: i64,
    ) -> Result<()> {
        if actor.kind == AccountKind::Service && actor.team_scope.is_none() {
            return if self.team_exists(team_id).await? {
                Ok(())
            } else {
                Err(Error::NotFound)
            };
        }
        self.require_team_owner(actor, team_id).await.map(|_| ())
    }

    async fn team_exists(&self, team_id: i64) -> Result<bool> {
        let row: Option<(i64,)> = sqlx::query_as("SELECT id FROM teams WHERE id = $1")
            .bind(team_id)
            .fetch_optional(&self.db.pool)
            .await?;
        Ok(row.is_some())
    }
}
