//! Pieces shared by several pages.

pub mod calendar;
pub mod charts;
pub mod clipboard;
pub mod coverage;
pub mod drafts;
pub mod form;
pub mod hydration;
pub mod icons;
pub mod layout;
pub mod live;
pub mod loaded;
pub mod nav;
pub mod report_charts;
pub mod secret;
pub mod severity;
pub mod team_list;
pub mod team_page;
pub mod text;
