//! Connections to the mail server, kept open between mails. lettre's own pool opens its sockets
//! with Nagle's algorithm on, and lettre writes a message's closing `.` apart from its body: held
//! back until the server's delayed ACK, each mail cost about 40 ms, so a storm to one address went
//! at 25 mails a second. Here the socket is Klaxon's (no delay) and lettre speaks SMTP over it.

use lettre::address::Envelope;
use lettre::transport::smtp::authentication::{Credentials, Mechanism};
use lettre::transport::smtp::client::{AsyncSmtpConnection, AsyncTokioStream, TlsParameters};
use lettre::transport::smtp::extension::ClientId;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;

/// Why a message was not sent. `refused` is the server's permanent answer about this message
/// (a 5xx, such as an address it does not accept): trying again will not help.
#[derive(Debug)]
pub struct MailError {
    pub reason: String,
    pub refused: bool,
}

impl MailError {
    /// The server could not be reached or did not finish: another try may go through.
    pub fn outage(reason: &str) -> MailError {
        MailError {
            reason: reason.into(),
            refused: false,
        }
    }
}

/// How long a connection, a login or one mail may take: a hung server holds one send, not the road.
pub const TIMEOUT: Duration = Duration::from_secs(20);
/// Connections kept open while idle: enough for the addresses paged at once in a storm.
const MAX_IDLE: usize = 8;
/// A connection idle longer than this is asked (NOOP) whether it still stands before a mail.
const CHECK_AFTER: Duration = Duration::from_secs(2);
/// A connection idle longer than this is closed: servers drop quiet clients after a while.
const IDLE_FOR: Duration = Duration::from_secs(60);

/// How the connection is encrypted.
pub enum Tls {
    /// STARTTLS after the greeting; a server without it is refused.
    Start(TlsParameters),
    /// TLS from the first byte (`smtps://`).
    Implicit {
        config: Arc<rustls::ClientConfig>,
        name: rustls::pki_types::ServerName<'static>,
    },
}

/// The mail server and the connections kept to it.
pub struct Pool {
    pub host: String,
    pub port: u16,
    pub tls: Tls,
    pub credentials: Option<Credentials>,
    hello: ClientId,
    idle: Mutex<Vec<(AsyncSmtpConnection, Instant)>>,
}

impl Pool {
    pub fn new(host: String, port: u16, tls: Tls, credentials: Option<Credentials>) -> Pool {
        Pool {
            host,
            port,
            tls,
            credentials,
            hello: ClientId::default(),
            idle: Mutex::new(Vec::new()),
        }
    }

    /// Sends one message on a kept connection or a new one, kept afterwards when it went well.
    pub async fn send(&self, envelope: &Envelope, message: &[u8]) -> Result<(), MailError> {
        let mut conn = match self.kept().await {
            Some(conn) => conn,
            None => bounded(self.connect()).await?,
        };
        match tokio::time::timeout(TIMEOUT, conn.send(envelope, message)).await {
            Ok(Ok(_)) => {
                self.keep(conn);
                Ok(())
            }
            // lettre closes a connection after any error, a refusal too.
            Ok(Err(e)) => Err(from_smtp(e)),
            // Cut off mid-mail: the connection is in no state to be kept.
            Err(_) => Err(late()),
        }
    }

    /// A kept connection that still stands, newest first; the older ones are closed.
    async fn kept(&self) -> Option<AsyncSmtpConnection> {
        loop {
            let (mut conn, since) = {
                let mut idle = self.idle.lock().unwrap_or_else(|e| e.into_inner());
                idle.retain(|(_, since)| since.elapsed() < IDLE_FOR);
                idle.pop()?
            };
            if since.elapsed() < CHECK_AFTER
                || tokio::time::timeout(TIMEOUT, conn.test_connected())
                    .await
                    .unwrap_or(false)
            {
                return Some(conn);
            }
        }
    }

    fn keep(&self, conn: AsyncSmtpConnection) {
        let mut idle = self.idle.lock().unwrap_or_else(|e| e.into_inner());
        if idle.len() < MAX_IDLE {
            idle.push((conn, Instant::now()));
        }
    }

    /// A new connection: TCP without delay, TLS, EHLO and the login.
    async fn connect(&self) -> Result<AsyncSmtpConnection, MailError> {
        let unreachable = |_| MailError::outage("the mail server could not be reached");
        let tcp = TcpStream::connect((self.host.as_str(), self.port))
            .await
            .map_err(unreachable)?;
        tcp.set_nodelay(true).map_err(unreachable)?;
        let mut conn = match &self.tls {
            Tls::Start(params) => {
                let mut conn =
                    AsyncSmtpConnection::connect_with_transport(Box::new(tcp), &self.hello)
                        .await
                        .map_err(from_smtp)?;
                if !conn.can_starttls() {
                    return Err(MailError::outage("the mail server does not offer STARTTLS"));
                }
                conn.starttls(params.clone(), &self.hello)
                    .await
                    .map_err(from_smtp)?;
                conn
            }
            Tls::Implicit { config, name } => {
                let tls = tokio_rustls::TlsConnector::from(config.clone())
                    .connect(name.clone(), tcp)
                    .await
                    .map_err(|_| MailError::outage("the mail server's TLS connection failed"))?;
                AsyncSmtpConnection::connect_with_transport(Box::new(Encrypted(tls)), &self.hello)
                    .await
                    .map_err(from_smtp)?
            }
        };
        if let Some(credentials) = &self.credentials {
            conn.auth(&[Mechanism::Plain, Mechanism::Login], credentials)
                .await
                .map_err(from_smtp)?;
        }
        Ok(conn)
    }
}

/// `f` within `TIMEOUT`.
async fn bounded<T>(
    f: impl std::future::Future<Output = Result<T, MailError>>,
) -> Result<T, MailError> {
    tokio::time::timeout(TIMEOUT, f)
        .await
        .unwrap_or_else(|_| Err(late()))
}

fn late() -> MailError {
    MailError::outage("the mail server did not answer in time")
}

fn from_smtp(e: lettre::transport::smtp::Error) -> MailError {
    // The server's own words can name people (an unknown mailbox, an employee number) and the
    // reason is shown to every member on the timeline: keep the code and say the rest in
    // Klaxon's words; the words go to the log.
    tracing::warn!(error = %e, "the mail server did not take a message");
    MailError {
        refused: e.is_permanent(),
        reason: failure_sentence(&e),
    }
}

/// Why the mail server did not take a message, in Klaxon's words and the SMTP code.
fn failure_sentence(e: &lettre::transport::smtp::Error) -> String {
    match e.status() {
        Some(code) if e.is_permanent() => {
            format!("the mail server refused the message (SMTP {code})")
        }
        Some(code) => format!("the mail server could not take the message now (SMTP {code})"),
        None if e.is_timeout() => "the mail server did not answer in time".into(),
        None if e.is_tls() => "the mail server's TLS connection failed".into(),
        // No login mechanism in common, no SMTPUTF8 for such an address: the log says which.
        None if e.is_client() => "the mail server does not offer what sending needs".into(),
        None => "the mail server could not be reached".into(),
    }
}

/// A TLS connection lettre reads and writes as it would a plain socket.
#[derive(Debug)]
struct Encrypted(tokio_rustls::client::TlsStream<TcpStream>);

impl AsyncTokioStream for Encrypted {
    fn peer_addr(&self) -> std::io::Result<std::net::SocketAddr> {
        self.0.get_ref().0.peer_addr()
    }
}

impl AsyncRead for Encrypted {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.0).poll_read(cx, buf)
    }
}

impl AsyncWrite for Encrypted {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.0).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.0).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.0).poll_shutdown(cx)
    }
}
