//! Klaxon's phone web app: the HTML shell, the router, the pages and the server functions
//! they call. Server functions only translate between the UI and `klaxon_core`.

pub mod api;
mod app;
pub mod components;
pub mod pages;
pub mod paths;
pub mod sentences;
#[cfg(feature = "ssr")]
pub mod server;

#[cfg(feature = "hydrate")]
pub use app::{account_changes_load_in_full, hydration_finished};
pub use app::{shell, stylesheet_href, App};
