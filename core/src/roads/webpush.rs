//! Web Push to a browser or the installed app: a JSON payload the app's service worker reads
//! (what to show, where a tap goes, the Acknowledge URL, which works with the app closed, and a
//! tag so an incident's all-clear replaces its page), sent by `vapid`'s protocol through the
//! address policy for a person's own URLs.

pub mod vapid;

pub use vapid::{Receiver, Vapid};

use super::message::{Message, Page, Tone, TEST_TITLE};
use super::{Failure, Info, Profile, Road, Sent, To};
use crate::Core;

static INFO: Info = Info {
    name: "webpush",
    label: "Web Push",
    personal: Some(Profile {
        listed_as: "Web Push",
        code_from: "",
        in_chat: false,
        form: None,
    }),
    channel: false,
    needs_code: false,
    shared_service: false,
    signed: false,
    per_minute: None,
};

pub struct WebPushRoad;

#[async_trait::async_trait]
impl Road for WebPushRoad {
    fn info(&self) -> &'static Info {
        &INFO
    }

    fn unconfigured(&self) -> Option<String> {
        None
    }

    /// An endpoint is a capability: only its push service is shown.
    fn shown(&self, target: &str) -> String {
        klaxon_domain::contact::push_origin(target).unwrap_or_default()
    }

    async fn send(&self, core: &Core, to: &To, message: &Message<'_>) -> Sent {
        let public_url = &core.config.public_url;
        let payload = match message {
            Message::Page(page) => payload(page, public_url),
            Message::Test => serde_json::json!({
                "title": TEST_TITLE,
                "body": "Pages reach this device. Keep notifications allowed for Klaxon.",
                "url": format!("{public_url}/me"),
                "tag": "klaxon-test",
                "kind": "test",
            })
            .to_string()
            .into_bytes(),
            Message::Code(_) | Message::Announcement(_) | Message::Update(_) => {
                return Err(Failure::not_carried("Web Push"))
            }
        };
        let (p256dh, auth) = to.keys.clone().unwrap_or_default();
        let subscription = vapid::Subscription {
            endpoint: &to.target,
            p256dh: &p256dh,
            auth: &auth,
        };
        let outbound = &core.personal_outbound;
        vapid::send(outbound, &core.vapid, public_url, &subscription, &payload).await
    }
}

/// A page as the service worker reads it, its text cut to fit a push message.
fn payload(page: &Page, public_url: &str) -> Vec<u8> {
    let mut body = page.text.clone();
    loop {
        let payload = serde_json::json!({
            "title": page.title,
            "body": body,
            "url": page.link,
            "ack_url": page.ack_post(public_url),
            "tag": page.tag,
            // The service worker keeps a page on screen until it is handled, not an all-clear.
            "kind": if page.tone == Tone::Resolved { "all_clear" } else { page.kind },
        })
        .to_string();
        // A title too long for any body is refused by `encrypt` as a failure for good.
        if payload.len() <= vapid::MAX_PLAINTEXT || body.len() <= '…'.len_utf8() {
            return payload.into_bytes();
        }
        // Cut at a character boundary and try again; escaping makes the JSON longer than the text.
        let mut cut = body
            .len()
            .saturating_sub(payload.len() - vapid::MAX_PLAINTEXT + 8);
        while cut > 0 && !body.is_char_boundary(cut) {
            cut -= 1;
        }
        body.truncate(cut);
        body.push('…');
    }
}
