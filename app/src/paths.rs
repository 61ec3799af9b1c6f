//! Building and checking the app's own URLs.

/// Where to go after signing in: `next` when it is a path on this site, else the incident list.
/// `//host` and `/\host` are refused because browsers treat both as another origin; anything
/// but visible ASCII is refused so the value is always a valid `Location` header.
pub fn after_sign_in(next: Option<&str>) -> String {
    match next {
        Some(p)
            if p.starts_with('/')
                && !p.starts_with("//")
                && !p.starts_with("/\\")
                && p.bytes().all(|b| b.is_ascii_graphic()) =>
        {
            p.to_string()
        }
        _ => "/".to_string(),
    }
}

/// The sign-in page that comes back to `here` (a path with its query) afterwards.
pub fn sign_in_url(here: &str) -> String {
    if here.is_empty() || here == "/" {
        "/login".to_string()
    } else {
        format!("/login?next={}", encode_component(here))
    }
}

/// Single sign-on through the provider, coming back to `next` (a path on this site).
pub fn sso_login_url(next: &str) -> String {
    let next = after_sign_in(Some(next));
    if next == "/" {
        "/api/oidc/login".to_string()
    } else {
        format!("/api/oidc/login?next={}", encode_component(&next))
    }
}

/// Percent-encodes everything but RFC 3986 unreserved characters and `/`.
fn encode_component(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~/".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_same_origin_paths_only() {
        assert_eq!(
            after_sign_in(Some("/incidents/7?tab=notes")),
            "/incidents/7?tab=notes"
        );
        assert_eq!(after_sign_in(Some("//evil.example/")), "/");
        assert_eq!(after_sign_in(Some("/\\evil.example/")), "/");
        assert_eq!(after_sign_in(Some("https://evil.example/")), "/");
        assert_eq!(after_sign_in(Some("/a\r\nSet-Cookie: x")), "/");
        assert_eq!(after_sign_in(Some("")), "/");
        assert_eq!(after_sign_in(None), "/");
    }

    #[test]
    fn sign_in_url_carries_the_path_back() {
        assert_eq!(sign_in_url("/"), "/login");
        assert_eq!(
            sign_in_url("/incidents/7?tab=a b"),
            "/login?next=/incidents/7%3Ftab%3Da%20b"
        );
    }
}
