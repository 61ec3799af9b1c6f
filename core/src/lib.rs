//! Klaxon's service layer: the database, every operation with its authorization, and the
//! loops' tick functions. No HTTP here: the REST API and the UI's server functions both call
//! these operations and only translate.

pub mod accounts;
pub mod actor;
pub mod authz;
pub mod clock;
pub mod credentials;
pub mod db;
pub mod error;
pub mod incidents;
pub mod intake;
pub mod integrations;
pub mod schedule;
pub mod secrets;
pub mod settings;
pub mod sweeper;
pub mod teams;
mod throttle;

use std::sync::Arc;

pub use actor::{Actor, Via};
pub use clock::{Clock, ManualClock, SystemClock};
pub use db::{Backend, Db};
pub use error::{Error, Result};

/// Start-time configuration the operations need (the rest of the environment is the server's).
#[derive(Debug, Clone)]
pub struct Config {
    /// Public base URL without a trailing slash; links in pages and the cookie's Secure flag follow it.
    pub public_url: String,
    pub password_login: bool,
    pub oidc_configured: bool,
    pub ntfy_configured: bool,
    pub ntfy_token_configured: bool,
    /// Values copied into the settings table at first start only.
    pub setting_seeds: Vec<(&'static str, String)>,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            public_url: "http://127.0.0.1:8080".into(),
            password_login: true,
            oidc_configured: false,
            ntfy_configured: false,
            ntfy_token_configured: false,
            setting_seeds: Vec::new(),
        }
    }
}

/// The service: cheap to clone, shared by the HTTP handlers, the UI and the loops.
#[derive(Clone)]
pub struct Core {
    pub db: Db,
    pub clock: Arc<dyn Clock>,
    pub config: Arc<Config>,
}

impl Core {
    /// Migrates the database, seeds settings on first start, and returns the service.
    pub async fn start(db: Db, clock: Arc<dyn Clock>, config: Config) -> Result<Core> {
        db.migrate().await?;
        let core = Core {
            db,
            clock,
            config: Arc::new(config),
        };
        core.seed_settings().await?;
        Ok(core)
    }

    pub fn now(&self) -> i64 {
        self.clock.now()
    }

    /// True when the public URL is https, so cookies must be Secure.
    pub fn secure_cookies(&self) -> bool {
        self.config.public_url.starts_with("https://")
    }
}
