//! A chat service's incoming webhook (Teams): a team's announcements POSTed as JSON
//! through the outbound policy for team URLs. Each service's file gives its `Info` and renderer.

use super::announcement::Announcement;
use super::http::post_json;
use super::message::Message;
use super::{Failure, Info, Owner, Road, Sent, To};
use crate::Core;
use klaxon_domain::channel::{shown_target, ChannelKind};
use serde_json::Value;

pub(super) struct ChatWebhook {
    pub info: &'static Info,
    pub kind: ChannelKind,
    /// How a failure names the target: "the Teams webhook at".
    pub what: &'static str,
    pub render: fn(&Announcement) -> Value,
}

#[async_trait::async_trait]
impl Road for ChatWebhook {
    fn info(&self) -> &'static Info {
        self.info
    }

    fn unconfigured(&self) -> Option<String> {
        None
    }

    fn check(&self, core: &Core, _: Owner, target: &str) -> Result<String, String> {
        core.outbound
            .check_url(target)
            .map(|_| target.to_string())
            .map_err(|why| format!("target: {why}"))
    }

    fn shown(&self, target: &str) -> String {
        shown_target(self.kind, target)
    }

    async fn send(&self, core: &Core, to: &To, message: &Message<'_>) -> Sent {
        let Message::Announcement(a) = message else {
            return Err(Failure::not_carried(self.info.label));
        };
        let who = format!("{} {}", self.what, self.shown(&to.target));
        post_json(&core.outbound, &to.target, &who, &(self.render)(a)).await
    }
}
