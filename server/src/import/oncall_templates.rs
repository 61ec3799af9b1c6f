//! An OnCall integration's templates as a generic webhook's (`domain::mapping`): OnCall renders
//! Jinja over `payload` as Klaxon does, so each template carries over as it is written.
//! <https://grafana.com/docs/oncall/latest/oncall-api-reference/integrations/> (`templates`:
//! `grouping_key`, `resolve_signal`, `acknowledge_signal`, `source_link`, and per place
//! `title`, `message`, `image_url`; `null` means the type's built-in default).

use klaxon_domain::mapping::WebhookTemplates;
use serde_json::Value;

/// The templates, and what could not be carried over exactly (the report's approximations).
pub fn webhook_templates(name: &str, kind: &str, t: &Value) -> (WebhookTemplates, Vec<String>) {
    let given = |v: &Value| {
        v.as_str()
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(String::from)
    };
    // The web UI's title and message are what responders saw; Slack's when only those were set.
    let place = |field: &str| given(&t["web"][field]).or_else(|| given(&t["slack"][field]));
    let starter = WebhookTemplates::starter();
    let mut notes = Vec::new();
    let mut defaulted = Vec::new();
    let title = place("title").unwrap_or_else(|| {
        defaulted.push("title");
        starter.title.clone()
    });
    let dedup_key = given(&t["grouping_key"]).or_else(|| {
        defaulted.push("grouping");
        starter.dedup_key.clone()
    });
    let resolved = given(&t["resolve_signal"]).or_else(|| {
        defaulted.push("resolve condition");
        starter.resolved.clone()
    });
    if !defaulted.is_empty() {
        notes.push(format!(
            "integration \"{name}\" ({kind}): OnCall's built-in {} of this type is not known to \
             Klaxon; the starter templates (title, id, status, url…) stand in: try them on a body it sends",
            defaulted.join(", ")
        ));
    }
    if given(&t["acknowledge_signal"]).is_some() {
        notes.push(format!(
            "integration \"{name}\" ({kind}): its acknowledge condition is not used; a responder acknowledges"
        ));
    }
    let templates = WebhookTemplates {
        title,
        severity: starter.severity,
        dedup_key,
        resolved,
        labels: Default::default(),
        link: given(&t["source_link"]).or(starter.link),
        message: place("message").or(starter.message),
    };
    (templates, notes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn templates_carry_over_as_written_and_defaults_are_said() {
        let t = json!({
            "grouping_key": "{{ payload.alert_uid }}",
            "resolve_signal": "{{ payload.state == 'ok' }}",
            "acknowledge_signal": null,
            "source_link": "{{ payload.url }}",
            "slack": {"title": "*{{ payload.title }}*", "message": null},
            "web": {"title": "{{ payload.title }}", "message": "{{ payload.message }}"}
        });
        let (w, notes) = webhook_templates("Jobs", "webhook", &t);
        assert_eq!(w.title, "{{ payload.title }}");
        assert_eq!(w.dedup_key.as_deref(), Some("{{ payload.alert_uid }}"));
        assert_eq!(w.resolved.as_deref(), Some("{{ payload.state == 'ok' }}"));
        assert_eq!(w.link.as_deref(), Some("{{ payload.url }}"));
        assert_eq!(w.message.as_deref(), Some("{{ payload.message }}"));
        assert!(notes.is_empty(), "{notes:?}");

        let (w, notes) = webhook_templates("Datadog", "datadog", &Value::Null);
        assert_eq!(w, WebhookTemplates::starter());
        assert_eq!(notes.len(), 1);
        assert!(
            notes[0].contains("built-in title, grouping, resolve condition"),
            "{}",
            notes[0]
        );
    }
}
