//! The page an email's Acknowledge link opens: it names the incident and has one button. The
//! GET only shows; the button's POST acknowledges, because mail scanners follow every link in
//! a message and must not acknowledge anything. Plain HTML, so it works in any mail app's
//! browser without the phone app loading.

use crate::extract::Path;
use crate::AppState;
use axum::extract::State;
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{Html, IntoResponse, Response};
use klaxon_core::Error;
use klaxon_domain::text::escape_html;

/// Only the site's stylesheet, and the form may post back here.
const CSP: &str =
    "default-src 'none'; style-src 'self'; form-action 'self'; frame-ancestors 'none'";

/// The confirmation page of an email page's Acknowledge link. Shows what the link would
/// acknowledge; acknowledges nothing.
#[utoipa::path(get, path = "/ack/{token}", tag = "paging", security(()),
    params(("token" = String, Path, description = "the acknowledge token from the email")),
    responses((status = 200, content_type = "text/html", body = String, description = "the incident's title and one Acknowledge button"),
              (status = 404, content_type = "text/html", body = String, description = "unknown or expired token, or its user was disabled"),
              (status = 409, content_type = "text/html", body = String, description = "used already: says who acknowledged, or that the incident is resolved")))]
pub async fn confirm(State(s): State<AppState>, Path(token): Path<String>) -> Response {
    match s.core.preview_ack_token(&token).await {
        Ok(p) => {
            let what = if p.incidents > 1 {
                format!("{} incidents, the first:", p.incidents)
            } else {
                "the incident".to_string()
            };
            let body = format!(
                "<p>Acknowledge {what}</p><h2>[{}] {}</h2>\
                 <form method=\"post\" action=\"/ack/{}\"><button type=\"submit\" class=\"primary big\">Acknowledge</button></form>\
                 <p><a href=\"/incidents/{}\">Open the incident</a></p>",
                p.severity.as_str().to_ascii_uppercase(),
                escape_html(&p.title),
                escape_html(&token),
                p.incident_id
            );
            page(StatusCode::OK, "Acknowledge?", &body)
        }
        Err(e) => refusal(e),
    }
}

/// The confirmation page's button: acknowledges as the person the page went to, as the push
/// notification's button does.
#[utoipa::path(post, path = "/ack/{token}", tag = "paging", security(()),
    params(("token" = String, Path, description = "the acknowledge token from the email")),
    responses((status = 200, content_type = "text/html", body = String, description = "acknowledged"),
              (status = 404, content_type = "text/html", body = String, description = "unknown or expired token, or its user was disabled"),
              (status = 409, content_type = "text/html", body = String, description = "used already: says who acknowledged, or that the incident is resolved")))]
pub async fn acknowledge(State(s): State<AppState>, Path(token): Path<String>) -> Response {
    match s.core.acknowledge_with_token(&token).await {
        Ok(done) => {
            let n = done.acknowledged.len();
            let what = if n == 1 {
                "The incident is acknowledged: it is yours.".to_string()
            } else {
                format!("{n} incidents are acknowledged: they are yours.")
            };
            let body = format!(
                "<h2>{what}</h2><p><a href=\"/incidents/{}\">Open the incident</a></p>",
                done.incident_id
            );
            page(StatusCode::OK, "Acknowledged", &body)
        }
        Err(e) => refusal(e),
    }
}

fn refusal(e: Error) -> Response {
    match e {
        Error::NotFound => page(
            StatusCode::NOT_FOUND,
            "Link expired",
            "<h2>This link no longer works.</h2><p>It expired, or its person was disabled. Open Klaxon to act on the incident.</p><p><a href=\"/incidents\">Incidents</a></p>",
        ),
        Error::Conflict(why) => page(
            StatusCode::CONFLICT,
            "Already handled",
            &format!(
                "<h2>{}</h2><p><a href=\"/incidents\">Incidents</a></p>",
                escape_html(&capitalized(&why))
            ),
        ),
        other => crate::error::ApiError::from(other).into_response(),
    }
}

fn capitalized(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(first) => first.to_uppercase().chain(c).collect::<String>() + ".",
        None => String::new(),
    }
}

fn page(status: StatusCode, title: &str, body: &str) -> Response {
    let html = format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>{title} · Klaxon</title><link rel=\"stylesheet\" href=\"/pkg/{}.css\"></head>\
         <body><main class=\"stack\">{body}</main></body></html>",
        crate::assets::OUTPUT
    );
    let mut res = (status, Html(html)).into_response();
    res.headers_mut().insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CSP),
    );
    res.headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    res
}
