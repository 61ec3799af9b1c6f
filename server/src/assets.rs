//! The site files (wasm, js, css, icons) built by cargo-leptos, embedded in the release binary
//! (read from disk in debug builds) and served with a strong ETag per file.

use axum::body::Body;
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::Response;

#[derive(rust_embed::RustEmbed)]
#[folder = "$CARGO_MANIFEST_DIR/../target/site"]
#[allow_missing = true]
struct Site;

/// The file at `path`, or `None` when there is no such file.
pub fn serve(path: &str, request: &HeaderMap) -> Option<Response> {
    let file = Site::get(path.trim_start_matches('/'))?;
    let etag = format!("\"{}\"", hex::encode(file.metadata.sha256_hash()));
    let matches = request
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.split(',').any(|t| t.trim() == etag || t.trim() == "*"));
    let builder = Response::builder()
        .header(header::ETAG, &etag)
        // File names carry no hash, so clients revalidate each time; a 304 costs one round trip.
        .header(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    let response = if matches {
        builder.status(StatusCode::NOT_MODIFIED).body(Body::empty())
    } else {
        builder
            .header(header::CONTENT_TYPE, file.metadata.mimetype())
            .body(Body::from(file.data.into_owned()))
    };
    response.ok()
}
