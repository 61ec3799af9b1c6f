//! How a generic webhook's body becomes an alert: Jinja templates (Grafana OnCall's dialect, so
//! its templates carry over) over `payload`, the JSON body as sent. The templates are checked
//! and rendered on the server (`core::sources::webhook`); these are their shapes and bounds.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Longest template, in characters.
pub const MAX_TEMPLATE: usize = 2_000;
/// Most extra labels an integration's templates may set.
pub const MAX_TEMPLATE_LABELS: usize = 20;
/// Longest sample body the "try it" form takes.
pub const MAX_SAMPLE: usize = 64 * 1024;

/// An integration of kind `webhook`'s templates. Each is Jinja over `payload`; an empty or
/// absent optional one takes its default.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "config", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct WebhookTemplates {
    /// The alert's title (its `alertname`), e.g. `{{ payload.title }}`. Required.
    #[cfg_attr(feature = "openapi", schema(min_length = 1, max_length = 2000))]
    pub title: String,
    /// `critical`, `warning` or `info` (`error` and `high` are critical, `low` info); warning
    /// when absent or empty.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(max_length = 2000))]
    pub severity: Option<String>,
    /// The key one alert is known by: bodies with the same key are the same alert, fired again
    /// or resolved. The title when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(max_length = 2000))]
    pub dedup_key: Option<String>,
    /// Renders `true` (or `True`, `1`, `yes`, `ok`, `resolved`) when the body says the alert
    /// resolved, e.g. `{{ payload.state == "ok" }}`. Absent: every body fires.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(max_length = 2000))]
    pub resolved: Option<String>,
    /// Extra labels, by name (at most 20), for matchers and routing; an empty rendering is
    /// left out.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub labels: BTreeMap<String, String>,
    /// Link back to what sent it (the alert's source link): an http(s) URL, else left out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(max_length = 2000))]
    pub link: Option<String>,
    /// Longer text shown with the alert (its `description` annotation).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(max_length = 2000))]
    pub message: Option<String>,
}

impl WebhookTemplates {
    /// What a new generic webhook starts with: the field names most JSON senders use, so a
    /// first body already pages; the owner then fits them to the sender ("try it").
    pub fn starter() -> WebhookTemplates {
        WebhookTemplates {
            title: "{{ payload.title or payload.summary or payload.message or 'Webhook alert' }}"
                .into(),
            severity: Some("{{ payload.severity or payload.priority }}".into()),
            dedup_key: Some("{{ payload.dedup_key or payload.id or payload.title }}".into()),
            resolved: Some(
                "{{ (payload.status or payload.state) | lower in ['resolved', 'ok', 'closed'] }}"
                    .into(),
            ),
            labels: BTreeMap::new(),
            link: Some("{{ payload.url or payload.link }}".into()),
            message: Some("{{ payload.description or payload.details }}".into()),
        }
    }

    /// The labels as the app's form writes them: one `name: template` a line.
    pub fn label_lines(&self) -> String {
        self.labels
            .iter()
            .map(|(n, t)| format!("{n}: {t}"))
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// Each template by the name a person sees, optional ones only when given.
    pub fn fields(&self) -> Vec<(String, &str)> {
        let mut out = vec![("title".to_string(), self.title.as_str())];
        for (name, t) in [
            ("severity", &self.severity),
            ("dedup_key", &self.dedup_key),
            ("resolved", &self.resolved),
            ("link", &self.link),
            ("message", &self.message),
        ] {
            if let Some(t) = t {
                out.push((name.to_string(), t.as_str()));
            }
        }
        for (name, t) in &self.labels {
            out.push((format!("labels.{name}"), t.as_str()));
        }
        out
    }

    /// Checks the bounds (the syntax is checked where the templates are compiled). `Err` names
    /// the field.
    pub fn check_bounds(&self) -> Result<(), String> {
        if self.title.trim().is_empty() {
            return Err("title: a template is required".into());
        }
        if self.labels.len() > MAX_TEMPLATE_LABELS {
            return Err(format!(
                "labels: at most {MAX_TEMPLATE_LABELS} labels, not {}",
                self.labels.len()
            ));
        }
        for name in self.labels.keys() {
            if !label_name(name) {
                return Err(format!(
                    "labels: `{name}` is not a label name (a letter or `_`, then letters, \
                     digits or `_`, at most 100)"
                ));
            }
        }
        for (name, t) in self.fields() {
            if t.chars().count() > MAX_TEMPLATE {
                return Err(format!("{name}: at most {MAX_TEMPLATE} characters"));
            }
        }
        Ok(())
    }
}

/// Labels from the app's form, one `name: template` a line; blank lines are skipped. `Err`
/// names the line.
pub fn parse_label_lines(text: &str) -> Result<BTreeMap<String, String>, String> {
    let mut labels = BTreeMap::new();
    for (n, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let Some((name, template)) = line.split_once(':') else {
            return Err(format!("labels, line {}: write `name: template`", n + 1));
        };
        labels.insert(name.trim().to_string(), template.trim().to_string());
    }
    Ok(labels)
}

/// A Prometheus label name, as matchers name labels.
pub(crate) fn label_name(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
        && s.len() <= 100
}

/// `POST /api/webhook-templates/try`: templates and a sample body to read with them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct TemplateTrial {
    pub templates: WebhookTemplates,
    /// The body a sender would post, as text (at most 64 KB).
    #[cfg_attr(feature = "openapi", schema(max_length = 65536))]
    pub sample: String,
}

/// What a body would become: the alert it fires or resolves.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct TemplatePreview {
    /// `fires` or `resolves`.
    pub action: String,
    /// The key the alert is known by.
    pub dedup_key: String,
    pub title: String,
    pub severity: String,
    /// Every label the alert would carry (`alertname` and `severity` among them).
    pub labels: BTreeMap<String, String>,
    pub link: Option<String>,
    pub message: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn templates() -> WebhookTemplates {
        WebhookTemplates {
            title: "{{ payload.title }}".into(),
            ..Default::default()
        }
    }

    #[test]
    fn label_lines_read_back_what_they_write() {
        let mut t = templates();
        t.labels.insert("env".into(), "{{ payload.env }}".into());
        t.labels
            .insert("url".into(), "https://x/{{ payload.id }}".into());
        assert_eq!(parse_label_lines(&t.label_lines()).unwrap(), t.labels);
        assert_eq!(parse_label_lines("\n  \n").unwrap(), BTreeMap::new());
        assert_eq!(
            parse_label_lines("env: a\nnothing").unwrap_err(),
            "labels, line 2: write `name: template`"
        );
        assert!(WebhookTemplates::starter().check_bounds().is_ok());
    }

    #[test]
    fn a_title_is_required_and_every_bound_names_its_field() {
        assert!(templates().check_bounds().is_ok());
        let blank = WebhookTemplates {
            title: "  ".into(),
            ..templates()
        };
        assert_eq!(
            blank.check_bounds().unwrap_err(),
            "title: a template is required"
        );
        let long = WebhookTemplates {
            message: Some("x".repeat(MAX_TEMPLATE + 1)),
            ..templates()
        };
        assert_eq!(
            long.check_bounds().unwrap_err(),
            "message: at most 2000 characters"
        );
        let mut bad = templates();
        bad.labels.insert("9lives".into(), "x".into());
        assert!(bad
            .check_bounds()
            .unwrap_err()
            .starts_with("labels: `9lives`"));
        let mut many = templates();
        for i in 0..=MAX_TEMPLATE_LABELS {
            many.labels.insert(format!("l{i}"), "x".into());
        }
        assert!(many
            .check_bounds()
            .unwrap_err()
            .starts_with("labels: at most 20"));
    }
}
