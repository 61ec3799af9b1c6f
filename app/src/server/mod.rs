//! Server-only helpers shared by every server function: the service from context, the caller,
//! and the one mapping from core errors to what the page shows.

mod auth;
mod chunks;
mod errors;
mod qr;

pub use auth::{core, presented, request_parts, set_cookie, signed_in, signed_in_or_none};
pub use chunks::{announce_chunk, ChunkLoaderPreload, Chunks};
pub use errors::{fail, field, sign_in_failure};
pub use qr::qr_svg;
