//! The core's integration tests, one binary with a module per file: one link, not three.

mod hostile_input;
mod module_graph;
mod paging_lane;
mod room_sizes;
