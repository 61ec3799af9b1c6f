//! The signed-in person's roads and rules: contact methods (an ntfy topic, this phone's Web Push
//! subscription, an email address, a Matrix account or a webhook verified by a code) and the
//! notification rules that order them.

use klaxon_domain::contact::{ContactMethod, RoadWords};
use klaxon_domain::rules::NotificationRules;
use leptos::prelude::*;
use serde::{Deserialize, Serialize};

/// What the profile's "Ways to reach you" needs, in one read.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Reach {
    pub methods: Vec<ContactMethod>,
    pub rules: NotificationRules,
    /// The person's push topic, the road a step without a method takes.
    pub push_topic: Option<String>,
    /// Every road a person can have, in its own words, with its form where one can be added here.
    pub roads: Vec<RoadWords>,
    /// The install's VAPID public key, to subscribe this browser with.
    pub webpush_key: String,
}

#[server(prefix = "/rpc")]
pub async fn get_reach() -> Result<Reach, ServerFnError> {
    use crate::server::{fail, signed_in};
    let (core, actor) = signed_in().await?;
    let me = core.me(&actor).await.map_err(fail)?;
    Ok(Reach {
        methods: core
            .list_contact_methods(&actor, actor.user_id)
            .await
            .map_err(fail)?,
        rules: core
            .notification_rules(&actor, actor.user_id)
            .await
            .map_err(fail)?,
        push_topic: me.user.push_topic,
        roads: core.roads.profile_words(),
        webpush_key: core.vapid.public_key.clone(),
    })
}

/// Adds a method: `kind` is `ntfy` (`target` a topic), `email` (`target` an address), `matrix`
/// (`target` a user id), `webhook` (`target` a URL), `sms` or `voice` (`target` a phone number)
/// or `webpush` (`target` the subscription as `JSON.stringify` gives it). An address, an account,
/// a webhook and a number get a code first.
#[server(prefix = "/rpc")]
pub async fn add_contact_method(
    kind: String,
    name: String,
    target: String,
) -> Result<ContactMethod, ServerFnError> {
    use crate::server::{fail, field, signed_in};
    use klaxon_domain::contact::{NewContactMethod, PushSubscription, Road};
    use klaxon_domain::text::{Email, Label, MatrixUser, PhoneNumber, Topic};
    let name = field("name", Label::parse(&name))?;
    let road = match kind.as_str() {
        "ntfy" => Road::Ntfy {
            topic: field("topic", Topic::parse(&target))?,
        },
        "email" => Road::Email {
            address: field("address", Email::parse(&target))?,
        },
        "matrix" => Road::Matrix {
            user: field("user", MatrixUser::parse(&target))?,
        },
        "webhook" => Road::Webhook { url: target },
        "sms" => Road::Sms {
            number: field("number", PhoneNumber::parse(&target))?,
            provider: None,
        },
        "voice" => Road::Voice {
            number: field("number", PhoneNumber::parse(&target))?,
            provider: None,
        },
        "webpush" => Road::Webpush {
            subscription: field(
                "subscription",
                serde_json::from_str::<PushSubscription>(&target)
                    .map_err(|_| "is not a browser's push subscription".to_string()),
            )?,
        },
        _ => field::<Road>(
            "kind",
            Err("must be ntfy, email, matrix, webhook, webpush, sms or voice".into()),
        )?,
    };
    let (core, actor) = signed_in().await?;
    core.add_contact_method(&actor, actor.user_id, NewContactMethod { name, road })
        .await
        .map_err(fail)
}

#[server(prefix = "/rpc")]
pub async fn delete_contact_method(method_id: i64) -> Result<(), ServerFnError> {
    use crate::server::{fail, signed_in};
    let (core, actor) = signed_in().await?;
    core.delete_contact_method(&actor, actor.user_id, method_id)
        .await
        .map_err(fail)
}

#[server(prefix = "/rpc")]
pub async fn verify_contact_method(method_id: i64, code: String) -> Result<(), ServerFnError> {
    use crate::server::{fail, signed_in};
    let (core, actor) = signed_in().await?;
    core.verify_contact_method(&actor, actor.user_id, method_id, &code)
        .await
        .map(drop)
        .map_err(fail)
}

#[server(prefix = "/rpc")]
pub async fn resend_contact_code(method_id: i64) -> Result<(), ServerFnError> {
    use crate::server::{fail, signed_in};
    let (core, actor) = signed_in().await?;
    core.resend_contact_code(&actor, actor.user_id, method_id)
        .await
        .map_err(fail)
}

#[server(prefix = "/rpc")]
pub async fn test_contact_method(method_id: i64) -> Result<(), ServerFnError> {
    use crate::server::{fail, signed_in};
    let (core, actor) = signed_in().await?;
    core.test_contact_method(&actor, actor.user_id, method_id)
        .await
        .map_err(fail)
}

/// Replaces the rules, time zone and quiet hours. Sent as JSON: only the page's editor builds it.
#[server(prefix = "/rpc", input = leptos::server_fn::codec::Json)]
pub async fn set_notification_rules(
    rules: NotificationRules,
) -> Result<NotificationRules, ServerFnError> {
    use crate::server::{fail, signed_in};
    let (core, actor) = signed_in().await?;
    core.set_notification_rules(&actor, actor.user_id, &rules)
        .await
        .map_err(fail)
}
