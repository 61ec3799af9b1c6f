//! The phone providers' callbacks (`klaxon_core::callbacks`): no credential but the provider's
//! signature of the request, checked before it is read. Twilio is answered in TwiML.

use crate::error::ApiResult;
use crate::extract::Path;
use crate::AppState;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{header, HeaderMap, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use klaxon_core::callbacks::form;
use klaxon_domain::ErrorBody;
use utoipa_axum::{router::OpenApiRouter, routes};

/// The providers' callbacks, for the API's router.
pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(twilio_voice))
        .routes(routes!(twilio_status))
        .routes(routes!(twilio_sms))
        .routes(routes!(sms_gateway))
}

fn twiml(body: String) -> Response {
    ([(header::CONTENT_TYPE, "text/xml; charset=utf-8")], body).into_response()
}

fn signature<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

fn path(uri: &Uri) -> &str {
    uri.path_and_query().map_or(uri.path(), |p| p.as_str())
}

/// A page's call, answered or a key pressed (Twilio's `Url` and `Gather` action). The token in
/// the path is the page's acknowledge token; keys 4, 6 and 5 acknowledge, resolve and
/// escalate as the person paged, 1 repeats.
#[utoipa::path(post, path = "/api/phone/twilio/voice/{token}", tag = "phone", security(()),
    params(("X-Twilio-Signature" = String, Header, description = "HMAC-SHA1 of the public URL and the sorted form, by the auth token")),
    request_body(content = String, content_type = "application/x-www-form-urlencoded", description = "Twilio's call parameters: `Digits` after a key, `AnsweredBy` with machine detection"),
    responses((status = 200, content_type = "text/xml", body = String, description = "TwiML: the menu, or what the key did"),
              (status = 403, body = ErrorBody, description = "the signature is missing or not this install's"),
              (status = 404, body = ErrorBody, description = "no Twilio provider is configured")))]
pub async fn twilio_voice(
    State(s): State<AppState>,
    Path(token): Path<String>,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> ApiResult<Response> {
    let sig = signature(&headers, "x-twilio-signature");
    let answer = s
        .core
        .twilio_voice(path(&uri), form(&body), sig, &token)
        .await?;
    Ok(twiml(answer))
}

/// A text's or a call's status (Twilio's `StatusCallback`): not answered, busy, a voicemail or
/// an undelivered text hands the page to its person's next road at once.
#[utoipa::path(post, path = "/api/phone/twilio/status/{delivery}", tag = "phone", security(()),
    params(("X-Twilio-Signature" = String, Header, description = "as for the voice callback")),
    request_body(content = String, content_type = "application/x-www-form-urlencoded", description = "`CallStatus` and `AnsweredBy`, or `MessageStatus` and `ErrorCode`"),
    responses((status = 204, description = "read; acted on when the send did not reach its person"),
              (status = 403, body = ErrorBody, description = "the signature is missing or not this install's"),
              (status = 404, body = ErrorBody, description = "no Twilio provider is configured")))]
pub async fn twilio_status(
    State(s): State<AppState>,
    Path(delivery): Path<String>,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> ApiResult<StatusCode> {
    let sig = signature(&headers, "x-twilio-signature");
    s.core
        .twilio_status(path(&uri), form(&body), sig, &delivery)
        .await?;
    Ok(StatusCode::NO_CONTENT)
}

/// A text to the install's Twilio number (its messaging webhook): `4 a7` acknowledges and
/// `6 a7` resolves the page whose text had code a7, from the number it went to; STOP and
/// START stop and restart texts; anything else is answered with help.
#[utoipa::path(post, path = "/api/phone/twilio/sms", tag = "phone", security(()),
    params(("X-Twilio-Signature" = String, Header, description = "as for the voice callback")),
    request_body(content = String, content_type = "application/x-www-form-urlencoded", description = "Twilio's message parameters: `From`, `Body`, `MessageSid`"),
    responses((status = 200, content_type = "text/xml", body = String, description = "TwiML: the text back (none for a replayed message)"),
              (status = 400, body = ErrorBody, description = "no `From` or `MessageSid`"),
              (status = 403, body = ErrorBody, description = "the signature is missing or not this install's"),
              (status = 404, body = ErrorBody, description = "no Twilio provider is configured")))]
pub async fn twilio_sms(
    State(s): State<AppState>,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> ApiResult<Response> {
    let sig = signature(&headers, "x-twilio-signature");
    let answer = s.core.twilio_text(path(&uri), form(&body), sig).await?;
    Ok(twiml(answer))
}

/// SMS Gateway for Android's webhook (`sms:received`, `sms:failed`): signed by `X-Signature`
/// (hex HMAC-SHA256 of the body and `X-Timestamp`), the time within five minutes of Klaxon's,
/// each event id acted on once.
#[utoipa::path(post, path = "/api/phone/sms-gateway", tag = "phone", security(()),
    params(("X-Signature" = String, Header, description = "hex HMAC-SHA256 of the raw body followed by X-Timestamp, by the signing key"),
           ("X-Timestamp" = String, Header, description = "Unix seconds")),
    request_body(content = Object, description = "the app's webhook event: `event`, `id`, `payload`"),
    responses((status = 204, description = "read (and acted on, the first time)"),
              (status = 400, body = ErrorBody, description = "not a gateway event"),
              (status = 403, body = ErrorBody, description = "the signature is missing or wrong, or the timestamp is more than five minutes off"),
              (status = 404, body = ErrorBody, description = "no SMS gateway is configured")))]
pub async fn sms_gateway(
    State(s): State<AppState>,
    headers: HeaderMap,
    body: Bytes,
) -> ApiResult<StatusCode> {
    let at = signature(&headers, "x-timestamp");
    let sig = signature(&headers, "x-signature");
    s.core.sms_gateway_event(&body, at, sig).await?;
    Ok(StatusCode::NO_CONTENT)
}
