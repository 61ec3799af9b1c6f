//! Paging: who gets woken and when. Every page is a row of the `pages` outbox written in the
//! transaction of the event that caused it (an incident opening, a reminder, a ladder level,
//! a resolve); the notifier delivers the rows. The in-transaction half is one module per rule:
//! `opening`, `reminders`, `escalation`, `snooze`, `all_clear`, `handover`, `membership`, over
//! `reach` (who can be paged) and `enqueue` (the outbox write); the rest delivers.
//!
//! The opening topic is chosen in this order: the assignee's own topic (today's on-call, when
//! enabled and subscribed); else the team's fallback topic from its escalation policy (a shared
//! topic, so that page has no Acknowledge button); else, for a team without a ladder, every
//! owner who can be reached, each with a page of their own; else nobody is paged and the
//! timeline says why. Reminders and the all-clear reuse the opening topic (or the owners).

mod all_clear;
mod bundle;
mod delivery;
mod due;
mod enqueue;
pub mod escalation;
mod failover;
mod handover;
mod membership;
pub mod message;
pub mod notifier;
mod opening;
mod plan;
mod publish;
mod reach;
mod record;
mod reminders;
pub(crate) mod roads;
mod send;
mod snooze;
mod test_page;
pub mod tokens;

pub(crate) use failover::forget_gone;
pub(crate) use handover::handed_over;
pub(crate) use send::{Method, METHOD_COLUMNS};
pub(crate) use test_page::SendNowError;

pub(crate) use all_clear::{all_clears, Cleared};
pub(crate) use enqueue::{enqueue_many, NewPage};
pub(crate) use membership::{left_team, release_held};
pub(crate) use opening::{plan_group, queue_opening, GroupPlan, Planned};
pub use reach::Reached;
pub(crate) use reach::{oncall_today, policy, reach_user, reachable_owners};
pub(crate) use reminders::{remind_many, reminders_to, Owed};
pub(crate) use snooze::{resume, resume_many, Paused};
