//! Klaxon's own device flow (RFC 8628 names): a terminal asks for a code, a person approves it
//! from a signed-in browser, the terminal's polling turns into a session.

use crate::account::User;
use serde::{Deserialize, Serialize};

/// A device code lives ten minutes.
pub const DEVICE_TTL: i64 = 600;
/// Seconds a terminal waits between polls; faster polling is told to slow down.
pub const POLL_INTERVAL: i64 = 5;
/// User codes use letters and digits a person cannot confuse: no 0/O, 1/I/L.
pub const USER_CODE_ALPHABET: &[u8] = b"ABCDEFGHJKMNPQRSTUVWXYZ23456789";

/// Where a device code stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeviceState {
    Pending,
    Approved,
    Denied,
    /// Turned into a session; never again.
    Redeemed,
}

crate::words!(DeviceState, "device code state" {
    Pending => "pending",
    Approved => "approved",
    Denied => "denied",
    Redeemed => "redeemed",
});

/// `POST /api/oidc/device`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct DeviceStart {
    /// The terminal's secret for polling (64 characters).
    pub device_code: String,
    /// What the person types or checks in the browser: `XXXX-XXXX`.
    pub user_code: String,
    pub verification_uri: String,
    pub verification_uri_complete: String,
    pub expires_in: i64,
    pub interval: i64,
}

/// `POST /api/oidc/device/token` once approved: the session, for a terminal to keep.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct DeviceSession {
    pub user: User,
    pub session_token: String,
}

/// A user code as typed: case, spaces and the dash do not matter.
pub fn normalize_user_code(raw: &str) -> Option<String> {
    let code: String = raw
        .chars()
        .filter(|c| !c.is_whitespace() && *c != '-')
        .map(|c| c.to_ascii_uppercase())
        .collect();
    (code.len() == 8 && code.bytes().all(|b| USER_CODE_ALPHABET.contains(&b)))
        .then(|| format!("{}-{}", &code[..4], &code[4..]))
}

#[cfg(test)]
mod tests {
    use super::normalize_user_code;

    #[test]
    fn user_codes_are_read_as_people_type_them() {
        assert_eq!(
            normalize_user_code("abcd-efgh").as_deref(),
            Some("ABCD-EFGH")
        );
        assert_eq!(
            normalize_user_code(" ABCD EFGH ").as_deref(),
            Some("ABCD-EFGH")
        );
        assert_eq!(
            normalize_user_code("ABCDEFGH").as_deref(),
            Some("ABCD-EFGH")
        );
        for bad in [
            "ABCD-EFG",
            "ABCD-EFGHJ",
            "ABC0-EFGH",
            "ABCI-EFGH",
            "",
            "ÄBCD-EFGH",
        ] {
            assert_eq!(normalize_user_code(bad), None, "{bad}");
        }
    }
}
