//! Sending one push by the road its destination names (`crate::roads`): the push's page goes to
//! an ntfy topic, or to one of a person's verified contact methods, read once per batch.

use super::bundle::Push;
use super::plan::Claimed;
use crate::db::Tx;
use crate::roads::{Failure, Message, Owner, Page, Sent, To};
use crate::{Core, Result};
use std::collections::HashMap;

/// A contact method as sending needs it.
#[derive(sqlx::FromRow)]
pub(crate) struct Method {
    pub id: i64,
    pub target: String,
    pub p256dh: Option<String>,
    pub auth: Option<String>,
    pub signing_secret: Option<String>,
    pub room: Option<String>,
    pub provider: Option<String>,
    pub username: String,
}

/// The methods the pushes' destinations name, by id.
pub(crate) type Methods = HashMap<i64, Method>;

impl Method {
    /// Where a message to this method goes; `delivery` as `To::delivery`.
    pub fn to(&self, delivery: String) -> To {
        To {
            target: self.target.clone(),
            secret: self.signing_secret.clone(),
            keys: self.p256dh.clone().zip(self.auth.clone()),
            room: self.room.clone(),
            method_id: Some(self.id),
            provider: self.provider.clone(),
            owner: Owner::Person,
            name: self.username.clone(),
            delivery,
        }
    }
}

/// Reads the contact methods the pushes go to, in one query.
pub(super) async fn methods_of<'a>(
    tx: &mut Tx,
    pages: impl Iterator<Item = &'a Claimed>,
) -> Result<Methods> {
    let mut ids: Vec<i64> = pages.filter_map(|p| p.method_id).collect();
    ids.sort_unstable();
    ids.dedup();
    let rows: Vec<Method> = tx
        .fetch_in(
            &format!(
                "SELECT {METHOD_COLUMNS} FROM contact_methods m JOIN users u ON u.id = m.user_id \
                 WHERE m.verified_at IS NOT NULL AND m.id IN ({{ids}})"
            ),
            &[],
            &ids,
        )
        .await?;
    Ok(rows.into_iter().map(|m| (m.id, m)).collect())
}

impl Core {
    /// Sends one push by the road its pages name: to their contact method, or to the topic.
    pub(super) async fn send_by_road(&self, push: &Push, page: &Page, methods: &Methods) -> Sent {
        let first = push.first();
        let delivery = format!("page-{}", first.id);
        let to = match first.method_id {
            Some(id) => methods
                .get(&id)
                .ok_or_else(|| Failure::permanent("the contact method was removed"))?
                .to(delivery),
            None => To {
                target: first.topic.clone(),
                secret: None,
                keys: None,
                room: None,
                method_id: None,
                provider: None,
                owner: Owner::Person,
                name: String::new(),
                delivery,
            },
        };
        let road = self
            .roads
            .get(&first.road)
            .ok_or_else(|| Failure::permanent(format!("{} is not a road", first.road)))?;
        road.send(self, &to, &Message::Page(page)).await
    }
}

/// The columns of `Method`, from `contact_methods m JOIN users u`.
pub(crate) const METHOD_COLUMNS: &str =
    "m.id, m.target, m.p256dh, m.auth, m.signing_secret, m.room, m.provider, u.username";
