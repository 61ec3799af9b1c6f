//! The `klaxon` server: the REST API, webhook intake, the phone UI and the loops, over one
//! `klaxon_core::Core`.

pub mod api;
mod assets;
pub mod bench;
pub mod cli;
pub mod config_file;
pub mod error;
pub mod extract;
pub mod import;
pub mod listen;
pub mod loops;
mod terminal;
mod web;

use axum::extract::{DefaultBodyLimit, FromRef};
use axum::http::{header, HeaderValue, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use klaxon_core::Core;
use klaxon_domain::{ErrorBody, ErrorCode};
use leptos::config::LeptosOptions;
use tower_http::set_header::SetResponseHeaderLayer;

/// Large allocations (an argon2 hash's 19 MiB, a big webhook body) get pages of their own that go
/// back to the system when freed. glibc otherwise raises its mmap threshold after the first such
/// free and serves the next ones from the heap, where each password hash's aligned block was seen
/// to leave 19 MiB behind for good: a flood of sign-ins grew the process without bound. A fixed
/// threshold turns that adjustment off.
pub fn keep_large_allocations_apart() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only sets an allocator parameter; 1 MiB is within its documented range.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 1024 * 1024);
    }
}

/// Requests bodies past this are refused with 413 (webhook intake has its own, larger limit).
pub const BODY_LIMIT: usize = 256 * 1024;

/// Default CSP for everything that is not a page (pages set their own, with a nonce).
const DEFAULT_CSP: &str = "default-src 'none'; frame-ancestors 'none'";

#[derive(Clone)]
pub struct AppState {
    pub core: Core,
    pub leptos: LeptosOptions,
}

impl FromRef<AppState> for LeptosOptions {
    fn from_ref(s: &AppState) -> LeptosOptions {
        s.leptos.clone()
    }
}

/// Leptos options for the embedded site: names only, nothing is read from disk. The package folder
/// carries the site's content hash, so the script, wasm and stylesheet are cached as immutable.
pub fn leptos_options() -> LeptosOptions {
    LeptosOptions::builder()
        .output_name(assets::OUTPUT)
        .site_pkg_dir(assets::pkg_dir())
        .env(leptos::config::Env::PROD)
        .build()
}

/// The whole HTTP application.
pub fn app(core: Core) -> Router {
    // Browsers that reached an https deployment keep to https for a year.
    let hsts = core
        .secure_cookies()
        .then(|| HeaderValue::from_static("max-age=31536000"));
    let state = AppState {
        core,
        leptos: leptos_options(),
    };
    let (api, mut openapi) = api::router();
    let (intake, intake_doc) = api::intake_router();
    openapi.merge(intake_doc);
    let (ops, ops_doc) = api::ops_router(state.core.config.metrics);
    openapi.merge(ops_doc);
    api::complete(&mut openapi);
    api::roads::describe_offered(&mut openapi, &state.core.roads);
    let openapi = std::sync::Arc::new(openapi);
    Router::new()
        .merge(api)
        .merge(ops)
        .merge(intake)
        .route(
            "/api/openapi.json",
            get(move || {
                let doc = openapi.clone();
                async move { Json(doc.as_ref().clone()) }
            }),
        )
        .merge(web::router(&state))
        .method_not_allowed_fallback(method_not_allowed)
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            api::ops::record_request,
        ))
        .layer(DefaultBodyLimit::max(BODY_LIMIT))
        .layer(SetResponseHeaderLayer::if_not_present(
            header::CONTENT_SECURITY_POLICY,
            HeaderValue::from_static(DEFAULT_CSP),
        ))
        .layer(SetResponseHeaderLayer::overriding(
            header::X_CONTENT_TYPE_OPTIONS,
            HeaderValue::from_static("nosniff"),
        ))
        .layer(SetResponseHeaderLayer::overriding(
            header::REFERRER_POLICY,
            HeaderValue::from_static("same-origin"),
        ))
        .layer(SetResponseHeaderLayer::overriding(
            header::STRICT_TRANSPORT_SECURITY,
            move |_: &Response| hsts.clone(),
        ))
        .layer(tower_http::compression::CompressionLayer::new())
        .with_state(state)
}

/// A method outside HTTP's standard set: refused before routing, without repeating it.
pub(crate) fn unknown_method() -> Response {
    let body = ErrorBody {
        error: ErrorCode::MethodNotAllowed,
        message:
            "unknown HTTP method; Klaxon answers GET, HEAD, POST, PUT, PATCH, DELETE and OPTIONS"
                .into(),
    };
    (StatusCode::METHOD_NOT_ALLOWED, Json(body)).into_response()
}

/// A known path asked with the wrong method: the error shape, like every other refusal (axum
/// adds the `Allow` header).
async fn method_not_allowed(method: Method, uri: Uri) -> Response {
    let body = ErrorBody {
        error: ErrorCode::MethodNotAllowed,
        message: format!("{} does not accept {method}", uri.path()),
    };
    (StatusCode::METHOD_NOT_ALLOWED, Json(body)).into_response()
}
