//! Turning the current request into an `Actor`, always through core's own credential checks.

use super::errors::fail;
use axum::http::header::SET_COOKIE;
use axum::http::request::Parts;
use axum::http::HeaderValue;
use klaxon_core::credentials::Presented;
use klaxon_core::{Actor, Core, Error};
use leptos::prelude::*;
use leptos_axum::ResponseOptions;

/// The service the server provides to every route and server function.
pub fn core() -> Result<Core, ServerFnError> {
    use_context::<Core>()
        .ok_or_else(|| ServerFnError::new("Klaxon is not ready; try again in a moment."))
}

pub async fn request_parts() -> Result<Parts, ServerFnError> {
    leptos_axum::extract::<Parts>()
        .await
        .map_err(|_| ServerFnError::new("Klaxon could not read the request; try again."))
}

/// What the request presents to core: credentials, origin headers, the peer address.
pub fn presented(parts: &Parts) -> Presented<'_> {
    Presented::from_parts(parts)
}

/// The caller, by API key or session cookie (with core's cross-origin guard).
pub async fn signed_in() -> Result<(Core, Actor), ServerFnError> {
    let core = core()?;
    let parts = request_parts().await?;
    let actor = core.authenticate(&presented(&parts)).await.map_err(fail)?;
    Ok((core, actor))
}

/// Like `signed_in`, but "nobody" is an answer rather than an error.
pub async fn signed_in_or_none() -> Result<Option<(Core, Actor)>, ServerFnError> {
    let core = core()?;
    let parts = request_parts().await?;
    match core.authenticate(&presented(&parts)).await {
        Ok(actor) => Ok(Some((core, actor))),
        Err(Error::Unauthorized) => Ok(None),
        Err(e) => Err(fail(e)),
    }
}

/// Adds a `Set-Cookie` header to the response.
pub fn set_cookie(value: &str) -> Result<(), ServerFnError> {
    let value = HeaderValue::from_str(value)
        .map_err(|_| ServerFnError::new("Klaxon could not set the session cookie."))?;
    expect_context::<ResponseOptions>().append_header(SET_COOKIE, value);
    Ok(())
}
