//! Turning what a request presents into an `Actor`, for the REST API and the UI's server
//! functions alike: both build a `Presented` from the request's method and headers (`http`
//! types, which axum and Leptos share), so the rules are read in one place.

use crate::{Actor, Core, Error, Result};
use std::net::IpAddr;

pub const SESSION_COOKIE: &str = "klaxon_session";

/// The credential-bearing parts of a request, and where it came from.
#[derive(Debug, Default, Clone)]
pub struct Presented<'a> {
    /// `Some("")` when the header is present but unreadable: it still decides alone.
    pub authorization: Option<&'a str>,
    pub session_cookie: Option<&'a str>,
    /// True for methods that change state (anything but GET, HEAD, OPTIONS).
    pub changes_state: bool,
    pub origin: Option<&'a str>,
    pub sec_fetch_site: Option<&'a str>,
    pub host: Option<&'a str>,
    /// The connection's peer address.
    pub peer: Option<IpAddr>,
    /// Every `X-Forwarded-For` header, in order; believed only from a trusted proxy.
    pub forwarded_for: Vec<&'a str>,
}

/// The connecting peer's address: the server's accept loop puts it in each request's
/// extensions, where `Presented::from_parts` finds it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Peer(pub IpAddr);

impl<'a> Presented<'a> {
    /// What a request presents, for the REST extractors and the server functions alike.
    pub fn from_parts(parts: &'a http::request::Parts) -> Presented<'a> {
        let peer = parts.extensions.get::<Peer>().map(|p| p.0);
        Presented::from_request(&parts.method, &parts.headers, peer)
    }

    /// Reads the credential-bearing headers of a request that arrived from `peer`.
    pub fn from_request(
        method: &http::Method,
        headers: &'a http::HeaderMap,
        peer: Option<IpAddr>,
    ) -> Presented<'a> {
        let get = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
        Presented {
            authorization: headers
                .get("authorization")
                .map(|v| v.to_str().unwrap_or("")),
            session_cookie: headers
                .get_all("cookie")
                .iter()
                .filter_map(|v| v.to_str().ok())
                .find_map(session_from_cookie_header),
            changes_state: !matches!(
                *method,
                http::Method::GET | http::Method::HEAD | http::Method::OPTIONS
            ),
            origin: get("origin"),
            sec_fetch_site: get("sec-fetch-site"),
            host: get("host"),
            peer,
            forwarded_for: headers
                .get_all("x-forwarded-for")
                .iter()
                .filter_map(|v| v.to_str().ok())
                .collect(),
        }
    }
}

impl Core {
    /// A request with an Authorization header is judged on it alone. A cookie request that
    /// changes state must come from our own origin.
    /// The actor carries the request's client address (for the sign-in throttle).
    pub async fn authenticate(&self, p: &Presented<'_>) -> Result<Actor> {
        let mut actor = if let Some(header) = p.authorization {
            let key = header
                .strip_prefix("Bearer ")
                .or_else(|| header.strip_prefix("bearer "))
                .ok_or(Error::Unauthorized)?;
            self.authenticate_api_key(key.trim()).await?
        } else {
            let token = p.session_cookie.ok_or(Error::Unauthorized)?;
            if p.changes_state {
                self.check_same_origin(p)?;
            }
            self.authenticate_session(token).await?
        };
        actor.address = self.client_address(p);
        Ok(actor)
    }

    /// The cross-origin guard for cookie requests: `Sec-Fetch-Site` when the browser sends it,
    /// else `Origin` compared with the public URL or the requested host. A request with
    /// neither comes from a non-browser client, which cannot ride on a victim's cookie.
    pub fn check_same_origin(&self, p: &Presented<'_>) -> Result<()> {
        let refused = || Error::forbidden("cross-origin request refused");
        if let Some(site) = p.sec_fetch_site {
            return if site == "same-origin" || site == "none" {
                Ok(())
            } else {
                Err(refused())
            };
        }
        let Some(origin) = p.origin else {
            return Ok(());
        };
        let public = self.config.public_url.trim_end_matches('/');
        let ours = origin == public
            || p.host.is_some_and(|h| {
                origin == format!("http://{h}") || origin == format!("https://{h}")
            });
        if ours {
            Ok(())
        } else {
            Err(refused())
        }
    }

    /// The address the per-address sign-in and sign-up limits count against.
    pub fn client_address(&self, p: &Presented<'_>) -> String {
        self.config
            .trusted_proxies
            .client_address(p.peer, &p.forwarded_for)
    }
}

/// `Clear-Site-Data` of a sign-out answer: the browser drops what it cached of the person's
/// pages (the service worker's kept pages are keyed to the account, see `account_tag`).
pub const CLEAR_ON_SIGN_OUT: &str = "\"cache\"";

/// Names the session a page was rendered for, for the service worker, which keeps pages only
/// for the account that saw them: a digest of the cookie, never the token or its stored hash.
pub fn account_tag(session_token: &str) -> String {
    use sha2::{Digest, Sha256};
    let digest = Sha256::digest(format!("klaxon-account:{session_token}").as_bytes());
    hex::encode(&digest[..12])
}

/// Finds the session token in a `Cookie` header.
pub fn session_from_cookie_header(header: &str) -> Option<&str> {
    header
        .split(';')
        .filter_map(|c| c.trim().split_once('='))
        .find(|(name, _)| *name == SESSION_COOKIE)
        .map(|(_, v)| v)
        .filter(|v| !v.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_session_cookie() {
        assert_eq!(
            session_from_cookie_header("a=1; klaxon_session=abc; b=2"),
            Some("abc")
        );
        assert_eq!(session_from_cookie_header("klaxon_session="), None);
        assert_eq!(session_from_cookie_header("other=x"), None);
    }
}
