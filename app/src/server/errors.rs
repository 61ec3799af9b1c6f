//! Core errors become the one sentence shown next to the control that failed, and the HTTP
//! status the REST API would answer for the same refusal.

use crate::sentences::{sentence, NOT_FOUND};
use axum::http::request::Parts;
use axum::http::{header, HeaderValue, StatusCode};
use klaxon_core::Error;
use leptos::prelude::*;
use leptos_axum::ResponseOptions;

/// Maps any core error to a server-function error carrying a readable sentence.
pub fn fail(e: Error) -> ServerFnError {
    e.report();
    set_status(&e);
    let message = match e {
        Error::Unauthorized => "Your session has ended; sign in again.".to_string(),
        Error::NotFound => NOT_FOUND.to_string(),
        other => sentence(&other.to_string()),
    };
    ServerFnError::new(message)
}

/// A form field's raw text parsed into its domain type; a refusal names the field.
pub fn field<T>(name: &str, parsed: Result<T, String>) -> Result<T, ServerFnError> {
    klaxon_core::field(name, parsed).map_err(fail)
}

/// Sign-in answers every credential failure alike, so the page says it plainly.
pub fn sign_in_failure(e: Error) -> ServerFnError {
    match e {
        Error::Unauthorized => {
            set_status(&e);
            ServerFnError::new("Wrong username or password.")
        }
        other => fail(other),
    }
}

/// Gives a `/rpc` call the status of its refusal (404, 403, 429 with `Retry-After`, …), not
/// a blanket 500. Left alone for a plain form post, which must stay a redirect back to the
/// page that shows the sentence, and for server functions run while rendering a page.
fn set_status(e: &Error) {
    let Some(parts) = use_context::<Parts>() else {
        return;
    };
    let form_post = parts
        .headers
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.contains("text/html"));
    if !parts.uri.path().starts_with("/rpc/") || form_post {
        return;
    }
    let Some(options) = use_context::<ResponseOptions>() else {
        return;
    };
    let status =
        StatusCode::from_u16(e.code().status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    options.set_status(status);
    if let Some(retry_after) = e.retry_after() {
        if let Ok(v) = HeaderValue::from_str(&retry_after.to_string()) {
            options.insert_header(header::RETRY_AFTER, v);
        }
    }
}
