//! The site files (wasm, js, css, icons) built by cargo-leptos, embedded in the release binary
//! (read from disk in debug builds). The files pages load are served from a folder named after a
//! hash of their content, `pkg/{hash}/`, and cached as immutable; everything else is revalidated
//! by ETag. Compressed variants (`.br`, `.gz`) are made once at build time
//! (`scripts/compress-site.mjs`) and sent to browsers that accept them.

use axum::body::Body;
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::Response;
use sha2::{Digest, Sha256};
use std::sync::OnceLock;

#[derive(rust_embed::RustEmbed)]
#[folder = "$CARGO_MANIFEST_DIR/../target/site"]
#[allow_missing = true]
struct Site;

/// The site's output name; the page loads `{pkg}/{name}.js`, `.wasm` and `.css`.
pub const OUTPUT: &str = "klaxon";

/// The folder pages load the script and wasm from: `pkg/{hash}`, the hash covering every file
/// cargo-leptos wrote to `pkg`, so a new build of any of them is a new folder and files that
/// name one another by relative path stay of one build. Plain `pkg` when the site is not built.
pub fn pkg_dir() -> &'static str {
    static DIR: OnceLock<String> = OnceLock::new();
    DIR.get_or_init(|| {
        let mut files: Vec<_> = Site::iter()
            .filter(|f| f.starts_with("pkg/") && !f.ends_with(".br") && !f.ends_with(".gz"))
            .collect();
        if files.is_empty() {
            return "pkg".to_string();
        }
        files.sort();
        let mut hash = Sha256::new();
        for name in files {
            if let Some(f) = Site::get(&name) {
                hash.update(name.as_bytes());
                hash.update(f.metadata.sha256_hash());
            }
        }
        format!("pkg/{}", &hex::encode(hash.finalize())[..16])
    })
}

/// The stylesheet's text, which pages carry inline; `None` when the site is not built.
pub fn stylesheet() -> Option<&'static str> {
    static CSS: OnceLock<Option<String>> = OnceLock::new();
    CSS.get_or_init(|| {
        let file = Site::get(&format!("pkg/{OUTPUT}.css"))?;
        String::from_utf8(file.data.into_owned()).ok()
    })
    .as_deref()
}

/// The split manifest cargo-leptos wrote for the lazily loaded pages (empty when the site was
/// built without `--split` or not at all), for their responses' preload headers.
pub fn chunks() -> klaxon_app::server::Chunks {
    static CHUNKS: OnceLock<klaxon_app::server::Chunks> = OnceLock::new();
    CHUNKS
        .get_or_init(|| klaxon_app::server::Chunks {
            dir: pkg_dir().to_string(),
            files: std::sync::Arc::new(
                Site::get("pkg/__wasm_split_manifest.json")
                    .and_then(|f| serde_json::from_slice(&f.data).ok())
                    .unwrap_or_default(),
            ),
        })
        .clone()
}

/// The embedded file a request path names, and whether the name carries the content hash;
/// `None` for the files of another build.
fn resolve(path: &str) -> Option<(String, bool)> {
    let path = path.trim_start_matches('/');
    if let Some(rest) = path.strip_prefix("pkg/") {
        if let Some((dir, file)) = rest.split_once('/') {
            if pkg_dir().strip_prefix("pkg/") == Some(dir) {
                return Some((format!("pkg/{file}"), true));
            }
            if dir.len() == 16 && dir.bytes().all(|b| b.is_ascii_hexdigit()) {
                return None;
            }
        }
    }
    Some((path.to_string(), false))
}

/// The encodings the request accepts, best first, of those the build makes.
fn accepted(request: &HeaderMap) -> Vec<(&'static str, &'static str)> {
    let accept = request
        .get(header::ACCEPT_ENCODING)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    let takes = |name: &str| {
        accept.split(',').any(|part| {
            let mut bits = part.split(';').map(str::trim);
            let named = bits.next().is_some_and(|n| n.eq_ignore_ascii_case(name));
            let q = bits
                .find_map(|b| {
                    b.strip_prefix("q=")
                        .and_then(|q| q.trim().parse::<f32>().ok())
                })
                .unwrap_or(1.0);
            named && q > 0.0
        })
    };
    [("br", ".br"), ("gzip", ".gz")]
        .into_iter()
        .filter(|(name, _)| takes(name))
        .collect()
}

/// The file at `path`, or `None` when there is no such file.
pub fn serve(path: &str, request: &HeaderMap) -> Option<Response> {
    let (name, immutable) = resolve(path)?;
    let file = Site::get(&name)?;
    let compressed = [".br", ".gz"]
        .iter()
        .any(|s| Site::get(&format!("{name}{s}")).is_some());
    let (body, encoding) = accepted(request)
        .into_iter()
        .find_map(|(encoding, suffix)| {
            Site::get(&format!("{name}{suffix}")).map(|f| (f, Some(encoding)))
        })
        .unwrap_or((file.clone(), None));
    let etag = format!("\"{}\"", hex::encode(body.metadata.sha256_hash()));
    let matches = request
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.split(',').any(|t| t.trim() == etag || t.trim() == "*"));
    let mut builder = Response::builder().header(header::ETAG, &etag).header(
        header::CACHE_CONTROL,
        if immutable {
            HeaderValue::from_static("public, max-age=31536000, immutable")
        } else {
            // Names without a hash are revalidated each time; a 304 costs one round trip.
            HeaderValue::from_static("no-cache")
        },
    );
    if compressed {
        builder = builder.header(header::VARY, "accept-encoding");
    }
    if name == "sw.js" {
        // A worker runs under its own script's policy: it fetches pages and files of this
        // origin, and its notifications show this origin's icon.
        builder = builder.header(
            header::CONTENT_SECURITY_POLICY,
            "default-src 'none'; connect-src 'self'; img-src 'self'",
        );
    }
    let response = if matches {
        builder.status(StatusCode::NOT_MODIFIED).body(Body::empty())
    } else {
        if let Some(e) = encoding {
            builder = builder.header(header::CONTENT_ENCODING, e);
        }
        builder
            .header(header::CONTENT_TYPE, file.metadata.mimetype())
            .body(Body::from(body.data.into_owned()))
    };
    response.ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn accepting(v: &str) -> Vec<&'static str> {
        let mut h = HeaderMap::new();
        h.insert(header::ACCEPT_ENCODING, HeaderValue::from_str(v).unwrap());
        accepted(&h).into_iter().map(|(n, _)| n).collect()
    }

    #[test]
    fn encodings_follow_accept_encoding() {
        assert_eq!(accepting("gzip, deflate, br, zstd"), vec!["br", "gzip"]);
        assert_eq!(accepting("gzip"), vec!["gzip"]);
        assert_eq!(accepting("br;q=0, gzip;q=0.5"), vec!["gzip"]);
        assert_eq!(accepting("identity"), Vec::<&str>::new());
        assert_eq!(accepting("BR"), vec!["br"]);
    }
}
