//! The server functions the pages call, all under `/rpc`. Each parses its input, calls one
//! core operation as the signed-in caller and returns the result.

pub mod account;
pub mod admin;
pub mod deadman;
pub mod device;
pub mod incidents;
pub mod integrations;
pub mod maintenance;
pub mod paging;
pub mod rota;
pub mod schedule;
pub mod session;
pub mod signup;
pub mod team_access;
pub mod teams;

use leptos::prelude::ServerFnError;

/// The sentence to show for a failed call.
pub fn error_text(e: &ServerFnError) -> String {
    match e {
        ServerFnError::ServerError(message) => message.clone(),
        _ => "Klaxon could not be reached; check the connection and try again.".to_string(),
    }
}

/// The failure of an action's last result, if it failed.
pub fn failure<T>(result: &Option<Result<T, ServerFnError>>) -> Option<String> {
    match result {
        Some(Err(e)) => Some(error_text(e)),
        _ => None,
    }
}
