//! Incidents: the unit of human work.

pub mod actions;
pub mod board;
pub mod detail;
pub mod lifecycle;
mod next;
pub mod reads;
pub mod stats;
