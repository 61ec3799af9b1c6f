//! Pieces shared by several pages.

pub mod calendar;
pub mod clipboard;
pub mod form;
pub mod icons;
pub mod layout;
pub mod nav;
pub mod poll;
pub mod secret;
pub mod severity;
pub mod team_list;
pub mod text;
