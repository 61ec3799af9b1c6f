//! The phone UI: Leptos pages rendered on the server, its server functions, and the fallback
//! that decides between an API 404, a site file, and the app's entry page.

use crate::{assets, AppState};
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::{Json, Router};
use klaxon_app::{shell, App};
use leptos::prelude::provide_context;
use leptos_axum::{
    generate_route_list, handle_server_fns_with_context, LeptosRoutes, ResponseOptions,
};

/// Content-Security-Policy of the HTML pages: nothing from any other origin; inline scripts
/// only with the per-response nonce Leptos puts on its hydration script.
fn page_csp(nonce: &str) -> String {
    format!(
        "default-src 'self'; script-src 'self' 'nonce-{nonce}' 'wasm-unsafe-eval'; style-src 'self' 'unsafe-inline'; \
         img-src 'self' data:; connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'self'; \
         form-action 'self'; frame-ancestors 'none'; manifest-src 'self'"
    )
}

/// What every page render and server function call gets: the service, and a nonce with its CSP.
fn context(state: &AppState) -> impl Fn() + Clone + Send + Sync + 'static {
    let core = state.core.clone();
    let chunks = assets::chunks();
    move || {
        provide_context(core.clone());
        provide_context(chunks.clone());
        leptos::nonce::provide_nonce();
        let nonce = leptos::nonce::use_nonce();
        if let (Some(res), Some(nonce)) = (leptos::prelude::use_context::<ResponseOptions>(), nonce)
        {
            if let Ok(v) = HeaderValue::from_str(&page_csp(&nonce.to_string())) {
                res.insert_header(header::CONTENT_SECURITY_POLICY, v);
            }
        }
    }
}

/// The app's routes, generated once per process. Generating them renders the app with resource
/// loading suppressed through a process-wide flag, and a resource first polled by a page render
/// meanwhile never resolves (leptos issue #4773): a process that builds several routers (the test
/// harness starts many servers at once) must not generate them while pages render.
fn routes() -> Vec<leptos_axum::AxumRouteListing> {
    static ROUTES: std::sync::OnceLock<Vec<leptos_axum::AxumRouteListing>> =
        std::sync::OnceLock::new();
    ROUTES.get_or_init(|| generate_route_list(App)).clone()
}

pub fn router(state: &AppState) -> Router<AppState> {
    let options = state.leptos.clone();
    let ctx = context(state);
    let server_fns = {
        let ctx = ctx.clone();
        move |req: Request| {
            let ctx = ctx.clone();
            async move { handle_server_fns_with_context(ctx, req).await }
        }
    };
    Router::new()
        .route("/rpc/{*name}", post(server_fns.clone()).get(server_fns))
        .leptos_routes_with_context(state, routes(), ctx, move || {
            shell(options.clone(), inline_stylesheet(&options))
        })
        .fallback(fallback)
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            resume_point,
        ))
        .layer(axum::middleware::from_fn(tag_account))
}

/// Reads, before a signed-in page renders, the event its live stream resumes after
/// (`components::live::ResumePoint`, written into the page's head). Server functions, site files
/// and pages without a session have no stream to resume and skip the read.
async fn resume_point(
    State(state): State<AppState>,
    mut req: Request,
    next: axum::middleware::Next,
) -> Response {
    let wanted = {
        let path = req.uri().path();
        req.method() == axum::http::Method::GET
            && !path.starts_with("/rpc/")
            && !path.starts_with("/api/")
            && !names_a_file(path)
            && session_cookie(req.headers()).is_some()
    };
    if wanted {
        // Without it the page reloads once its stream opens, as a stream that cannot resume does.
        if let Ok(point) = state.core.resume_point().await {
            req.extensions_mut()
                .insert(klaxon_app::components::live::ResumePoint(point));
        }
    }
    next.run(req).await
}

/// The header a service worker's navigation preload carries; `public/sw.js` sets it to the
/// address of the stylesheet it keeps.
const PRELOAD_HEADER: &str = "service-worker-navigation-preload";

/// The stylesheet a page carries inline (called while the page renders): none when the page is
/// asked for by a service worker that keeps this build's stylesheet, so the page links it and
/// the worker hands it over from the phone. Every page is 6 KB (compressed) lighter then, which
/// on a slow mobile network is tens of milliseconds before the first paint.
fn inline_stylesheet(options: &leptos::config::LeptosOptions) -> Option<&'static str> {
    let kept = leptos::prelude::use_context::<axum::http::request::Parts>()
        .and_then(|p| p.headers.get(PRELOAD_HEADER).cloned());
    match kept {
        Some(v) if v.as_bytes() == klaxon_app::stylesheet_href(options).as_bytes() => None,
        _ => assets::stylesheet(),
    }
}

/// Marks a page with the session it was rendered for (`X-Klaxon-Account`), so the service
/// worker keeps pages for one account only and forgets them when another signs in; and says
/// that a page depends on the service worker's preload header.
async fn tag_account(req: Request, next: axum::middleware::Next) -> Response {
    let tag = session_cookie(req.headers()).map(klaxon_core::credentials::account_tag);
    let mut res = next.run(req).await;
    let html = res
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("text/html"));
    if html {
        // A page is rendered with its stylesheet inline or linked (`inline_stylesheet`).
        res.headers_mut()
            .append(header::VARY, HeaderValue::from_static(PRELOAD_HEADER));
    }
    if let (true, Some(tag)) = (html, tag) {
        if let Ok(v) = HeaderValue::from_str(&tag) {
            res.headers_mut().insert(ACCOUNT_HEADER, v);
        }
    }
    res
}

/// The session token of the request's cookie, if it carries one.
fn session_cookie(headers: &axum::http::HeaderMap) -> Option<&str> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .find_map(klaxon_core::credentials::session_from_cookie_header)
}

/// Whether `path` names a site file (its last part has an extension) rather than a page.
fn names_a_file(path: &str) -> bool {
    path.rsplit('/').next().unwrap_or("").contains('.')
}

/// The header `tag_account` sets (read by `public/sw.js`).
const ACCOUNT_HEADER: &str = "x-klaxon-account";

/// Unknown `/api/` paths get a JSON 404; paths with a file extension are site files; every
/// other path is the app's entry page, so deep links survive a reload.
async fn fallback(State(state): State<AppState>, req: Request) -> Response {
    let path = req.uri().path().to_string();
    if path == "/api" || path.starts_with("/api/") {
        let body = klaxon_domain::ErrorBody {
            error: klaxon_domain::ErrorCode::NotFound,
            message: format!("no API endpoint at {path}"),
        };
        return (StatusCode::NOT_FOUND, Json(body)).into_response();
    }
    if names_a_file(&path) {
        return assets::serve(&path, req.headers())
            .unwrap_or_else(|| (StatusCode::NOT_FOUND, Body::from("not found")).into_response());
    }
    let options = state.leptos.clone();
    let handler = leptos_axum::render_app_to_stream_with_context(context(&state), move || {
        shell(options.clone(), inline_stylesheet(&options))
    });
    handler(req).await.into_response()
}
