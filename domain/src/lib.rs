//! Klaxon's pure types and rules: no I/O, compiled both natively and to wasm so the
//! server and the phone UI agree on every wire shape and validation rule.

pub mod account;
pub mod alerting;
pub mod board;
pub mod calendar;
pub mod change;
pub mod channel;
pub mod chat;
#[cfg(feature = "config")]
pub mod config;
pub mod contact;
pub mod deadman;
pub mod device;
pub mod duration;
pub mod error;
pub mod export;
pub mod handoff;
pub mod health;
pub mod ids;
pub mod incident;
pub mod incident_page;
pub mod invite;
pub mod live;
pub mod maintenance;
pub mod mapping;
pub mod noise;
pub mod oncall_day;
pub mod paging;
pub mod push_setup;
pub mod review;
pub mod rotation;
pub mod routing;
pub mod rules;
pub mod schedule;
pub mod settings;
pub mod silence;
pub mod sso;
pub mod team;
pub mod text;
pub mod timestamp;
pub mod validate;
pub mod words;

pub use duration::Duration;
pub use error::{ErrorBody, ErrorCode};
pub use timestamp::Timestamp;
