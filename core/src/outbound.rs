//! The one way Klaxon makes an HTTP request: no redirects, no proxy from the environment, a
//! short timeout, and at most `MAX_ANSWER` bytes read of any answer. Requests to a URL a user
//! gave (an integration's Alertmanager) also pass the address policy: `http`/`https` only, and
//! the address checked after name resolution, in the resolver the connection itself uses (so a
//! name cannot resolve to one address for the check and another for the connection).
//! Link-local and cloud metadata addresses are always refused; loopback and private ranges
//! unless the administrator allows them (`KLAXON_OUTBOUND_ALLOW`). Failures are sentences that
//! name their kind (refused, timed out, answered with a status), never the upstream's body.

use crate::Error;
use ipnet::IpNet;
use std::future::Future;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

/// The most of any answer that is read; past it the answer is refused.
pub const MAX_ANSWER: usize = 64 * 1024;
/// How long one request may take, connection included.
pub const TIMEOUT: Duration = Duration::from_secs(10);

/// Networks the administrator lets user-given URLs reach (`KLAXON_OUTBOUND_ALLOW`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OutboundAllow(Vec<IpNet>);

impl OutboundAllow {
    /// Parses a list of CIDRs or single addresses (`client::parse_networks`); empty allows
    /// nothing beyond the public internet.
    pub fn parse(list: &str) -> std::result::Result<OutboundAllow, String> {
        crate::client::parse_networks(list).map(OutboundAllow)
    }

    fn allows(&self, addr: IpAddr) -> bool {
        self.0.iter().any(|net| net.contains(&addr))
    }
}

/// Why an address may not be called, or `None` when it may.
pub fn refusal(addr: IpAddr, allow: &OutboundAllow) -> Option<&'static str> {
    let addr = addr.to_canonical();
    // An IPv6 address that carries an IPv4 one reaches it through a translator or tunnel:
    // judged by the address it carries as well.
    if let IpAddr::V6(v6) = addr {
        if let Some(why) = embedded_v4(v6)
            .into_iter()
            .find_map(|v4| refusal(IpAddr::V4(v4), allow))
        {
            return Some(why);
        }
    }
    if let Some(why) = never(addr) {
        return Some(why);
    }
    if allow.allows(addr) {
        return None;
    }
    internal(addr)
}

/// The IPv4 addresses an IPv6 address carries: IPv4-compatible (`::a.b.c.d`), NAT64
/// (`64:ff9b::/96`, `64:ff9b:1::/48`), 6to4 (`2002::/16`) and Teredo (`2001::/32`, its
/// server and its client, whose address is stored inverted).
fn embedded_v4(a: Ipv6Addr) -> Vec<Ipv4Addr> {
    let s = a.segments();
    let o = a.octets();
    let last = Ipv4Addr::new(o[12], o[13], o[14], o[15]);
    let mut found = Vec::new();
    if s[..6] == [0; 6] && u32::from(last) > 1 {
        found.push(last);
    }
    if s[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
        found.push(last);
    }
    if s[..3] == [0x64, 0xff9b, 1] {
        // A /48 prefix carries it in bytes 6, 7, 9 and 10 (RFC 6052, 2.2); the last four too
        // when a translator is configured with a longer prefix.
        found.push(Ipv4Addr::new(o[6], o[7], o[9], o[10]));
        found.push(last);
    }
    if s[0] == 0x2002 {
        found.push(Ipv4Addr::new(o[2], o[3], o[4], o[5]));
    }
    if s[0] == 0x2001 && s[1] == 0 {
        found.push(Ipv4Addr::new(o[4], o[5], o[6], o[7]));
        found.push(Ipv4Addr::from(!u32::from(last)));
    }
    found
}

/// Addresses no setting opens: link-local (where cloud metadata services answer), the
/// metadata addresses outside it, unspecified, multicast and broadcast.
fn never(addr: IpAddr) -> Option<&'static str> {
    const METADATA_V4: Ipv4Addr = Ipv4Addr::new(100, 100, 100, 200);
    const METADATA_V6: Ipv6Addr = Ipv6Addr::new(0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x254);
    match addr {
        IpAddr::V4(a) if a.is_link_local() || a == METADATA_V4 => Some("a link-local or metadata"),
        IpAddr::V6(a) if (a.segments()[0] & 0xffc0) == 0xfe80 || a == METADATA_V6 => {
            Some("a link-local or metadata")
        }
        IpAddr::V4(a) if a.is_unspecified() || a.octets()[0] == 0 => Some("an unspecified"),
        IpAddr::V6(a) if a.is_unspecified() => Some("an unspecified"),
        IpAddr::V4(a) if a.is_multicast() || a.is_broadcast() => Some("a multicast or broadcast"),
        IpAddr::V6(a) if a.is_multicast() => Some("a multicast"),
        _ => None,
    }
}

/// Addresses inside the install's own networks, refused unless allowed.
fn internal(addr: IpAddr) -> Option<&'static str> {
    match addr {
        IpAddr::V4(a) if a.is_loopback() => Some("a loopback"),
        IpAddr::V6(a) if a.is_loopback() => Some("a loopback"),
        IpAddr::V4(a)
            if a.is_private()
                // Shared address space (carrier-grade NAT) and benchmarking networks.
                || (a.octets()[0] == 100 && (a.octets()[1] & 0xc0) == 64)
                || (a.octets()[0] == 198 && (a.octets()[1] & 0xfe) == 18) =>
        {
            Some("a private")
        }
        // Unique local addresses (fc00::/7).
        IpAddr::V6(a) if (a.segments()[0] & 0xfe00) == 0xfc00 => Some("a private"),
        _ => None,
    }
}

/// The address policy refusing a connection; found in an error's chain to say why.
#[derive(Debug)]
struct AddressRefused(String);

impl std::fmt::Display for AddressRefused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for AddressRefused {}

/// One sentence for every refused address, whatever kind of address it is and whatever a name
/// resolved to, so a refusal tells a prober nothing about the network behind it.
fn address_refused(target: &str, setting: &str) -> AddressRefused {
    AddressRefused(format!(
        "{target} is not an address Klaxon calls on a user's behalf \
         (an administrator can allow a network with {setting})"
    ))
}

/// Name resolution that keeps only the addresses the policy allows; `.1` names the setting.
struct CheckedResolver(Arc<OutboundAllow>, &'static str);

impl reqwest::dns::Resolve for CheckedResolver {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let (allow, setting) = (self.0.clone(), self.1);
        Box::pin(async move {
            let host = name.as_str().to_string();
            let found: Vec<SocketAddr> = tokio::net::lookup_host((host.as_str(), 0))
                .await
                .map_err(|_| AddressRefused(format!("the name {host} does not resolve")))?
                .collect();
            let mut first_refusal = None;
            let allowed: Vec<SocketAddr> = found
                .into_iter()
                .filter(|a| match refusal(a.ip(), &allow) {
                    None => true,
                    Some(_) => {
                        first_refusal.get_or_insert_with(|| address_refused(&host, setting));
                        false
                    }
                })
                .collect();
            if allowed.is_empty() {
                let refused = first_refusal
                    .unwrap_or_else(|| AddressRefused(format!("the name {host} has no address")));
                return Err(Box::new(refused) as Box<dyn std::error::Error + Send + Sync>);
            }
            Ok(Box::new(allowed.into_iter()) as reqwest::dns::Addrs)
        })
    }
}

/// An HTTP client under the policy. `who` names the other side in sentences ("Alertmanager").
#[derive(Clone)]
pub struct Outbound {
    client: reqwest::Client,
    /// `Some` for user-given URLs: the address policy applies, with the networks the setting
    /// it names allows.
    allow: Option<(Arc<OutboundAllow>, &'static str)>,
}

/// An answer, read whole up to `MAX_ANSWER`.
#[derive(Debug)]
pub struct Answer {
    pub status: reqwest::StatusCode,
    pub headers: reqwest::header::HeaderMap,
    pub body: Vec<u8>,
}

impl Answer {
    pub fn json<T: serde::de::DeserializeOwned>(&self) -> Option<T> {
        serde_json::from_slice(&self.body).ok()
    }
}

/// Why a request got no usable answer; `sentence` names the kind of failure only.
#[derive(Debug)]
pub struct Failure {
    pub kind: FailureKind,
    pub sentence: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailureKind {
    /// The URL or its address is not one Klaxon may call.
    Policy,
    /// No connection (refused, unreachable, no such name).
    Connect,
    TimedOut,
    /// The connection broke, or the answer was malformed or too large.
    Broken,
}

impl Outbound {
    fn builder() -> reqwest::ClientBuilder {
        reqwest::Client::builder()
            .timeout(TIMEOUT)
            .connect_timeout(TIMEOUT)
            // A redirect would carry credentials, and the request, somewhere unchecked.
            .redirect(reqwest::redirect::Policy::none())
            .no_proxy()
    }

    /// For URLs an administrator configured (ntfy, the identity provider): no address policy.
    pub fn trusted() -> Outbound {
        Outbound {
            client: Self::builder()
                .build()
                .expect("a reqwest client with a timeout always builds"),
            allow: None,
        }
    }

    /// For URLs team owners give (channels, Alertmanager): the address policy applies, with
    /// the networks `KLAXON_OUTBOUND_ALLOW` allows.
    pub fn for_users(allow: OutboundAllow) -> Outbound {
        Self::under(allow, "KLAXON_OUTBOUND_ALLOW")
    }

    /// For the URLs of a person's own roads (Web Push subscriptions, personal webhooks), which
    /// anyone signed in can add: public addresses only, unless `KLAXON_OUTBOUND_ALLOW_PERSONAL`
    /// allows a network. Kept apart, so allowing an internal network for team channels does
    /// not let every person probe it.
    pub fn for_personal_roads(allow: OutboundAllow) -> Outbound {
        Self::under(allow, "KLAXON_OUTBOUND_ALLOW_PERSONAL")
    }

    fn under(allow: OutboundAllow, setting: &'static str) -> Outbound {
        let allow = Arc::new(allow);
        Outbound {
            client: Self::builder()
                .dns_resolver(Arc::new(CheckedResolver(allow.clone(), setting)))
                .build()
                .expect("a reqwest client with a timeout always builds"),
            allow: Some((allow, setting)),
        }
    }

    /// Checks what can be checked before any connection: the scheme, and an address written
    /// in the URL itself (which no resolver sees).
    pub fn check_url(&self, url: &str) -> std::result::Result<reqwest::Url, String> {
        let parsed = reqwest::Url::parse(url).map_err(|e| format!("{url} is not a URL: {e}"))?;
        if !matches!(parsed.scheme(), "http" | "https") {
            return Err(format!("{url}: only http and https URLs are called"));
        }
        if let Some((allow, setting)) = &self.allow {
            let literal = match parsed.host() {
                Some(url::Host::Ipv4(a)) => Some(IpAddr::V4(a)),
                Some(url::Host::Ipv6(a)) => Some(IpAddr::V6(a)),
                Some(url::Host::Domain(_)) => None,
                None => return Err(format!("{url} names no host")),
            };
            if let Some(addr) = literal {
                if refusal(addr, allow).is_some() {
                    return Err(address_refused(&addr.to_string(), setting).0);
                }
            }
        }
        Ok(parsed)
    }

    /// Starts a request; `send` runs it.
    pub fn request(&self, method: reqwest::Method, url: &str) -> reqwest::RequestBuilder {
        self.client.request(method, url)
    }

    /// Sends the request and reads its answer, whatever its status, up to `MAX_ANSWER`.
    pub async fn send(&self, req: reqwest::RequestBuilder) -> std::result::Result<Answer, Failure> {
        self.send_reading(req, MAX_ANSWER).await
    }

    /// `send`, reading up to `most` bytes of the answer: for a stream of events (Matrix's
    /// sync), whose batches a caller asks small but cannot cap.
    pub async fn send_reading(
        &self,
        req: reqwest::RequestBuilder,
        most: usize,
    ) -> std::result::Result<Answer, Failure> {
        let req = req.build().map_err(|e| Failure {
            kind: FailureKind::Policy,
            sentence: format!("the request cannot be made: {}", e.without_url()),
        })?;
        self.check_url(req.url().as_str())
            .map_err(|sentence| Failure {
                kind: FailureKind::Policy,
                sentence,
            })?;
        let mut res = self.client.execute(req).await.map_err(failure)?;
        let status = res.status();
        let headers = std::mem::take(res.headers_mut());
        let mut body = Vec::new();
        while let Some(chunk) = res.chunk().await.map_err(failure)? {
            if body.len() + chunk.len() > most {
                return Err(Failure {
                    kind: FailureKind::Broken,
                    sentence: format!(
                        "answered {} with more than {} KiB",
                        status.as_u16(),
                        most / 1024
                    ),
                });
            }
            body.extend_from_slice(&chunk);
        }
        Ok(Answer {
            status,
            headers,
            body,
        })
    }
}

/// The command line's side of the policy (`klaxon import`, `apply`, `diff`, `export`, `login`):
/// it calls the Klaxon and the vendor API its user named, so no address is refused, but the
/// rest holds as in the server: a redirect is not followed (the token would go with it), a list
/// is followed only on the origin it started on (`same_origin`), and no answer is read past
/// `CLI_MAX_ANSWER`.
pub mod cli {
    use std::time::Duration;

    /// The most read of one answer: a vendor's page of a list, a server's configuration.
    pub const CLI_MAX_ANSWER: usize = 32 * 1024 * 1024;
    /// How long one call may take.
    pub const CLI_TIMEOUT: Duration = Duration::from_secs(30);

    pub fn client() -> Result<reqwest::Client, String> {
        reqwest::Client::builder()
            .timeout(CLI_TIMEOUT)
            .connect_timeout(CLI_TIMEOUT)
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| e.to_string())
    }

    /// Whether `url` has the scheme, host and port of `base`.
    pub fn same_origin(url: &str, base: &str) -> bool {
        match (reqwest::Url::parse(url), reqwest::Url::parse(base)) {
            (Ok(u), Ok(b)) => u.origin() == b.origin(),
            _ => false,
        }
    }

    /// The answer's body, read up to `CLI_MAX_ANSWER`; a redirect is an error.
    pub async fn body(mut res: reqwest::Response, who: &str) -> Result<Vec<u8>, String> {
        if res.status().is_redirection() {
            return Err(format!(
                "{who} answered {} (a redirect); it is not followed, so the credentials stay here",
                res.status().as_u16()
            ));
        }
        let mut body = Vec::new();
        while let Some(chunk) = res
            .chunk()
            .await
            .map_err(|e| format!("{who}'s answer broke off: {e}"))?
        {
            if body.len() + chunk.len() > CLI_MAX_ANSWER {
                return Err(format!(
                    "{who} sent an answer over {} MiB; stopped reading",
                    CLI_MAX_ANSWER / 1024 / 1024
                ));
            }
            body.extend_from_slice(&chunk);
        }
        Ok(body)
    }
}

/// The kind of a transport failure, in words that carry nothing the other side wrote.
fn failure(e: reqwest::Error) -> Failure {
    let mut cur: &(dyn std::error::Error + 'static) = &e;
    loop {
        if let Some(refused) = cur.downcast_ref::<AddressRefused>() {
            return Failure {
                kind: FailureKind::Policy,
                sentence: refused.0.clone(),
            };
        }
        match cur.source() {
            Some(next) => cur = next,
            None => break,
        }
    }
    if e.is_timeout() {
        Failure {
            kind: FailureKind::TimedOut,
            sentence: format!("did not answer within {} seconds", TIMEOUT.as_secs()),
        }
    } else if e.is_connect() {
        Failure {
            kind: FailureKind::Connect,
            sentence: "refused the connection or could not be reached".into(),
        }
    } else {
        Failure {
            kind: FailureKind::Broken,
            sentence: "broke off the connection before a complete answer".into(),
        }
    }
}

/// openidconnect's discovery, key and token requests go through the same client and cap.
impl<'c> openidconnect::AsyncHttpClient<'c> for Outbound {
    type Error = openidconnect::HttpClientError<std::io::Error>;
    type Future = Pin<
        Box<
            dyn Future<Output = std::result::Result<openidconnect::HttpResponse, Self::Error>>
                + Send
                + 'c,
        >,
    >;

    fn call(&'c self, request: openidconnect::HttpRequest) -> Self::Future {
        Box::pin(async move {
            let (parts, body) = request.into_parts();
            let mut req = self
                .request(parts.method, &parts.uri.to_string())
                .body(body);
            for (name, value) in &parts.headers {
                req = req.header(name, value);
            }
            let answer = self.send(req).await.map_err(|f| {
                openidconnect::HttpClientError::Other(format!("the provider {}", f.sentence))
            })?;
            let mut res = http::Response::builder().status(answer.status);
            if let Some(headers) = res.headers_mut() {
                *headers = answer.headers;
            }
            res.body(answer.body)
                .map_err(|e| openidconnect::HttpClientError::Other(e.to_string()))
        })
    }
}

/// A failure as the caller's error: `who` names the service ("Alertmanager at …").
pub fn upstream_error(who: &str, f: Failure) -> Error {
    Error::Upstream(format!("{who} {}", f.sentence))
}

/// A non-success answer as the caller's error: the status only, never the body.
pub fn upstream_status(who: &str, status: reqwest::StatusCode) -> Error {
    Error::Upstream(format!(
        "{who} answered {} {}",
        status.as_u16(),
        status.canonical_reason().unwrap_or("")
    ))
}

#[cfg(test)]
mod tests;
