//! The signed-in user's own settings: push topic, API keys, password.

use klaxon_domain::account::{ApiKeyInfo, NewApiKey, User};
#[cfg(feature = "ssr")]
use klaxon_domain::ids::{KeyId, UserId};
#[cfg(feature = "ssr")]
use klaxon_domain::text::{Label, Topic};
use leptos::prelude::*;

#[server(prefix = "/rpc")]
pub async fn set_push_topic(topic: String) -> Result<User, ServerFnError> {
    use crate::server::{fail, field, signed_in};
    let topic = field("push_topic", Topic::parse(&topic))?;
    let (core, actor) = signed_in().await?;
    core.set_push_topic(&actor, actor.user_id, &topic)
        .await
        .map_err(fail)
}

#[server(prefix = "/rpc")]
pub async fn list_api_keys() -> Result<Vec<ApiKeyInfo>, ServerFnError> {
    use crate::server::{fail, signed_in};
    let (core, actor) = signed_in().await?;
    core.list_api_keys(&actor, actor.user_id)
        .await
        .map_err(fail)
}

/// Returns the raw key: the only time it is ever shown.
#[server(prefix = "/rpc")]
pub async fn create_api_key(name: String) -> Result<NewApiKey, ServerFnError> {
    use crate::server::{fail, field, signed_in};
    let name = field("name", Label::parse(&name))?;
    let (core, actor) = signed_in().await?;
    core.create_api_key(&actor, actor.user_id, &name)
        .await
        .map_err(fail)
}

#[server(prefix = "/rpc")]
pub async fn delete_api_key(key_id: i64) -> Result<(), ServerFnError> {
    use crate::server::{fail, signed_in};
    let (core, actor) = signed_in().await?;
    core.delete_api_key(&actor, UserId(actor.user_id), KeyId(key_id))
        .await
        .map_err(fail)
}

#[server(prefix = "/rpc")]
pub async fn change_password(
    current_password: String,
    new_password: String,
) -> Result<(), ServerFnError> {
    use crate::server::{fail, signed_in};
    let (core, actor) = signed_in().await?;
    core.change_password(
        &actor,
        actor.user_id,
        &new_password,
        Some(&current_password),
    )
    .await
    .map_err(fail)
}

/// Hides the first-steps card for good, on every device.
#[server(prefix = "/rpc")]
pub async fn dismiss_onboarding() -> Result<(), ServerFnError> {
    use crate::server::{fail, signed_in};
    let (core, actor) = signed_in().await?;
    core.dismiss_onboarding(&actor).await.map_err(fail)
}

/// The profile's push card, with the subscribe link drawn as a QR code for a phone's camera.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct PushCard {
    pub setup: klaxon_domain::push_setup::PushSetup,
    /// SVG of the QR code of `setup.subscribe_link`; empty without one.
    pub qr_svg: String,
    /// The install's VAPID public key, for "Page this phone".
    pub webpush_key: String,
}

#[server(prefix = "/rpc")]
pub async fn get_push_card() -> Result<PushCard, ServerFnError> {
    use crate::server::{fail, qr_svg, signed_in};
    let (core, actor) = signed_in().await?;
    let setup = core.push_setup(&actor).await.map_err(fail)?;
    let qr_svg = setup
        .subscribe_link
        .as_deref()
        .map(qr_svg)
        .unwrap_or_default();
    Ok(PushCard {
        setup,
        qr_svg,
        webpush_key: core.vapid.public_key.clone(),
    })
}

/// "Use a private topic": a new topic nobody can guess becomes the caller's.
#[server(prefix = "/rpc")]
pub async fn choose_private_topic() -> Result<User, ServerFnError> {
    use crate::server::{fail, signed_in};
    let (core, actor) = signed_in().await?;
    core.choose_private_topic(&actor).await.map_err(fail)
}
