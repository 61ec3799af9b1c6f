//! What a page to a person becomes. Each of their notification steps for the page's urgency is
//! a page of its own to one destination (`domain::contact::Destination`), due at its delay; a
//! low-urgency page during their quiet hours starts when the hours end. A person without steps
//! is paged on every verified road at once: their push topic alone, for a person with nothing
//! else, exactly as before contact methods existed.

use super::NewPage;
use crate::db::{Backend, Tx};
use crate::timeline::Entry;
use crate::Result;
use klaxon_domain::alerting::Severity;
use klaxon_domain::contact::{ContactKind, Destination};
use klaxon_domain::incident::TimelineKind;
use klaxon_domain::paging::{EscalationPolicy, PageKind};
use klaxon_domain::rules::{QuietHours, Urgency};
use klaxon_domain::text::ClockTime;
use std::collections::HashMap;

/// One outbox row to write.
pub(super) struct Row {
    pub to: Destination,
    pub due_at: i64,
}

/// A page that follows its person's notification rules: an opening page, reminder or
/// escalation to one person who may have rules. Hand-off notices, fallback pages and
/// all-clears go as they are.
pub(super) fn follows_rules(page: &NewPage) -> bool {
    page.user_id.is_some()
        && !page.topic_only
        && matches!(
            page.kind,
            PageKind::Opening | PageKind::Reminder | PageKind::Escalation
        )
}

/// What paging one person needs.
#[derive(Default)]
pub(super) struct Person {
    username: String,
    push_topic: Option<String>,
    time_zone: Option<String>,
    quiet: Option<QuietHours>,
    /// Verified methods, in the order they were added.
    methods: Vec<(i64, Destination)>,
    high: Vec<(i64, Option<i64>)>,
    low: Vec<(i64, Option<i64>)>,
}

impl Person {
    /// The destinations of a page of `urgency` and their delays (seconds), earliest first, each
    /// destination once. Steps naming a method that is not verified are skipped; when nothing
    /// is left, the default (every verified road at once).
    fn roads(&self, urgency: Urgency) -> Vec<(Destination, i64)> {
        let steps = match urgency {
            Urgency::Low if !self.low.is_empty() => &self.low,
            _ => &self.high,
        };
        fn add(roads: &mut Vec<(Destination, i64)>, d: Destination, after: i64) {
            if !roads.iter().any(|(r, _)| *r == d) {
                roads.push((d, after));
            }
        }
        let mut roads: Vec<(Destination, i64)> = Vec::new();
        let mut steps = steps.clone();
        steps.sort_by_key(|s| s.0);
        for (after_minutes, method) in steps {
            let road = match method {
                None => self.push_topic.clone().map(Destination::Ntfy),
                Some(id) => self
                    .methods
                    .iter()
                    .find(|(m, _)| *m == id)
                    .map(|(_, d)| d.clone()),
            };
            if let Some(road) = road {
                add(&mut roads, road, after_minutes * 60);
            }
        }
        if roads.is_empty() {
            if let Some(topic) = &self.push_topic {
                add(&mut roads, Destination::Ntfy(topic.clone()), 0);
            }
            for (_, d) in &self.methods {
                add(&mut roads, d.clone(), 0);
            }
        }
        roads
    }

    /// Whether the page's urgency can change what is sent.
    fn weighs_urgency(&self) -> bool {
        !self.low.is_empty() || self.quiet.is_some()
    }
}

/// The rows each of `pages` (all `follows_rules`) becomes, and the timeline entries of pages
/// that wait out quiet hours. `known` are people already read (`person_columns`); the others
/// are read here.
pub(super) async fn expand(
    tx: &mut Tx,
    pages: &[&NewPage],
    now: i64,
    mut known: HashMap<i64, Person>,
) -> Result<(Vec<Vec<Row>>, Vec<Entry>)> {
    let mut users: Vec<i64> = pages
        .iter()
        .filter_map(|p| p.user_id)
        .filter(|u| !known.contains_key(u))
        .collect();
    users.sort_unstable();
    users.dedup();
    if !users.is_empty() {
        known.extend(people(tx, &users).await?);
    }
    let people = known;
    let mut weighing: Vec<i64> = pages
        .iter()
        .filter(|p| {
            p.user_id
                .and_then(|u| people.get(&u))
                .is_some_and(Person::weighs_urgency)
        })
        .map(|p| p.incident_id)
        .collect();
    weighing.sort_unstable();
    weighing.dedup();
    let urgency = urgencies(tx, &weighing).await?;

    let mut out = Vec::with_capacity(pages.len());
    let mut entries = Vec::new();
    for page in pages {
        let Some(person) = page.user_id.and_then(|u| people.get(&u)) else {
            out.push(Vec::new());
            continue;
        };
        let urgency = urgency
            .get(&page.incident_id)
            .copied()
            .unwrap_or(Urgency::High);
        let mut start = now;
        if urgency == Urgency::Low {
            if let Some(quiet) = &person.quiet {
                let zone = person.time_zone.as_deref().unwrap_or("UTC");
                if let Some(end) = quiet_until(now, zone, quiet) {
                    start = end;
                    entries.push(Entry {
                        incident_id: page.incident_id,
                        at: now,
                        kind: TimelineKind::Held,
                        actor_id: None,
                        text: format!(
                            "low-urgency {} page to {} waits for the end of their quiet hours at {} {zone} ({})",
                            page.kind.as_str().replace('_', "-"),
                            person.username,
                            quiet.end,
                            klaxon_domain::Timestamp(end).to_rfc3339()
                        ),
                    });
                }
            }
        }
        out.push(
            person
                .roads(urgency)
                .into_iter()
                .map(|(to, after)| Row {
                    to,
                    due_at: start + after,
                })
                .collect(),
        );
    }
    Ok((out, entries))
}

/// The people `users`, with their verified methods and steps (`person_columns`): one query,
/// whatever their number.
async fn people(tx: &mut Tx, users: &[i64]) -> Result<HashMap<i64, Person>> {
    #[derive(sqlx::FromRow)]
    struct Row {
        user_id: i64,
        username: String,
        push_topic: Option<String>,
        quiet_start: Option<String>,
        #[sqlx(flatten)]
        roads: PersonRow,
    }
    let sql = format!(
        "SELECT u.id AS user_id, u.username, u.push_topic, u.quiet_start, {} FROM users u WHERE u.id IN ({{ids}})",
        person_columns(tx.backend)
    );
    let rows: Vec<Row> = tx.fetch_in(&sql, &[], users).await?;
    let mut people = HashMap::with_capacity(rows.len());
    for r in rows {
        let person = r
            .roads
            .person(
                &r.username,
                r.push_topic.as_deref(),
                r.quiet_start.as_deref(),
            )
            .ok_or_else(|| {
                crate::Error::Internal(format!("the roads of {} could not be read", r.username))
            })?;
        people.insert(r.user_id, person);
    }
    Ok(people)
}

fn quiet_hours(start: Option<&str>, end: Option<&str>) -> Option<QuietHours> {
    let (start, end) = (start?, end?);
    Some(QuietHours {
        start: ClockTime::parse(start).ok()?,
        end: ClockTime::parse(end).ok()?,
    })
}

impl Person {
    fn add_method(&mut self, id: Option<i64>, kind: Option<&str>, target: Option<&str>) {
        if let (Some(id), Some(kind), Some(target)) =
            (id, kind.and_then(ContactKind::parse), target)
        {
            self.methods
                .push((id, Destination::of_method(kind, id, target)));
        }
    }

    fn add_step(&mut self, urgency: &str, after: i64, method: Option<i64>) {
        match Urgency::parse(urgency) {
            Some(Urgency::Low) => self.low.push((after, method)),
            _ => self.high.push((after, method)),
        }
    }
}

/// Columns of user `u` that, with the username, push topic and quiet start read beside them,
/// make the person's `Person` (`PersonRow::person`): the opening of an incident reads its holder's
/// roads in the query that finds the holder, so a storm's openings do not each read them again
/// in their transaction (on SQLite, in the one writer's turn).
pub(super) fn person_columns(backend: Backend) -> &'static str {
    match backend {
        Backend::Postgres => {
            "u.time_zone, u.quiet_end, \
             (SELECT json_agg(json_build_array(c.id, c.kind, c.target) ORDER BY c.id)::text FROM contact_methods c \
              WHERE c.user_id = u.id AND c.verified_at IS NOT NULL) AS method_list, \
             (SELECT json_agg(json_build_array(s.urgency, s.after_minutes, s.method_id) ORDER BY s.position)::text \
              FROM notification_steps s WHERE s.user_id = u.id) AS step_list"
        }
        Backend::Sqlite => {
            "u.time_zone, u.quiet_end, \
             (SELECT json_group_array(json_array(c.id, c.kind, c.target) ORDER BY c.id) FROM contact_methods c \
              WHERE c.user_id = u.id AND c.verified_at IS NOT NULL) AS method_list, \
             (SELECT json_group_array(json_array(s.urgency, s.after_minutes, s.method_id) ORDER BY s.position) \
              FROM notification_steps s WHERE s.user_id = u.id) AS step_list"
        }
    }
}

/// The `person_columns` of a user.
#[derive(sqlx::FromRow)]
pub(super) struct PersonRow {
    pub time_zone: Option<String>,
    pub quiet_end: Option<String>,
    /// JSON: `[[id, kind, target], …]` of verified methods, in the order they were added.
    pub method_list: Option<String>,
    /// JSON: `[[urgency, after_minutes, method_id], …]` in the steps' order.
    pub step_list: Option<String>,
}

impl PersonRow {
    /// The person, or `None` when a list cannot be read.
    pub(super) fn person(
        self,
        username: &str,
        push_topic: Option<&str>,
        quiet_start: Option<&str>,
    ) -> Option<Person> {
        let list = |json: Option<String>| -> Option<Vec<serde_json::Value>> {
            match json {
                None => Some(Vec::new()),
                Some(j) => serde_json::from_str(&j).ok(),
            }
        };
        let mut person = Person {
            username: username.to_string(),
            push_topic: push_topic.map(str::to_string),
            time_zone: self.time_zone,
            quiet: quiet_hours(quiet_start, self.quiet_end.as_deref()),
            ..Person::default()
        };
        for m in list(self.method_list)? {
            let (id, kind, target) = (m.get(0)?.as_i64(), m.get(1)?.as_str(), m.get(2)?.as_str());
            person.add_method(id, kind, target);
        }
        for step in list(self.step_list)? {
            let urgency = step.get(0)?.as_str()?;
            let after = step.get(1)?.as_i64()?;
            let method = step.get(2)?.as_i64();
            person.add_step(urgency, after, method);
        }
        Some(person)
    }
}

/// The urgency of each incident's pages, by its severity and its team's policy.
async fn urgencies(tx: &mut Tx, incidents: &[i64]) -> Result<HashMap<i64, Urgency>> {
    let rows: Vec<(i64, String, Option<String>)> = tx
        .fetch_in(
            "SELECT i.id, i.severity, p.policy FROM incidents i \
             LEFT JOIN escalation_policies p ON p.team_id = i.team_id WHERE i.id IN ({ids})",
            &[],
            incidents,
        )
        .await?;
    Ok(rows
        .into_iter()
        .map(|(id, severity, policy)| {
            let policy: EscalationPolicy = policy
                .and_then(|p| serde_json::from_str(&p).ok())
                .unwrap_or_default();
            let severity = Severity::parse(&severity).unwrap_or(Severity::Warning);
            (id, policy.urgency(severity))
        })
        .collect())
}

/// When the quiet hours `quiet` on the clock of `zone` that hold `now` end, or `None` when
/// `now` is not quiet. An unknown zone counts as UTC. A local end time that a clock change
/// skips or repeats is taken as the clock's compatible reading (the later, for a gap).
pub(crate) fn quiet_until(now: i64, zone: &str, quiet: &QuietHours) -> Option<i64> {
    let tz = jiff::tz::TimeZone::get(zone).unwrap_or(jiff::tz::TimeZone::UTC);
    let local = jiff::Timestamp::from_second(now)
        .ok()?
        .to_zoned_datetime(tz.clone());
    let minute = u32::from(local.hour() as u8) * 60 + u32::from(local.minute() as u8);
    if !quiet.contains(minute) {
        return None;
    }
    let end = quiet.end.minutes();
    let day = if end > minute {
        local.date()
    } else {
        local.date().tomorrow().ok()?
    };
    let end = day
        .at((end / 60) as i8, (end % 60) as i8, 0, 0)
        .to_zoned_datetime(tz)
        .ok()?;
    Some(end.timestamp().as_second())
}

/// Whether `zone` is in the zone database.
pub(crate) fn known_zone(zone: &str) -> bool {
    jiff::tz::TimeZone::get(zone).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn quiet(start: &str, end: &str) -> QuietHours {
        QuietHours {
            start: ClockTime::parse(start).unwrap(),
            end: ClockTime::parse(end).unwrap(),
        }
    }

    fn at(s: &str) -> i64 {
        s.parse::<jiff::Timestamp>().unwrap().as_second()
    }

    #[test]
    fn quiet_hours_end_on_the_persons_clock_across_midnight_and_clock_changes() {
        let night = quiet("22:00", "07:00");
        // 23:30 in Berlin (UTC+1 in winter): waits until 07:00 Berlin, 06:00 UTC next day.
        assert_eq!(
            quiet_until(at("2026-11-27T22:30:00Z"), "Europe/Berlin", &night),
            Some(at("2026-11-28T06:00:00Z"))
        );
        // 03:00 Berlin: the same morning.
        assert_eq!(
            quiet_until(at("2026-11-27T02:00:00Z"), "Europe/Berlin", &night),
            Some(at("2026-11-27T06:00:00Z"))
        );
        // Noon is not quiet.
        assert_eq!(
            quiet_until(at("2026-11-27T11:00:00Z"), "Europe/Berlin", &night),
            None
        );
        // The night summer time starts (29 March 2026): 07:00 is then UTC+2.
        assert_eq!(
            quiet_until(at("2026-03-28T23:00:00Z"), "Europe/Berlin", &night),
            Some(at("2026-03-29T05:00:00Z"))
        );
        // New York, and an unknown zone read as UTC.
        assert_eq!(
            quiet_until(at("2026-11-27T04:00:00Z"), "America/New_York", &night),
            Some(at("2026-11-27T12:00:00Z"))
        );
        assert_eq!(
            quiet_until(at("2026-11-27T23:00:00Z"), "Nowhere/Atlantis", &night),
            Some(at("2026-11-28T07:00:00Z"))
        );
        assert!(known_zone("Australia/Lord_Howe") && !known_zone("Nowhere/Atlantis"));
    }

    #[test]
    fn a_person_without_steps_is_paged_on_every_verified_road_at_once() {
        let mut p = Person {
            push_topic: Some("alice".into()),
            methods: vec![
                (4, Destination::Method(ContactKind::Email, 4)),
                (5, Destination::Method(ContactKind::Webpush, 5)),
            ],
            ..Person::default()
        };
        let roads = p.roads(Urgency::High);
        assert_eq!(
            roads,
            vec![
                (Destination::Ntfy("alice".into()), 0),
                (Destination::Method(ContactKind::Email, 4), 0),
                (Destination::Method(ContactKind::Webpush, 5), 0)
            ]
        );
        // Steps: push topic now, email after 5 minutes; an unverified method (9) is skipped.
        p.high = vec![(5, Some(4)), (0, None), (1, Some(9))];
        assert_eq!(
            p.roads(Urgency::High),
            vec![
                (Destination::Ntfy("alice".into()), 0),
                (Destination::Method(ContactKind::Email, 4), 300)
            ]
        );
        // Low urgency without its own steps takes the high ones; with them, its own.
        assert_eq!(p.roads(Urgency::Low), p.roads(Urgency::High));
        p.low = vec![(10, Some(4))];
        assert_eq!(
            p.roads(Urgency::Low),
            vec![(Destination::Method(ContactKind::Email, 4), 600)]
        );
        // Steps that all name unusable methods fall back to the default.
        p.high = vec![(0, Some(9))];
        assert_eq!(p.roads(Urgency::High).len(), 3);
    }
}
