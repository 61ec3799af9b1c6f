//! Bundling: a topic gets at most `page_bundle_after` (default `BUNDLE_AFTER`) pushes in a
//! sliding minute, or fewer where its road says so (`Info::per_minute`: a number one text). When a batch holds
//! more pages for a topic than it has room for, the first go alone and the rest go as one
//! summary push with an Acknowledge-all button; when the topic has no room left, its pages wait
//! (`bundled`) until the oldest push of the minute ages out, then go together in one summary.
//! Hand-off notices are neither counted nor bundled. The rule itself is
//! `domain::paging::bundling`.
//!
//! Two replicas delivering at the same moment count the same minute, so a topic can get a few
//! more than `BUNDLE_AFTER` pushes then; bundling spares a phone, it does not guard a page.

use super::plan::{Claimed, Send};
use crate::{Core, Result};
use klaxon_domain::paging::{bundling, Bundling, BUNDLE_WINDOW};
use std::collections::{BTreeMap, HashMap};

/// One push to the push service.
pub(super) enum Push {
    One(Box<Send>),
    /// Several pages of one topic in one summary; each page's own message is not sent.
    Summary(Vec<Send>),
}

impl Push {
    /// The pages it carries.
    pub fn pages(&self) -> impl Iterator<Item = &Claimed> {
        let pages: &[Send] = match self {
            Push::One(s) => std::slice::from_ref(&**s),
            Push::Summary(pages) => pages,
        };
        pages.iter().map(|s| &s.page)
    }

    /// Its first page: every page of a push goes to one destination.
    pub fn first(&self) -> &Claimed {
        self.pages().next().expect("a push carries a page")
    }

    pub fn topic(&self) -> &str {
        match self {
            Push::One(s) => &s.page.topic,
            Push::Summary(pages) => &pages[0].page.topic,
        }
    }
}

/// A batch's sends, bundled.
#[derive(Default)]
pub(super) struct Bundled {
    pub pushes: Vec<Push>,
    /// Pages that wait for their topic's next summary, each with when it may go.
    pub waiting: Vec<(Claimed, i64)>,
}

impl Core {
    /// Applies the bundling rule to a batch's sends, topic by topic, in page order.
    pub(super) async fn bundle(&self, sends: Vec<Send>, now: i64) -> Result<Bundled> {
        let mut out = Bundled::default();
        if self.config.page_bundle_after <= 0 {
            out.pushes = sends.into_iter().map(|s| Push::One(Box::new(s))).collect();
            return Ok(out);
        }
        let mut by_topic: BTreeMap<String, Vec<Send>> = BTreeMap::new();
        for send in sends {
            if send.gist.is_none() {
                out.pushes.push(Push::One(Box::new(send)));
            } else {
                by_topic
                    .entry(send.page.topic.clone())
                    .or_default()
                    .push(send);
            }
        }
        let topics: Vec<String> = by_topic.keys().cloned().collect();
        let minute = self.pushes_this_minute(&topics, now).await?;
        for (topic, mut sends) in by_topic {
            sends.sort_by_key(|s| s.page.id);
            let (pushed, oldest) = minute.get(&topic).copied().unwrap_or((0, now));
            let waiting = sends.iter().any(|s| s.page.bundled == 1);
            let after = self
                .roads
                .get(&sends[0].page.road)
                .and_then(|r| r.info().per_minute)
                .map_or(self.config.page_bundle_after, |most| {
                    most.min(self.config.page_bundle_after)
                });
            match bundling(sends.len(), pushed, waiting, after) {
                Bundling::Alone => out
                    .pushes
                    .extend(sends.into_iter().map(|s| Push::One(Box::new(s)))),
                Bundling::Split { alone } => {
                    let rest = sends.split_off(alone);
                    out.pushes
                        .extend(sends.into_iter().map(|s| Push::One(Box::new(s))));
                    out.pushes.push(Push::Summary(rest));
                }
                Bundling::Wait => {
                    let until = (oldest + BUNDLE_WINDOW).max(now + 1);
                    out.waiting
                        .extend(sends.into_iter().map(|s| (s.page, until)));
                }
            }
        }
        Ok(out)
    }

    /// For each topic, the pushes of incident pages it got in the last `BUNDLE_WINDOW` (a
    /// summary counts once) and when the oldest of them went.
    async fn pushes_this_minute(
        &self,
        topics: &[String],
        now: i64,
    ) -> Result<HashMap<String, (i64, i64)>> {
        let rows: Vec<(String, i64, i64)> = self
            .db
            .fetch_in(
                "SELECT topic, COUNT(DISTINCT CASE WHEN bundle_id IS NULL THEN id ELSE -bundle_id END), MIN(sent_at) \
                 FROM pages WHERE sent_at > $1 AND incident_id IS NOT NULL AND topic IN ({ids}) GROUP BY topic",
                &[(now - BUNDLE_WINDOW).into()],
                topics,
            )
            .await?;
        Ok(rows
            .into_iter()
            .map(|(topic, pushed, oldest)| (topic, (pushed, oldest)))
            .collect())
    }
}
