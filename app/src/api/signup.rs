//! Joining Klaxon: what the sign-up page may offer, and the sign-up itself.

use klaxon_domain::invite::SignupCheck;
use leptos::prelude::*;

/// The sign-up mode and, for a link, whether it is usable and which team it joins.
#[server(prefix = "/rpc")]
pub async fn signup_options(invite: Option<String>) -> Result<SignupCheck, ServerFnError> {
    use crate::server::{core, fail};
    core()?.signup_check(invite.as_deref()).await.map_err(fail)
}

/// Creates the account, signs it in and sends the browser to the incident list.
#[server(prefix = "/rpc")]
pub async fn sign_up(
    username: String,
    password: String,
    invite: Option<String>,
) -> Result<(), ServerFnError> {
    use crate::server::{core, fail, field, presented, request_parts, set_cookie};
    let username = field("username", klaxon_domain::text::Username::parse(&username))?;
    let core = core()?;
    let parts = request_parts().await?;
    let started = core
        .signup(&presented(&parts), &username, &password, invite.as_deref())
        .await
        .map_err(fail)?;
    set_cookie(&core.session_cookie(&started))?;
    leptos_axum::redirect("/");
    Ok(())
}

/// Someone signed in joins the link's team and lands on its page.
#[server(prefix = "/rpc")]
pub async fn join_team(invite: String) -> Result<(), ServerFnError> {
    use crate::server::{fail, signed_in};
    let (core, actor) = signed_in().await?;
    let team = core.join_by_invite(&actor, &invite).await.map_err(fail)?;
    leptos_axum::redirect(&format!("/teams/{}", team.id));
    Ok(())
}
