//! The operator's integration tests, one binary with a module per file: one link, not four.

mod cluster;
mod common;
mod crds;
mod mocked;
mod server_side;
