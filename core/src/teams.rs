//! Teams and memberships. Data in a team the caller is not in answers 404.

use crate::accounts::revoke_links_of;
use crate::authz::{self, SignedIn};
use crate::{Actor, Core, Error, Result};
use klaxon_domain::account::AccountKind;
use klaxon_domain::ids::{TeamId, UserId};
use klaxon_domain::sso::GrantSource;
use klaxon_domain::team::{Member, OidcMapping, Role, Team, TeamSummary, TeamView};
use klaxon_domain::text::{GroupName, Label, TeamName};
use klaxon_domain::Timestamp;

#[derive(sqlx::FromRow)]
struct TeamRow {
    id: i64,
    name: String,
    display_name: String,
    oidc_member_groups: String,
    oidc_owner_groups: String,
    created_at: i64,
}

/// What a statement selects from `teams t` to be read as a `TeamRow`.
const TEAM_COLUMNS: &str =
    "t.id, t.name, t.display_name, t.oidc_member_groups, t.oidc_owner_groups, t.created_at";

impl From<TeamRow> for Team {
    fn from(r: TeamRow) -> Team {
        Team {
            id: r.id,
            name: r.name,
            display_name: r.display_name,
            // Written only by `set_oidc_mapping`, from a list of strings.
            oidc: OidcMapping {
                member_groups: serde_json::from_str(&r.oidc_member_groups).unwrap_or_default(),
                owner_groups: serde_json::from_str(&r.oidc_owner_groups).unwrap_or_default(),
            },
            created_at: Timestamp(r.created_at),
        }
    }
}

#[derive(sqlx::FromRow)]
struct MemberRow {
    user_id: i64,
    username: String,
    #[sqlx(try_from = "String")]
    role: Role,
    #[sqlx(try_from = "String")]
    source: GrantSource,
}

impl From<MemberRow> for Member {
    fn from(r: MemberRow) -> Member {
        Member {
            user_id: r.user_id,
            username: r.username,
            role: r.role,
            source: r.source,
        }
    }
}

fn invalid(e: String) -> Error {
    Error::Invalid(e)
}

impl Core {
    /// Creates a team; a human creator becomes its owner. Humans and instance-scoped service
    /// accounts may create teams; a team-scoped account may not.
    pub async fn create_team(
        &self,
        actor: &Actor,
        name: &TeamName,
        display_name: Option<&Label>,
    ) -> Result<Team> {
        authz::require_may_create_team(actor)?;
        let name = name.as_str();
        // Without a display name the team is shown by its name.
        let display = display_name.map_or(name, |d| d.as_str());
        let now = self.now();
        let mut tx = self.db.begin().await?;
        let (id,): (i64,) = sqlx::query_as(
            "INSERT INTO teams (name, display_name, created_at) VALUES ($1, $2, $3) RETURNING id",
        )
        .bind(name)
        .bind(display)
        .bind(now)
        .fetch_one(&mut *tx)
        .await
        .map_err(Error::unique(format!(
            "a team named \"{name}\" already exists"
        )))?;
        if actor.is_human() {
            sqlx::query("INSERT INTO team_members (team_id, user_id, role, created_at) VALUES ($1, $2, 'owner', $3)")
                .bind(id)
                .bind(actor.user_id)
                .bind(now)
                .execute(&mut *tx)
                .await?;
        }
        tx.commit().await?;
        Ok(Team {
            id,
            name: name.to_string(),
            display_name: display.to_string(),
            oidc: OidcMapping::default(),
            created_at: Timestamp(now),
        })
    }

    /// The teams the caller belongs to (any signed-in caller; every team for an
    /// instance-scoped service account); `name` looks one up by its name.
    pub async fn list_teams(&self, actor: &Actor, name: Option<&str>) -> Result<Vec<Team>> {
        let SignedIn = authz::signed_in(actor);
        let name = name.map(|n| n.trim().to_lowercase());
        let rows: Vec<TeamRow> = if authz::lists_every_team(actor) {
            sqlx::query_as(&format!(
                "SELECT {TEAM_COLUMNS} FROM teams t WHERE ($1 IS NULL OR t.name = $1) ORDER BY t.display_name"
            ))
            .bind(name)
            .fetch_all(&self.db.pool)
            .await?
        } else if let Some(scope) = actor.team_scope {
            sqlx::query_as(&format!("SELECT {TEAM_COLUMNS} FROM teams t WHERE t.id = $1 AND ($2 IS NULL OR t.name = $2)"))
                .bind(scope)
                .bind(name)
                .fetch_all(&self.db.pool)
                .await?
        } else {
            sqlx::query_as(&format!(
                "SELECT {TEAM_COLUMNS} FROM teams t JOIN team_members m ON m.team_id = t.id \
                 WHERE m.user_id = $1 AND ($2 IS NULL OR t.name = $2) ORDER BY t.display_name",
            ))
            .bind(actor.user_id)
            .bind(name)
            .fetch_all(&self.db.pool)
            .await?
        };
        Ok(rows.into_iter().map(Team::from).collect())
    }

    pub async fn get_team(&self, actor: &Actor, id: i64) -> Result<Team> {
        self.team_access(actor, id).await?;
        self.team_by_id(id).await
    }

    /// The team as its page shows it: with whether the caller may manage it.
    pub async fn team_view(&self, actor: &Actor, id: i64) -> Result<TeamView> {
        let access = self.team_access(actor, id).await?;
        let team = self.team_by_id(id).await?;
        let gap = self
            .coverage_gaps(&[(id, team.display_name.clone())])
            .await?
            .pop();
        let channel_kinds = self
            .roads
            .offered_to_channels()
            .into_iter()
            .filter_map(klaxon_domain::channel::ChannelKind::parse)
            .collect();
        Ok(TeamView {
            team,
            may_manage: access.is_owner(),
            gap,
            channel_kinds,
        })
    }

    pub(crate) async fn team_by_id(&self, id: i64) -> Result<Team> {
        let row: TeamRow = sqlx::query_as(&format!(
            "SELECT {TEAM_COLUMNS} FROM teams t WHERE t.id = $1"
        ))
        .bind(id)
        .fetch_optional(&self.db.pool)
        .await?
        .ok_or(Error::NotFound)?;
        Ok(row.into())
    }

    /// Without a display name (`None`), the team is shown by its name, as at creation.
    pub async fn rename_team(
        &self,
        actor: &Actor,
        id: i64,
        display_name: Option<&Label>,
    ) -> Result<Team> {
        self.require_team_owner(actor, id).await?;
        let display = match display_name {
            Some(d) => d.to_string(),
            None => self.team_by_id(id).await?.name,
        };
        sqlx::query("UPDATE teams SET display_name = $1 WHERE id = $2")
            .bind(display)
            .bind(id)
            .execute(&self.db.pool)
            .await?;
        self.team_by_id(id).await
    }

    /// Replaces the team's single sign-on group mapping (owner).
    pub async fn set_oidc_mapping(
        &self,
        actor: &Actor,
        id: i64,
        mapping: &OidcMapping,
    ) -> Result<Team> {
        self.require_team_owner(actor, id).await?;
        let mapping = mapping.validate().map_err(invalid)?;
        let json = |groups: &[GroupName]| serde_json::to_string(groups).unwrap_or_default();
        sqlx::query(
            "UPDATE teams SET oidc_member_groups = $1, oidc_owner_groups = $2 WHERE id = $3",
        )
        .bind(json(&mapping.member_groups))
        .bind(json(&mapping.owner_groups))
        .bind(id)
        .execute(&self.db.pool)
        .await?;
        self.team_by_id(id).await
    }

    pub async fn delete_team(&self, actor: &Actor, id: i64) -> Result<()> {
        self.require_team_owner(actor, id).await?;
        let mut tx = self.db.begin().await?;
        // Pages, timeline entries and acknowledge tokens carry no foreign key (migration 0005):
        // they go with the team's incidents here, which the team's deletion cascades to.
        for table in ["pages", "timeline", "ack_tokens"] {
            sqlx::query(&format!(
                "DELETE FROM {table} WHERE incident_id IN (SELECT id FROM incidents WHERE team_id = $1)"
            ))
            .bind(id)
            .execute(&mut *tx)
            .await?;
        }
        sqlx::query("DELETE FROM teams WHERE id = $1")
            .bind(id)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(())
    }

    /// Every team with its size, for administrators.
    pub async fn admin_list_teams(&self, actor: &Actor) -> Result<Vec<TeamSummary>> {
        crate::authz::require_admin(actor)?;
        #[derive(sqlx::FromRow)]
        struct Row {
            #[sqlx(flatten)]
            team: TeamRow,
            member_count: i64,
            open_incidents: i64,
        }
        let rows: Vec<Row> = sqlx::query_as(&format!(
            "SELECT {TEAM_COLUMNS}, \
             (SELECT COUNT(*) FROM team_members m WHERE m.team_id = t.id) AS member_count, \
             (SELECT COUNT(*) FROM incidents i WHERE i.team_id = t.id AND i.state <> 'resolved') AS open_incidents \
             FROM teams t ORDER BY t.name",
        ))
        .fetch_all(&self.db.pool)
        .await?;
        Ok(rows
            .into_iter()
            .map(|r| TeamSummary {
                team: r.team.into(),
                member_count: r.member_count,
                open_incidents: r.open_incidents,
            })
            .collect())
    }

    // ---- members -----------------------------------------------------------------------------

    pub async fn list_members(&self, actor: &Actor, team_id: i64) -> Result<Vec<Member>> {
        self.team_access(actor, team_id).await?;
        self.members_of(team_id).await
    }

    /// The team's members by username; the caller has checked the right to see them.
    pub(crate) async fn members_of(&self, team_id: i64) -> Result<Vec<Member>> {
        let rows: Vec<MemberRow> = sqlx::query_as(
            "SELECT u.id AS user_id, u.username, m.role, m.source FROM team_members m JOIN users u ON u.id = m.user_id \
             WHERE m.team_id = $1 ORDER BY u.username",
        )
        .bind(team_id)
        .fetch_all(&self.db.pool)
        .await?;
        Ok(rows.into_iter().map(Member::from).collect())
    }

    /// Adds a user to a team (owner). A user already in the team is a 409.
    pub async fn add_member(
        &self,
        actor: &Actor,
        team_id: TeamId,
        user_id: UserId,
        role: Role,
    ) -> Result<Member> {
        let (TeamId(team_id), UserId(user_id)) = (team_id, user_id);
        self.require_team_owner(actor, team_id).await?;
        let user = self
            .user_by_id(user_id)
            .await
            .map_err(|_| Error::Invalid("user_id: no such user".into()))?;
        if user.kind == AccountKind::Service {
            return Err(Error::Invalid(
                "user_id: a service account cannot be a team member; a team-scoped account acts for its team"
                    .into(),
            ));
        }
        sqlx::query(
            "INSERT INTO team_members (team_id, user_id, role, created_at) VALUES ($1, $2, $3, $4)",
        )
        .bind(team_id)
        .bind(user_id)
        .bind(role.as_str())
        .bind(self.now())
        .execute(&self.db.pool)
        .await
        .map_err(Error::unique(format!(
            "{} is already a member",
            user.username
        )))?;
        Ok(Member {
            user_id,
            username: user.username,
            role,
            source: GrantSource::Manual,
        })
    }

    /// Changes a member's role (owner). The last owner cannot be demoted.
    pub async fn set_member_role(
        &self,
        actor: &Actor,
        team_id: TeamId,
        user_id: UserId,
        role: Role,
    ) -> Result<Member> {
        let (TeamId(team_id), UserId(user_id)) = (team_id, user_id);
        self.require_team_owner(actor, team_id).await?;
        self.refuse_if_provider_managed(team_id, user_id).await?;
        let guard = if role == Role::Owner {
            "TRUE"
        } else {
            NOT_LAST_OWNER
        };
        let mut tx = self.db.begin().await?;
        lock_team(&mut tx, team_id).await?;
        let done = sqlx::query(&format!(
            "UPDATE team_members SET role = $1 WHERE team_id = $2 AND user_id = $3 AND {guard}"
        ))
        .bind(role.as_str())
        .bind(team_id)
        .bind(user_id)
        .execute(&mut *tx)
        .await?;
        if done.rows_affected() == 0 {
            return Err(self.member_missing_or_last_owner(team_id, user_id).await);
        }
        if role != Role::Owner {
            revoke_links_of(&mut tx, user_id, Some(team_id), self.now()).await?;
        }
        tx.commit().await?;
        self.list_members(actor, team_id)
            .await?
            .into_iter()
            .find(|m| m.user_id == user_id)
            .ok_or(Error::NotFound)
    }

    /// Removes a member: the team's owner may remove anyone, a member may leave. The last owner stays.
    pub async fn remove_member(
        &self,
        actor: &Actor,
        team_id: TeamId,
        user_id: UserId,
    ) -> Result<()> {
        let (TeamId(team_id), UserId(user_id)) = (team_id, user_id);
        let access = self.team_access(actor, team_id).await?;
        authz::require_may_remove_member(actor, access, user_id)?;
        self.refuse_if_provider_managed(team_id, user_id).await?;
        let mut tx = self.db.begin().await?;
        lock_team(&mut tx, team_id).await?;
        let done = sqlx::query(&format!(
            "DELETE FROM team_members WHERE team_id = $1 AND user_id = $2 AND {NOT_LAST_OWNER}"
        ))
        .bind(team_id)
        .bind(user_id)
        .execute(&mut *tx)
        .await?;
        if done.rows_affected() == 0 {
            return Err(self.member_missing_or_last_owner(team_id, user_id).await);
        }
        revoke_links_of(&mut tx, user_id, Some(team_id), self.now()).await?;
        crate::paging::left_team(&mut tx, user_id, team_id).await?;
        tx.commit().await?;
        Ok(())
    }

    /// The username of `user_id` if they are a member of the team.
    pub(crate) async fn member_username(
        &self,
        team_id: TeamId,
        user_id: UserId,
    ) -> Result<Option<String>> {
        let (TeamId(team_id), UserId(user_id)) = (team_id, user_id);
        let row: Option<(String,)> = sqlx::query_as(
            "SELECT u.username FROM team_members m JOIN users u ON u.id = m.user_id WHERE m.team_id = $1 AND m.user_id = $2",
        )
        .bind(team_id)
        .bind(user_id)
        .fetch_optional(&self.db.pool)
        .await?;
        Ok(row.map(|r| r.0))
    }

    /// A membership the identity provider's groups granted changes only at the provider.
    async fn refuse_if_provider_managed(&self, team_id: i64, user_id: i64) -> Result<()> {
        let row: Option<(String,)> =
            sqlx::query_as("SELECT source FROM team_members WHERE team_id = $1 AND user_id = $2")
                .bind(team_id)
                .bind(user_id)
                .fetch_optional(&self.db.pool)
                .await?;
        if row.is_some_and(|(s,)| s == GrantSource::Oidc.as_str()) {
            return Err(Error::Conflict(
                "the identity provider's groups grant this membership; change the person's groups there".into(),
            ));
        }
        Ok(())
    }

    async fn member_missing_or_last_owner(&self, team_id: i64, user_id: i64) -> Error {
        let exists: Result<Option<(String,)>, _> =
            sqlx::query_as("SELECT role FROM team_members WHERE team_id = $1 AND user_id = $2")
                .bind(team_id)
                .bind(user_id)
                .fetch_optional(&self.db.pool)
                .await;
        match exists {
            Ok(Some(_)) => Error::Conflict("a team must keep at least one owner".into()),
            Ok(None) => Error::NotFound,
            Err(e) => e.into(),
        }
    }
}

/// Taken first in transactions that check the team's owner count (see `accounts::lock_admins`).
async fn lock_team(tx: &mut crate::db::Tx, team_id: i64) -> Result<()> {
    sqlx::query("UPDATE teams SET display_name = display_name WHERE id = $1")
        .bind(team_id)
        .execute(&mut **tx)
        .await?;
    Ok(())
}

/// SQL condition on a `team_members` row: it is not an owner, or another owner remains.
const NOT_LAST_OWNER: &str = "(role <> 'owner' OR \
     (SELECT COUNT(*) FROM team_members o WHERE o.team_id = team_members.team_id AND o.role = 'owner') > 1)";
