//! Live updates as server-sent events (`core::events` decides what a caller hears).

use crate::error::{ApiError, ApiResult};
use crate::extract::{Caller, Query, Request};
use crate::AppState;
use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::IntoResponse;
use klaxon_core::events::EventScope;
use klaxon_core::{Actor, Core};
use klaxon_domain::live::{EventKind, LiveEvent};
use klaxon_domain::ErrorBody;
use std::collections::HashMap;
use std::time::Duration;
use tokio::sync::broadcast::error::RecvError;
use tokio::sync::mpsc;

/// How soon a browser reconnects after its stream drops.
const RETRY: Duration = Duration::from_secs(1);
/// The credential and the caller's teams are checked again this often: a signed-out session or
/// a revoked key ends the stream, and a new membership is heard.
const RECHECK: Duration = Duration::from_secs(30);

/// One event of the stream, as an `EventSource` hands it to a page.
#[derive(utoipa::ToSchema)]
#[allow(dead_code)] // The document's description of what `sse` writes.
pub struct StreamEvent {
    /// What changed.
    event: EventKind,
    /// JSON naming the subject, never the change: `{"id": …, "team_id": …}`.
    data: String,
    /// The event's place in the stream, sent back as `Last-Event-ID` on a reconnect.
    #[schema(pattern = "^[0-9]+$")]
    id: String,
}

/// Where a page's stream starts (`?after=`).
#[derive(serde::Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct StreamQuery {
    /// Resume after this event: the point a page was rendered at (its `klaxon-events` meta tag).
    /// The stream first replays the caller's events after it, so the page needs no reload; when
    /// they are no longer all kept the answer is 409 and the page opens the stream without it.
    /// `Last-Event-ID`, which a browser sends when it reconnects, takes precedence.
    #[param(minimum = 0)]
    after: Option<i64>,
}

/// One stream per signed-in tab. Each event names what changed (`event:` `incident`, `team` or
/// `schedule`; `data:` `{"id", "team_id"}`), never the change itself: the page refetches it.
/// `id:` is monotonic; a browser that reconnects sends it back as `Last-Event-ID` and first
/// hears what it missed. Only events of the caller's teams are sent (the teams their incident
/// list shows). Comments keep the connection open every 15 s.
#[utoipa::path(
    get,
    path = "/api/events",
    tag = "events",
    params(("Last-Event-ID" = Option<i64>, Header, minimum = 0, description = "The last `id:` this client received; the stream starts with the caller's events after it."), StreamQuery),
    responses((status = 200, content_type = "text/event-stream", body = StreamEvent, description = "An endless stream of server-sent events, each as `StreamEvent` describes."),
              (status = 400, body = ErrorBody, description = "`Last-Event-ID` or `after` is not a non-negative integer"),
              (status = 409, body = ErrorBody, description = "`after` (with no `Last-Event-ID`) is older than the events kept, or more followed it than a stream replays: open the stream without it and reload"),
              (status = 429, body = ErrorBody, description = "the account already holds 20 open streams on this server (`Retry-After`)"))
)]
pub async fn stream(
    State(s): State<AppState>,
    Caller(actor): Caller,
    request: Request,
    headers: HeaderMap,
    Query(query): Query<StreamQuery>,
) -> ApiResult<impl IntoResponse> {
    let after = match headers.get("last-event-id") {
        None => None,
        Some(v) => Some(
            v.to_str()
                .ok()
                .and_then(|v| v.trim().parse::<i64>().ok())
                .filter(|v| *v >= 0)
                .ok_or_else(|| {
                    ApiError::from(klaxon_core::Error::Invalid(
                        "Last-Event-ID must be an event id this server sent".into(),
                    ))
                })?,
        ),
    };
    // A page's render showed every event up to its point (`Core::resume_point`: on PostgreSQL
    // no id below it was still uncommitted), so the feed's older events are not passed on.
    let shown = query.after.filter(|_| after.is_none()).unwrap_or(-1);
    let after = match (after, query.after) {
        (Some(header), _) => Some(header),
        (None, Some(rendered)) if rendered < 0 => {
            return Err(klaxon_core::Error::Invalid("after must be at least 0".into()).into())
        }
        (None, Some(rendered)) => {
            if !s.core.can_resume_after(rendered).await? {
                return Err(klaxon_core::Error::Conflict(format!(
                    "the events after {rendered} are no longer all kept: open the stream without `after` and reload"
                ))
                .into());
            }
            Some(rendered)
        }
        (None, None) => None,
    };
    let place = s.core.open_stream(&actor)?;
    let scope = s.core.event_scope(&actor).await?;
    let (tx, rx) = mpsc::channel(64);
    tokio::spawn(async move {
        pump(s.core.clone(), actor, request, scope, (after, shown), tx).await;
        drop(place);
    });
    let events = futures_util::stream::unfold(rx, |mut rx| async move {
        rx.recv()
            .await
            .map(|e| (Ok::<_, std::convert::Infallible>(e), rx))
    });
    // Proxies that buffer answers (nginx) would hold events back; this asks them not to.
    Ok((
        [("x-accel-buffering", "no")],
        Sse::new(events).keep_alive(KeepAlive::default()),
    ))
}

/// Feeds one stream until the browser goes, the credential stops working or the server stops:
/// first what came after `after`, then the feed's events, none up to `shown` (a page's render
/// point; -1 for other streams).
async fn pump(
    core: Core,
    actor: Actor,
    request: Request,
    mut scope: EventScope,
    (after, shown): (Option<i64>, i64),
    tx: mpsc::Sender<Event>,
) {
    // Subscribed before the replay is read, so nothing falls between the two.
    let mut live = core.subscribe_events();
    let mut stopping = core.events_closed();
    if tx.send(Event::default().retry(RETRY)).await.is_err() {
        return;
    }
    // What the replay sent, per subject: the feed may still pass on those events after it.
    let mut replayed = HashMap::new();
    let mut last = match after {
        Some(after) => match replay(&core, &scope, after, &tx, &mut replayed).await {
            Some(last) => last,
            None => return,
        },
        None => core.latest_event().await.unwrap_or(0),
    };
    let mut recheck = tokio::time::interval_at(tokio::time::Instant::now() + RECHECK, RECHECK);
    loop {
        tokio::select! {
            batch = live.recv() => match batch {
                Ok(batch) => {
                    // A team event may be a new membership: hear that team from now on.
                    if batch.iter().any(|e| e.kind == EventKind::Team) {
                        match core.event_scope(&actor).await {
                            Ok(s) => scope = s,
                            Err(_) => return,
                        }
                    }
                    let fresh = |e: &&LiveEvent| {
                        e.seq > shown
                            && scope.admits(e)
                            && replayed.get(&(e.kind, e.data.id)).is_none_or(|seq| e.seq > *seq)
                    };
                    for e in batch.iter().filter(fresh) {
                        if tx.send(sse(e)).await.is_err() {
                            return;
                        }
                    }
                    last = batch.iter().map(|e| e.seq).fold(last, i64::max);
                }
                // This stream fell behind the feed: read what it missed from the table.
                Err(RecvError::Lagged(_)) => match replay(&core, &scope, last, &tx, &mut replayed).await {
                    Some(l) => last = l,
                    None => return,
                },
                Err(RecvError::Closed) => return,
            },
            _ = recheck.tick() => {
                let still = match core.authenticate(&request.presented()).await {
                    Ok(_) => core.event_scope(&actor).await,
                    Err(e) => Err(e),
                };
                match still {
                    Ok(s) => scope = s,
                    Err(_) => return,
                }
            }
            _ = stopping.changed() => return,
            _ = tx.closed() => return,
        }
    }
}

/// Sends the caller's events after `after`, noting each in `replayed`; the newest id read, or
/// `None` once the browser is gone.
async fn replay(
    core: &Core,
    scope: &EventScope,
    after: i64,
    tx: &mpsc::Sender<Event>,
    replayed: &mut HashMap<(EventKind, i64), i64>,
) -> Option<i64> {
    let missed = core.events_after(scope, after).await.ok()?;
    let mut last = after;
    for e in &missed {
        tx.send(sse(e)).await.ok()?;
        replayed.insert((e.kind, e.data.id), e.seq);
        last = last.max(e.seq);
    }
    // Events the caller may not see still move the cursor on.
    Some(core.latest_event().await.map_or(last, |l| l.max(last)))
}

fn sse(e: &LiveEvent) -> Event {
    Event::default()
        .id(e.seq.to_string())
        .event(e.kind.as_str())
        .json_data(e.data)
        .unwrap_or_default()
}
