//! Which address a request comes from, for the per-address sign-in and sign-up limits.
//!
//! `X-Forwarded-For` is believed only when the connection comes from a trusted proxy
//! (`KLAXON_TRUSTED_PROXIES`); then the client is the right-most listed address that is not
//! itself a trusted proxy. Everything to the left of it was written by the client and proves
//! nothing. Without trusted proxies the peer address is the client.

use ipnet::IpNet;
use std::net::IpAddr;

/// The networks whose `X-Forwarded-For` is believed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TrustedProxies(Vec<IpNet>);

impl TrustedProxies {
    /// Parses a comma- or space-separated list of CIDRs or single addresses
    /// (`10.0.0.0/8, 192.168.1.7, fd00::/8`). An empty list trusts nobody.
    pub fn parse(list: &str) -> Result<TrustedProxies, String> {
        parse_networks(list).map(TrustedProxies)
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn trusts(&self, addr: IpAddr) -> bool {
        let addr = addr.to_canonical();
        self.0.iter().any(|net| net.contains(&addr))
    }

    /// The client's address: the peer unless it is a trusted proxy, else the right-most
    /// `X-Forwarded-For` entry that is not trusted. `forwarded` holds every `X-Forwarded-For`
    /// header of the request in order. "unknown" when there is no peer (never in a served request).
    pub fn client_address(&self, peer: Option<IpAddr>, forwarded: &[&str]) -> String {
        let Some(peer) = peer.map(|p| p.to_canonical()) else {
            return "unknown".into();
        };
        if !self.trusts(peer) {
            return peer.to_string();
        }
        let mut client = peer;
        for hop in forwarded.iter().rev().flat_map(|h| h.rsplit(',')) {
            // An entry that is not an address means the chain is broken here: the last proxy
            // that wrote a readable one is the best we know.
            let Some(addr) = parse_hop(hop) else { break };
            client = addr;
            if !self.trusts(addr) {
                break;
            }
        }
        client.to_string()
    }
}

/// A comma- or space-separated list of CIDRs or single addresses (`10.0.0.0/8, 192.168.1.7,
/// fd00::/8`), as the settings that name networks take them.
pub fn parse_networks(list: &str) -> Result<Vec<IpNet>, String> {
    list.split([',', ' '])
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|item| {
            let net = match item.parse::<IpNet>() {
                Ok(net) => net,
                Err(_) => item.parse::<IpAddr>().map(IpNet::from).map_err(|_| {
                    format!("`{item}` is not an address or a CIDR such as 10.0.0.0/8")
                })?,
            };
            Ok(net.trunc())
        })
        .collect()
}

/// One `X-Forwarded-For` entry: an address, possibly with a port (`1.2.3.4:5678`,
/// `[2001:db8::1]:443`).
fn parse_hop(hop: &str) -> Option<IpAddr> {
    let hop = hop.trim();
    if let Ok(addr) = hop.parse::<IpAddr>() {
        return Some(addr.to_canonical());
    }
    hop.parse::<std::net::SocketAddr>()
        .ok()
        .map(|s| s.ip().to_canonical())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> Option<IpAddr> {
        Some(s.parse().unwrap())
    }

    #[test]
    fn without_trusted_proxies_the_peer_is_the_client() {
        let none = TrustedProxies::default();
        assert_eq!(
            none.client_address(ip("203.0.113.9"), &["198.51.100.1"]),
            "203.0.113.9"
        );
        assert_eq!(none.client_address(None, &[]), "unknown");
    }

    #[test]
    fn a_trusted_proxy_names_the_right_most_untrusted_hop() {
        let t = TrustedProxies::parse("10.0.0.0/8, 192.168.1.7").unwrap();
        // The client wrote the first entry itself; the ingress appended what it saw.
        assert_eq!(
            t.client_address(ip("10.1.2.3"), &["6.6.6.6, 203.0.113.9"]),
            "203.0.113.9"
        );
        // Two proxies in a row, and the header split over two lines.
        assert_eq!(
            t.client_address(ip("10.1.2.3"), &["6.6.6.6, 203.0.113.9", "192.168.1.7"]),
            "203.0.113.9"
        );
        // An untrusted peer's header is ignored.
        assert_eq!(
            t.client_address(ip("198.51.100.4"), &["203.0.113.9"]),
            "198.51.100.4"
        );
        // Nothing forwarded, or only proxies: the last proxy is the best we know.
        assert_eq!(t.client_address(ip("10.1.2.3"), &[]), "10.1.2.3");
        assert_eq!(
            t.client_address(ip("10.1.2.3"), &["192.168.1.7"]),
            "192.168.1.7"
        );
        // Garbage stops the walk at the last readable hop.
        assert_eq!(
            t.client_address(ip("10.1.2.3"), &["203.0.113.9, not-an-ip"]),
            "10.1.2.3"
        );
        // Ports and IPv4-mapped IPv6 peers.
        assert_eq!(
            t.client_address(ip("::ffff:10.0.0.1"), &["[2001:db8::1]:443"]),
            "2001:db8::1"
        );
    }

    #[test]
    fn parses_lists_and_refuses_garbage() {
        assert!(TrustedProxies::parse("").unwrap().is_empty());
        let t = TrustedProxies::parse("10.0.0.1 fd00::/8").unwrap();
        assert!(t.trusts("10.0.0.1".parse().unwrap()));
        assert!(!t.trusts("10.0.0.2".parse().unwrap()));
        assert!(t.trusts("fd00::5".parse().unwrap()));
        assert!(TrustedProxies::parse("10.0.0.0/33").is_err());
        assert!(TrustedProxies::parse("proxy.local").is_err());
    }
}
