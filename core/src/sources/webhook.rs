//! A generic JSON webhook: any sender's body, read by the integration's own Jinja templates
//! (`domain::mapping::WebhookTemplates`) over `payload`, the body as sent. The dialect is
//! Grafana OnCall's (Jinja2 through `minijinja`, Python's methods such as `dict.get` through
//! `minijinja-contrib`'s pycompat, and OnCall's `json_dumps`, `tojson_pretty`, `regex_replace`,
//! `regex_match` and `regex_search`), so OnCall's templates carry over as they are.
//!
//! Templates are sandboxed: the environment has no loader (`include`, `import` and `extends`
//! find nothing, so no file is read), each rendering has a fuel budget (minijinja charges an
//! instruction and the bytes it allocates, so loops and repetitions end), a recursion limit,
//! and output past `MAX_OUTPUT` fails the rendering. Regular expressions are the `regex`
//! crate's, which run in linear time.

use super::{Action, Event, Reading, Source};
use klaxon_domain::alerting::WebhookAlert;
use klaxon_domain::mapping::{TemplatePreview, WebhookTemplates};
use minijinja::{Environment, Value};
use std::collections::BTreeMap;

/// Budget of one template's rendering: about 20 000 instructions, or a megabyte allocated.
const FUEL: u64 = 20_000;
/// Deepest nesting of calls and blocks.
const RECURSION: usize = 20;
/// Most bytes one template may write.
const MAX_OUTPUT: usize = 16 * 1024;
/// A title and a label value are cut to this many characters, a message to `MAX_MESSAGE`.
const MAX_VALUE: usize = 1_024;
const MAX_MESSAGE: usize = 4_000;

pub struct Webhook;

impl Source for Webhook {
    fn kind(&self) -> &'static str {
        "webhook"
    }

    fn label(&self) -> &'static str {
        "webhook"
    }

    fn read(
        &self,
        body: &[u8],
        now: i64,
        templates: Option<&WebhookTemplates>,
    ) -> Result<Reading, String> {
        let templates = templates.ok_or("this webhook integration has no templates yet")?;
        let rendered = Mapper::new(templates)?.render(body)?;
        rendered.event(now).map(Reading::Event)
    }
}

/// Templates compiled, ready to read bodies.
pub struct Mapper {
    env: Environment<'static>,
    names: Vec<String>,
}

impl Mapper {
    /// Compiles every template; `Err` names the first that does not compile or is over its
    /// bounds.
    pub fn new(templates: &WebhookTemplates) -> Result<Mapper, String> {
        templates.check_bounds()?;
        let mut env = Environment::new();
        env.set_fuel(Some(FUEL));
        env.set_recursion_limit(RECURSION);
        // `payload.a.b` with no `a` is empty, not an error: a body missing a field still pages.
        env.set_undefined_behavior(minijinja::UndefinedBehavior::Chainable);
        // Whatever a template's name, its output is text, never HTML- or JSON-escaped.
        env.set_auto_escape_callback(|_| minijinja::AutoEscape::None);
        // Python's methods (`payload.get('x', 'y')`, `.items()`, `.startswith(…)`), which
        // OnCall's templates use.
        env.set_unknown_method_callback(minijinja_contrib::pycompat::unknown_method_callback);
        env.add_filter("json_dumps", json_dumps);
        env.add_filter("tojson_pretty", tojson_pretty);
        env.add_filter("regex_replace", regex_replace);
        env.add_filter("regex_match", regex_match);
        env.add_filter("regex_search", regex_search);
        let mut names = Vec::new();
        for (name, source) in templates.fields() {
            env.add_template_owned(name.clone(), source.to_string())
                .map_err(|e| format!("{name}: {}", why(&e)))?;
            names.push(name);
        }
        Ok(Mapper { env, names })
    }

    /// What `body` becomes. `Err` when it is not JSON or a template fails on it.
    pub fn render(&self, body: &[u8]) -> Result<Rendered, String> {
        let payload: serde_json::Value =
            serde_json::from_slice(body).map_err(|e| format!("not a JSON webhook body: {e}"))?;
        let ctx = minijinja::context! { payload => Value::from(minijinja::value::Serde(&payload)) };
        let mut out: BTreeMap<String, String> = BTreeMap::new();
        for name in &self.names {
            let template = self.env.get_template(name).map_err(|e| why(&e))?;
            let mut written = Bounded(Vec::new());
            template
                .render_captured_to(ctx.clone(), &mut written)
                .map_err(|e| format!("{name}: {}", why(&e)))?;
            let text = String::from_utf8_lossy(&written.0).trim().to_string();
            out.insert(name.clone(), text);
        }
        let title = cut(
            out.get("title").map(String::as_str).unwrap_or(""),
            MAX_VALUE,
        );
        if title.is_empty() {
            return Err("title: the template rendered nothing for this body".into());
        }
        let field = |n: &str| out.get(n).map(String::as_str).filter(|s| !s.is_empty());
        let severity = severity(field("severity").unwrap_or(""));
        let dedup_key = field("dedup_key").unwrap_or(&title).to_string();
        let mut labels: BTreeMap<String, String> = out
            .iter()
            .filter_map(|(n, v)| Some((n.strip_prefix("labels.")?, v)))
            .filter(|(_, v)| !v.is_empty())
            .map(|(n, v)| (n.to_string(), cut(v, MAX_VALUE)))
            .collect();
        labels.insert("alertname".into(), title.clone());
        labels.insert("severity".into(), severity.into());
        Ok(Rendered {
            resolves: field("resolved").is_some_and(truthy),
            dedup_key,
            title,
            severity,
            labels,
            link: field("link")
                .filter(|l| l.starts_with("https://") || l.starts_with("http://"))
                .filter(|l| l.len() <= 2048 && !l.contains(char::is_whitespace))
                .map(str::to_string),
            message: field("message").map(|m| cut(m, MAX_MESSAGE)),
        })
    }
}

/// One body as the templates read it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rendered {
    pub resolves: bool,
    pub dedup_key: String,
    pub title: String,
    pub severity: &'static str,
    pub labels: BTreeMap<String, String>,
    pub link: Option<String>,
    pub message: Option<String>,
}

impl Rendered {
    /// The event it is: the alert its key names fires, or resolves.
    pub fn event(self, now: i64) -> Result<Event, String> {
        if self.resolves {
            return Ok(Event::about(self.dedup_key, Action::Resolve));
        }
        let annotations = self
            .message
            .map(|m| BTreeMap::from([("description".to_string(), m)]))
            .unwrap_or_default();
        let alert = WebhookAlert {
            status: Some("firing".to_string()),
            labels: self.labels,
            annotations,
            starts_at: Some(klaxon_domain::Timestamp(now).to_rfc3339()),
            ends_at: None,
            generator_url: self.link,
            fingerprint: None,
        };
        Event::trigger("webhook", self.dedup_key, alert)
    }

    /// As the "try it" form shows it.
    pub fn preview(self) -> TemplatePreview {
        TemplatePreview {
            action: if self.resolves { "resolves" } else { "fires" }.into(),
            dedup_key: self.dedup_key,
            title: self.title,
            severity: self.severity.into(),
            labels: self.labels,
            link: self.link,
            message: self.message,
        }
    }
}

/// A severity as senders spell it, in Klaxon's three; anything else is a warning, as an absent
/// one is (an alert is never refused for its severity's spelling).
fn severity(s: &str) -> &'static str {
    match s.trim().to_ascii_lowercase().as_str() {
        "critical" | "crit" | "error" | "high" | "fatal" | "emergency" | "alert" | "p1" | "p2"
        | "disaster" => "critical",
        "info" | "information" | "informational" | "low" | "notice" | "ok" | "p4" | "p5"
        | "debug" => "info",
        _ => "warning",
    }
}

/// A resolve condition's rendering that means yes (Python's `True` prints capitalised).
fn truthy(s: &str) -> bool {
    matches!(
        s.trim().to_ascii_lowercase().as_str(),
        "true" | "1" | "yes" | "ok" | "resolved"
    )
}

/// The first `n` characters of `s`.
fn cut(s: &str, n: usize) -> String {
    s.trim().chars().take(n).collect()
}

/// A minijinja error in one line, with where it happened.
fn why(e: &minijinja::Error) -> String {
    let s = match e.kind() {
        minijinja::ErrorKind::OutOfFuel => {
            "the template does too much work for one body (a loop too long?)".to_string()
        }
        // Only `Bounded` refuses a write.
        minijinja::ErrorKind::WriteFailure => {
            format!("the template writes more than {} KB", MAX_OUTPUT / 1024)
        }
        _ => e.detail().map_or_else(|| e.to_string(), str::to_string),
    };
    match e.line() {
        Some(line) => format!("{s} (line {line})"),
        None => s,
    }
}

/// A writer that refuses to grow past `MAX_OUTPUT`.
struct Bounded(Vec<u8>);

impl std::io::Write for Bounded {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.0.len() + buf.len() > MAX_OUTPUT {
            return Err(std::io::ErrorKind::FileTooLarge.into());
        }
        self.0.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

// OnCall's own filters, under OnCall's names.

/// As OnCall's `json_dumps` (Python's `json.dumps`), so what its templates and regex routes
/// look for in the text is there.
fn json_dumps(v: Value) -> Result<String, minijinja::Error> {
    serde_json::to_value(&v)
        .map(|v| pyjson::dumps(&v))
        .map_err(|e| minijinja::Error::new(minijinja::ErrorKind::InvalidOperation, e.to_string()))
}

fn tojson_pretty(v: Value) -> Result<String, minijinja::Error> {
    serde_json::to_string_pretty(&v)
        .map_err(|e| minijinja::Error::new(minijinja::ErrorKind::InvalidOperation, e.to_string()))
}

fn pattern(p: &str) -> Result<regex::Regex, minijinja::Error> {
    regex::RegexBuilder::new(p)
        .size_limit(1 << 20)
        .build()
        .map_err(|e| minijinja::Error::new(minijinja::ErrorKind::InvalidOperation, e.to_string()))
}

fn regex_replace(s: String, p: String, with: String) -> Result<String, minijinja::Error> {
    // Python writes a group as `\1`, the regex crate as `${1}`.
    let with = pattern(r"\\(\d+)")?.replace_all(&with, "$${${1}}");
    Ok(pattern(&p)?.replace_all(&s, with.as_ref()).into_owned())
}

fn regex_match(s: String, p: String) -> Result<bool, minijinja::Error> {
    // Python's re.match: anchored at the start.
    Ok(pattern(&format!("^(?:{p})"))?.is_match(&s))
}

fn regex_search(s: String, p: String) -> Result<bool, minijinja::Error> {
    Ok(pattern(&p)?.is_match(&s))
}

mod pyjson;

#[cfg(test)]
mod tests;
