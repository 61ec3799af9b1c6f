//! Changes a team's senders report (PagerDuty's change events: a deploy, a configuration
//! applied, a secret rotated): never paged, shown beside the incidents that follow them.

use crate::Timestamp;
use serde::{Deserialize, Serialize};

/// One reported change.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Change {
    pub id: i64,
    pub team_id: i64,
    /// When it happened, as its sender said (else when it arrived).
    pub at: Timestamp,
    pub summary: String,
    /// Where it happened (a pipeline, a host).
    pub source: Option<String>,
    /// The sender's first link, and its text.
    pub link: Option<String>,
    pub link_text: Option<String>,
    /// The sender's `custom_details`, as JSON text.
    pub details: Option<String>,
}

/// How long before an incident began its team's changes are shown with it.
pub const SHOWN_BEFORE: i64 = 2 * 3600;
/// At most this many are shown with an incident, the newest first.
pub const SHOWN_AT_MOST: i64 = 10;
