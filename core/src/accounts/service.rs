//! Service accounts: API-key-only accounts for automation such as the Kubernetes operator.
//! Instance-scoped ones are made by administrators; team-scoped ones by whoever may manage the
//! team's service accounts (`authz::require_may_manage_service_accounts`).

use super::USER_COLUMNS;
use crate::authz::{require_human_admin, SignedIn};
use crate::{Actor, Core, Error, Result};
use klaxon_domain::account::{AccountKind, ApiKeyInfo, NewApiKey, ServiceAccount, User};
use klaxon_domain::ids::{KeyId, UserId};
use klaxon_domain::text::{Label, Username};

impl Core {
    /// A service account bound to `team_id`: owner-equivalent in that team, nothing elsewhere.
    pub async fn create_team_service_account(
        &self,
        actor: &Actor,
        team_id: i64,
        name: &Username,
    ) -> Result<User> {
        self.require_may_manage_service_accounts(actor, team_id)
            .await?;
        self.insert_service_account(name, Some(team_id)).await
    }

    /// The team's service accounts, by name.
    pub async fn list_team_service_accounts(
        &self,
        actor: &Actor,
        team_id: i64,
    ) -> Result<Vec<User>> {
        self.require_may_manage_service_accounts(actor, team_id)
            .await?;
        let rows: Vec<super::UserRow> = sqlx::query_as(&format!(
            "SELECT {USER_COLUMNS} FROM users WHERE kind = 'service' AND team_id = $1 ORDER BY username"
        ))
        .bind(team_id)
        .fetch_all(&self.db.pool)
        .await?;
        Ok(rows.into_iter().map(User::from).collect())
    }

    /// The team's service accounts, each with its keys.
    pub async fn team_service_accounts_with_keys(
        &self,
        actor: &Actor,
        team_id: i64,
    ) -> Result<Vec<ServiceAccount>> {
        let mut out = Vec::new();
        for user in self.list_team_service_accounts(actor, team_id).await? {
            let keys = self.list_service_keys(actor, user.id).await?;
            out.push(ServiceAccount { user, keys });
        }
        Ok(out)
    }

    /// An instance-scoped service account (administrators, in person).
    pub async fn create_instance_service_account(
        &self,
        actor: &Actor,
        name: &Username,
    ) -> Result<User> {
        require_human_admin(actor)?;
        self.insert_service_account(name, None).await
    }

    /// A service account's keys (never the secrets).
    pub async fn list_service_keys(&self, actor: &Actor, user_id: i64) -> Result<Vec<ApiKeyInfo>> {
        self.service_account_for(actor, user_id).await?;
        self.keys_of(user_id).await
    }

    /// Mints a key for a service account; the raw key is returned only here.
    pub async fn create_service_key(
        &self,
        actor: &Actor,
        user_id: i64,
        name: Option<&Label>,
    ) -> Result<NewApiKey> {
        self.service_account_for(actor, user_id).await?;
        let default = Label::parse("default").expect("a valid label");
        self.mint_key(user_id, name.unwrap_or(&default)).await
    }

    /// Revokes one of a service account's keys.
    pub async fn delete_service_key(
        &self,
        actor: &Actor,
        user_id: UserId,
        key_id: KeyId,
    ) -> Result<()> {
        self.service_account_for(actor, user_id.0).await?;
        self.revoke_key(user_id, key_id).await
    }

    /// The service account `user_id`, after checking the caller may manage its keys: for a
    /// team-scoped account whoever may manage that team's accounts, for an instance-scoped one
    /// an administrator in person. Anything else is a 404, so ids reveal nothing.
    async fn service_account_for(&self, actor: &Actor, user_id: i64) -> Result<User> {
        let SignedIn = crate::authz::signed_in(actor);
        let user = self.user_by_id(user_id).await?;
        if user.kind != AccountKind::Service {
            return Err(Error::NotFound);
        }
        match user.team_id {
            Some(team) => {
                self.require_may_manage_service_accounts(actor, team)
                    .await?
            }
            None => require_human_admin(actor)?,
        }
        Ok(user)
    }

    async fn insert_service_account(&self, name: &Username, team_id: Option<i64>) -> Result<User> {
        let (id,): (i64,) = sqlx::query_as(
            "INSERT INTO users (username, kind, team_id, created_at) VALUES ($1, 'service', $2, $3) RETURNING id",
        )
        .bind(name.as_str())
        .bind(team_id)
        .bind(self.now())
        .fetch_one(&self.db.pool)
        .await
        .map_err(Error::unique(format!("the name \"{name}\" is taken")))?;
        self.user_by_id(id).await
    }
}
