//! The HTTP listener. Slow or idle clients cannot hold connections: a connection that begins no
//! request within `Limits::header_timeout` is closed, whatever it speaks (nothing at all, an
//! HTTP/2 preface; `idle`), a request's head must arrive within the same time and a kept-alive
//! HTTP/1 connection's next one too (hyper's header-read timer), an HTTP/2 connection with nothing
//! in flight for six times as long is closed (`idle`), HTTP/2 connections are pinged
//! and dropped when the pings go unanswered, and at most `Limits::max_connections` are served
//! at once; while they are, `/healthz` says `degraded`. Past the cap a small overflow lane
//! still answers `/healthz` (so an orchestrator does not restart a replica that is only busy)
//! and answers everything else 503 with `Retry-After`; past that, new connections are closed
//! at once. The cap is kept below the process's file-descriptor limit, so the database and
//! outbound calls always have descriptors left.

use axum::body::Body;
use axum::http::{header, HeaderValue, Request, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::{Json, Router};
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto::Builder;
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use klaxon_core::credentials::Peer;
use klaxon_domain::{ErrorBody, ErrorCode};
use std::future::Future;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tower::ServiceExt;

mod idle;
use idle::Activity;

/// Default connection cap (`KLAXON_MAX_CONNECTIONS`).
pub const MAX_CONNECTIONS: usize = 1024;
/// Connections past the cap that may still ask for `/healthz`.
pub const OVERFLOW: usize = 32;
/// Descriptors kept free of connections: the database pool, outbound calls, files.
const RESERVED_DESCRIPTORS: usize = 128;
/// Time for a request's head to arrive, and for a kept-alive connection's next request.
pub const HEADER_TIMEOUT: Duration = Duration::from_secs(10);
/// The overflow lane's shorter wait for a head.
const OVERFLOW_HEADER_TIMEOUT: Duration = Duration::from_secs(2);
/// How often an HTTP/2 connection is pinged, and how long an answer may take.
const H2_PING_EVERY: Duration = Duration::from_secs(20);

/// Told `true` when every place of the main lane is taken and `false` when one is free again
/// (`Core::connections_full`, which `/healthz` reads).
pub type OnFull = Arc<dyn Fn(bool) + Send + Sync>;

#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub max_connections: usize,
    pub header_timeout: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_connections: MAX_CONNECTIONS,
            header_timeout: HEADER_TIMEOUT,
        }
    }
}

impl Limits {
    /// The cap as configured, lowered to fit the descriptor limit (raised to its hard limit
    /// first, as far as the system allows).
    pub fn fitted(self) -> Limits {
        let descriptors = raise_descriptor_limit();
        let fits = descriptors
            .saturating_sub(RESERVED_DESCRIPTORS + OVERFLOW)
            .max(1);
        if fits < self.max_connections {
            tracing::warn!(
                configured = self.max_connections,
                serving = fits,
                descriptors,
                "the connection cap is lowered to fit the open-file limit"
            );
        }
        Limits {
            max_connections: self.max_connections.min(fits),
            ..self
        }
    }
}

/// The soft open-file limit after raising it to the hard one.
#[cfg(unix)]
fn raise_descriptor_limit() -> usize {
    // SAFETY: getrlimit/setrlimit only read and write the struct passed to them.
    unsafe {
        let mut lim = std::mem::zeroed::<libc::rlimit>();
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) != 0 {
            return usize::MAX;
        }
        if lim.rlim_cur < lim.rlim_max {
            let raised = libc::rlimit {
                rlim_cur: lim.rlim_max,
                rlim_max: lim.rlim_max,
            };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &raised) == 0 {
                lim = raised;
            }
        }
        usize::try_from(lim.rlim_cur).unwrap_or(usize::MAX)
    }
}

#[cfg(not(unix))]
fn raise_descriptor_limit() -> usize {
    usize::MAX
}

/// Counts a lane's open connections; the guard gives its place back when the connection ends.
struct Lane {
    open: AtomicUsize,
    cap: usize,
    /// Whether a connection was turned away since the lane last had a free place.
    full: AtomicBool,
    on_full: Option<OnFull>,
}

struct Place(Arc<Lane>);

impl Lane {
    fn new(cap: usize, on_full: Option<OnFull>) -> Arc<Lane> {
        Arc::new(Lane {
            open: AtomicUsize::new(0),
            cap,
            full: AtomicBool::new(false),
            on_full,
        })
    }

    fn enter(self: &Arc<Self>) -> Option<Place> {
        let entered = self
            .open
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                (n < self.cap).then_some(n + 1)
            })
            .is_ok();
        if !entered {
            self.tell_full(true);
        }
        entered.then(|| Place(self.clone()))
    }

    fn tell_full(&self, full: bool) {
        if self.full.swap(full, Ordering::AcqRel) != full {
            if let Some(on_full) = &self.on_full {
                on_full(full);
            }
        }
    }
}

impl Drop for Place {
    fn drop(&mut self) {
        self.0.open.fetch_sub(1, Ordering::AcqRel);
        self.0.tell_full(false);
    }
}

/// Serves `router` on `listener` until `shutdown` completes, then lets the open connections
/// finish their requests. `on_full` hears when the connection cap is reached and left.
pub async fn serve(
    listener: tokio::net::TcpListener,
    router: Router,
    limits: Limits,
    on_full: Option<OnFull>,
    shutdown: impl Future<Output = ()>,
) {
    let main = Lane::new(limits.max_connections.max(1), on_full);
    let overflow = Lane::new(OVERFLOW, None);
    let mut served = Builder::new(TokioExecutor::new());
    served
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_timeout);
    served
        .http2()
        .timer(TokioTimer::new())
        .keep_alive_interval(H2_PING_EVERY)
        .keep_alive_timeout(H2_PING_EVERY);
    let mut crowded = Builder::new(TokioExecutor::new()).http1_only();
    crowded
        .http1()
        .keep_alive(false)
        .timer(TokioTimer::new())
        .header_read_timeout(OVERFLOW_HEADER_TIMEOUT);
    let graceful = GracefulShutdown::new();
    tokio::pin!(shutdown);
    loop {
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(a) => a,
                Err(e) => {
                    // Out of descriptors, or a connection reset before it was taken: wait
                    // a moment rather than spin.
                    tracing::warn!(error = %e, "accepting a connection failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        let io = TokioIo::new(stream);
        let router = router.clone();
        let with_peer = move |mut req: Request<hyper::body::Incoming>| {
            req.extensions_mut().insert(Peer(peer.ip()));
            req.map(Body::new)
        };
        if let Some(place) = main.enter() {
            let activity = Activity::new();
            let svc = TowerToHyperService::new(tower::service_fn({
                let activity = activity.clone();
                move |req: Request<hyper::body::Incoming>| {
                    let busy = activity.begin();
                    let router = router.clone();
                    async move {
                        let res = router.oneshot(with_peer(req)).await?;
                        Ok::<_, std::convert::Infallible>(busy.until_sent(res))
                    }
                }
            }));
            let conn = graceful.watch(served.serve_connection(io, svc).into_owned());
            let limit = limits.header_timeout;
            tokio::spawn(async move {
                // Dropping the connection closes it: nothing is in flight when `idle` ends.
                tokio::select! {
                    _ = conn => {}
                    () = activity.idle_for(limit) => {}
                }
                drop(place);
            });
        } else if let Some(place) = overflow.enter() {
            let svc = TowerToHyperService::new(tower::service_fn(
                move |req: Request<hyper::body::Incoming>| {
                    let router = router.clone();
                    async move {
                        if req.uri().path() == "/healthz" {
                            router.oneshot(with_peer(req)).await
                        } else {
                            Ok(busy())
                        }
                    }
                },
            ));
            let conn = graceful.watch(crowded.serve_connection(io, svc).into_owned());
            tokio::spawn(async move {
                // The overflow lane speaks HTTP/1 only, with no keep-alive; a client that sends
                // nothing is still closed after the short head timeout.
                let _ = tokio::time::timeout(OVERFLOW_HEADER_TIMEOUT * 2, conn).await;
                drop(place);
            });
        }
        // Else both lanes are full: the stream is dropped here, closing it at once.
    }
    drop(listener);
    graceful.shutdown().await;
}

/// The answer past the connection cap.
fn busy() -> Response {
    let body = ErrorBody {
        error: ErrorCode::Unavailable,
        message: "the server is serving as many connections as it can; try again shortly".into(),
    };
    let mut res = (StatusCode::SERVICE_UNAVAILABLE, Json(body)).into_response();
    res.headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
    res
}
