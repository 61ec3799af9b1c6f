//! Single sign-on through an OpenID Connect provider: its configuration, discovery (retried
//! until the provider answers, so a provider that is down never stops password users and API
//! keys), the browser flow (`flow`) and what a sign-in grants (`grants`).

mod flow;
mod grants;

pub use flow::{SsoCallback, SsoSignedIn, SsoStarted, LOGIN_TTL, STATE_COOKIE};

use openidconnect::core::{
    CoreAuthDisplay, CoreAuthPrompt, CoreErrorResponseType, CoreGenderClaim, CoreJsonWebKey,
    CoreJweContentEncryptionAlgorithm, CoreJwsSigningAlgorithm, CoreProviderMetadata,
    CoreRevocableToken, CoreRevocationErrorResponse, CoreTokenIntrospectionResponse, CoreTokenType,
};
use openidconnect::{
    AdditionalClaims, Client, ClientId, ClientSecret, EmptyExtraTokenFields, EndpointMaybeSet,
    EndpointNotSet, EndpointSet, IdTokenFields, IssuerUrl, RedirectUrl, StandardErrorResponse,
    StandardTokenResponse,
};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::sync::{Arc, RwLock};
use std::time::Duration;

/// `KLAXON_OIDC_*`: the provider and what its groups mean here.
#[derive(Debug, Clone)]
pub struct OidcConfig {
    pub issuer: String,
    pub client_id: String,
    pub client_secret: Option<String>,
    /// Scopes asked for; `None` means `openid profile email`, plus `groups` when the provider
    /// lists it among its supported scopes.
    pub scopes: Option<Vec<String>>,
    /// The ID token claim holding the groups (a list, or one string).
    pub groups_claim: String,
    /// When not empty, only members of one of these groups may sign in.
    pub allowed_groups: Vec<String>,
    /// Members of these groups administer the install while they are members.
    pub admin_groups: Vec<String>,
    /// Link an existing account by email even when the provider does not mark it verified.
    pub trust_email: bool,
    /// Hard ceiling of a single sign-on session, in seconds (sliding never passes it).
    pub session_ttl: i64,
    /// The name on the "Sign in with …" button; default: the issuer's host.
    pub display_name: Option<String>,
}

impl OidcConfig {
    pub const DEFAULT_SESSION_TTL: i64 = 12 * 3600;

    pub fn name(&self) -> String {
        self.display_name.clone().unwrap_or_else(|| {
            let rest = self.issuer.split("://").nth(1).unwrap_or(&self.issuer);
            rest.split(['/', ':']).next().unwrap_or(rest).to_string()
        })
    }
}

/// Every claim of the ID token beyond the standard ones, so the groups claim can be any name.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct OtherClaims(HashMap<String, serde_json::Value>);
impl AdditionalClaims for OtherClaims {}

type TokenResponse = StandardTokenResponse<
    IdTokenFields<
        OtherClaims,
        EmptyExtraTokenFields,
        CoreGenderClaim,
        CoreJweContentEncryptionAlgorithm,
        CoreJwsSigningAlgorithm,
    >,
    CoreTokenType,
>;

pub(crate) type OidcClient = Client<
    OtherClaims,
    CoreAuthDisplay,
    CoreGenderClaim,
    CoreJweContentEncryptionAlgorithm,
    CoreJsonWebKey,
    CoreAuthPrompt,
    StandardErrorResponse<CoreErrorResponseType>,
    TokenResponse,
    CoreTokenIntrospectionResponse,
    CoreRevocableToken,
    CoreRevocationErrorResponse,
    EndpointSet,
    EndpointNotSet,
    EndpointNotSet,
    EndpointNotSet,
    EndpointMaybeSet,
    EndpointMaybeSet,
>;

/// What discovery found: a client ready for the flow and the scopes to ask for.
pub(crate) struct Discovered {
    pub client: OidcClient,
    pub scopes: Vec<String>,
    /// When this was fetched (Unix seconds), so a key rotation refetches at most once a minute.
    pub fetched_at: i64,
}

/// The configured provider and, once it answered, its metadata and keys.
pub struct Sso {
    pub config: OidcConfig,
    redirect: RedirectUrl,
    /// Never follows redirects: a provider's answer is taken from where it was asked (SSRF);
    /// reads at most `outbound::MAX_ANSWER` of it.
    pub(crate) http: crate::outbound::Outbound,
    discovered: RwLock<Option<Arc<Discovered>>>,
}

impl Sso {
    /// Checks the configuration; the provider is not contacted until `discover`.
    pub fn new(config: OidcConfig, public_url: &str) -> Result<Sso, String> {
        IssuerUrl::new(config.issuer.clone())
            .map_err(|e| format!("KLAXON_OIDC_ISSUER is not a URL: {e}"))?;
        let redirect = RedirectUrl::new(format!("{public_url}/api/oidc/callback"))
            .map_err(|e| format!("KLAXON_PUBLIC_URL: {e}"))?;
        // The administrator's provider: no address policy, but no redirects and a capped read.
        let http = crate::outbound::Outbound::trusted();
        Ok(Sso {
            config,
            redirect,
            http,
            discovered: RwLock::new(None),
        })
    }

    /// True once the provider answered discovery.
    pub fn available(&self) -> bool {
        self.current().is_some()
    }

    pub(crate) fn current(&self) -> Option<Arc<Discovered>> {
        self.discovered.read().expect("not poisoned").clone()
    }

    /// Fetches the provider's metadata and keys once, replacing what was known.
    pub async fn discover(&self, now: i64) -> Result<(), String> {
        let issuer = IssuerUrl::new(self.config.issuer.clone()).map_err(|e| e.to_string())?;
        let metadata = CoreProviderMetadata::discover_async(issuer, &self.http)
            .await
            .map_err(|e| format!("discovery of {} failed: {e}", self.config.issuer))?;
        let scopes = self.config.scopes.clone().unwrap_or_else(|| {
            let offers_groups = metadata
                .scopes_supported()
                .is_some_and(|s| s.iter().any(|s| s.as_str() == "groups"));
            let mut scopes = vec!["openid".to_string(), "profile".into(), "email".into()];
            if offers_groups {
                scopes.push("groups".into());
            }
            scopes
        });
        let client = OidcClient::from_provider_metadata(
            metadata,
            ClientId::new(self.config.client_id.clone()),
            self.config.client_secret.clone().map(ClientSecret::new),
        )
        .set_redirect_uri(self.redirect.clone());
        *self.discovered.write().expect("not poisoned") = Some(Arc::new(Discovered {
            client,
            scopes,
            fetched_at: now,
        }));
        Ok(())
    }

    /// Discovery until the provider answers: after 1 s, then doubling up to a minute.
    pub async fn keep_discovering(&self, clock: &dyn crate::Clock) {
        let mut wait = Duration::from_secs(1);
        while !self.available() {
            match self.discover(clock.now()).await {
                Ok(()) => {
                    tracing::info!(issuer = %self.config.issuer, "single sign-on is available")
                }
                Err(e) => {
                    tracing::warn!(error = %e, retry_in = ?wait, "single sign-on is unavailable");
                    tokio::time::sleep(wait).await;
                    wait = (wait * 2).min(Duration::from_secs(60));
                }
            }
        }
    }
}
