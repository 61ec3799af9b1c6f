//! Acting from chat (`klaxon_core::chat`): the Slack app's interactivity and slash command
//! requests, checked by their signature before they are read; Mattermost's button presses and
//! slash command, checked by the button's signed context and the command's token; and a
//! person's linked chat accounts with the one-time code that links one.

use crate::error::ApiResult;
use crate::extract::{Caller, Path};
use crate::AppState;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::Json;
use klaxon_domain::chat::{ChatLink, LinkCode};
use klaxon_domain::ErrorBody;
use serde_json::Value;
use utoipa_axum::{router::OpenApiRouter, routes};

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(slack_interactions))
        .routes(routes!(slack_commands))
        .routes(routes!(mattermost_actions))
        .routes(routes!(mattermost_commands))
        .routes(routes!(telegram_webhook))
        .routes(routes!(discord_interactions))
        .routes(routes!(new_link_code))
        .routes(routes!(list_links))
        .routes(routes!(unlink))
}

fn header<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

/// A button pressed on a Slack announcement (the Slack app's Interactivity request URL):
/// Acknowledge, Resolve, Snooze 1 h or Take it, done as the Klaxon person the Slack account is
/// linked to. Answered 200 at once; the message is then replaced through the request's
/// `response_url` by the incident as it is now, and the person gets a sentence only they see.
#[utoipa::path(post, path = "/api/chat/slack/interactions", tag = "chat", security(()),
    params(("X-Slack-Signature" = String, Header, description = "`v0=` and the hex HMAC-SHA256 of `v0:{timestamp}:{body}` by the app's signing secret"),
           ("X-Slack-Request-Timestamp" = String, Header, description = "Unix seconds, within five minutes of Klaxon's clock")),
    request_body(content = String, content_type = "application/x-www-form-urlencoded", description = "`payload`: Slack's `block_actions` JSON"),
    responses((status = 200, description = "read; acted on when a button of Klaxon's was pressed"),
              (status = 400, body = ErrorBody, description = "no `payload`, or not a Slack interaction"),
              (status = 401, body = ErrorBody, description = "the signature is missing or wrong, or the timestamp is more than five minutes off"),
              (status = 404, body = ErrorBody, description = "no Slack signing secret is configured")))]
pub async fn slack_interactions(
    State(s): State<AppState>,
    headers: HeaderMap,
    body: Bytes,
) -> ApiResult<StatusCode> {
    let at = header(&headers, "x-slack-request-timestamp");
    let sig = header(&headers, "x-slack-signature");
    s.core.slack_interaction(&body, at, sig).await?;
    Ok(StatusCode::OK)
}

/// The Slack app's `/klaxon` command: `link <code>` links the Slack account to the person whose
/// code it is, `unlink` ends that, anything else answers with help; the answer is shown to the
/// person who typed it alone.
#[utoipa::path(post, path = "/api/chat/slack/commands", tag = "chat", security(()),
    params(("X-Slack-Signature" = String, Header, description = "as for interactions"),
           ("X-Slack-Request-Timestamp" = String, Header, description = "as for interactions")),
    request_body(content = String, content_type = "application/x-www-form-urlencoded", description = "Slack's slash command form: `team_id`, `team_domain`, `user_id`, `user_name`, `text`"),
    responses((status = 200, body = Object, description = "`{response_type: \"ephemeral\", text}`"),
              (status = 400, body = ErrorBody, description = "no `user_id`"),
              (status = 401, body = ErrorBody, description = "the signature is missing or wrong, or the timestamp is more than five minutes off"),
              (status = 404, body = ErrorBody, description = "no Slack signing secret is configured")))]
pub async fn slack_commands(
    State(s): State<AppState>,
    headers: HeaderMap,
    body: Bytes,
) -> ApiResult<Json<Value>> {
    let at = header(&headers, "x-slack-request-timestamp");
    let sig = header(&headers, "x-slack-signature");
    Ok(Json(s.core.slack_command(&body, at, sig).await?))
}

/// A button pressed on a Mattermost announcement (posted here by the Mattermost server):
/// Acknowledge, Resolve, Snooze 1 h or Take it, done as the Klaxon person the Mattermost account
/// is linked to. Answered with the message as it is now, which Mattermost puts in place of the
/// post, and a sentence only the person who pressed sees.
#[utoipa::path(post, path = "/api/chat/mattermost/actions", tag = "chat", security(()),
    request_body(content = Object, description = "Mattermost's action request: `user_id`, and the button's `context` (`action`, `incident`, `sig`: the hex HMAC-SHA256 Klaxon made with the slash command's token)"),
    responses((status = 200, body = Object, description = "`{ephemeral_text, update: {message, props: {attachments}}}`; without `update` when the person may not see the incident"),
              (status = 400, body = ErrorBody, description = "not a Mattermost action request, or its context is not a Klaxon button's"),
              (status = 401, body = ErrorBody, description = "the context's signature is wrong"),
              (status = 404, body = ErrorBody, description = "no Mattermost token is configured")))]
pub async fn mattermost_actions(State(s): State<AppState>, body: Bytes) -> ApiResult<Json<Value>> {
    Ok(Json(s.core.mattermost_action(&body).await?))
}

/// Klaxon's `/klaxon` slash command in Mattermost: `link <code>` links the Mattermost account to
/// the person whose code it is, `unlink` ends that, anything else answers with help; the answer
/// is shown to the person who typed it alone.
#[utoipa::path(post, path = "/api/chat/mattermost/commands", tag = "chat", security(()),
    params(("Authorization" = Option<String>, Header, description = "`Token <the command's token>` (or the form's `token`)")),
    request_body(content = String, content_type = "application/x-www-form-urlencoded", description = "Mattermost's slash command form: `token`, `team_domain`, `user_id`, `user_name`, `text`"),
    responses((status = 200, body = Object, description = "`{response_type: \"ephemeral\", text}`"),
              (status = 400, body = ErrorBody, description = "no `user_id`"),
              (status = 401, body = ErrorBody, description = "the token is missing or wrong"),
              (status = 404, body = ErrorBody, description = "no Mattermost token is configured")))]
pub async fn mattermost_commands(
    State(s): State<AppState>,
    headers: HeaderMap,
    body: Bytes,
) -> ApiResult<Json<Value>> {
    let auth = header(&headers, "authorization");
    Ok(Json(s.core.mattermost_command(&body, auth).await?))
}

/// The Telegram bot's webhook (given to `setWebhook` with its `secret_token`): a button pressed
/// on an announcement acts as the Klaxon person the Telegram account is linked to; messages to
/// the bot link (`/link 123456`), unlink, or act (`/ack 42`, or `ack` in reply to the bot's
/// message). Answered 200 at once; the answers go back through the Bot API.
#[utoipa::path(post, path = "/api/chat/telegram/webhook", tag = "chat", security(()),
    params(("X-Telegram-Bot-Api-Secret-Token" = String, Header, description = "the secret given to `setWebhook`")),
    request_body(content = Object, description = "a Telegram `Update`: a `callback_query` or a `message`"),
    responses((status = 200, description = "taken"),
              (status = 400, body = ErrorBody, description = "not JSON"),
              (status = 401, body = ErrorBody, description = "the secret is missing or wrong"),
              (status = 404, body = ErrorBody, description = "no Telegram bot or webhook secret is configured")))]
pub async fn telegram_webhook(
    State(s): State<AppState>,
    headers: HeaderMap,
    body: Bytes,
) -> ApiResult<StatusCode> {
    let secret = header(&headers, "x-telegram-bot-api-secret-token");
    s.core.telegram_update(&body, secret).await?;
    Ok(StatusCode::OK)
}

/// The Discord application's interactions endpoint: `PING` is answered `PONG`; a button pressed
/// on an announcement acts as the Klaxon person the Discord account is linked to; the `/klaxon`
/// command's `link` and `unlink` subcommands link the account. Answered with a message only the
/// person who acted sees; the announcements are edited in a task of their own.
#[utoipa::path(post, path = "/api/chat/discord/interactions", tag = "chat", security(()),
    params(("X-Signature-Ed25519" = String, Header, description = "hex Ed25519 signature of the timestamp followed by the body, by the application's key"),
           ("X-Signature-Timestamp" = String, Header, description = "Unix seconds, within five minutes of Klaxon's clock")),
    request_body(content = Object, description = "a Discord interaction: `PING` (1), `APPLICATION_COMMAND` (2) or `MESSAGE_COMPONENT` (3)"),
    responses((status = 200, body = Object, description = "`{type: 1}` for a ping; else `{type: 4, data: {content, flags: 64}}`"),
              (status = 400, body = ErrorBody, description = "not a Discord interaction, or of a type Klaxon does not take"),
              (status = 401, body = ErrorBody, description = "the signature is missing or wrong, or the timestamp is more than five minutes off"),
              (status = 404, body = ErrorBody, description = "no Discord bot or public key is configured")))]
pub async fn discord_interactions(
    State(s): State<AppState>,
    headers: HeaderMap,
    body: Bytes,
) -> ApiResult<Json<Value>> {
    let at = header(&headers, "x-signature-timestamp");
    let sig = header(&headers, "x-signature-ed25519");
    Ok(Json(s.core.discord_interaction(&body, at, sig).await?))
}

/// A one-time code that links a chat account to the caller, typed in chat as
/// `/klaxon link <code>` within ten minutes; a new one replaces the last. Shown once.
#[utoipa::path(post, path = "/api/me/chat-link-code", tag = "chat",
    responses((status = 201, body = LinkCode),
              (status = 401, body = ErrorBody),
              (status = 403, body = ErrorBody, description = "a service account")))]
pub async fn new_link_code(
    State(s): State<AppState>,
    Caller(a): Caller,
) -> ApiResult<(StatusCode, Json<LinkCode>)> {
    Ok((
        StatusCode::CREATED,
        Json(s.core.new_chat_link_code(&a).await?),
    ))
}

/// The caller's linked chat accounts.
#[utoipa::path(get, path = "/api/me/chat-links", tag = "chat",
    responses((status = 200, body = [ChatLink]), (status = 401, body = ErrorBody)))]
pub async fn list_links(
    State(s): State<AppState>,
    Caller(a): Caller,
) -> ApiResult<Json<Vec<ChatLink>>> {
    Ok(Json(s.core.list_chat_links(&a).await?))
}

/// Unlinks one of the caller's chat accounts: it acts as nobody from then on.
#[utoipa::path(delete, path = "/api/me/chat-links/{link_id}", tag = "chat",
    params(("link_id" = i64, Path)),
    responses((status = 204), (status = 401, body = ErrorBody),
              (status = 404, body = ErrorBody, description = "not one of the caller's")))]
pub async fn unlink(
    State(s): State<AppState>,
    Caller(a): Caller,
    Path(id): Path<i64>,
) -> ApiResult<StatusCode> {
    s.core.unlink_chat(&a, id).await?;
    Ok(StatusCode::NO_CONTENT)
}
