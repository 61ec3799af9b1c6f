//! Core errors become the one sentence shown next to the control that failed.

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

/// Core messages are lower-case phrases, sometimes led by the field name
/// (`current_password: ...`); the page wants a capitalised sentence.
fn sentence(message: &str) -> String {
    let message = match message.split_once(": ") {
        Some((field, rest)) if field.chars().all(|c| c.is_ascii_lowercase() || c == '_') => rest,
        _ => message,
    };
    let mut words = message.splitn(2, ' ');
    let first = words.next().unwrap_or_default().replace('_', " ");
    let rest = words.next().map(|r| format!(" {r}")).unwrap_or_default();
    let mut chars = first.chars();
    let mut out = match chars.next() {
        Some(c) => c.to_uppercase().chain(chars).collect::<String>(),
        None => String::new(),
    };
    out.push_str(&rest);
    if !out.ends_with(['.', '!', '?']) {
        out.push('.');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::sentence;

    #[test]
    fn core_phrases_become_sentences() {
        assert_eq!(
            sentence("current_password: that is not your current password"),
            "That is not your current password."
        );
        assert_eq!(
            sentence("push_topic must be 1 to 64 letters, digits, _ or -"),
            "Push topic must be 1 to 64 letters, digits, _ or -."
        );
        assert_eq!(
            sentence("too many failed sign-ins for this username; try again in 15 minutes"),
            "Too many failed sign-ins for this username; try again in 15 minutes."
        );
    }
}
