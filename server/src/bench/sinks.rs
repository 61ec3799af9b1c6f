//! What `klaxon bench paging` pages into: the stand-in ntfy (`Arrivals`), a push service that
//! opens each Web Push message with its subscription's private key, and an SMTP server (STARTTLS,
//! with a certificate authority made for the run) that reads each mail. Each notes when each page
//! arrived, by its incident's number; and the alert each incident is opened by (`one_alert`).

use super::err;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::post as route_post;
use klaxon_core::roads::webpush::Receiver;
use serde_json::{json, Value};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::oneshot;

/// A publish held at the stand-in ntfy: its title, told when it arrives, refused when released.
type Hold = (String, oneshot::Sender<()>, oneshot::Receiver<()>);

/// A stand-in ntfy that notes when each page arrived, keyed by its title.
#[derive(Clone, Default)]
pub(super) struct Arrivals {
    pub seen: Arc<Mutex<HashMap<String, Instant>>>,
    /// Every publish, duplicates included.
    pub total: Arc<std::sync::atomic::AtomicUsize>,
    arrived: Arc<tokio::sync::Notify>,
    hold: Arc<Mutex<Option<Hold>>>,
    /// Refuse every publish with 403, noting when each was refused (`--failover`).
    pub refuse: Arc<std::sync::atomic::AtomicBool>,
    pub refused: Arc<Mutex<HashMap<String, Instant>>>,
    /// Web Push messages as they arrived, opened when the run next counts its arrivals.
    sealed: Arc<Mutex<Vec<Sealed>>>,
}

/// A Web Push message not yet opened: when it arrived, its body, the key that opens it.
type Sealed = (Instant, Bytes, Arc<Receiver>);

impl Arrivals {
    pub async fn serve(&self) -> Result<String, String> {
        async fn publish(State(a): State<Arrivals>, body: Bytes) -> (StatusCode, &'static str) {
            let at = Instant::now();
            let title = serde_json::from_slice::<Value>(&body)
                .ok()
                .and_then(|v| v["title"].as_str().map(str::to_string))
                .unwrap_or_default();
            if a.refuse.load(std::sync::atomic::Ordering::SeqCst) {
                a.refused.lock().unwrap().entry(title).or_insert(at);
                return (
                    StatusCode::FORBIDDEN,
                    r#"{"code":40301,"http":403,"error":"forbidden"}"#,
                );
            }
            let held = {
                let mut hold = a.hold.lock().unwrap();
                match hold.take() {
                    Some((t, arrived, release)) if t == title => Some((arrived, release)),
                    other => {
                        *hold = other;
                        None
                    }
                }
            };
            if let Some((arrived, release)) = held {
                let _ = arrived.send(());
                let _ = release.await;
                return (StatusCode::SERVICE_UNAVAILABLE, "{}");
            }
            a.record_at(title, at);
            (StatusCode::OK, "{}")
        }
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .map_err(err)?;
        let url = format!("http://{}", listener.local_addr().map_err(err)?);
        let router = axum::Router::new()
            .route("/", route_post(publish))
            .with_state(self.clone());
        tokio::spawn(async move { axum::serve(listener, router).await });
        Ok(url)
    }

    /// Holds the next publish titled `title`: the first receiver says it arrived; sending on
    /// the sender (or dropping it) lets it be refused with a 503, recording nothing.
    pub fn hold(&self, title: &str) -> (oneshot::Receiver<()>, oneshot::Sender<()>) {
        let (arrived_tx, arrived_rx) = oneshot::channel();
        let (release_tx, release_rx) = oneshot::channel();
        *self.hold.lock().unwrap() = Some((title.to_string(), arrived_tx, release_rx));
        (arrived_rx, release_tx)
    }

    /// Notes a page's arrival now.
    pub fn record(&self, title: String) {
        self.record_at(title, Instant::now());
    }

    pub fn record_at(&self, title: String, at: Instant) {
        self.seen.lock().unwrap().entry(title).or_insert(at);
        self.total.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        self.arrived.notify_waiters();
    }

    /// Notes a Web Push message's arrival; it is opened when the run next counts.
    fn seal(&self, message: Sealed) {
        self.sealed.lock().unwrap().push(message);
        self.arrived.notify_waiters();
    }

    /// Distinct pages arrived, after opening the Web Push messages that came since the last
    /// count. A message that does not open never arrives, and the run says how many pages did.
    pub fn count(&self) -> usize {
        let sealed = std::mem::take(&mut *self.sealed.lock().unwrap());
        for (at, body, receiver) in sealed {
            let title = receiver
                .open(&body)
                .ok()
                .and_then(|p| serde_json::from_slice::<Value>(&p).ok())
                .and_then(|v| v["title"].as_str().map(str::to_string));
            if let Some(t) = title {
                self.seen.lock().unwrap().entry(t).or_insert(at);
                self.total.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            }
        }
        self.seen.lock().unwrap().len()
    }

    /// When the page titled `title` first arrived.
    pub fn arrival(&self, title: &str) -> Option<Instant> {
        self.seen.lock().unwrap().get(title).copied()
    }

    pub async fn wait_for(&self, n: usize, limit: Duration) -> Result<(), String> {
        let wait = async {
            loop {
                let notified = self.arrived.notified();
                if self.count() >= n {
                    return;
                }
                notified.await;
            }
        };
        tokio::time::timeout(limit, wait)
            .await
            .map_err(|_| format!("only {} of {n} pages arrived", self.count()))
    }
}

pub(super) fn title(i: usize) -> String {
    format!("[CRITICAL] Bench{i}: page latency")
}

pub(super) fn one_alert(i: usize) -> Value {
    let now = time::OffsetDateTime::now_utc()
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_default();
    json!({
        "version": "4",
        "groupKey": format!("{{}}:{{alertname=\"Bench{i}\"}}"),
        "status": "firing",
        "receiver": "klaxon",
        "groupLabels": {"alertname": format!("Bench{i}")},
        "commonLabels": {},
        "commonAnnotations": {},
        "externalURL": "http://alertmanager:9093",
        "truncatedAlerts": 0,
        "alerts": [{
            "status": "firing",
            "labels": {"alertname": format!("Bench{i}"), "severity": "critical"},
            "annotations": {"summary": "page latency"},
            "startsAt": now,
            "endsAt": "0001-01-01T00:00:00Z",
            "fingerprint": format!("{i:016x}"),
        }],
    })
}

/// The page title of the incident a text names ("…Bench12…").
pub(super) fn titled(text: &str) -> Option<String> {
    let at = text.find("Bench")? + "Bench".len();
    let digits: String = text[at..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    digits.parse().ok().map(title)
}

/// A push service with one subscription: its endpoint and keys.
pub(super) struct PushSink {
    pub endpoint: String,
    pub p256dh: String,
    pub auth: String,
}

/// A subscription's keys (p256dh, auth) that nothing reads: for destinations that never answer.
pub(super) fn push_keys() -> (String, String) {
    Receiver::default().keys()
}

pub(super) async fn push_sink(arrivals: Arrivals) -> Result<PushSink, String> {
    #[derive(Clone)]
    struct Sink {
        arrivals: Arrivals,
        receiver: Arc<Receiver>,
    }
    async fn push(State(s): State<Sink>, body: Bytes) -> StatusCode {
        // A push service answers as soon as it has the message (it cannot read it). Opening it
        // is the bench's own check, done when the run counts its arrivals (in a storm, after
        // the storm) and timed from the message's arrival, so it takes no turn from the server.
        s.arrivals.seal((Instant::now(), body, s.receiver.clone()));
        StatusCode::CREATED
    }
    let receiver = Arc::new(Receiver::default());
    let (p256dh, auth) = receiver.keys();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .map_err(err)?;
    let endpoint = format!("http://{}/push", listener.local_addr().map_err(err)?);
    let router = axum::Router::new()
        .route("/push", route_post(push))
        .with_state(Sink { arrivals, receiver });
    tokio::spawn(async move { axum::serve(listener, router).await });
    Ok(PushSink {
        endpoint,
        p256dh,
        auth,
    })
}

/// An SMTP server for the run: where it listens, the authority its certificate is signed by,
/// and the verification codes it was sent.
pub(super) struct SmtpSink {
    pub port: u16,
    pub ca_pem: Vec<u8>,
    pub codes: Arc<Mutex<Vec<String>>>,
}

pub(super) async fn smtp_sink(arrivals: Arrivals) -> Result<SmtpSink, String> {
    use rcgen::{BasicConstraints, CertificateParams, IsCa, Issuer, KeyPair};
    let ca_key = KeyPair::generate().map_err(err)?;
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).map_err(err)?;
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let ca = ca_params.self_signed(&ca_key).map_err(err)?;
    let issuer = Issuer::new(ca_params, ca_key);
    let key = KeyPair::generate().map_err(err)?;
    let cert = CertificateParams::new(vec!["127.0.0.1".to_string()])
        .map_err(err)?
        .signed_by(&key, &issuer)
        .map_err(err)?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let tls = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(err)?
        .with_no_client_auth()
        .with_single_cert(
            vec![cert.der().clone()],
            rustls::pki_types::PrivateKeyDer::Pkcs8(key.serialize_der().into()),
        )
        .map_err(err)?;
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(tls));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .map_err(err)?;
    let port = listener.local_addr().map_err(err)?.port();
    let codes: Arc<Mutex<Vec<String>>> = Arc::default();
    let kept = codes.clone();
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let (acceptor, arrivals, codes) = (acceptor.clone(), arrivals.clone(), kept.clone());
            tokio::spawn(async move {
                let _ = session(stream, acceptor, arrivals, codes).await;
            });
        }
    });
    Ok(SmtpSink {
        port,
        ca_pem: ca.pem().into_bytes(),
        codes,
    })
}

/// One SMTP connection: the greeting and STARTTLS in the clear, then mail over TLS.
async fn session(
    stream: tokio::net::TcpStream,
    acceptor: tokio_rustls::TlsAcceptor,
    arrivals: Arrivals,
    codes: Arc<Mutex<Vec<String>>>,
) -> std::io::Result<()> {
    let mut clear = BufReader::new(stream);
    clear.get_mut().write_all(b"220 bench ESMTP\r\n").await?;
    loop {
        let mut line = String::new();
        if clear.read_line(&mut line).await? == 0 {
            return Ok(());
        }
        let verb = line.get(..4).unwrap_or_default().to_ascii_uppercase();
        let answer: &[u8] = match verb.as_str() {
            "EHLO" => b"250-bench\r\n250 STARTTLS\r\n",
            "STAR" => {
                clear.get_mut().write_all(b"220 ready\r\n").await?;
                break;
            }
            "QUIT" => return clear.get_mut().write_all(b"221 bye\r\n").await,
            _ => b"530 STARTTLS first\r\n",
        };
        clear.get_mut().write_all(answer).await?;
    }
    let tls = acceptor.accept(clear.into_inner()).await?;
    mail(BufReader::new(tls), arrivals, codes).await
}

/// The SMTP dialogue over TLS: every message is read whole, then noted.
async fn mail<S: AsyncRead + AsyncWrite + Unpin>(
    mut s: BufReader<S>,
    arrivals: Arrivals,
    codes: Arc<Mutex<Vec<String>>>,
) -> std::io::Result<()> {
    loop {
        let mut line = String::new();
        if s.read_line(&mut line).await? == 0 {
            return Ok(());
        }
        let verb = line.get(..4).unwrap_or_default().to_ascii_uppercase();
        let answer: &[u8] = match verb.as_str() {
            "EHLO" | "HELO" => b"250-bench\r\n250-8BITMIME\r\n250 PIPELINING\r\n",
            "DATA" => {
                s.get_mut().write_all(b"354 go on\r\n").await?;
                let mut message = String::new();
                loop {
                    let mut l = String::new();
                    if s.read_line(&mut l).await? == 0 || l == ".\r\n" {
                        break;
                    }
                    message.push_str(&l);
                }
                note(&message, &arrivals, &codes);
                b"250 queued\r\n"
            }
            "QUIT" => return s.get_mut().write_all(b"221 bye\r\n").await,
            _ => b"250 OK\r\n",
        };
        s.get_mut().write_all(answer).await?;
    }
}

/// A page's arrival by its subject, or a verification code.
fn note(message: &str, arrivals: &Arrivals, codes: &Mutex<Vec<String>>) {
    let subject = message
        .lines()
        .find_map(|l| l.strip_prefix("Subject: "))
        .unwrap_or_default();
    if let Some(t) = titled(subject) {
        arrivals.record(t);
    } else if let Some(at) = message.find("verification code is ") {
        let code = message[at + 21..].chars().take(6).collect();
        codes.lock().unwrap().push(code);
    }
}
