//! Settings: seeded from the environment at first start, then edited by administrators.
//! Loops call `settings()` on every tick, so a change applies without a restart.

use crate::authz::require_instance_config;
use crate::{Actor, Core, Error, Result};
use klaxon_domain::settings::{self as rules, Settings};
pub use klaxon_domain::settings::{AdminSettings, OidcStatus, PushStatus};
use std::collections::BTreeMap;

impl Core {
    /// Inserts each seed only where the key has no row yet: a later start never overwrites.
    pub(crate) async fn seed_settings(&self) -> Result<()> {
        let defaults = Settings::default().to_stored();
        for (key, default) in defaults {
            let value = self
                .config
                .setting_seeds
                .iter()
                .find(|(k, _)| *k == key)
                .map(|(_, v)| v.clone())
                .unwrap_or(default);
            sqlx::query(
                "INSERT INTO settings (key, value) VALUES ($1, $2) ON CONFLICT (key) DO NOTHING",
            )
            .bind(key)
            .bind(value)
            .execute(&self.db.pool)
            .await?;
        }
        Ok(())
    }

    /// The current settings: the one accessor every reader uses.
    pub async fn settings(&self) -> Result<Settings> {
        let rows: Vec<(String, String)> = sqlx::query_as("SELECT key, value FROM settings")
            .fetch_all(&self.db.pool)
            .await?;
        Ok(Settings::from_stored(
            rows.iter().map(|(k, v)| (k.as_str(), v.as_str())),
        ))
    }

    pub async fn admin_settings(&self, actor: &Actor) -> Result<AdminSettings> {
        require_instance_config(actor)?;
        Ok(AdminSettings {
            settings: self.settings().await?,
            bounds: rules::bounds(),
            push: PushStatus {
                configured: self.config.roads.ntfy_url.is_some(),
                token_configured: self.config.roads.ntfy_token.is_some(),
            },
            oidc: OidcStatus {
                configured: self.sso.is_some(),
                available: self.sso.as_ref().is_some_and(|s| s.available()),
            },
        })
    }

    /// Validates every value first, then writes them all in one transaction.
    pub async fn update_settings(
        &self,
        actor: &Actor,
        update: &BTreeMap<String, serde_json::Value>,
    ) -> Result<AdminSettings> {
        require_instance_config(actor)?;
        let next =
            rules::validate_update(&self.settings().await?, update).map_err(Error::Invalid)?;
        let mut tx = self.db.begin().await?;
        for (key, value) in next.to_stored() {
            if update.contains_key(key) {
                sqlx::query("INSERT INTO settings (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = $2")
                    .bind(key)
                    .bind(value)
                    .execute(&mut *tx)
                    .await?;
            }
        }
        tx.commit().await?;
        self.admin_settings(actor).await
    }
}
