//! A connection's idle timer. hyper's own timers do not cover every way a client can hold a
//! connection without asking anything: the protocol detection before the first byte has no
//! timer, and HTTP/2 has no idle timeout. So each connection counts its requests in flight,
//! a request until its answer's body has been sent (a live-update stream is in flight for as
//! long as it runs), and is closed once nothing has been in flight for the limit.

use axum::body::{Body, Bytes, HttpBody};
use axum::response::Response;
use http_body::{Frame, SizeHint};
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use tokio::time::Instant;

/// An idle connection that has served a request is closed after this many header timeouts.
const AFTER_FIRST: u32 = 6;

/// What one connection is doing.
pub(super) struct Activity {
    in_flight: AtomicUsize,
    /// Whether a request has begun: a kept-alive HTTP/1 connection is hyper's to close (its
    /// header timer), so past the first request only an idle HTTP/2 connection meets this timer.
    served: std::sync::atomic::AtomicBool,
    /// When the last request ended, or the connection opened.
    quiet_since: Mutex<Instant>,
}

/// One request in flight; dropped when its answer has been sent (or abandoned).
pub(super) struct Busy(Arc<Activity>);

impl Activity {
    pub fn new() -> Arc<Activity> {
        Arc::new(Activity {
            in_flight: AtomicUsize::new(0),
            served: std::sync::atomic::AtomicBool::new(false),
            quiet_since: Mutex::new(Instant::now()),
        })
    }

    pub fn begin(self: &Arc<Self>) -> Busy {
        self.served.store(true, Ordering::Release);
        self.in_flight.fetch_add(1, Ordering::AcqRel);
        Busy(self.clone())
    }

    /// Completes once nothing has been in flight for `limit` before the first request, or for
    /// `AFTER_FIRST` times `limit` after it.
    pub async fn idle_for(&self, first: std::time::Duration) {
        loop {
            let limit = if self.served.load(Ordering::Acquire) {
                first * AFTER_FIRST
            } else {
                first
            };
            let quiet = *self.quiet_since.lock().unwrap_or_else(|e| e.into_inner());
            if self.in_flight.load(Ordering::Acquire) > 0 {
                tokio::time::sleep(limit).await;
            } else if quiet + limit <= Instant::now() {
                return;
            } else {
                tokio::time::sleep_until(quiet + limit).await;
            }
        }
    }
}

impl Busy {
    /// The answer, holding this request in flight until its body is sent.
    pub fn until_sent(self, res: Response) -> Response {
        res.map(|body| Body::new(Tracked { body, _busy: self }))
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        *self.0.quiet_since.lock().unwrap_or_else(|e| e.into_inner()) = Instant::now();
        self.0.in_flight.fetch_sub(1, Ordering::AcqRel);
    }
}

/// A body that keeps its request counted in flight until it is dropped.
struct Tracked {
    body: Body,
    _busy: Busy,
}

impl HttpBody for Tracked {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}
