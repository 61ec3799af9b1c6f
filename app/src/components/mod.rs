//! Pieces shared by several pages.

pub mod clipboard;
pub mod form;
pub mod icons;
pub mod layout;
pub mod nav;
pub mod team_list;
pub mod text;
