//! A team's channels: where its incidents are announced (Matrix rooms, Slack-format and Teams
//! webhooks, Klaxon's signed webhook).

use crate::error::ApiResult;
use crate::extract::{Body, Caller, Path};
use crate::AppState;
use axum::extract::State;
use axum::http::StatusCode;
use axum::Json;
use klaxon_domain::channel::{Channel, ChannelChange, NewChannel, NewChannelAnswer};
use klaxon_domain::ids::TeamId;
use klaxon_domain::ErrorBody;

/// Adds a channel (team owner). A `webhook` channel's signing secret is in this answer only;
/// the URL of any webhook is never shown again (listings show its origin). A `matrix` channel
/// starts `unproven`, with the `proof_code` to post in the room (`POST …/verify`).
#[utoipa::path(post, path = "/api/teams/{team_id}/channels", tag = "channels", request_body = NewChannel,
    responses((status = 201, body = NewChannelAnswer),
              (status = 400, body = ErrorBody, description = "a malformed field; a target that is not a room (matrix) or an http(s) URL (the others), or whose written address the outbound policy refuses; `matrix` without a configured homeserver; no events; more than 20 channels")))]
pub async fn create(
    State(s): State<AppState>,
    Caller(a): Caller,
    Path(team_id): Path<i64>,
    Body(b): Body<NewChannel>,
) -> ApiResult<(StatusCode, Json<NewChannelAnswer>)> {
    Ok((
        StatusCode::CREATED,
        Json(s.core.create_channel(&a, TeamId(team_id), b).await?),
    ))
}

/// A team's channels with their state: `failing` with the last error while posts do not get
/// through (members of the team).
#[utoipa::path(get, path = "/api/teams/{team_id}/channels", tag = "channels",
    responses((status = 200, body = Vec<Channel>)))]
pub async fn list(
    State(s): State<AppState>,
    Caller(a): Caller,
    Path(team_id): Path<i64>,
) -> ApiResult<Json<Vec<Channel>>> {
    Ok(Json(s.core.list_channels(&a, TeamId(team_id)).await?))
}

/// Renames a channel, gives it a new target, or changes what it hears (team owner).
#[utoipa::path(patch, path = "/api/teams/{team_id}/channels/{channel_id}", tag = "channels", request_body = ChannelChange,
    responses((status = 200, body = Channel),
              (status = 400, body = ErrorBody, description = "a malformed field, a target as for a new channel, or no events")))]
pub async fn update(
    State(s): State<AppState>,
    Caller(a): Caller,
    Path((team_id, id)): Path<(i64, i64)>,
    Body(b): Body<ChannelChange>,
) -> ApiResult<Json<Channel>> {
    Ok(Json(
        s.core.update_channel(&a, TeamId(team_id), id, b).await?,
    ))
}

/// Removes a channel and what it had still to send (team owner).
#[utoipa::path(delete, path = "/api/teams/{team_id}/channels/{channel_id}", tag = "channels",
    responses((status = 204)))]
pub async fn delete(
    State(s): State<AppState>,
    Caller(a): Caller,
    Path((team_id, id)): Path<(i64, i64)>,
) -> ApiResult<StatusCode> {
    s.core.delete_channel(&a, TeamId(team_id), id).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// Posts a test message to the channel now (team owner). A signed webhook receives
/// `{"version": 1, "event": "test", "team", "text"}`; every other event is a `WebhookEvent`.
#[utoipa::path(post, path = "/api/teams/{team_id}/channels/{channel_id}/test", tag = "channels",
    responses((status = 204),
              (status = 409, body = ErrorBody, description = "a Matrix room not proven yet (`POST …/verify`)"),
              (status = 429, body = ErrorBody, description = "too many test messages by this person or to this channel (20 and 5 in 15 minutes)"),
              (status = 502, body = ErrorBody, description = "the channel's service refused the message or could not be reached; the message says which, without anything the service wrote")))]
pub async fn test(
    State(s): State<AppState>,
    Caller(a): Caller,
    Path((team_id, id)): Path<(i64, i64)>,
) -> ApiResult<StatusCode> {
    s.core.test_channel(&a, TeamId(team_id), id).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// Proves a Matrix channel's room (team owner). A new Matrix channel is `unproven` and hears
/// nothing: a moderator or administrator of the room (power level 50 or more, and at least the
/// room's `state_default`) posts the channel's `proof_code` in it, then this asks the bot to
/// join the room (it must be invited to a private one) and read its last 20 messages for the
/// code. Proven, the channel posts to that room (by id) only, and no other channel may have it.
/// Answers a proven channel as it is. Each check counts as a test message.
#[utoipa::path(post, path = "/api/teams/{team_id}/channels/{channel_id}/verify", tag = "channels",
    responses((status = 200, body = Channel),
              (status = 400, body = ErrorBody, description = "not a Matrix channel, or no Matrix homeserver is configured"),
              (status = 409, body = ErrorBody, description = "not proven: the bot cannot join the room (invite it), the room is unknown, or the code is not among its last 20 messages from a moderator; or the room is already another channel's"),
              (status = 429, body = ErrorBody, description = "too many checks and tests by this person or of this channel (20 and 5 in 15 minutes)"),
              (status = 502, body = ErrorBody, description = "the homeserver could not be asked; the message says how, without anything it wrote")))]
pub async fn verify(
    State(s): State<AppState>,
    Caller(a): Caller,
    Path((team_id, id)): Path<(i64, i64)>,
) -> ApiResult<Json<Channel>> {
    Ok(Json(s.core.prove_channel(&a, TeamId(team_id), id).await?))
}
