//! The documented REST API. Handlers parse, call one core operation, and shape the answer.

mod accounts;
mod ack_page;
mod admin;
mod changes;
mod channels;
mod chat;
mod config;
mod contact_methods;
mod covers;
mod deadman;
mod device;
mod events;
mod exports;
mod handoff;
mod heartbeat;
mod incidents;
pub(crate) mod intake;
mod integrations;
mod invites;
mod maintenance;
pub(crate) mod ops;
mod opsgenie;
mod pagerduty;
mod paging;
mod phone;
mod reports;
mod reviews;
pub mod roads;
mod rotations;
mod schedule;
mod service_accounts;
mod silences;
mod sso;
mod teams;
mod users;

use crate::AppState;
use utoipa::OpenApi;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

#[derive(OpenApi)]
#[openapi(
    info(title = "Klaxon", description = "Incident paging: Alertmanager in, ntfy pages out, a phone app for responders. Errors are `{\"error\": code, \"message\": sentence}`; timestamps are RFC 3339 UTC; durations are strings like `15m` or `1h30m`."),
    components(schemas(klaxon_domain::ErrorBody, klaxon_domain::channel::WebhookEvent, klaxon_domain::channel::WebhookTeam, klaxon_domain::contact::PersonalWebhook)),
    modifiers(&Security)
)]
struct ApiDoc;

struct Security;

impl utoipa::Modify for Security {
    fn modify(&self, doc: &mut utoipa::openapi::OpenApi) {
        use utoipa::openapi::security::{
            ApiKey, ApiKeyValue, HttpAuthScheme, HttpBuilder, SecurityScheme,
        };
        let components = doc.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "api_key",
            SecurityScheme::Http(HttpBuilder::new().scheme(HttpAuthScheme::Bearer).build()),
        );
        components.add_security_scheme(
            "session",
            SecurityScheme::ApiKey(ApiKey::Cookie(ApiKeyValue::new("klaxon_session"))),
        );
    }
}

/// Completes the merged document with the answers every operation shares, derived from its
/// shape so no handler can forget one: 400 when it reads a path, query, header or body; 404 when it
/// names a resource in its path or filters by one in its query; 401 and 403 unless it is public (`security(())`); 413 when it
/// takes a body; 503 when the database is unavailable. Operations need a key or a session
/// unless they say otherwise.
pub fn complete(doc: &mut utoipa::openapi::OpenApi) {
    use utoipa::openapi::path::ParameterIn;
    use utoipa::openapi::security::SecurityRequirement;
    use utoipa::openapi::{ContentBuilder, Ref, ResponseBuilder};
    doc.security = Some(vec![
        SecurityRequirement::new("api_key", Vec::<String>::new()),
        SecurityRequirement::new("session", Vec::<String>::new()),
    ]);
    let error = |why: &str| {
        ResponseBuilder::new()
            .description(why)
            .content(
                "application/json",
                ContentBuilder::new()
                    .schema(Some(Ref::from_schema_name("ErrorBody")))
                    .build(),
            )
            .build()
    };
    for item in doc.paths.paths.values_mut() {
        let ops = [
            &mut item.get,
            &mut item.put,
            &mut item.post,
            &mut item.delete,
            &mut item.patch,
        ];
        for op in ops.into_iter().flatten() {
            let params = op.parameters.as_deref().unwrap_or_default();
            let in_path = params.iter().any(|p| p.parameter_in == ParameterIn::Path);
            let in_query = params.iter().any(|p| p.parameter_in == ParameterIn::Query);
            let in_header = params.iter().any(|p| p.parameter_in == ParameterIn::Header);
            let has_body = op.request_body.is_some();
            let public = op
                .security
                .as_ref()
                .is_some_and(|reqs| reqs.iter().all(|r| *r == SecurityRequirement::default()));
            let shared = [
                (
                    in_path || in_query || in_header || has_body,
                    "400",
                    "Malformed or invalid input; nothing was changed",
                ),
                (!public, "401", "No credentials, or ones that are not valid"),
                (
                    !public,
                    "403",
                    "Not allowed to this caller, or a cookie request from another site",
                ),
                (
                    in_path || in_query,
                    "404",
                    "No such resource, or one outside the caller's teams",
                ),
                (has_body, "413", "The body is over the size limit"),
                (true, "503", "The database is unavailable; try again"),
            ];
            for (applies, status, why) in shared {
                if applies {
                    op.responses
                        .responses
                        .entry(status.to_string())
                        .or_insert_with(|| error(why).into());
                }
            }
        }
    }
}

/// Webhook intake, with its own body limit (Alertmanager groups can be large).
pub fn intake_router() -> (axum::Router<AppState>, utoipa::openapi::OpenApi) {
    OpenApiRouter::new()
        .routes(routes!(intake::webhook))
        .routes(routes!(intake::legacy_webhook))
        .routes(routes!(pagerduty::enqueue))
        .routes(routes!(pagerduty::enqueue_under_api))
        .routes(routes!(pagerduty::change_enqueue))
        .routes(routes!(pagerduty::change_enqueue_under_api))
        .routes(routes!(opsgenie::create))
        .routes(routes!(opsgenie::close))
        .routes(routes!(opsgenie::acknowledge))
        .routes(routes!(opsgenie::create_under_api))
        .routes(routes!(opsgenie::close_under_api))
        .routes(routes!(opsgenie::acknowledge_under_api))
        .routes(routes!(heartbeat::success))
        .routes(routes!(heartbeat::start))
        .routes(routes!(heartbeat::fail))
        .layer(axum::extract::DefaultBodyLimit::max(
            intake::WEBHOOK_BODY_LIMIT,
        ))
        .split_for_parts()
}

/// `/healthz` and, unless turned off, `/metrics`: outside `/api`, in the document all the same.
pub fn ops_router(metrics: bool) -> (axum::Router<AppState>, utoipa::openapi::OpenApi) {
    let router = OpenApiRouter::new().routes(routes!(ops::healthz));
    let router = if metrics {
        router.routes(routes!(ops::metrics))
    } else {
        router
    };
    router.split_for_parts()
}

/// Every REST route, with the OpenAPI document generated from the same handlers.
pub fn router() -> (axum::Router<AppState>, utoipa::openapi::OpenApi) {
    OpenApiRouter::with_openapi(ApiDoc::openapi())
        .routes(routes!(ops::version))
        .routes(routes!(accounts::auth_config))
        .routes(routes!(accounts::bootstrap))
        .routes(routes!(accounts::login))
        .routes(routes!(accounts::logout))
        .routes(routes!(accounts::me))
        .routes(routes!(accounts::dismiss_onboarding))
        .routes(routes!(sso::login))
        .routes(routes!(sso::callback))
        .routes(routes!(device::start))
        .routes(routes!(device::token))
        .routes(routes!(device::approve))
        .routes(routes!(users::list_users, users::create_user))
        .routes(routes!(users::get_user, users::delete_user))
        .routes(routes!(users::change_password))
        .routes(routes!(users::set_push_topic))
        .routes(routes!(users::set_disabled))
        .routes(routes!(users::set_admin))
        .routes(routes!(users::list_api_keys, users::create_api_key))
        .routes(routes!(users::delete_api_key))
        .routes(routes!(
            contact_methods::list_contact_methods,
            contact_methods::add_contact_method
        ))
        .routes(routes!(contact_methods::delete_contact_method))
        .routes(routes!(contact_methods::verify_contact_method))
        .routes(routes!(contact_methods::resend_contact_code))
        .routes(routes!(contact_methods::test_contact_method))
        .routes(routes!(
            contact_methods::get_notification_rules,
            contact_methods::put_notification_rules
        ))
        .routes(routes!(contact_methods::webpush_key))
        .routes(routes!(ack_page::confirm, ack_page::acknowledge))
        .routes(routes!(admin::users))
        .routes(routes!(admin::teams))
        .routes(routes!(admin::get_settings, admin::put_settings))
        .routes(routes!(teams::list_teams, teams::create_team))
        .routes(routes!(
            teams::get_team,
            teams::rename_team,
            teams::delete_team
        ))
        .routes(routes!(teams::set_oidc_mapping))
        .routes(routes!(changes::list))
        .routes(routes!(invites::list, invites::create))
        .routes(routes!(invites::revoke))
        .routes(routes!(invites::check, invites::signup))
        .routes(routes!(invites::join))
        .routes(routes!(
            service_accounts::list_for_team,
            service_accounts::create_for_team
        ))
        .routes(routes!(service_accounts::create_instance))
        .routes(routes!(
            service_accounts::list_keys,
            service_accounts::create_key
        ))
        .routes(routes!(service_accounts::delete_key))
        .routes(routes!(teams::list_members, teams::add_member))
        .routes(routes!(teams::set_member_role, teams::remove_member))
        .routes(routes!(channels::list, channels::create))
        .routes(routes!(channels::update, channels::delete))
        .routes(routes!(channels::test))
        .routes(routes!(channels::verify))
        .routes(routes!(deadman::list, deadman::create))
        .routes(routes!(deadman::update, deadman::remove))
        .routes(routes!(incidents::list))
        .routes(routes!(incidents::get))
        .routes(routes!(incidents::similar))
        .routes(routes!(incidents::acknowledge))
        .routes(routes!(incidents::resolve))
        .routes(routes!(incidents::snooze))
        .routes(routes!(incidents::unsnooze))
        .routes(routes!(incidents::assign))
        .routes(routes!(incidents::archive))
        .routes(routes!(incidents::unarchive))
        .routes(routes!(incidents::add_note))
        .routes(routes!(incidents::pin_note))
        .routes(routes!(
            silences::preview,
            silences::create,
            silences::expire
        ))
        .routes(routes!(incidents::stats))
        .routes(routes!(incidents::weekly_stats))
        .routes(routes!(events::stream))
        .routes(routes!(incidents::list_alerts))
        .routes(routes!(incidents::get_alert))
        .routes(routes!(schedule::list, schedule::create))
        .routes(routes!(schedule::delete))
        .routes(routes!(schedule::current))
        .routes(routes!(schedule::ics))
        .routes(routes!(schedule::feed))
        .routes(routes!(schedule::offer, schedule::withdraw))
        .routes(routes!(schedule::take))
        .routes(routes!(schedule::take_over))
        .routes(routes!(schedule::open))
        .routes(routes!(schedule::changes))
        .routes(routes!(handoff::get, handoff::put))
        .routes(routes!(covers::get_day, covers::put_day))
        .routes(routes!(covers::list, covers::create))
        .routes(routes!(covers::end))
        .routes(routes!(maintenance::list, maintenance::create))
        .routes(routes!(maintenance::end))
        .routes(routes!(rotations::list, rotations::create))
        .routes(routes!(rotations::delete))
        .routes(routes!(rotations::apply))
        .routes(routes!(paging::get_policy, paging::put_policy))
        .routes(routes!(paging::acknowledge))
        .routes(routes!(paging::test_page))
        .merge(integrations::routes())
        .merge(phone::routes())
        .merge(chat::routes())
        .merge(config::routes())
        .merge(reports::routes())
        .split_for_parts()
}
