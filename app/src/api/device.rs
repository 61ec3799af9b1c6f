//! Approving a terminal's sign-in (Klaxon's device flow) from the browser.

use leptos::prelude::*;

/// Lets the terminal showing `user_code` in as the caller (`approve`), or refuses it.
#[server(prefix = "/rpc")]
pub async fn approve_device(user_code: String, approve: bool) -> Result<bool, ServerFnError> {
    use crate::server::{fail, signed_in};
    let (core, actor) = signed_in().await?;
    core.approve_device(&actor, &user_code, approve)
        .await
        .map_err(fail)?;
    Ok(approve)
}
