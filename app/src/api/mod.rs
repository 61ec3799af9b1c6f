//! The server functions the pages call, all under `/rpc`. Each parses its input, calls one
//! core operation as the signed-in caller and returns the result.

pub mod account;
pub mod admin;
pub mod channels;
pub mod chat;
pub mod deadman;
pub mod device;
pub mod incidents;
pub mod integrations;
pub mod maintenance;
pub mod paging;
pub mod reach;
pub mod reports;
pub mod rota;
pub mod schedule;
pub mod session;
pub mod signup;
pub mod team_access;
pub mod teams;

use leptos::prelude::{Resource, ServerFnError};
use leptos::server::codee::{Decoder, Encoder};
use serde::de::DeserializeOwned;
use serde::Serialize;
use std::future::Future;

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

/// How a page's loaded data travels from the server's render to the browser: JSON, read with
/// serde_json's byte reader as server functions' answers are. Leptos's default codec reads a
/// `&str`, and serde_json compiles a separate deserializer per reader, so every type a page both
/// loads and fetches was in the wasm twice.
pub struct Json;

impl<T: Serialize> Encoder<T> for Json {
    type Error = serde_json::Error;
    type Encoded = String;

    fn encode(value: &T) -> Result<String, serde_json::Error> {
        serde_json::to_string(value)
    }
}

impl<T: DeserializeOwned> Decoder<T> for Json {
    type Error = serde_json::Error;
    type Encoded = str;

    fn decode(text: &str) -> Result<T, serde_json::Error> {
        serde_json::from_slice(text.as_bytes())
    }
}

/// Data a page loads from a server function.
pub type Loaded<T> = Resource<Result<T, ServerFnError>, Json>;

/// `Resource::new` with the [`Json`] codec: loads `fetcher(source())`, again whenever
/// `source()` changes; rendered on the server and taken over by the browser without a refetch.
#[track_caller]
pub fn load<T, S, Fut>(
    source: impl Fn() -> S + Send + Sync + 'static,
    fetcher: impl Fn(S) -> Fut + Send + Sync + 'static,
) -> Loaded<T>
where
    T: Serialize + DeserializeOwned + Send + Sync + 'static,
    S: PartialEq + Clone + Send + Sync + 'static,
    Fut: Future<Output = Result<T, ServerFnError>> + Send + 'static,
{
    Resource::new_with_options(source, fetcher, false)
}
