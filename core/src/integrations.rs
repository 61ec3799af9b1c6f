//! Integrations: the keys alert senders post with. A key both authorises posting and routes
//! the alerts to its team; it is shown once and stored hashed.

use crate::secrets::{hash_token, looks_like_token, new_token};
use crate::sources::webhook::{Mapper, Rendered};
use crate::{Actor, Core, Error, Result};
use klaxon_domain::ids::{IntegrationId, TeamId};
use klaxon_domain::incident::{
    Integration, IntegrationChange, IntegrationKind, IntegrationStatus, NewIntegration,
};
use klaxon_domain::mapping::{TemplatePreview, TemplateTrial, WebhookTemplates, MAX_SAMPLE};
use klaxon_domain::routing::{RoutingRule, Rules};
use klaxon_domain::silence;
use klaxon_domain::text::Label;
use klaxon_domain::Timestamp;

#[derive(sqlx::FromRow)]
struct Row {
    id: i64,
    team_id: i64,
    name: String,
    #[sqlx(try_from = "String")]
    kind: IntegrationKind,
    created_at: i64,
    last_webhook_at: Option<i64>,
    last_alert_at: Option<i64>,
    alerts_24h: i64,
    alertmanager_url: Option<String>,
    alertmanager_auth: Option<String>,
    templates: Option<String>,
    rules: Option<String>,
}

const SELECT: &str =
    "SELECT i.id, i.team_id, i.name, i.kind, i.created_at, i.last_webhook_at, i.last_alert_at, \
     (SELECT COUNT(*) FROM alerts a WHERE a.integration_id = i.id AND a.received_at > $2) AS alerts_24h, \
     i.alertmanager_url, i.alertmanager_auth, i.templates, i.rules FROM integrations i";

impl Core {
    fn integration(&self, r: Row) -> Integration {
        Integration {
            id: r.id,
            team_id: r.team_id,
            name: r.name,
            kind: r.kind,
            status: IntegrationStatus::derive(r.last_webhook_at, self.now()),
            created_at: Timestamp(r.created_at),
            last_webhook_at: r.last_webhook_at.map(Timestamp),
            last_alert_at: r.last_alert_at.map(Timestamp),
            alerts_24h: r.alerts_24h,
            alertmanager_url: r.alertmanager_url,
            alertmanager_auth_set: r.alertmanager_auth.is_some(),
            templates: r.templates.as_deref().and_then(|t| parse_templates(t).ok()),
            rules: r
                .rules
                .as_deref()
                .and_then(|t| parse_rules(t).ok())
                .unwrap_or_default(),
        }
    }

    pub fn webhook_url(&self, key: &str) -> String {
        format!("{}/api/alertmanager/webhook/{key}", self.config.public_url)
    }

    pub async fn create_integration(
        &self,
        actor: &Actor,
        team_id: i64,
        name: &Label,
        kind: IntegrationKind,
        templates: Option<WebhookTemplates>,
    ) -> Result<NewIntegration> {
        self.require_team_owner(actor, team_id).await?;
        let templates = match (kind, templates) {
            (IntegrationKind::Webhook, t) => Some(stored_templates(
                &t.unwrap_or_else(WebhookTemplates::starter),
            )?),
            (_, None) => None,
            (_, Some(_)) => return Err(only_webhooks()),
        };
        let name = name.as_str();
        let key = new_token();
        let (id,): (i64,) = sqlx::query_as(
            "INSERT INTO integrations (team_id, name, kind, key_hash, created_at, templates) \
             VALUES ($1, $2, $3, $4, $5, $6) RETURNING id",
        )
        .bind(team_id)
        .bind(name)
        .bind(kind.as_str())
        .bind(hash_token(&key))
        .bind(self.now())
        .bind(templates)
        .fetch_one(&self.db.pool)
        .await?;
        let integration = self.get_integration(team_id, id).await?;
        Ok(NewIntegration {
            integration,
            webhook_url: self.webhook_url(&key),
            key,
        })
    }

    pub(crate) async fn get_integration(&self, team_id: i64, id: i64) -> Result<Integration> {
        let row: Row = sqlx::query_as(&format!("{SELECT} WHERE i.team_id = $1 AND i.id = $3"))
            .bind(team_id)
            .bind(self.now() - 86_400)
            .bind(id)
            .fetch_optional(&self.db.pool)
            .await?
            .ok_or(Error::NotFound)?;
        Ok(self.integration(row))
    }

    pub async fn list_integrations(&self, actor: &Actor, team_id: i64) -> Result<Vec<Integration>> {
        self.team_access(actor, team_id).await?;
        let rows: Vec<Row> =
            sqlx::query_as(&format!("{SELECT} WHERE i.team_id = $1 ORDER BY i.id DESC"))
                .bind(team_id)
                .bind(self.now() - 86_400)
                .fetch_all(&self.db.pool)
                .await?;
        Ok(rows.into_iter().map(|r| self.integration(r)).collect())
    }

    /// Renames and sets or clears the Alertmanager; the key is never touched.
    pub async fn update_integration(
        &self,
        actor: &Actor,
        team_id: TeamId,
        id: IntegrationId,
        change: IntegrationChange,
    ) -> Result<Integration> {
        let (TeamId(team_id), IntegrationId(id)) = (team_id, id);
        self.require_team_owner(actor, team_id).await?;
        let name = change.name.map(Label::into_string);
        let url = change
            .alertmanager_url
            .map(|u| u.map(|u| silence::alertmanager_url(&u)).transpose())
            .transpose()
            .map_err(Error::Invalid)?;
        // An address written in the URL is checked now; a name is checked when it is called.
        if let Some(Some(u)) = &url {
            self.outbound
                .check_url(u)
                .map_err(|why| Error::Invalid(format!("alertmanager_url: {why}")))?;
        }
        let auth = match change.alertmanager_auth {
            Some(Some(auth)) => {
                auth.validate().map_err(Error::Invalid)?;
                Some(Some(
                    serde_json::to_string(&auth).map_err(|e| Error::Internal(e.to_string()))?,
                ))
            }
            Some(None) => Some(None),
            None => None,
        };
        // Credentials without a URL would be kept for nothing.
        let auth = if url == Some(None) { Some(None) } else { auth };
        let templates = change
            .templates
            .as_ref()
            .map(stored_templates)
            .transpose()?;
        let mut tx = self.db.begin().await?;
        let (current, kind): (Option<String>, String) = sqlx::query_as(
            "SELECT alertmanager_url, kind FROM integrations WHERE id = $1 AND team_id = $2",
        )
        .bind(id)
        .bind(team_id)
        .fetch_optional(&mut *tx)
        .await?
        .ok_or(Error::NotFound)?;
        if templates.is_some() && kind != IntegrationKind::Webhook.as_str() {
            return Err(only_webhooks());
        }
        if matches!(auth, Some(Some(_))) && url.clone().unwrap_or(current.clone()).is_none() {
            return Err(Error::Invalid(
                "alertmanager_auth needs an alertmanager_url".into(),
            ));
        }
        // Stored credentials go only where they were given for: a URL moved to another origin
        // forgets them unless this same change sets new ones.
        let auth = match (&url, auth) {
            (Some(Some(new)), None) if !same_origin(current.as_deref(), new) => Some(None),
            (_, auth) => auth,
        };
        sqlx::query(
            "UPDATE integrations SET name = COALESCE($1, name), \
             alertmanager_url = CASE WHEN $2 THEN $3 ELSE alertmanager_url END, \
             alertmanager_auth = CASE WHEN $4 THEN $5 ELSE alertmanager_auth END, \
             templates = COALESCE($8, templates) \
             WHERE id = $6 AND team_id = $7",
        )
        .bind(name)
        .bind(url.is_some())
        .bind(url.flatten())
        .bind(auth.is_some())
        .bind(auth.flatten())
        .bind(id)
        .bind(team_id)
        .bind(templates)
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        self.get_integration(team_id, id).await
    }

    /// Revokes the key. Its alerts stay, unattributed (the foreign key sets them to null).
    pub async fn revoke_integration(
        &self,
        actor: &Actor,
        team_id: TeamId,
        id: IntegrationId,
    ) -> Result<()> {
        let (TeamId(team_id), IntegrationId(id)) = (team_id, id);
        self.require_team_owner(actor, team_id).await?;
        let done = sqlx::query("DELETE FROM integrations WHERE id = $1 AND team_id = $2")
            .bind(id)
            .bind(team_id)
            .execute(&self.db.pool)
            .await?;
        if done.rows_affected() == 0 {
            return Err(Error::NotFound);
        }
        Ok(())
    }

    /// What a sample body would become with a generic webhook's templates: the "try it" form,
    /// before they are saved. Open to anyone signed in; each rendering is bounded.
    pub fn try_templates(&self, actor: &Actor, trial: &TemplateTrial) -> Result<TemplatePreview> {
        let crate::authz::SignedIn = crate::authz::signed_in(actor);
        if trial.sample.len() > MAX_SAMPLE {
            return Err(Error::Invalid(format!(
                "sample: at most {} KB",
                MAX_SAMPLE / 1024
            )));
        }
        if let Err(e) = serde_json::from_str::<serde_json::Value>(&trial.sample) {
            return Err(Error::Invalid(format!("sample: not JSON: {e}")));
        }
        let mapper = Mapper::new(&trial.templates)
            .map_err(|why| Error::Invalid(format!("templates.{why}")))?;
        mapper
            .render(trial.sample.as_bytes())
            .map(Rendered::preview)
            .map_err(|why| Error::Invalid(format!("templates.{why}")))
    }

    /// The integration a raw key names; 401 for an unknown or revoked key.
    pub(crate) async fn integration_by_key(&self, key: &str) -> Result<KeyedIntegration> {
        if !looks_like_token(key) {
            return Err(Error::Unauthorized);
        }
        sqlx::query_as(
            "SELECT id, team_id, kind, templates, rules FROM integrations WHERE key_hash = $1",
        )
        .bind(hash_token(key))
        .fetch_optional(&self.db.pool)
        .await?
        .ok_or(Error::Unauthorized)
    }
}

/// True when both URLs have one scheme, host and port (a path may differ).
fn same_origin(old: Option<&str>, new: &str) -> bool {
    let origin = |u: &str| url::Url::parse(u).ok().map(|u| u.origin());
    match (old.and_then(origin), origin(new)) {
        (Some(a), Some(b)) => a.is_tuple() && a == b,
        _ => false,
    }
}

/// An integration as intake finds it by its key.
#[derive(sqlx::FromRow)]
pub(crate) struct KeyedIntegration {
    pub id: i64,
    pub team_id: i64,
    /// The format its sender speaks.
    pub kind: String,
    /// A generic webhook's templates, as JSON.
    pub templates: Option<String>,
    /// Its routing rules, as JSON.
    pub rules: Option<String>,
}

impl KeyedIntegration {
    pub fn templates(&self) -> Result<Option<WebhookTemplates>> {
        self.templates.as_deref().map(parse_templates).transpose()
    }

    /// Its routing rules compiled; none when it never had any (an emptied list is kept).
    pub fn rules(&self) -> Result<Option<Rules>> {
        let rules = self.rules.as_deref().map(parse_rules).transpose()?;
        rules
            .map(|r| Rules::compile(&r))
            .transpose()
            .map_err(|e| Error::Internal(format!("stored rules: {e}")))
    }
}

/// Rules as stored.
pub(crate) fn parse_rules(json: &str) -> Result<Vec<RoutingRule>> {
    serde_json::from_str(json).map_err(|e| Error::Internal(format!("stored rules: {e}")))
}

/// Templates checked (bounds and syntax) and as they are stored.
fn stored_templates(t: &WebhookTemplates) -> Result<String> {
    Mapper::new(t).map_err(|why| Error::Invalid(format!("templates.{why}")))?;
    serde_json::to_string(t).map_err(|e| Error::Internal(e.to_string()))
}

fn only_webhooks() -> Error {
    Error::Invalid("templates: only a generic webhook (kind `webhook`) has templates".into())
}

/// Templates as stored.
fn parse_templates(json: &str) -> Result<WebhookTemplates> {
    serde_json::from_str(json).map_err(|e| Error::Internal(format!("stored templates: {e}")))
}
