//! One module per screen.

pub mod admin;
pub mod home;
pub mod login;
pub mod not_found;
pub mod profile;
pub mod schedule;
pub mod signup;
pub mod teams;
