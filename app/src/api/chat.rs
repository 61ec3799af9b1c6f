//! The caller's linked chat accounts, and the one-time code that links one.

use klaxon_domain::chat::{ChatLink, LinkCode};
use leptos::prelude::*;

#[server(prefix = "/rpc")]
pub async fn list_chat_links() -> Result<Vec<ChatLink>, ServerFnError> {
    use crate::server::{fail, signed_in};
    let (core, actor) = signed_in().await?;
    core.list_chat_links(&actor).await.map_err(fail)
}

/// A fresh code, shown once: typed in chat as `/klaxon link <code>`.
#[server(prefix = "/rpc")]
pub async fn new_chat_link_code() -> Result<LinkCode, ServerFnError> {
    use crate::server::{fail, signed_in};
    let (core, actor) = signed_in().await?;
    core.new_chat_link_code(&actor).await.map_err(fail)
}

#[server(prefix = "/rpc")]
pub async fn unlink_chat(link_id: i64) -> Result<(), ServerFnError> {
    use crate::server::{fail, signed_in};
    let (core, actor) = signed_in().await?;
    core.unlink_chat(&actor, link_id).await.map_err(fail)
}
