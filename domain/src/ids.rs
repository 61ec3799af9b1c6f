//! Ids of stored things, typed so that an operation taking two of them cannot be handed them
//! the wrong way round. On the wire each is the bare integer.

use serde::{Deserialize, Serialize};
use std::fmt;

macro_rules! ids {
    ($($(#[$doc:meta])* $ty:ident),+ $(,)?) => {$(
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
        #[serde(transparent)]
        pub struct $ty(pub i64);

        impl fmt::Display for $ty {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                self.0.fmt(f)
            }
        }
    )+};
}

ids!(
    TeamId,
    UserId,
    IncidentId,
    IntegrationId,
    /// An API key's id (never its secret).
    KeyId,
    SwitchId,
    InviteId,
    MaintenanceId,
    RotationId,
    NoteId,
);
