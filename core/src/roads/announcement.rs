//! A team's announcement: one incident event, a storm's summary of many, or a channel's test.
//! Each road renders it its own way (Matrix HTML, Slack Block Kit, a Teams Adaptive Card,
//! Klaxon's own JSON event) from the parts here, which say what happened, the severity in words,
//! the team, who has it, and link to the incident; an event that wants an owner also links to
//! where a responder acknowledges (the incident page: signed in, it asks before it acts, so a
//! link preview or a scanner acknowledges nothing). `plain` is the text every chat shows.

use klaxon_domain::alerting::{IncidentState, Severity};
use klaxon_domain::channel::ChannelEvent;
use klaxon_domain::incident::Incident;
use klaxon_domain::text::quiet;

/// Incidents a storm summary names one by one; the rest are counted.
pub(super) const SUMMARY_LISTS: usize = 10;
/// The longest title or text a message carries (characters); chat services cap a message.
const MAX_TEXT: usize = 300;

/// One event of one incident, as a channel hears it.
#[derive(Debug, Clone)]
pub struct Item {
    /// The outbox row: unique per delivery.
    pub post_id: i64,
    pub event: ChannelEvent,
    pub at: i64,
    pub incident: Incident,
    pub actor: Option<String>,
    /// The timeline's sentence for it.
    pub text: String,
}

#[derive(Debug, Clone)]
pub enum Body {
    One(Box<Item>),
    /// A storm: many events in one message.
    Summary(Vec<Item>),
    /// "Send a test".
    Test,
}

#[derive(Debug, Clone)]
pub struct Announcement {
    pub team_id: i64,
    pub team: String,
    pub public_url: String,
    pub body: Body,
    /// Buttons that act in Klaxon may be offered: the platform's requests reach it
    /// (`KLAXON_SLACK_SIGNING_SECRET` for Slack's).
    pub interactive: bool,
}

impl Announcement {
    /// An incident as it is now, after `by` acted on it: what an announcement is edited into
    /// as the incident moves.
    pub fn current(
        i: &Incident,
        team: &str,
        public_url: &str,
        by: Option<String>,
        interactive: bool,
    ) -> Announcement {
        let event = state_event(i);
        Announcement {
            team_id: i.team_id,
            team: team.to_string(),
            public_url: public_url.to_string(),
            body: Body::One(Box::new(Item {
                post_id: 0,
                event,
                at: 0,
                incident: i.clone(),
                actor: by,
                text: String::new(),
            })),
            interactive,
        }
    }
}

/// The event that brought an incident to its state: what its current message headlines.
pub(crate) fn state_event(i: &Incident) -> ChannelEvent {
    match (i.state, &i.assignee) {
        (IncidentState::Resolved, _) => ChannelEvent::Resolved,
        (IncidentState::Acknowledged, _) => ChannelEvent::Acknowledged,
        (IncidentState::Triggered, Some(_)) => ChannelEvent::Reassigned,
        (IncidentState::Triggered, None) => ChannelEvent::Opened,
    }
}

pub fn test_announcement(team_id: i64, team: &str, public_url: &str) -> Announcement {
    Announcement {
        team_id,
        team: team.to_string(),
        public_url: public_url.to_string(),
        body: Body::Test,
        interactive: false,
    }
}

pub(super) fn severity_word(s: Severity) -> &'static str {
    match s {
        Severity::Critical => "Critical",
        Severity::Warning => "Warning",
        Severity::Info => "Info",
    }
}

fn clip(text: &str) -> String {
    match text.char_indices().nth(MAX_TEXT) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_string(),
    }
}

/// Who has the incident, in words.
pub(super) fn who_has_it(i: &Incident) -> String {
    match (i.state, &i.acknowledged_by, &i.assignee) {
        (IncidentState::Resolved, _, _) => "resolved".into(),
        (_, Some(by), _) => format!("acknowledged by {by}"),
        (_, None, Some(who)) => format!("with {who}, not acknowledged yet"),
        (_, None, None) => "nobody has it yet".into(),
    }
}

impl Item {
    /// "Critical incident opened: Disk full on db-1", with who did it when someone did.
    pub(super) fn headline(&self) -> String {
        let by = match (&self.actor, self.event) {
            (
                Some(who),
                ChannelEvent::Acknowledged
                | ChannelEvent::Resolved
                | ChannelEvent::Reassigned
                | ChannelEvent::ResolutionNote,
            ) => {
                format!(" by {who}")
            }
            _ => String::new(),
        };
        quiet(&format!(
            "{} incident {}{by}: {}",
            severity_word(self.incident.severity),
            self.event.phrase(),
            clip(&self.incident.title)
        ))
    }

    /// The line under the headline: the team, who has it, and what the timeline says where it
    /// adds something (a ladder level, a new assignee, the fix).
    pub(super) fn detail(&self, team: &str) -> String {
        let mut line = format!("Team {team} · {}", who_has_it(&self.incident));
        match self.event {
            ChannelEvent::Escalated | ChannelEvent::Reassigned => {
                line.push_str(&format!(" · {}", clip(&self.text)));
            }
            ChannelEvent::ResolutionNote => line.push_str(&format!(" · Fix: {}", clip(&self.text))),
            _ => {}
        }
        quiet(&line)
    }

    pub(super) fn url(&self, public_url: &str) -> String {
        format!("{public_url}/incidents/{}", self.incident.id)
    }

    /// Where a responder acknowledges, while the event wants an owner and nobody has it.
    pub(super) fn acknowledge_url(&self, public_url: &str) -> Option<String> {
        (self.event.asks_for_owner() && self.incident.state == IncidentState::Triggered)
            .then(|| format!("{public_url}/incidents/{}#acknowledge", self.incident.id))
    }
}

impl Announcement {
    pub fn event_word(&self) -> &'static str {
        match &self.body {
            Body::One(item) => item.event.as_str(),
            Body::Summary(items) => items[0].event.as_str(),
            Body::Test => "test",
        }
    }

    pub(super) fn summary_headline(&self, items: &[Item]) -> String {
        format!(
            "{} incident events for team {} in a storm (summarised to keep the channel readable)",
            items.len(),
            quiet(&self.team)
        )
    }

    pub(super) fn board(&self) -> String {
        format!("{}/", self.public_url)
    }

    /// The message as plain text with its links written out.
    pub fn plain(&self) -> String {
        match &self.body {
            Body::One(item) => {
                let mut text = format!("{}\n{}", item.headline(), item.detail(&self.team));
                if let Some(ack) = item.acknowledge_url(&self.public_url) {
                    text.push_str(&format!("\nAcknowledge: {ack}"));
                }
                text.push_str(&format!("\nOpen: {}", item.url(&self.public_url)));
                text
            }
            Body::Summary(items) => {
                let mut text = self.summary_headline(items);
                for item in items.iter().take(SUMMARY_LISTS) {
                    text.push_str(&format!(
                        "\n- {} ({})",
                        item.headline(),
                        item.url(&self.public_url)
                    ));
                }
                if items.len() > SUMMARY_LISTS {
                    text.push_str(&format!("\n…and {} more", items.len() - SUMMARY_LISTS));
                }
                text.push_str(&format!("\nAll open incidents: {}", self.board()));
                text
            }
            Body::Test => format!(
                "Test from Klaxon: team {}'s incidents will be announced here.\nOpen Klaxon: {}",
                quiet(&self.team),
                self.board()
            ),
        }
    }
}

#[cfg(test)]
mod tests;
