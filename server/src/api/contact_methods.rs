//! A person's contact methods: the roads a page takes to them besides their push topic.

use crate::error::ApiResult;
use crate::extract::{Body, Caller, Path};
use crate::AppState;
use axum::extract::State;
use axum::http::StatusCode;
use axum::Json;
use klaxon_domain::contact::{ContactMethod, NewContactMethod, VerifyCode};
use klaxon_domain::rules::NotificationRules;
use klaxon_domain::ErrorBody;

/// The person's contact methods, oldest first. A Web Push method shows its push service's origin,
/// never the subscription's endpoint, and a webhook its URL's origin, never the URL.
#[utoipa::path(get, path = "/api/users/{id}/contact-methods", tag = "users",
    responses((status = 200, body = Vec<ContactMethod>), (status = 403, body = ErrorBody, description = "neither the person nor an administrator, or a service account on either side"),
              (status = 404, body = ErrorBody, description = "no such user")))]
pub async fn list_contact_methods(
    State(s): State<AppState>,
    Caller(a): Caller,
    Path(id): Path<i64>,
) -> ApiResult<Json<Vec<ContactMethod>>> {
    Ok(Json(s.core.list_contact_methods(&a, id).await?))
}

/// Adds a contact method: an ntfy topic (not empty), a browser's Web Push subscription (`https`
/// endpoint, or `http` to a loopback address; an uncompressed P-256 `p256dh` and a 16-byte
/// `auth`), an email address (needs the server's mail settings), a Matrix user id (needs the
/// server's Matrix bot: it opens a direct room with the account and invites it) or a webhook URL
/// (`PersonalWebhook` bodies, signed with the secret this answer shows once). An address, a
/// Matrix account and a webhook get a code by that road and are paged only once verified with
/// it.
#[utoipa::path(post, path = "/api/users/{id}/contact-methods", tag = "users", request_body = NewContactMethod,
    responses((status = 201, body = ContactMethod),
              (status = 400, body = ErrorBody, description = "a field is invalid, a webhook URL is refused by the outbound policy, or the webhook did not take the code (unreachable, or not a 2xx): nothing is added"),
              (status = 403, body = ErrorBody, description = "neither the person nor an administrator, or a service account on either side"),
              (status = 404, body = ErrorBody, description = "no such user"),
              (status = 409, body = ErrorBody, description = "the method is already added, the person has 20 methods, or email or Matrix is not configured on this server"),
              (status = 429, body = ErrorBody, description = "an address, a Matrix account or a webhook: too many codes for this person (10) or to this target (3) in 15 minutes (`Retry-After`); nothing is added"),
              (status = 502, body = ErrorBody, description = "an address or a Matrix account: the verification code could not be sent (the mail server or the homeserver failed); what failed is the message, and the method is not added")))]
pub async fn add_contact_method(
    State(s): State<AppState>,
    Caller(a): Caller,
    Path(id): Path<i64>,
    Body(b): Body<NewContactMethod>,
) -> ApiResult<(StatusCode, Json<ContactMethod>)> {
    Ok((
        StatusCode::CREATED,
        Json(s.core.add_contact_method(&a, id, b).await?),
    ))
}

#[utoipa::path(delete, path = "/api/users/{id}/contact-methods/{method_id}", tag = "users",
    responses((status = 204), (status = 403, body = ErrorBody, description = "neither the person nor an administrator, or a service account on either side"),
              (status = 404, body = ErrorBody, description = "no such user, or no such method of theirs")))]
pub async fn delete_contact_method(
    State(s): State<AppState>,
    Caller(a): Caller,
    Path((id, method_id)): Path<(i64, i64)>,
) -> ApiResult<StatusCode> {
    s.core.delete_contact_method(&a, id, method_id).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// Verifies an email, Matrix or webhook method with the code sent by it. A wrong code uses one
/// of 5 tries.
#[utoipa::path(post, path = "/api/users/{id}/contact-methods/{method_id}/verify", tag = "users", request_body = VerifyCode,
    responses((status = 200, body = ContactMethod, description = "verified: the method can be paged"),
              (status = 400, body = ErrorBody, description = "not six digits, or the wrong code (the message says how many tries are left)"),
              (status = 403, body = ErrorBody, description = "neither the person nor an administrator, or a service account on either side"),
              (status = 404, body = ErrorBody, description = "no such user, or no such method of theirs"),
              (status = 409, body = ErrorBody, description = "the method is not waiting for a code, or its code lapsed (15 minutes) or was guessed wrong 5 times: send a new one")))]
pub async fn verify_contact_method(
    State(s): State<AppState>,
    Caller(a): Caller,
    Path((id, method_id)): Path<(i64, i64)>,
    Body(b): Body<VerifyCode>,
) -> ApiResult<Json<ContactMethod>> {
    Ok(Json(
        s.core
            .verify_contact_method(&a, id, method_id, &b.code)
            .await?,
    ))
}

/// Sends a new code by an email, Matrix or webhook method still waiting for one (at most one a
/// minute); the earlier code stops working.
#[utoipa::path(post, path = "/api/users/{id}/contact-methods/{method_id}/code", tag = "users",
    responses((status = 204, description = "sent"),
              (status = 403, body = ErrorBody, description = "neither the person nor an administrator, or a service account on either side"),
              (status = 404, body = ErrorBody, description = "no such user, or no such method of theirs"),
              (status = 409, body = ErrorBody, description = "the method is not waiting for a code"),
              (status = 429, body = ErrorBody, description = "a code was sent less than a minute ago, or too many codes went out for this person (10) or to this target (3) in 15 minutes (`Retry-After`)"),
              (status = 502, body = ErrorBody, description = "the code could not be sent; what failed is the message")))]
pub async fn resend_contact_code(
    State(s): State<AppState>,
    Caller(a): Caller,
    Path((id, method_id)): Path<(i64, i64)>,
) -> ApiResult<StatusCode> {
    s.core.resend_contact_code(&a, id, method_id).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// Sends a test message by the method at once (not through the outbox); the road's own refusal is
/// the error, as with the test page.
#[utoipa::path(post, path = "/api/users/{id}/contact-methods/{method_id}/test", tag = "users",
    responses((status = 204, description = "the road's service took the message"),
              (status = 403, body = ErrorBody, description = "neither the person nor an administrator, or a service account on either side"),
              (status = 404, body = ErrorBody, description = "no such user, or no such method of theirs"),
              (status = 409, body = ErrorBody, description = "a method not verified yet, or a road this server has no service for (ntfy, mail)"),
              (status = 429, body = ErrorBody, description = "too many test messages by this person or to this target (20 and 5 in 15 minutes)"),
              (status = 502, body = ErrorBody, description = "the road's service refused or could not be reached; its answer is the message. A Web Push subscription its service says is gone (404, 410) is removed")))]
pub async fn test_contact_method(
    State(s): State<AppState>,
    Caller(a): Caller,
    Path((id, method_id)): Path<(i64, i64)>,
) -> ApiResult<StatusCode> {
    s.core.test_contact_method(&a, id, method_id).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// The person's notification rules: steps per urgency, time zone and quiet hours. Without steps,
/// a page goes to every verified road at once.
#[utoipa::path(get, path = "/api/users/{id}/notification-rules", tag = "users",
    responses((status = 200, body = NotificationRules), (status = 403, body = ErrorBody, description = "neither the person nor an administrator, or a service account on either side"),
              (status = 404, body = ErrorBody, description = "no such user")))]
pub async fn get_notification_rules(
    State(s): State<AppState>,
    Caller(a): Caller,
    Path(id): Path<i64>,
) -> ApiResult<Json<NotificationRules>> {
    Ok(Json(s.core.notification_rules(&a, id).await?))
}

/// Replaces the person's notification rules, time zone and quiet hours. Each step waits 0 to 1440
/// minutes and names one of the person's own contact methods (or none: their push topic); at most
/// 20 steps per urgency. A low-urgency page in the quiet hours waits for their end; a high one
/// never waits.
#[utoipa::path(put, path = "/api/users/{id}/notification-rules", tag = "users", request_body = NotificationRules,
    responses((status = 200, body = NotificationRules),
              (status = 400, body = ErrorBody, description = "more than 20 steps, a delay over 1440 minutes, a method that is not the person's, a time zone not in the zone database, or quiet hours that start when they end"),
              (status = 403, body = ErrorBody, description = "neither the person nor an administrator, or a service account on either side"),
              (status = 404, body = ErrorBody, description = "no such user")))]
pub async fn put_notification_rules(
    State(s): State<AppState>,
    Caller(a): Caller,
    Path(id): Path<i64>,
    Body(b): Body<NotificationRules>,
) -> ApiResult<Json<NotificationRules>> {
    Ok(Json(s.core.set_notification_rules(&a, id, &b).await?))
}

/// The install's Web Push key.
#[derive(serde::Serialize, utoipa::ToSchema)]
pub struct WebPushKey {
    /// The VAPID public key (RFC 8292), base64url: `applicationServerKey` when subscribing.
    public_key: String,
}

/// The key a browser subscribes with to be paged by Web Push.
#[utoipa::path(get, path = "/api/webpush/key", tag = "users",
    responses((status = 200, body = WebPushKey)))]
pub async fn webpush_key(
    State(s): State<AppState>,
    Caller(_signed_in): Caller,
) -> Json<WebPushKey> {
    Json(WebPushKey {
        public_key: s.core.vapid.public_key.clone(),
    })
}
