//! Pages whose code the browser loads when it first shows them (Leptos lazy routes, built with
//! `cargo leptos build --split`). Only the frame and the incident list, where a responder starts,
//! are in the wasm every visit downloads. The other pages come in three chunks: an incident (the
//! page a push opens), sign-in and sign-up, and the rest. One chunk per page would be lighter
//! per page, but the split tool then cuts the code the pages share into a file per combination
//! of pages (about a hundred), and a slow mobile network pays its latency for each file.

use super::admin::AdminPage;
use super::device::DevicePage;
use super::incident::IncidentPage;
use super::login::LoginPage;
use super::profile::ProfilePage;
use super::review::ReviewPage;
use super::schedule::SchedulePage;
use super::signup::SignupPage;
use super::team_escalation::TeamEscalationPage;
use super::team_reports::TeamReportsPage;
use super::team_rota::TeamRotaPage;
use super::teams::{TeamPage, TeamsPage};
use leptos::prelude::*;
use leptos_router::LazyRoute;

#[lazy]
fn incident_chunk() -> AnyView {
    view! { <IncidentPage /> }.into_any()
}

#[derive(Clone, Copy)]
enum SignedOut {
    Login,
    Signup,
}

#[lazy]
fn signed_out_chunk(page: SignedOut) -> AnyView {
    match page {
        SignedOut::Login => view! { <LoginPage /> }.into_any(),
        SignedOut::Signup => view! { <SignupPage /> }.into_any(),
    }
}

#[derive(Clone, Copy)]
enum Other {
    Schedule,
    Teams,
    Team,
    TeamEscalation,
    TeamRota,
    TeamReports,
    Review,
    Profile,
    Admin,
    Device,
}

#[lazy]
fn other_chunk(page: Other) -> AnyView {
    match page {
        Other::Schedule => view! { <SchedulePage /> }.into_any(),
        Other::Teams => view! { <TeamsPage /> }.into_any(),
        Other::Team => view! { <TeamPage /> }.into_any(),
        Other::TeamEscalation => view! { <TeamEscalationPage /> }.into_any(),
        Other::TeamRota => view! { <TeamRotaPage /> }.into_any(),
        Other::TeamReports => view! { <TeamReportsPage /> }.into_any(),
        Other::Review => view! { <ReviewPage /> }.into_any(),
        Other::Profile => view! { <ProfilePage /> }.into_any(),
        Other::Admin => view! { <AdminPage /> }.into_any(),
        Other::Device => view! { <DevicePage /> }.into_any(),
    }
}

/// A route type per page, for `Lazy::<Route>::new()` in the router: which chunk function shows
/// it, and the preload function `#[lazy]` made for that chunk. The router awaits the preload
/// before it takes a page over, so the chunk is there when the page is hydrated; a page still
/// waiting for its code would not match what the server sent. On the server the page's response
/// names the chunk's files for the browser to fetch early.
macro_rules! routes {
    ($($route:ident => $chunk:ident($($page:expr)?), $preload:ident);* $(;)?) => {$(
        pub struct $route;

        impl LazyRoute for $route {
            fn data() -> Self {
                $route
            }

            async fn view(_: Self) -> AnyView {
                #[cfg(feature = "ssr")]
                crate::server::announce_chunk(stringify!($chunk));
                $chunk($($page)?).await
            }

            async fn preload() {
                #[cfg(feature = "hydrate")]
                $preload().await;
            }
        }
    )*};
}

routes! {
    Incident => incident_chunk(), __preload_incident_chunk;
    Login => signed_out_chunk(SignedOut::Login), __preload_signed_out_chunk;
    Signup => signed_out_chunk(SignedOut::Signup), __preload_signed_out_chunk;
    Schedule => other_chunk(Other::Schedule), __preload_other_chunk;
    Teams => other_chunk(Other::Teams), __preload_other_chunk;
    Team => other_chunk(Other::Team), __preload_other_chunk;
    TeamEscalation => other_chunk(Other::TeamEscalation), __preload_other_chunk;
    TeamRota => other_chunk(Other::TeamRota), __preload_other_chunk;
    TeamReports => other_chunk(Other::TeamReports), __preload_other_chunk;
    Review => other_chunk(Other::Review), __preload_other_chunk;
    Profile => other_chunk(Other::Profile), __preload_other_chunk;
    Admin => other_chunk(Other::Admin), __preload_other_chunk;
    Device => other_chunk(Other::Device), __preload_other_chunk;
}
