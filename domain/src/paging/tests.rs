use super::*;

#[test]
fn a_flooded_topic_gets_its_first_pages_alone_then_one_summary() {
    // A quiet topic: five pages go alone; twelve go as four alone and a summary of eight.
    assert_eq!(bundling(5, 0, false, BUNDLE_AFTER), Bundling::Alone);
    assert_eq!(
        bundling(12, 0, false, BUNDLE_AFTER),
        Bundling::Split { alone: 4 }
    );
    // Three pushes this minute: two more fit; a third makes one of them a summary.
    assert_eq!(bundling(2, 3, false, BUNDLE_AFTER), Bundling::Alone);
    assert_eq!(
        bundling(3, 3, false, BUNDLE_AFTER),
        Bundling::Split { alone: 1 }
    );
    // Full (or over, when two replicas raced): everything waits for the next summary.
    assert_eq!(bundling(1, 5, false, BUNDLE_AFTER), Bundling::Wait);
    assert_eq!(bundling(9, 7, true, BUNDLE_AFTER), Bundling::Wait);
    // Pages that waited go together, with what is due beside them.
    assert_eq!(
        bundling(4, 0, true, BUNDLE_AFTER),
        Bundling::Split { alone: 0 }
    );
    assert_eq!(bundling(1, 4, true, BUNDLE_AFTER), Bundling::Alone);
    // Turned off: every page on its own.
    assert_eq!(bundling(500, 40, true, 0), Bundling::Alone);
}

fn level(timeout: i64, targets: Vec<Target>) -> Level {
    Level {
        timeout: Duration::minutes(timeout),
        targets,
    }
}

#[test]
fn wire_shape_matches_the_api() {
    let p: EscalationPolicy = serde_json::from_str(
        r#"{"levels":[{"timeout":"10m","targets":[{"type":"user","user_id":3},{"type":"oncall"}]}],"repeat":1,"fallback_topic":"ops-fallback"}"#,
    )
    .unwrap();
    assert_eq!(
        p.levels[0].targets,
        vec![Target::User { user_id: 3 }, Target::Oncall]
    );
    assert_eq!(p.levels[0].timeout, Duration::minutes(10));
    assert!(serde_json::from_str::<EscalationPolicy>(
        r#"{"levels":[{"timeout":"10m","targets":[{"type":"team"}]}]}"#
    )
    .is_err());
    assert!(serde_json::from_str::<EscalationPolicy>(r#"{"levels":[],"extra":1}"#).is_err());
}

#[test]
fn validation() {
    let ok = EscalationPolicy {
        levels: vec![level(5, vec![Target::Oncall])],
        repeat: 0,
        fallback_topic: Some(Topic::parse("  ops-fallback ").unwrap()),
        low_urgency: vec![Severity::Info, Severity::Warning, Severity::Info],
    };
    assert_eq!(
        ok.validate().unwrap().low_urgency,
        vec![Severity::Info, Severity::Warning]
    );
    assert_eq!(ok.urgency(Severity::Info), Urgency::Low);
    assert_eq!(ok.urgency(Severity::Critical), Urgency::High);
    assert_eq!(
        ok.validate().unwrap().fallback_topic.as_deref(),
        Some("ops-fallback")
    );
    let empty = EscalationPolicy {
        fallback_topic: Some(Topic::parse("").unwrap()),
        ..ok.clone()
    };
    assert_eq!(empty.validate().unwrap().fallback_topic, None);
    let bad = |p: EscalationPolicy| p.validate().unwrap_err();
    assert!(bad(EscalationPolicy {
        low_urgency: vec![Severity::Info; 4],
        ..ok.clone()
    })
    .contains("low_urgency"));
    assert!(bad(EscalationPolicy {
        levels: vec![level(0, vec![Target::Oncall])],
        ..ok.clone()
    })
    .contains("timeout"));
    assert!(bad(EscalationPolicy {
        levels: vec![level(25 * 60, vec![Target::Oncall])],
        ..ok.clone()
    })
    .contains("timeout"));
    assert!(bad(EscalationPolicy {
        levels: vec![level(5, vec![])],
        ..ok.clone()
    })
    .contains("targets"));
    assert!(bad(EscalationPolicy {
        levels: vec![level(5, vec![Target::Oncall, Target::Oncall])],
        ..ok.clone()
    })
    .contains("twice"));
    assert!(bad(EscalationPolicy {
        repeat: 11,
        ..ok.clone()
    })
    .contains("repeat"));
    assert!(
        serde_json::from_str::<EscalationPolicy>(r#"{"fallback_topic":"no spaces"}"#)
            .unwrap_err()
            .to_string()
            .contains("letters, digits")
    );
    assert!(bad(EscalationPolicy {
        levels: vec![level(5, vec![Target::Oncall]); 11],
        ..ok
    })
    .contains("levels"));
}

#[test]
fn steps_walk_levels_then_repeat() {
    let p = EscalationPolicy {
        levels: vec![
            level(5, vec![Target::Oncall]),
            level(10, vec![Target::Oncall]),
        ],
        repeat: 1,
        fallback_topic: None,
        low_urgency: Vec::new(),
    };
    assert_eq!(p.steps(), 4);
    assert_eq!(p.step(0), Some((0, 0)));
    assert_eq!(p.step(1), Some((1, 0)));
    assert_eq!(p.step(2), Some((0, 1)));
    assert_eq!(p.step(3), Some((1, 1)));
    assert_eq!(p.step(4), None);
    assert_eq!(EscalationPolicy::default().step(0), None);
}

#[test]
fn retry_backs_off_and_honours_retry_after() {
    assert_eq!(retry_delay(1, None), 5);
    assert_eq!(retry_delay(2, None), 10);
    assert_eq!(retry_delay(3, None), 20);
    assert_eq!(retry_delay(30, None), 600);
    assert_eq!(retry_delay(1, Some(120)), 120);
    // A rate limit's Retry-After is what the service asked for, however many attempts.
    assert_eq!(retry_delay(3, Some(1)), 1);
    assert_eq!(retry_delay(9, Some(0)), 1);
    assert_eq!(retry_delay(1, Some(i64::MAX)), GIVE_UP_AFTER);
}

#[test]
fn a_page_is_sent_only_while_it_is_still_wanted() {
    use super::{plan_delivery, Delivery, IncidentNow};
    use crate::alerting::IncidentState::*;
    use PageKind::*;
    let now = 1_000;
    let at = |state, archived, snoozed_until| IncidentNow {
        state,
        archived,
        snoozed_until,
    };
    let send = |acknowledge, last_fix| Delivery::Send {
        acknowledge,
        last_fix,
    };
    let cancel = Delivery::Cancel;
    #[rustfmt::skip]
    let table = [
        // kind, to one person, the incident now, what happens
        (Opening, true, Some(at(Triggered, false, None)), send(true, true)),
        (Opening, false, Some(at(Triggered, false, None)), send(false, true)),
        (Reminder, true, Some(at(Triggered, false, None)), send(true, true)),
        (Escalation, true, Some(at(Triggered, false, None)), send(true, true)),
        (Fallback, false, Some(at(Triggered, false, None)), send(false, true)),
        (Fallback, true, Some(at(Triggered, false, None)), send(false, true)),
        (AllClear, true, Some(at(Resolved, false, None)), send(false, false)),
        (AllClear, false, Some(at(Resolved, true, Some(now + 60))), send(false, false)),
        (Opening, true, None, cancel("not sent: the incident was deleted")),
        (AllClear, true, None, cancel("not sent: the incident was deleted")),
        (Opening, true, Some(at(Acknowledged, false, None)), cancel("not sent: acknowledged first")),
        (Reminder, true, Some(at(Resolved, false, None)), cancel("not sent: resolved first")),
        (Escalation, true, Some(at(Resolved, true, None)), cancel("not sent: resolved first")),
        (Fallback, false, Some(at(Triggered, true, None)), cancel("not sent: archived first")),
        (Reminder, true, Some(at(Triggered, false, Some(now + 1))), cancel("not sent: snoozed first")),
        // A snooze that ended this second no longer holds pages back.
        (Reminder, true, Some(at(Triggered, false, Some(now))), send(true, true)),
    ];
    for (kind, personal, incident, expected) in table {
        assert_eq!(
            plan_delivery(kind, personal, incident.as_ref(), now),
            expected,
            "{kind:?} personal={personal} {incident:?}"
        );
    }
}
