//! What each claimed page becomes: cancelled, or a message with perhaps an acknowledge token.
//! The decision is `domain::paging::plan_delivery`; this reads what it needs for a whole batch
//! (the incidents with their first alert, the last fixes) in a few queries, whatever its size.

use super::message::{compose, compose_notice, About};
use crate::db::Tx;
use crate::roads::Page;
use crate::secrets::new_token;
use crate::{Core, Result};
use klaxon_domain::alerting::{IncidentState, Severity};
use klaxon_domain::paging::{plan_delivery, Delivery, IncidentNow, PageKind};
use std::collections::{BTreeMap, HashMap, HashSet};

/// A page claimed for delivery by this replica.
#[derive(sqlx::FromRow)]
pub(super) struct Claimed {
    pub id: i64,
    /// None for a hand-off notice, which is of a team.
    pub incident_id: Option<i64>,
    pub team_id: Option<i64>,
    #[sqlx(try_from = "String")]
    pub kind: PageKind,
    /// The destination's key: the ntfy topic, or `road:method_id` (orders its pages).
    pub topic: String,
    /// The road it takes (`roads::Roads::get`), and a person's contact method on it.
    pub road: String,
    pub method_id: Option<i64>,
    pub user_id: Option<i64>,
    pub detail: String,
    pub attempts: i64,
    pub created_at: i64,
    /// It waits for its topic's next summary push (`bundle`).
    pub bundled: i64,
    /// When it was first due: retries move `due_at` on.
    pub first_due_at: i64,
    /// Its failure already brought its person's next step forward.
    pub failed_over: i64,
}

impl crate::outbox::OutboxRow for Claimed {
    fn id(&self) -> i64 {
        self.id
    }
}

impl Claimed {
    /// What a statement returns to be read as a `Claimed`.
    pub const COLUMNS: &str =
        "id, incident_id, team_id, kind, topic, road, method_id, user_id, detail, attempts, created_at, bundled, \
         COALESCE(first_due_at, due_at) AS first_due_at, failed_over";
}

pub(super) enum Plan {
    Cancel(Claimed, &'static str),
    /// The team is in maintenance: the page waits until the window's end.
    Hold(Claimed, i64),
    Send(Box<Send>),
}

/// A page to send: its own message, and the raw acknowledge token it carries.
pub(super) struct Send {
    pub page: Claimed,
    pub message: Page,
    pub token: Option<String>,
    /// What a summary push says of its incident; `None` for a hand-off notice.
    pub gist: Option<Gist>,
}

/// An incident as a summary push counts and lists it.
#[derive(Clone)]
pub(super) struct Gist {
    pub severity: Severity,
    pub title: String,
    pub team: String,
}

/// An incident as its pages need it, with its first alert's annotations.
#[derive(sqlx::FromRow)]
struct Subject {
    id: i64,
    team_id: i64,
    #[sqlx(try_from = "String")]
    state: IncidentState,
    archived_at: Option<i64>,
    snoozed_until: Option<i64>,
    title: String,
    #[sqlx(try_from = "String")]
    severity: Severity,
    team: String,
    annotations: Option<String>,
}

/// An incident's state as `plan_delivery` weighs it.
#[derive(sqlx::FromRow)]
struct StateNow {
    id: i64,
    #[sqlx(try_from = "String")]
    state: IncidentState,
    archived_at: Option<i64>,
    snoozed_until: Option<i64>,
}

/// The description (or summary) among an alert's annotations.
fn description(annotations: Option<&str>) -> Option<String> {
    let annotations: BTreeMap<String, String> = annotations
        .and_then(|a| serde_json::from_str(a).ok())
        .unwrap_or_default();
    annotations
        .get("description")
        .or_else(|| annotations.get("summary"))
        .cloned()
}

fn sorted_unique(mut ids: Vec<i64>) -> Vec<i64> {
    ids.sort_unstable();
    ids.dedup();
    ids
}

impl Core {
    /// The incidents among `pages` asked an owner for whose pages would now be cancelled: owned
    /// (acknowledged, resolved), snoozed, archived or deleted since the batch was planned, by
    /// `plan_delivery`'s rule. `publish` reads this again while a topic's pushes go one after
    /// another: a push can wait its turn behind slow ones while an acknowledgement commits.
    pub(super) async fn owned_now<'a>(
        &self,
        pages: impl Iterator<Item = &'a Claimed>,
        now: i64,
    ) -> Result<HashSet<i64>> {
        let asking = sorted_unique(
            pages
                .filter(|p| p.kind.wants_owner())
                .filter_map(|p| p.incident_id)
                .collect(),
        );
        if asking.is_empty() {
            return Ok(HashSet::new());
        }
        let mut tx = self.db.read_indexed().await?;
        let rows = tx
            .fetch_in::<StateNow>(
                "SELECT id, state, archived_at, snoozed_until FROM incidents WHERE id IN ({ids})",
                &[],
                &asking,
            )
            .await?;
        tx.commit().await?;
        let mut owned: HashSet<i64> = asking.into_iter().collect();
        for r in rows {
            let now_state = IncidentNow {
                state: r.state,
                archived: r.archived_at.is_some(),
                snoozed_until: r.snoozed_until,
            };
            if let Delivery::Send { .. } =
                plan_delivery(PageKind::Reminder, false, Some(&now_state), now)
            {
                owned.remove(&r.id);
            }
        }
        Ok(owned)
    }

    /// What to do with each claimed page.
    pub(super) async fn plan(&self, pages: Vec<Claimed>, now: i64) -> Result<Vec<Plan>> {
        let ids = sorted_unique(pages.iter().filter_map(|p| p.incident_id).collect());
        let asking = sorted_unique(
            pages
                .iter()
                .filter(|p| p.kind.wants_owner())
                .filter_map(|p| p.incident_id)
                .collect(),
        );
        // One transaction whose plans are kept: planned afresh at every batch, these reads
        // took as long to plan as to run.
        let mut tx = self.db.read_indexed().await?;
        // The first alert's annotations ride along: one index probe per incident.
        let incidents: HashMap<i64, Subject> = tx
            .fetch_in::<Subject>(
                "SELECT i.id, i.team_id, i.state, i.archived_at, i.snoozed_until, i.title, i.severity, \
                 (SELECT t.display_name FROM teams t WHERE t.id = i.team_id) AS team, \
                 (SELECT a.annotations FROM alerts a WHERE a.incident_id = i.id ORDER BY a.id LIMIT 1) AS annotations \
                 FROM incidents i WHERE i.id IN ({ids})",
                &[],
                &ids,
            )
            .await?
            .into_iter()
            .map(|s| (s.id, s))
            .collect();
        let last_fixes = last_fixes(&mut tx, &asking).await?;
        let teams = sorted_unique(incidents.values().map(|s| s.team_id).collect());
        let held_until: HashMap<i64, i64> = self
            .maintenance_now_in(&mut tx, &teams)
            .await?
            .into_iter()
            .map(|(team, end)| (team, end.0))
            .collect();
        tx.commit().await?;
        let mut plans = Vec::with_capacity(pages.len());
        for page in pages {
            let Some(incident_id) = page.incident_id else {
                // A hand-off notice: its words were written when it was queued.
                let message = compose_notice(&self.config.public_url, page.team_id, &page.detail);
                plans.push(Plan::Send(Box::new(Send {
                    page,
                    message,
                    token: None,
                    gist: None,
                })));
                continue;
            };
            let subject = incidents.get(&incident_id);
            let now_state = subject.map(|s| IncidentNow {
                state: s.state,
                archived: s.archived_at.is_some(),
                snoozed_until: s.snoozed_until,
            });
            let (subject, acknowledge, last_fix) =
                match plan_delivery(page.kind, page.user_id.is_some(), now_state.as_ref(), now) {
                    Delivery::Cancel(why) => {
                        plans.push(Plan::Cancel(page, why));
                        continue;
                    }
                    Delivery::Send {
                        acknowledge,
                        last_fix,
                    } => (
                        subject.expect("a page is sent only for an incident that exists"),
                        acknowledge,
                        last_fix,
                    ),
                };
            if let Some(until) = held_until.get(&subject.team_id) {
                plans.push(Plan::Hold(page, *until));
                continue;
            }
            let token = acknowledge.then(new_token);
            let description = description(subject.annotations.as_deref());
            let last_fix = last_fix.then(|| last_fixes.get(&incident_id)).flatten();
            let about = About {
                incident_id,
                title: &subject.title,
                team: &subject.team,
                severity: subject.severity,
                description: description.as_deref(),
                last_fix: last_fix.map(|(id, t)| (*id, t.as_str())),
                detail: &page.detail,
            };
            let message = compose(page.kind, &self.config.public_url, &about, token.clone());
            let gist = Gist {
                severity: subject.severity,
                title: subject.title.clone(),
                team: subject.team.clone(),
            };
            plans.push(Plan::Send(Box::new(Send {
                page,
                message,
                token,
                gist: Some(gist),
            })));
        }
        Ok(plans)
    }
}

/// For each incident, the latest resolution note of another resolved incident of its team
/// with the same signature: (that incident, the note).
async fn last_fixes(tx: &mut Tx, incident_ids: &[i64]) -> Result<HashMap<i64, (i64, String)>> {
    // Walks resolution notes newest first (they are few; a flapping alert's incidents are
    // many), so the cost does not grow with the incidents of one signature.
    let notes: Vec<(i64, i64)> = tx
        .fetch_in::<(i64, Option<i64>)>(
            "SELECT i.id, (SELECT n.id FROM incident_notes n CROSS JOIN incidents j WHERE j.id = n.incident_id \
             AND n.resolution = 1 AND j.team_id = i.team_id AND j.signature = i.signature AND j.id <> i.id \
             AND j.state = 'resolved' ORDER BY n.id DESC LIMIT 1) FROM incidents i WHERE i.id IN ({ids})",
            &[],
            incident_ids,
        )
        .await?
        .into_iter()
        .filter_map(|(incident, note)| Some((incident, note?)))
        .collect();
    let note_ids = sorted_unique(notes.iter().map(|n| n.1).collect());
    let texts: HashMap<i64, (i64, String)> = tx
        .fetch_in::<(i64, i64, String)>(
            "SELECT id, incident_id, text FROM incident_notes WHERE id IN ({ids})",
            &[],
            &note_ids,
        )
        .await?
        .into_iter()
        .map(|(id, incident, text)| (id, (incident, text)))
        .collect();
    Ok(notes
        .into_iter()
        .filter_map(|(incident, note)| Some((incident, texts.get(&note)?.clone())))
        .collect())
}
