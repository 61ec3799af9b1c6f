//! Email over SMTP (`KLAXON_SMTP_URL`, `KLAXON_SMTP_FROM`): `smtp://` speaks STARTTLS and
//! refuses a server without it, `smtps://` is TLS from the first byte; a user and password in the
//! URL log in. Without the settings Klaxon sends no mail and offers no email contact method.

use super::pool::{MailError, Pool, Tls};
use lettre::message::{Mailbox, MultiPart};
use lettre::transport::smtp::authentication::Credentials;
use lettre::transport::smtp::client::{Certificate, TlsParameters};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName};
use std::sync::Arc;

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

/// Sends mail through the configured server; cheap to share, connections pooled.
pub struct Mailer {
    pool: Pool,
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
        let tls = if implicit {
            Tls::Implicit {
                config: Arc::new(tls_config(config.ca_pem.as_deref())?),
                name: ServerName::try_from(host.clone())
                    .map_err(|e| format!("KLAXON_SMTP_URL: {e}"))?,
            }
        } else {
            let mut tls = TlsParameters::builder(host.clone());
            for der in ca_certs(config.ca_pem.as_deref())? {
                let cert = Certificate::from_der(der.to_vec())
                    .map_err(|e| format!("KLAXON_SMTP_CA: {e}"))?;
                tls = tls.add_root_certificate(cert);
            }
            Tls::Start(
                tls.build_rustls()
                    .map_err(|e| format!("KLAXON_SMTP_URL: {e}"))?,
            )
        };
        let credentials = (!url.username().is_empty()).then(|| {
            let decode = |s: &str| {
                percent_encoding::percent_decode_str(s)
                    .decode_utf8_lossy()
                    .into_owned()
            };
            Credentials::new(decode(url.username()), decode(url.password().unwrap_or("")))
        });
        let from: Mailbox = config
            .from
            .parse()
            .map_err(|e| format!("KLAXON_SMTP_FROM: not an address ({e})"))?;
        Ok(Mailer {
            pool: Pool::new(host, port, tls, credentials),
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
        self.pool
            .send(message.envelope(), &message.formatted())
            .await
    }
}

/// The certificates of `KLAXON_SMTP_CA`, at least one when it is set.
fn ca_certs(pem: Option<&[u8]>) -> Result<Vec<CertificateDer<'static>>, String> {
    let Some(pem) = pem else {
        return Ok(Vec::new());
    };
    let certs = CertificateDer::pem_slice_iter(pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("KLAXON_SMTP_CA: not a PEM certificate ({e})"))?;
    if certs.is_empty() {
        return Err("KLAXON_SMTP_CA: holds no PEM certificate".into());
    }
    Ok(certs)
}

/// TLS from the first byte: the public roots and the configured CA, as for STARTTLS.
fn tls_config(ca_pem: Option<&[u8]>) -> Result<rustls::ClientConfig, String> {
    let mut roots = rustls::RootCertStore {
        roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
    };
    for cert in ca_certs(ca_pem)? {
        roots
            .add(cert)
            .map_err(|e| format!("KLAXON_SMTP_CA: {e}"))?;
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    Ok(rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("KLAXON_SMTP_URL: {e}"))?
        .with_root_certificates(roots)
        .with_no_client_auth())
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
        let no_ca = |url: &str| {
            Mailer::new(&SmtpConfig {
                url: url.into(),
                from: from.into(),
                ca_pem: Some(b"not a certificate".to_vec()),
            })
            .unwrap_err()
        };
        assert!(no_ca("smtp://mail.example.org").starts_with("KLAXON_SMTP_CA"));
        assert!(no_ca("smtps://mail.example.org").starts_with("KLAXON_SMTP_CA"));
    }
}
