//! The HTTP listener. Slow or idle clients cannot hold connections: a request's head must
//! arrive within `Limits::header_timeout` (hyper's header-read timer, which also runs while a
//! kept-alive connection waits for its next request, so it is the idle timeout too), and at
//! most `Limits::max_connections` are served at once. Past the cap a small overflow lane
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
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tower::ServiceExt;

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
}

struct Place(Arc<Lane>);

impl Lane {
    fn enter(self: &Arc<Self>) -> Option<Place> {
        self.open
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                (n < self.cap).then_some(n + 1)
            })
            .ok()
            .map(|_| Place(self.clone()))
    }
}

impl Drop for Place {
    fn drop(&mut self) {
        self.0.open.fetch_sub(1, Ordering::AcqRel);
    }
}

/// Serves `router` on `listener` until `shutdown` completes, then lets the open connections
/// finish their requests.
pub async fn serve(
    listener: tokio::net::TcpListener,
    router: Router,
    limits: Limits,
    shutdown: impl Future<Output = ()>,
) {
    let main = Arc::new(Lane {
        open: AtomicUsize::new(0),
        cap: limits.max_connections.max(1),
    });
    let overflow = Arc::new(Lane {
        open: AtomicUsize::new(0),
        cap: OVERFLOW,
    });
    let mut served = Builder::new(TokioExecutor::new());
    served
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_timeout);
    served.http2().timer(TokioTimer::new());
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
            let svc = TowerToHyperService::new(router.map_request(with_peer));
            let conn = graceful.watch(served.serve_connection(io, svc).into_owned());
            tokio::spawn(async move {
                let _ = conn.await;
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
                let _ = conn.await;
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
