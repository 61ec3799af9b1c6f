//! The wasm chunks a lazily loaded page needs (`pages::on_demand`), named in its response's
//! `Link: rel=preload` headers: the browser then fetches them beside the main wasm instead of
//! after it, which on a slow network saves a round trip on a page opened from a push.

use axum::http::{header::LINK, HeaderValue};
use leptos::prelude::*;
use leptos_axum::ResponseOptions;
use std::collections::HashMap;
use std::sync::Arc;

/// The split manifest of the built site, provided by the server to every page render.
#[derive(Clone, Debug, Default)]
pub struct Chunks {
    /// The folder the site's wasm is served from (`pkg/{hash}`).
    pub dir: String,
    /// Each chunk function (`{name}_{call-site hash}`) and the files it loads, without `.wasm`.
    pub files: Arc<HashMap<String, Vec<String>>>,
}

impl Chunks {
    /// The files the chunk function `name` loads.
    fn of<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a String> {
        self.files
            .iter()
            .filter(move |(key, _)| {
                key.strip_prefix(name)
                    .and_then(|rest| rest.strip_prefix('_'))
                    .is_some_and(|hash| hash.bytes().all(|b| b.is_ascii_digit()))
            })
            .flat_map(|(_, files)| files)
    }
}

/// The script that loads the chunks, which the main script imports: preloaded beside it, it is
/// not fetched only once the main script runs, which held hydration back by a round trip to
/// the service worker (or the network) on every page.
const LOADER: &str = "__wasm_split.______________________.js";

/// A `modulepreload` of the chunk loader, in the document's head, when the site has chunks.
#[component]
pub fn ChunkLoaderPreload() -> impl IntoView {
    use_context::<Chunks>()
        .filter(|c| !c.files.is_empty())
        .map(|c| view! { <link rel="modulepreload" href=format!("/{}/{LOADER}", c.dir) /> })
}

/// Names in the response, in one `Link` header, the files the chunk function `name` loads.
/// Set rather than added to: the router may resolve a page's view more than once.
pub fn announce_chunk(name: &str) {
    let (Some(chunks), Some(response)) =
        (use_context::<Chunks>(), use_context::<ResponseOptions>())
    else {
        return;
    };
    let links: Vec<String> = chunks
        .of(name)
        .map(|file| {
            format!(
                "</{}/{file}.wasm>; rel=preload; as=fetch; crossorigin",
                chunks.dir
            )
        })
        .collect();
    if links.is_empty() {
        return;
    }
    if let Ok(value) = HeaderValue::from_str(&links.join(", ")) {
        response.insert_header(LINK, value);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_chunk_function_is_known_by_its_name_and_any_hash() {
        let chunks = Chunks {
            dir: "pkg/0123456789abcdef".into(),
            files: Arc::new(HashMap::from([
                (
                    "other_chunk_170".to_string(),
                    vec!["chunk_4".to_string(), "split_other".to_string()],
                ),
                ("other_chunk_extra_9".to_string(), vec!["wrong".to_string()]),
            ])),
        };
        let found: Vec<_> = chunks.of("other_chunk").collect();
        assert_eq!(found, ["chunk_4", "split_other"]);
        assert_eq!(chunks.of("incident_chunk").count(), 0);
    }
}
