//! Core errors become the one sentence shown next to the control that failed.

use crate::components::text::sentence;
use klaxon_core::Error;
use leptos::prelude::ServerFnError;

/// Maps any core error to a server-function error carrying a readable sentence.
pub fn fail(e: Error) -> ServerFnError {
    let message = match e {
        Error::Unauthorized => "Your session has ended; sign in again.".to_string(),
        Error::NotFound => "Not found, or not in one of your teams.".to_string(),
        other => sentence(&other.to_string()),
    };
    ServerFnError::new(message)
}

/// Sign-in answers every credential failure alike, so the page says it plainly.
pub fn sign_in_failure(e: Error) -> ServerFnError {
    match e {
        Error::Unauthorized => ServerFnError::new("Wrong username or password."),
        other => fail(other),
    }
}
