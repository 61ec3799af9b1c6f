//! Email over SMTP (`KLAXON_SMTP_URL`, `KLAXON_SMTP_FROM`): `smtp://` speaks STARTTLS and
//! refuses a server without it, `smtps://` is TLS from the first byte; a user and password in the
//! URL log in. Without the settings Klaxon sends no mail and offers no email contact method.

use lettre::message::{Mailbox, MultiPart};
use lettre::transport::smtp::authentication::Credentials;
use lettre::transport::smtp::client::{Certificate, Tls, TlsParameters};
use lettre::{AsyncSmtpTransport, AsyncTransport, Tokio1Executor};
use std::time::Duration;

/// The mail settings, as configured.
#[derive(Debug, Clone)]
pub struct SmtpConfig {
    /// `smtp://[user:password@]host[:port]` (STARTTLS, port 587 unless given) or `smtps://…`
    /// (implicit TLS, port 465).
    pub url: String,
    /// The sender: `klaxon@example.org` or `Klaxon <klaxon@example.org>`.
    pub from: String,
    /// PEM certificates to trust besides the public roots (`KLAXON_SMTP_CA`), for a mail server
    /// with a private CA.
    pub ca_pem: Option<Vec<u8>>,
}

/// A message to one address: a plain-text and an HTML part.
pub struct Mail {
    pub to: String,
    pub subject: String,
    pub text: String,
    pub html: String,
}

/// Why a message was not sent. `refused` is the server's permanent answer about this message
/// (a 5xx, such as an address it does not accept): trying again will not help.
#[derive(Debug)]
pub struct MailError {
    pub reason: String,
    pub refused: bool,
}

/// Sends mail through the configured server; cheap to share, connections pooled.
pub struct Mailer {
    transport: AsyncSmtpTransport<Tokio1Executor>,
    from: Mailbox,
}

impl std::fmt::Debug for Mailer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Mailer").field("from", &self.from).finish()
    }
}

impl Mailer {
    /// Reads the settings; an error says which one is wrong.
    pub fn new(config: &SmtpConfig) -> Result<Mailer, String> {
        let url = url::Url::parse(&config.url)
            .map_err(|e| format!("KLAXON_SMTP_URL: not a URL ({e})"))?;
        let implicit = match url.scheme() {
            "smtp" => false,
            "smtps" => true,
            other => {
                return Err(format!(
                "KLAXON_SMTP_URL: the scheme must be smtp (STARTTLS) or smtps (TLS), not {other}"
            ))
            }
        };
        let host = url
            .host_str()
            .filter(|h| !h.is_empty())
            .ok_or("KLAXON_SMTP_URL: names no host")?
            .trim_matches(|c| c == '[' || c == ']')
            .to_string();
        let port = url.port().unwrap_or(if implicit { 465 } else { 587 });
        let mut tls = TlsParameters::builder(host.clone());
        if let Some(pem) = &config.ca_pem {
            let cert = Certificate::from_pem(pem)
                .map_err(|e| format!("KLAXON_SMTP_CA: not a PEM certificate ({e})"))?;
            tls = tls.add_root_certificate(cert);
        }
        let tls = tls
            .build_rustls()
            .map_err(|e| format!("KLAXON_SMTP_URL: {e}"))?;
        let mut builder = AsyncSmtpTransport::<Tokio1Executor>::builder_dangerous(host)
            .port(port)
            .tls(if implicit {
                Tls::Wrapper(tls)
            } else {
                Tls::Required(tls)
            })
            .timeout(Some(Duration::from_secs(20)));
        if !url.username().is_empty() {
            let decode = |s: &str| {
                percent_encoding::percent_decode_str(s)
                    .decode_utf8_lossy()
                    .into_owned()
            };
            builder = builder.credentials(Credentials::new(
                decode(url.username()),
                decode(url.password().unwrap_or("")),
            ));
        }
        let from: Mailbox = config
            .from
            .parse()
            .map_err(|e| format!("KLAXON_SMTP_FROM: not an address ({e})"))?;
        Ok(Mailer {
            transport: builder.build(),
            from,
        })
    }

    /// The sender's address, as mail shows it.
    pub fn from(&self) -> String {
        self.from.email.to_string()
    }

    pub async fn send(&self, mail: Mail) -> Result<(), MailError> {
        let to: Mailbox = mail.to.parse().map_err(|e| MailError {
            reason: format!("not an address the mail server can take ({e})"),
            refused: true,
        })?;
        let message = lettre::Message::builder()
            .from(self.from.clone())
            .to(to)
            .subject(mail.subject)
            .multipart(MultiPart::alternative_plain_html(mail.text, mail.html))
            .map_err(|e| MailError {
                reason: e.to_string(),
                refused: true,
            })?;
        self.transport.send(message).await.map(|_| ()).map_err(|e| {
            // The server's own words can name people (an unknown mailbox, an employee
            // number) and the reason is shown to every member on the timeline: keep the
            // code and say the rest in Klaxon's words; the words go to the log.
            tracing::warn!(error = %e, "the mail server did not take a message");
            MailError {
                refused: e.is_permanent(),
                reason: failure_sentence(&e),
            }
        })
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
        None => "the mail server could not be reached".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(url: &str, from: &str) -> Result<Mailer, String> {
        Mailer::new(&SmtpConfig {
            url: url.into(),
            from: from.into(),
            ca_pem: None,
        })
    }

    #[tokio::test]
    async fn mail_settings_are_checked_at_start_with_the_setting_named() {
        let from = "Klaxon <klaxon@example.org>";
        assert!(settings("smtp://mail.example.org", from).is_ok());
        assert!(settings("smtps://user:p%40ss@mail.example.org:2465", from).is_ok());
        let wrong = |url: &str, from: &str| settings(url, from).unwrap_err();
        assert!(wrong("http://mail.example.org", from).contains("smtp (STARTTLS) or smtps"));
        assert!(wrong("mail.example.org", from).starts_with("KLAXON_SMTP_URL"));
        assert!(wrong("smtp://", from).starts_with("KLAXON_SMTP_URL"));
        assert!(wrong("smtp://mail.example.org", "not an address").starts_with("KLAXON_SMTP_FROM"));
    }
}
