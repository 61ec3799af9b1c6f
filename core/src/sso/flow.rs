//! The browser flow. Starting keeps the `state`'s hash, the nonce and the PKCE verifier in the
//! database (any replica may receive the callback) and puts the `state` itself in a short-lived
//! cookie, so a callback completes only in the browser that started it, once. The callback
//! trades the code and has the `openidconnect` crate verify the ID token's signature, issuer,
//! audience, nonce and expiry.

use super::grants::Identity;
use super::Discovered;
use crate::accounts::StartedSession;
use crate::credentials::Presented;
use crate::secrets::hash_token;
use crate::throttle::Attempt;
use crate::{Core, Error, Result};
use klaxon_domain::sso::{groups_from_claim, SsoRefusal};
use openidconnect::core::CoreResponseType;
use openidconnect::{
    AuthenticationFlow, AuthorizationCode, ClaimsVerificationError, CsrfToken, Nonce,
    PkceCodeChallenge, PkceCodeVerifier, RequestTokenError, Scope, TokenResponse,
};
use serde::Deserialize;
use std::sync::Arc;

/// The cookie holding a started sign-in's `state`.
pub const STATE_COOKIE: &str = "klaxon_oidc";
/// How long a started sign-in may take at the provider.
pub const LOGIN_TTL: i64 = 600;
/// A key the provider's published set lacks makes Klaxon refetch the set, at most this often.
const REFETCH_KEYS_AFTER: i64 = 60;

/// A sign-in sent on to the provider.
pub struct SsoStarted {
    pub authorize_url: String,
    /// For the `STATE_COOKIE`.
    pub state: String,
}

/// What the provider's redirect brings back to `/api/oidc/callback`.
#[derive(Debug, Default, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct SsoCallback {
    /// The authorization code (longer than 4096 characters: refused as `failed`).
    #[param(max_length = 4096)]
    pub code: Option<String>,
    /// The `state` the sign-in started with; must equal the `klaxon_oidc` cookie.
    #[param(max_length = 512)]
    pub state: Option<String>,
    /// Set by the provider instead of `code` when it refused or the person cancelled
    /// (`access_denied` shows as `cancelled`).
    pub error: Option<String>,
}

/// A completed single sign-on: the session and where the browser goes next.
pub struct SsoSignedIn {
    pub session: StartedSession,
    pub next: String,
}

#[derive(sqlx::FromRow)]
struct LoginRow {
    nonce: String,
    pkce_verifier: String,
    next: String,
    created_at: i64,
}

fn refused(why: SsoRefusal) -> Error {
    Error::Sso(why)
}

impl Core {
    fn sso(&self) -> Result<&super::Sso> {
        self.sso.as_deref().ok_or(Error::NotFound)
    }

    /// The provider's client, trying discovery once more when it has not answered yet.
    async fn sso_client(&self) -> Result<Arc<Discovered>> {
        let sso = self.sso()?;
        if sso.current().is_none() {
            if let Err(e) = sso.discover(self.now()).await {
                tracing::warn!(error = %e, "single sign-on is unavailable");
            }
        }
        sso.current().ok_or(refused(SsoRefusal::Unavailable))
    }

    /// Starts a browser sign-in that comes back to `next` (a same-origin path, checked by the
    /// caller). At most `SSO_STARTS_PER_ADDRESS` per address in the window.
    pub async fn sso_start(&self, request: &Presented<'_>, next: &str) -> Result<SsoStarted> {
        self.sso()?;
        let address = self.client_address(request);
        let started = self.reserve(Attempt::SsoStart, &address).await?;
        let discovered = match self.sso_client().await {
            Ok(d) => d,
            Err(e) => {
                // A provider that is down costs the caller nothing.
                self.give_back(&started).await?;
                return Err(e);
            }
        };
        let (challenge, verifier) = PkceCodeChallenge::new_random_sha256();
        let mut request = discovered.client.authorize_url(
            AuthenticationFlow::<CoreResponseType>::AuthorizationCode,
            CsrfToken::new_random,
            Nonce::new_random,
        );
        // The client adds `openid` itself.
        for scope in discovered.scopes.iter().filter(|s| *s != "openid") {
            request = request.add_scope(Scope::new(scope.clone()));
        }
        let (url, state, nonce) = request.set_pkce_challenge(challenge).url();
        let now = self.now();
        sqlx::query("DELETE FROM oidc_logins WHERE created_at <= $1")
            .bind(now - LOGIN_TTL)
            .execute(&self.db.pool)
            .await?;
        sqlx::query(
            "INSERT INTO oidc_logins (state_hash, nonce, pkce_verifier, next, created_at) VALUES ($1, $2, $3, $4, $5)",
        )
        .bind(hash_token(state.secret()))
        .bind(nonce.secret())
        .bind(verifier.secret())
        .bind(next)
        .bind(now)
        .execute(&self.db.pool)
        .await?;
        Ok(SsoStarted {
            authorize_url: url.to_string(),
            state: state.secret().clone(),
        })
    }

    /// Completes a browser sign-in. `cookie_state` is the `STATE_COOKIE` the browser sent.
    /// Every refusal is an `Error::Sso` naming the sentence for the sign-in page.
    pub async fn sso_finish(
        &self,
        cookie_state: Option<&str>,
        callback: &SsoCallback,
    ) -> Result<SsoSignedIn> {
        let sso = self.sso()?;
        let state = callback.state.as_deref().unwrap_or_default();
        if state.is_empty() || state.len() > 512 || cookie_state != Some(state) {
            return Err(refused(SsoRefusal::Failed));
        }
        // Used once, whatever the provider answered.
        let login: Option<LoginRow> = sqlx::query_as(
            "DELETE FROM oidc_logins WHERE state_hash = $1 RETURNING nonce, pkce_verifier, next, created_at",
        )
        .bind(hash_token(state))
        .fetch_optional(&self.db.pool)
        .await?;
        let login = login
            .filter(|l| l.created_at > self.now() - LOGIN_TTL)
            .ok_or(refused(SsoRefusal::Failed))?;
        if let Some(error) = &callback.error {
            return Err(refused(if error == "access_denied" {
                SsoRefusal::Cancelled
            } else {
                SsoRefusal::Failed
            }));
        }
        let code = callback
            .code
            .clone()
            .filter(|c| !c.is_empty() && c.len() <= 4096)
            .ok_or(refused(SsoRefusal::Failed))?;
        let discovered = self.sso_client().await?;
        let tokens = discovered
            .client
            .exchange_code(AuthorizationCode::new(code))
            .map_err(|_| refused(SsoRefusal::Unavailable))?
            .set_pkce_verifier(PkceCodeVerifier::new(login.pkce_verifier))
            .request_async(&sso.http)
            .await
            .map_err(|e| match e {
                RequestTokenError::ServerResponse(r) => {
                    tracing::info!(error = %r, "the provider refused the sign-in code");
                    refused(SsoRefusal::Failed)
                }
                other => {
                    tracing::warn!(error = %other, "the provider's token endpoint failed");
                    refused(SsoRefusal::Unavailable)
                }
            })?;
        let id_token = tokens
            .id_token()
            .ok_or(refused(SsoRefusal::Failed))?
            .clone();
        let nonce = Nonce::new(login.nonce);
        let verify = |d: &Discovered| {
            let now = self.now();
            let verifier = d
                .client
                .id_token_verifier()
                .set_time_fn(move || chrono::DateTime::from_timestamp(now, 0).unwrap_or_default());
            id_token.claims(&verifier, &nonce).cloned()
        };
        let claims = match verify(&discovered) {
            // The provider may have rotated its keys since they were fetched.
            Err(ClaimsVerificationError::SignatureVerification(_))
                if discovered.fetched_at + REFETCH_KEYS_AFTER <= self.now() =>
            {
                sso.discover(self.now())
                    .await
                    .map_err(|_| refused(SsoRefusal::Unavailable))?;
                verify(&*self.sso_client().await?)
            }
            other => other,
        }
        .map_err(|e| {
            tracing::warn!(error = %e, "an ID token failed verification");
            refused(SsoRefusal::Failed)
        })?;
        let identity = Identity {
            issuer: claims.issuer().to_string(),
            subject: claims.subject().to_string(),
            email: claims.email().map(|e| e.as_str().trim().to_lowercase()),
            email_verified: claims.email_verified().unwrap_or(false),
            preferred_username: claims.preferred_username().map(|u| u.as_str().to_string()),
            groups: groups_from_claim(claims.additional_claims().0.get(&sso.config.groups_claim)),
        };
        let user_id = self.sso_sign_in(&identity).await?;
        let ceiling = self.now() + sso.config.session_ttl;
        Ok(SsoSignedIn {
            session: self.start_session(user_id, Some(ceiling)).await?,
            next: login.next,
        })
    }
}

impl Core {
    /// The `Set-Cookie` value carrying a started sign-in's `state` to the callback (`None`
    /// clears it). `SameSite=Lax` still sends it on the provider's top-level redirect back.
    pub fn sso_state_cookie(&self, state: Option<&str>) -> String {
        let secure = if self.secure_cookies() {
            "; Secure"
        } else {
            ""
        };
        let (value, max_age) = state.map_or(("", 0), |s| (s, LOGIN_TTL));
        format!(
            "{STATE_COOKIE}={value}; Path=/api/oidc; HttpOnly; SameSite=Lax; Max-Age={max_age}{secure}"
        )
    }
}
