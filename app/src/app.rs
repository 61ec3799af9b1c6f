//! The document shell the server renders and the router every page lives in.

use crate::components::hydration::Hydrated;
use crate::components::layout::SignedInShell;
use crate::components::live::ResumeMeta;
use crate::pages::home::HomePage;
use crate::pages::not_found::NotFoundShell;
use crate::pages::on_demand::{
    Admin, Device, Incident, Login, Profile, Review, Schedule, Signup, Team, TeamEscalation,
    TeamReports, TeamRota, Teams,
};
use leptos::config::LeptosOptions;
use leptos::prelude::*;
use leptos_meta::{provide_meta_context, MetaTags, Title};
use leptos_router::components::{ParentRoute, Route, Router, Routes};
use leptos_router::{path, Lazy, SsrMode};

/// Stores the browser's IANA zone in the `klaxon_tz` cookie (a year, this site only). Asking
/// `Intl` for it costs a page 15–20 ms before its body is parsed (the zone data is loaded on
/// first use), so once the cookie is set it is only refreshed five seconds after the page opened
/// (a phone that travelled), off the way of the first paint and the first tap.
const ZONE_COOKIE: &str = "(function(){function s(){try{document.cookie='klaxon_tz='+encodeURIComponent(Intl.DateTimeFormat().resolvedOptions().timeZone)+';path=/;max-age=31536000;samesite=lax'}catch(e){}}/(^|;\\s*)klaxon_tz=/.test(document.cookie)?setTimeout(s,5000):s()})()";

/// Theme colour of the browser chrome and the installed app; matches `--brand` in main.css.
const THEME_COLOR: &str = "#b91c1c";

/// The whole HTML document, rendered on the server for every page. `css` is the stylesheet's
/// text when the site is built: inlined, the first paint needs no second round trip (over half a
/// second on a slow mobile network), for a few KB more in each (compressed) page. Without it the
/// page links the stylesheet, which shares the script's content-hashed output name.
pub fn shell(options: LeptosOptions, css: Option<&'static str>) -> impl IntoView {
    let stylesheet = css
        .is_none()
        .then(|| view! { <link rel="stylesheet" href=stylesheet_href(&options) /> });
    let inline = css.map(|css| view! { <style inner_html=css></style> });
    // The browser's time zone, for pages of someone who has not set their own (see
    // `components::text::ViewerZone`); the page's nonce lets it past the CSP.
    let nonce = leptos::nonce::use_nonce();
    let zone = view! { <script nonce=nonce inner_html=ZONE_COOKIE></script> };
    #[cfg(feature = "ssr")]
    let loader = view! { <crate::server::ChunkLoaderPreload /> };
    #[cfg(not(feature = "ssr"))]
    let loader = ();
    view! {
        <!DOCTYPE html>
        <html lang="en">
            <head>
                <meta charset="utf-8" />
                <meta name="viewport" content="width=device-width, initial-scale=1, viewport-fit=cover" />
                <meta name="theme-color" content=THEME_COLOR />
                <meta name="color-scheme" content="dark light" />
                <link rel="manifest" href="/manifest.webmanifest" />
                <link rel="icon" href="/favicon.svg" type="image/svg+xml" />
                <link rel="apple-touch-icon" href="/icons/icon-192.png" />
                {inline}
                {stylesheet}
                {zone}
                <ResumeMeta />
                <HydrationScripts options />
                {loader}
                <MetaTags />
            </head>
            <body>
                <App />
            </body>
        </html>
    }
}

/// Where a page that does not carry the stylesheet links it: beside the script, under the
/// build's content-hashed folder.
pub fn stylesheet_href(options: &LeptosOptions) -> String {
    format!("/{}/{}.css", options.site_pkg_dir, options.output_name)
}

/// Every page's title goes through here. On the server leptos_meta writes the result into
/// `<title>` as it is, so it is escaped there (titles carry alert names and team names, which
/// anyone who can post a webhook chooses); in the browser it becomes `document.title`, which is
/// plain text.
fn document_title(page: String) -> String {
    let title = if page.is_empty() {
        "Klaxon".to_string()
    } else {
        format!("{page} · Klaxon")
    };
    if cfg!(feature = "ssr") {
        crate::components::text::escape_html(&title)
    } else {
        title
    }
}

/// Registers `public/sw.js`, which keeps the pages last seen for opening offline.
#[cfg(feature = "hydrate")]
fn register_service_worker() {
    if let Some(window) = web_sys::window() {
        let _ = window.navigator().service_worker().register("/sw.js");
    }
}

/// Server functions redirect only when the signed-in account changes (sign-in, sign-up,
/// sign-out). Such a redirect tells the service worker to forget the pages it kept and loads
/// the next page in full, so the worker sees whose it is (`X-Klaxon-Account`). Set before
/// hydration: the router sets its own in-app hook only when none is set yet.
#[cfg(feature = "hydrate")]
pub fn account_changes_load_in_full() {
    let _ = leptos::server_fn::redirect::set_redirect_hook(|to: &str| {
        let Some(window) = web_sys::window() else {
            return;
        };
        if let Some(worker) = window.navigator().service_worker().controller() {
            let _ = worker.post_message(&wasm_bindgen::JsValue::from_str("account-changed"));
        }
        let _ = window.location().assign(to);
    });
}

#[cfg(feature = "hydrate")]
thread_local! {
    static SET_HYDRATED: std::cell::Cell<Option<WriteSignal<bool>>> = const { std::cell::Cell::new(None) };
}

/// Called by the browser entry point once the whole page is taken over, the parts in lazily
/// loaded chunks included. An effect would run earlier: as soon as the frame is hydrated, while
/// a page's chunk may still be on its way.
#[cfg(feature = "hydrate")]
pub fn hydration_finished() {
    if let Some(set) = SET_HYDRATED.with(|s| s.get()) {
        set.set(true);
    }
    register_service_worker();
}

#[component]
pub fn App() -> impl IntoView {
    provide_meta_context();
    // Only the browser ever sets it (see `hydration_finished`).
    let (hydrated, set_hydrated) = signal(false);
    #[cfg(feature = "hydrate")]
    SET_HYDRATED.with(|s| s.set(Some(set_hydrated)));
    #[cfg(not(feature = "hydrate"))]
    let _ = set_hydrated;
    provide_context(Hydrated(hydrated));

    view! {
        <Title formatter=document_title />
        <div class="app" data-hydrated=move || if hydrated.get() { "true" } else { "false" }>
            <Router>
                <Routes fallback=NotFoundShell>
                    <Route path=path!("/login") view={Lazy::<Login>::new()} ssr=SsrMode::Async />
                    <Route path=path!("/signup") view={Lazy::<Signup>::new()} />
                    // Async rendering lets the session check answer with a real 302 before any
                    // byte is sent, so deep links survive the trip through sign-in.
                    <ParentRoute path=path!("") view=SignedInShell ssr=SsrMode::Async>
                        <Route path=path!("") view=HomePage />
                        <Route path=path!("incidents/:id") view={Lazy::<Incident>::new()} />
                        <Route path=path!("incidents/:id/review") view={Lazy::<Review>::new()} />
                        <Route path=path!("schedule") view={Lazy::<Schedule>::new()} />
                        <Route path=path!("teams") view={Lazy::<Teams>::new()} />
                        <Route path=path!("teams/:id") view={Lazy::<Team>::new()} />
                        <Route path=path!("teams/:id/escalation") view={Lazy::<TeamEscalation>::new()} />
                        <Route path=path!("teams/:id/rota") view={Lazy::<TeamRota>::new()} />
                        <Route path=path!("teams/:id/reports") view={Lazy::<TeamReports>::new()} />
                        <Route path=path!("me") view={Lazy::<Profile>::new()} />
                        <Route path=path!("admin") view={Lazy::<Admin>::new()} />
                        <Route path=path!("device") view={Lazy::<Device>::new()} />
                    </ParentRoute>
                </Routes>
            </Router>
        </div>
    }
}
