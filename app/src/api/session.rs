//! Signing in and out, and who is signed in.

use klaxon_domain::account::{AuthConfig, Me};
use leptos::prelude::*;
use serde::{Deserialize, Serialize};

/// What the sign-in page needs: the sign-in options and the address to show in examples.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SignInSetup {
    pub config: AuthConfig,
    pub public_url: String,
}

#[server(prefix = "/rpc")]
pub async fn sign_in_options() -> Result<SignInSetup, ServerFnError> {
    use crate::server::{core, fail};
    let core = core()?;
    let config = core.auth_config().await.map_err(fail)?;
    Ok(SignInSetup {
        config,
        public_url: core.config.public_url.trim_end_matches('/').to_string(),
    })
}

/// Password sign-in: sets the session cookie and sends the browser on to `next`.
#[server(prefix = "/rpc")]
pub async fn login(
    username: String,
    password: String,
    next: Option<String>,
) -> Result<(), ServerFnError> {
    use crate::server::{core, presented, request_parts, set_cookie, sign_in_failure};
    let core = core()?;
    let parts = request_parts().await?;
    let started = core
        .login(&presented(&parts), &username, &password)
        .await
        .map_err(sign_in_failure)?;
    set_cookie(&core.session_cookie(&started))?;
    leptos_axum::redirect(&crate::paths::after_sign_in(next.as_deref()));
    Ok(())
}

/// Ends the session (if any) and returns to the sign-in page.
#[server(prefix = "/rpc")]
pub async fn logout() -> Result<(), ServerFnError> {
    use crate::server::{core, fail, set_cookie, signed_in_or_none};
    if let Some((core, actor)) = signed_in_or_none().await? {
        core.logout(&actor).await.map_err(fail)?;
    }
    set_cookie(&core()?.clear_session_cookie())?;
    if let Some(res) = use_context::<leptos_axum::ResponseOptions>() {
        res.insert_header(
            axum::http::header::HeaderName::from_static("clear-site-data"),
            axum::http::HeaderValue::from_static(klaxon_core::credentials::CLEAR_ON_SIGN_OUT),
        );
    }
    leptos_axum::redirect("/login");
    Ok(())
}

/// The signed-in user with their teams, or `None` when nobody is signed in.
#[server(prefix = "/rpc")]
pub async fn current_user() -> Result<Option<Me>, ServerFnError> {
    use crate::server::{fail, signed_in_or_none};
    match signed_in_or_none().await? {
        Some((core, actor)) => {
            let mut me = core.me(&actor).await.map_err(fail)?;
            // Without a setting of their own, the zone their browser says it is in.
            if me.time_zone.is_none() {
                me.time_zone = browser_zone().await;
            }
            Ok(Some(me))
        }
        None => Ok(None),
    }
}

/// The browser's zone from the `klaxon_tz` cookie the shell's script sets, when the time zone
/// database has it.
#[cfg(feature = "ssr")]
async fn browser_zone() -> Option<String> {
    let parts: axum::http::request::Parts = leptos_axum::extract().await.ok()?;
    parts
        .headers
        .get_all(axum::http::header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|c| c.trim().strip_prefix("klaxon_tz="))
        .map(|z| {
            z.replace("%2F", "/")
                .replace("%2f", "/")
                .replace("%2B", "+")
                .replace("%2b", "+")
        })
        // A zone name's own rules first (no `..`, no leading `/`): the cookie is the client's.
        .find(|z| {
            klaxon_domain::text::ZoneName::parse(z).is_ok()
                && klaxon_domain::oncall_day::known_zone(z)
        })
}
