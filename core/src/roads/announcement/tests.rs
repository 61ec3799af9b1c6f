use super::*;
use crate::roads::{matrix, slack, teams, webhook};
use klaxon_domain::Timestamp;
use serde_json::Value;

fn incident(state: IncidentState) -> Incident {
    Incident {
        id: 7,
        team_id: 1,
        title: "Disk <full> & db-1".into(),
        state,
        severity: Severity::Critical,
        group_key: "g".into(),
        signature: "s".into(),
        assignee_id: Some(2),
        assignee: Some("alice".into()),
        paged: Some("alice".into()),
        acknowledged_by: None,
        acknowledged_at: None,
        snoozed_until: None,
        resolved_at: None,
        archived: false,
        created_at: Timestamp(0),
    }
}

fn one(event: ChannelEvent, state: IncidentState) -> Announcement {
    Announcement {
        team_id: 1,
        team: "payments".into(),
        public_url: "https://klaxon.example".into(),
        body: Body::One(Box::new(Item {
            post_id: 3,
            event,
            at: 0,
            incident: incident(state),
            actor: Some("bob".into()),
            text: "resolved by hand".into(),
        })),
        interactive: false,
    }
}

#[test]
fn an_opening_says_what_who_and_where_and_offers_acknowledge() {
    let m = one(ChannelEvent::Opened, IncidentState::Triggered);
    assert_eq!(
        m.plain(),
        "Critical incident opened: Disk <full> & db-1\nTeam payments · with alice, not acknowledged yet\n\
         Acknowledge: https://klaxon.example/incidents/7#acknowledge\nOpen: https://klaxon.example/incidents/7"
    );
    assert!(matrix::render(&m)
        .contains("<strong>Critical incident opened: Disk &lt;full&gt; &amp; db-1</strong>"));
    let slack = slack::render(&m);
    assert!(slack["blocks"][0]["text"]["text"]
        .as_str()
        .unwrap()
        .contains("Disk &lt;full&gt; &amp; db-1"));
    assert_eq!(
        slack["blocks"][1]["elements"][0]["url"],
        "https://klaxon.example/incidents/7#acknowledge"
    );
    let teams = teams::render(&m);
    assert_eq!(
        teams["attachments"][0]["content"]["actions"][0]["title"],
        "Acknowledge"
    );
    let hook = webhook::render(&m);
    assert_eq!(hook["event"], "opened");
    assert_eq!(hook["incident"]["id"], 7);
    assert_eq!(
        hook["acknowledge_url"],
        "https://klaxon.example/incidents/7#acknowledge"
    );
}

#[test]
fn alert_text_mentions_nobody_and_links_nowhere_on_any_chat_road() {
    let mut m = one(ChannelEvent::ResolutionNote, IncidentState::Resolved);
    if let Body::One(item) = &mut m.body {
        item.incident.title = "@channel @here @everyone <!channel> <@U123> @room".into();
        item.text =
            "<https://evil.example|Acknowledge now> [Ack](https://evil.example) www.evil.example"
                .into();
    }
    let slack = slack::render(&m).to_string();
    let rendered = [
        m.plain(),
        matrix::render(&m),
        slack.clone(),
        teams::render(&m).to_string(),
    ];
    for text in &rendered {
        for live in [
            "@channel",
            "@here",
            "@everyone",
            "@room",
            "](https",
            "https://evil",
            "www.evil",
        ] {
            assert!(!text.contains(live), "{live} in {text}");
        }
        // Klaxon's own links stay links.
        assert!(
            text.contains("https://klaxon.example/incidents/7"),
            "{text}"
        );
    }
    // Slack's own syntax is text wherever Slack-format text is read.
    for live in ["<!channel>", "<@U123>", "<https:"] {
        assert!(!slack.contains(live), "{live} in {slack}");
    }
    assert!(slack.contains("&lt;!channel&gt;"), "{slack}");
}

#[test]
fn an_alert_title_cannot_make_a_link_in_teams() {
    let mut m = one(ChannelEvent::Opened, IncidentState::Triggered);
    if let Body::One(item) = &mut m.body {
        item.incident.title = "[Acknowledge](https://evil.example) now".into();
    }
    let teams = teams::render(&m).to_string();
    assert!(!teams.contains("](https://evil.example)"), "{teams}");
    assert!(
        teams.contains("[Acknowledge]\u{200B}(https:\u{200B}//evil.example) now"),
        "{teams}"
    );
}

#[test]
fn a_resolve_says_who_and_offers_no_acknowledge() {
    let m = one(ChannelEvent::Resolved, IncidentState::Resolved);
    assert!(m.plain().starts_with("Critical incident resolved by bob: "));
    assert!(!m.plain().contains("Acknowledge"));
    assert_eq!(webhook::render(&m)["acknowledge_url"], Value::Null);
    assert_eq!(
        slack::render(&m)["blocks"][1]["elements"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
}

#[test]
fn a_summary_names_ten_and_counts_the_rest() {
    let items: Vec<Item> = (0..12)
        .map(|n| Item {
            post_id: n,
            event: ChannelEvent::Opened,
            at: 0,
            incident: Incident {
                id: n,
                ..incident(IncidentState::Triggered)
            },
            actor: None,
            text: String::new(),
        })
        .collect();
    let m = Announcement {
        team_id: 1,
        team: "payments".into(),
        public_url: "https://k".into(),
        body: Body::Summary(items),
        interactive: false,
    };
    let plain = m.plain();
    assert!(plain.starts_with("12 incident events for team payments"));
    assert_eq!(plain.matches("\n- ").count(), 10);
    assert!(plain.contains("…and 2 more"));
    assert_eq!(webhook::render(&m)["also"].as_array().unwrap().len(), 11);
}
