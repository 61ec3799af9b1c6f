//! The administrator's console: users, teams and settings. Every call checks the right again
//! in core; the page only decides what to offer.

use klaxon_domain::account::{AdminView, User};
use klaxon_domain::settings::AdminSettings;
use leptos::prelude::*;

#[server(prefix = "/rpc")]
pub async fn admin_console() -> Result<AdminView, ServerFnError> {
    use crate::server::{fail, signed_in};
    let (core, actor) = signed_in().await?;
    core.admin_console(&actor).await.map_err(fail)
}

/// A new person with a first password (given to them by hand), optionally an administrator.
#[server(prefix = "/rpc")]
pub async fn admin_create_user(
    username: String,
    password: String,
    email: Option<String>,
    is_admin: Option<String>,
) -> Result<User, ServerFnError> {
    use crate::server::field;
    use crate::server::{fail, signed_in};
    use klaxon_core::accounts::NewUser;
    use klaxon_domain::text::{Email, Username};
    let username = field("username", Username::parse(&username))?;
    let email = match email.filter(|e| !e.trim().is_empty()) {
        Some(e) => Some(field("email", Email::parse(&e))?),
        None => None,
    };
    let (core, actor) = signed_in().await?;
    core.create_user(
        &actor,
        NewUser {
            username,
            password: Some(password),
            is_admin: is_admin.is_some(),
            push_topic: None,
            email,
        },
    )
    .await
    .map_err(fail)
}

#[server(prefix = "/rpc")]
pub async fn admin_set_disabled(user_id: i64, disabled: bool) -> Result<User, ServerFnError> {
    use crate::server::{fail, signed_in};
    let (core, actor) = signed_in().await?;
    core.set_disabled(&actor, user_id, disabled)
        .await
        .map_err(fail)
}

#[server(prefix = "/rpc")]
pub async fn admin_set_admin(user_id: i64, is_admin: bool) -> Result<User, ServerFnError> {
    use crate::server::{fail, signed_in};
    let (core, actor) = signed_in().await?;
    core.set_admin(&actor, user_id, is_admin)
        .await
        .map_err(fail)
}

#[server(prefix = "/rpc")]
pub async fn admin_delete_user(user_id: i64) -> Result<(), ServerFnError> {
    use crate::server::{fail, signed_in};
    let (core, actor) = signed_in().await?;
    core.delete_user(&actor, user_id).await.map_err(fail)
}

#[server(prefix = "/rpc")]
pub async fn admin_delete_team(team_id: i64) -> Result<(), ServerFnError> {
    use crate::server::{fail, signed_in};
    let (core, actor) = signed_in().await?;
    core.delete_team(&actor, team_id).await.map_err(fail)
}

/// The whole settings form, saved or refused as one.
#[server(prefix = "/rpc")]
pub async fn admin_save_settings(
    signup_mode: String,
    notify_repeat_interval: String,
    stale_after: String,
    archive_after: String,
) -> Result<AdminSettings, ServerFnError> {
    use crate::server::{fail, signed_in};
    use klaxon_domain::settings::{
        ARCHIVE_AFTER, NOTIFY_REPEAT_INTERVAL, SIGNUP_MODE, STALE_AFTER,
    };
    let (core, actor) = signed_in().await?;
    let update = [
        (SIGNUP_MODE, signup_mode),
        (NOTIFY_REPEAT_INTERVAL, notify_repeat_interval),
        (STALE_AFTER, stale_after),
        (ARCHIVE_AFTER, archive_after),
    ]
    .into_iter()
    .map(|(k, v)| {
        (
            k.to_string(),
            serde_json::Value::String(v.trim().to_string()),
        )
    })
    .collect();
    // The form's own words: its labels, not the API's keys.
    if let Some(said) = klaxon_domain::settings::form_refusal(&update) {
        return Err(fail(klaxon_core::Error::Invalid(said)));
    }
    core.update_settings(&actor, &update).await.map_err(fail)
}
