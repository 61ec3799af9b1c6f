//! Paging rules shared by the server and the phone UI: the escalation policy and its shape
//! checks, the kinds and states of pages, and the retry schedule of a failed send.

use crate::alerting::{IncidentState, Severity};
use crate::rules::Urgency;
use crate::text::Topic;
use crate::{Duration, Timestamp};
use serde::{Deserialize, Serialize};

pub const MAX_LEVELS: usize = 10;
pub const MAX_TARGETS: usize = 10;
pub const MAX_REPEAT: u32 = 10;
pub const LEVEL_TIMEOUT_MIN: Duration = Duration::minutes(1);
pub const LEVEL_TIMEOUT_MAX: Duration = Duration::hours(24);

/// Who a ladder level pages.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub enum Target {
    /// A named user, by id.
    User { user_id: i64 },
    /// Whoever holds the team's pager now: a partial-day cover's person, else the rota's holder
    /// of the on-call day in progress (in the team's zone).
    Oncall,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Level {
    /// How long this level waits for an acknowledgement before the next one is paged.
    pub timeout: Duration,
    /// 1 to 10.
    #[cfg_attr(feature = "openapi", schema(min_items = 1, max_items = 10))]
    pub targets: Vec<Target>,
}

/// `GET|PUT /api/teams/{teamID}/escalation`. `levels: []` means the team has no ladder and
/// gets reminders instead.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct EscalationPolicy {
    /// At most 10.
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(max_items = 10))]
    pub levels: Vec<Level>,
    /// How many times the whole ladder runs again after the last level: 0 to 10.
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(maximum = 10))]
    pub repeat: u32,
    /// A shared ntfy topic paged once when the ladder is exhausted: up to 64 of
    /// `A-Z a-z 0-9 _ -`; empty is none.
    #[serde(default)]
    pub fallback_topic: Option<Topic>,
    /// The severities whose pages are low urgency (they wait out a person's quiet hours and
    /// take their low-urgency steps); every other severity is high. Empty: all high. At most 3
    /// entries; one named twice counts once.
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(max_items = 3))]
    pub low_urgency: Vec<Severity>,
}

impl EscalationPolicy {
    /// Checks the shape (counts, timeouts, duplicates, topic) and returns the normalised
    /// policy. Whether targets can be reached needs the database and is checked by the server.
    pub fn validate(&self) -> Result<EscalationPolicy, String> {
        if self.levels.len() > MAX_LEVELS {
            return Err(format!("levels: at most {MAX_LEVELS} levels"));
        }
        if self.repeat > MAX_REPEAT {
            return Err(format!("repeat must be 0 to {MAX_REPEAT}"));
        }
        for (i, level) in self.levels.iter().enumerate() {
            let n = i + 1;
            if level.timeout < LEVEL_TIMEOUT_MIN || level.timeout > LEVEL_TIMEOUT_MAX {
                return Err(format!(
                    "level {n}: timeout must be between {LEVEL_TIMEOUT_MIN} and {LEVEL_TIMEOUT_MAX}"
                ));
            }
            if level.targets.is_empty() || level.targets.len() > MAX_TARGETS {
                return Err(format!("level {n}: 1 to {MAX_TARGETS} targets"));
            }
            let mut seen = level.targets.clone();
            seen.sort();
            seen.dedup();
            if seen.len() != level.targets.len() {
                return Err(format!("level {n}: a target is listed twice"));
            }
        }
        // An empty topic is none.
        let fallback_topic = self.fallback_topic.clone().filter(|t| t.get().is_some());
        if self.low_urgency.len() > Severity::ALL.len() {
            return Err(format!(
                "low_urgency: at most {} severities",
                Severity::ALL.len()
            ));
        }
        let mut low_urgency = self.low_urgency.clone();
        low_urgency.sort();
        low_urgency.dedup();
        Ok(EscalationPolicy {
            levels: self.levels.clone(),
            repeat: self.repeat,
            fallback_topic,
            low_urgency,
        })
    }

    /// How urgent a page of an incident of `severity` is.
    pub fn urgency(&self, severity: Severity) -> Urgency {
        if self.low_urgency.contains(&severity) {
            Urgency::Low
        } else {
            Urgency::High
        }
    }

    /// Steps of the whole ladder, repeats included.
    pub fn steps(&self) -> i64 {
        self.levels.len() as i64 * (self.repeat as i64 + 1)
    }

    /// The level (0-based) and round (0-based) of a step, or `None` past the last step.
    pub fn step(&self, step: i64) -> Option<(usize, u32)> {
        if step < 0 || step >= self.steps() {
            return None;
        }
        let n = self.levels.len() as i64;
        Some(((step % n) as usize, (step / n) as u32))
    }
}

/// Why a page was sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub enum PageKind {
    Opening,
    Reminder,
    Escalation,
    Fallback,
    AllClear,
    /// A hand-off notice ("you are on call tomorrow"): of a team, not of an incident.
    Handoff,
}

crate::words!(PageKind, "page kind" {
    Opening => "opening",
    Reminder => "reminder",
    Escalation => "escalation",
    Fallback => "fallback",
    AllClear => "all_clear",
    Handoff => "handoff",
});

impl PageKind {
    /// Pages that ask for an owner; they are dropped if the incident was owned first.
    pub fn wants_owner(self) -> bool {
        !matches!(self, PageKind::AllClear | PageKind::Handoff)
    }
}

/// Where a page is in its delivery.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub enum PageStatus {
    /// Waiting for its first attempt or for a retry.
    Pending,
    Sent,
    /// Failed for good (the road refused it), or given up after retrying for `GIVE_UP_AFTER`.
    Failed,
    /// Not sent because the incident was acknowledged, snoozed, resolved or archived first, or
    /// its person left the team.
    Cancelled,
}

crate::words!(PageStatus, "page status" {
    Pending => "pending",
    Sent => "sent",
    Failed => "failed",
    Cancelled => "cancelled",
});

/// One page of an incident's paging history.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Page {
    pub id: i64,
    pub kind: PageKind,
    /// The user paged; `None` for the shared fallback topic.
    pub recipient: Option<String>,
    /// Shown only for the shared fallback topic: a user's own topic stays private.
    pub topic: Option<String>,
    /// The road it takes.
    pub road: crate::contact::ContactKind,
    /// For a page to a person, which of their roads in words: "push topic", or the name of one
    /// of their contact methods.
    pub via: Option<String>,
    /// A page still waiting whose incident was owned meanwhile shows as cancelled, with the
    /// reason the notifier will give when its time comes.
    pub status: PageStatus,
    pub attempts: i64,
    pub last_error: Option<String>,
    pub next_attempt_at: Option<Timestamp>,
    pub created_at: Timestamp,
    pub sent_at: Option<Timestamp>,
}

/// `POST /api/notify/ack/{token}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct AckOutcome {
    pub incident_id: i64,
    pub state: crate::alerting::IncidentState,
    /// Every incident this tap acknowledged: the one incident, or, for a bundled page's
    /// Acknowledge all, those of the bundle that were still unacknowledged.
    pub acknowledged: Vec<i64>,
}

/// A failed send is retried for this long, then given up and recorded.
pub const GIVE_UP_AFTER: i64 = 86_400;
const FIRST_RETRY: i64 = 5;
const MAX_RETRY: i64 = 600;

/// Seconds to wait after the `attempts`-th failed send: 5 s, doubling, at most 10 minutes.
/// A push service's `Retry-After` (sent with a 429) is honoured as it is given.
pub fn retry_delay(attempts: i64, retry_after: Option<i64>) -> i64 {
    let doubling = FIRST_RETRY.saturating_mul(1i64 << (attempts - 1).clamp(0, 20));
    match retry_after {
        Some(r) => r.clamp(1, GIVE_UP_AFTER),
        None => doubling.min(MAX_RETRY),
    }
}

/// The incident a claimed page is about, as it stands when the page is delivered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IncidentNow {
    pub state: IncidentState,
    pub archived: bool,
    pub snoozed_until: Option<i64>,
}

/// What the notifier does with a claimed page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Delivery {
    /// Not sent; the reason is kept on the page.
    Cancel(&'static str),
    /// Sent. `acknowledge`: it carries an Acknowledge button (a one-use token for its
    /// recipient); `last_fix`: it says how the last incident like this one was fixed.
    Send { acknowledge: bool, last_fix: bool },
}

/// By default a topic gets at most this many pushes in `BUNDLE_WINDOW` seconds; pages beyond
/// them go out together as one summary push (`KLAXON_PAGE_BUNDLE_AFTER`).
pub const BUNDLE_AFTER: i64 = 5;
/// The sliding window `BUNDLE_AFTER` counts pushes in, in seconds.
pub const BUNDLE_WINDOW: i64 = 60;

/// How the pages due for one topic in a delivery batch go out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bundling {
    /// Each page on its own.
    Alone,
    /// The first `alone` pages on their own, the rest in one summary push.
    Split { alone: usize },
    /// None now: the topic had its `BUNDLE_AFTER` pushes; the pages wait for its next summary.
    Wait,
}

/// The rule for `due` pages of one topic, `pushed` pushes having gone to it in the last
/// `BUNDLE_WINDOW`, `waiting` when some of the pages already wait for a summary, and at most
/// `after` pushes a window (0: no bundling). A summary is one push, so the topic never gets
/// more than `after` in the window; pages that waited go out in the next summary with whatever
/// is due with them, never alone (unless one page is all there is).
pub fn bundling(due: usize, pushed: i64, waiting: bool, after: i64) -> Bundling {
    if after <= 0 {
        return Bundling::Alone;
    }
    let room = usize::try_from(after - pushed).unwrap_or(0);
    if room == 0 {
        Bundling::Wait
    } else if due <= 1 || (!waiting && due <= room) {
        Bundling::Alone
    } else if waiting {
        Bundling::Split { alone: 0 }
    } else {
        Bundling::Split { alone: room - 1 }
    }
}

/// Whether a claimed page is still wanted, and what it carries. A page that asks for an owner
/// is dropped once the incident has one (acknowledged or resolved), is archived, or is
/// snoozed; the all-clear always goes. Only a page to one person (`personal`) can be
/// acknowledged from the phone: a shared topic has no single recipient to act as.
pub fn plan_delivery(
    kind: PageKind,
    personal: bool,
    incident: Option<&IncidentNow>,
    now: i64,
) -> Delivery {
    if kind == PageKind::Handoff {
        return Delivery::Send {
            acknowledge: false,
            last_fix: false,
        };
    }
    let Some(incident) = incident else {
        return Delivery::Cancel("not sent: the incident was deleted");
    };
    if kind.wants_owner() {
        let why = match incident.state {
            IncidentState::Resolved => Some("not sent: resolved first"),
            IncidentState::Acknowledged => Some("not sent: acknowledged first"),
            IncidentState::Triggered if incident.archived => Some("not sent: archived first"),
            IncidentState::Triggered if incident.snoozed_until.is_some_and(|s| s > now) => {
                Some("not sent: snoozed first")
            }
            IncidentState::Triggered => None,
        };
        if let Some(why) = why {
            return Delivery::Cancel(why);
        }
    }
    Delivery::Send {
        acknowledge: personal
            && matches!(
                kind,
                PageKind::Opening | PageKind::Reminder | PageKind::Escalation
            ),
        last_fix: kind != PageKind::AllClear,
    }
}

#[cfg(test)]
mod tests;
