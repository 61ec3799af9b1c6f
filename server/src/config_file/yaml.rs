//! The file's YAML. Written with yaml-rust2's emitter, which quotes a string a YAML 1.1 reader
//! would take for a number, boolean or null ("18:30" is a number there, "on" a boolean), and
//! then quotes bare dates as well (`quote_dates`); read with yaml-rust2's event parser into a JSON value
//! plus the line of every field, then into the typed file with serde_path_to_error, so every
//! refusal (a typo'd field, a wrong type, a user the server does not have) names the field's
//! path and its line.

use klaxon_domain::config::ConfigFile;
use serde_json::{Map, Number, Value};
use std::collections::HashMap;
use std::fmt;
use yaml_rust2::parser::{Event, MarkedEventReceiver, Parser};
use yaml_rust2::scanner::{Marker, TScalarStyle};
use yaml_rust2::{Yaml, YamlEmitter};

/// A problem in a file, where it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileError {
    pub line: Option<usize>,
    pub path: String,
    pub message: String,
}

impl fmt::Display for FileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.line, self.path.is_empty()) {
            (Some(l), false) => write!(f, "line {l}: {}: {}", self.path, self.message),
            (Some(l), true) => write!(f, "line {l}: {}", self.message),
            (None, false) => write!(f, "{}: {}", self.path, self.message),
            (None, true) => write!(f, "{}", self.message),
        }
    }
}

/// The file as written by `klaxon export` (and the web app's "Export as file").
pub fn write(file: &ConfigFile) -> String {
    // serde_yaml's value keeps the fields in the file's order, which the emitter then keeps.
    let value = serde_yaml::to_value(file).expect("the file serializes");
    let mut body = String::new();
    let mut emitter = YamlEmitter::new(&mut body);
    emitter.multiline_strings(true);
    emitter
        .dump(&to_yaml(value))
        .expect("a string takes any YAML");
    let body = quote_dates(body.strip_prefix("---\n").unwrap_or(&body));
    format!("# Klaxon configuration: `klaxon diff -f FILE` shows what `klaxon apply -f FILE` would change.\n{body}\n")
}

/// The emitter leaves a bare date plain (`startDate: 2026-12-07`), which YAML 1.2 reads as a
/// string but a YAML 1.1 reader (PyYAML's default, many CI tools) as a date, which the schema
/// then refuses: quote every plain value that is a date, outside block text.
fn quote_dates(body: &str) -> String {
    let is_date = |v: &str| {
        let b = v.as_bytes();
        b.len() == 10
            && b[4] == b'-'
            && b[7] == b'-'
            && b.iter()
                .enumerate()
                .all(|(i, c)| i == 4 || i == 7 || c.is_ascii_digit())
    };
    let indent = |line: &str| line.len() - line.trim_start().len();
    let mut out = String::with_capacity(body.len() + 64);
    // The indentation of the key whose block text (`|`) the following lines hold.
    let mut block: Option<usize> = None;
    for line in body.split_inclusive('\n') {
        let text = line.trim_end_matches('\n');
        if let Some(at) = block {
            if text.trim().is_empty() || indent(text) > at {
                out.push_str(line);
                continue;
            }
            block = None;
        }
        let value_at = text
            .rfind(": ")
            .map(|i| i + 2)
            .or_else(|| {
                text.trim_start()
                    .starts_with("- ")
                    .then(|| indent(text) + 2)
            })
            .unwrap_or(text.len());
        let value = &text[value_at..];
        if is_date(value) {
            out.push_str(&format!(
                "{}\"{value}\"{}",
                &text[..value_at],
                &line[text.len()..]
            ));
            continue;
        }
        if value.starts_with('|') {
            block = Some(indent(text));
        }
        out.push_str(line);
    }
    out
}

/// serde_yaml's value as yaml-rust2's, for its emitter; order and types kept.
fn to_yaml(value: serde_yaml::Value) -> Yaml {
    use serde_yaml::Value as V;
    match value {
        V::Null => Yaml::Null,
        V::Bool(b) => Yaml::Boolean(b),
        V::Number(n) => match n.as_i64() {
            Some(i) => Yaml::Integer(i),
            None => Yaml::Real(n.to_string()),
        },
        V::String(s) => Yaml::String(s),
        V::Sequence(items) => Yaml::Array(items.into_iter().map(to_yaml).collect()),
        V::Mapping(m) => Yaml::Hash(
            m.into_iter()
                .map(|(k, v)| (to_yaml(k), to_yaml(v)))
                .collect(),
        ),
        V::Tagged(t) => to_yaml(t.value),
    }
}

/// A parsed file and the line of each field's path (`teams[0].escalation.levels[1]`).
pub struct Parsed {
    pub file: ConfigFile,
    pub lines: HashMap<String, usize>,
}

impl Parsed {
    /// The line of `path`, or of the nearest enclosing field that has one.
    pub fn line_of(&self, path: &str) -> Option<usize> {
        line_of(&self.lines, path)
    }
}

fn line_of(lines: &HashMap<String, usize>, path: &str) -> Option<usize> {
    let mut p = path;
    loop {
        if let Some(l) = lines.get(p) {
            return Some(*l);
        }
        let cut = p.rfind(['.', '['])?;
        p = &p[..cut];
    }
}

/// Reads a file; its problems of syntax and shape come back with their line.
pub fn read(text: &str) -> Result<Parsed, FileError> {
    let mut builder = Builder::default();
    let mut parser = Parser::new_from_str(text);
    parser.load(&mut builder, false).map_err(|e| FileError {
        line: Some(e.marker().line()),
        path: String::new(),
        message: format!("not YAML: {}", e.info()),
    })?;
    if let Some(message) = builder.refused {
        return Err(FileError {
            line: builder.refused_at,
            path: String::new(),
            message,
        });
    }
    let value = builder.root.unwrap_or(Value::Null);
    let lines = builder.lines;
    match serde_path_to_error::deserialize::<_, ConfigFile>(value) {
        Ok(file) => Ok(Parsed { file, lines }),
        Err(e) => {
            let path = e.path().to_string();
            let path = if path == "." { String::new() } else { path };
            let message = e.into_inner().to_string();
            // An unknown field is named in the message; its own line is the one to show.
            let field = message
                .strip_prefix("unknown field `")
                .and_then(|rest| rest.split('`').next())
                .map(|f| {
                    if path.is_empty() {
                        f.to_string()
                    } else {
                        format!("{path}.{f}")
                    }
                });
            let line = field
                .as_deref()
                .and_then(|f| lines.get(f).copied())
                .or_else(|| line_of(&lines, &path));
            Err(FileError {
                line,
                path,
                message,
            })
        }
    }
}

/// Values a file may hold, aliases expanded: a few anchors repeated into each other ("billion
/// laughs") are refused, not built.
const MAX_VALUES: usize = 100_000;
/// Bytes of text a file may hold, aliases expanded: one long string aliased many times is
/// refused like many values are, not built.
const MAX_TEXT_BYTES: usize = 8 * 1024 * 1024;

/// How many values `v` holds, and how many bytes of text (keys included).
fn size(v: &Value) -> (usize, usize) {
    let add = |(n, b): (usize, usize), (m, c): (usize, usize)| (n + m, b + c);
    match v {
        Value::Array(a) => a.iter().map(size).fold((1, 0), add),
        Value::Object(o) => o
            .iter()
            .map(|(k, v)| add(size(v), (0, k.len())))
            .fold((1, 0), add),
        Value::String(s) => (1, s.len()),
        other => (1, other.to_string().len()),
    }
}

enum Frame {
    Seq {
        path: String,
        items: Vec<Value>,
        anchor: usize,
    },
    Map {
        path: String,
        map: Map<String, Value>,
        key: Option<String>,
        anchor: usize,
    },
}

#[derive(Default)]
struct Builder {
    stack: Vec<Frame>,
    root: Option<Value>,
    lines: HashMap<String, usize>,
    /// Each anchor's value, how many values it holds and its bytes of text.
    anchors: HashMap<usize, (Value, usize, usize)>,
    values: usize,
    text_bytes: usize,
    refused: Option<String>,
    refused_at: Option<usize>,
}

impl Builder {
    /// The path of the value that comes next, if it is a value and not a map's key.
    fn next_path(&self) -> Option<String> {
        match self.stack.last() {
            None => Some(String::new()),
            Some(Frame::Seq { path, items, .. }) => Some(format!("{path}[{}]", items.len())),
            Some(Frame::Map {
                path, key: Some(k), ..
            }) => Some(if path.is_empty() {
                k.clone()
            } else {
                format!("{path}.{k}")
            }),
            Some(Frame::Map { key: None, .. }) => None,
        }
    }

    fn put(&mut self, value: Value, anchor: usize) {
        if anchor > 0 {
            let (n, bytes) = size(&value);
            self.anchors.insert(anchor, (value.clone(), n, bytes));
        }
        match self.stack.last_mut() {
            None => self.root = Some(value),
            Some(Frame::Seq { items, .. }) => items.push(value),
            Some(Frame::Map { map, key, .. }) => match key.take() {
                Some(k) => {
                    map.insert(k, value);
                }
                None => {
                    let k = match value {
                        Value::String(s) => s,
                        other => other.to_string(),
                    };
                    *key = Some(k);
                }
            },
        }
    }
}

impl MarkedEventReceiver for Builder {
    fn on_event(&mut self, event: Event, mark: Marker) {
        if self.refused.is_some() {
            return;
        }
        let line = mark.line();
        if matches!(
            event,
            Event::Scalar(..) | Event::SequenceStart(..) | Event::MappingStart(..)
        ) {
            self.values += 1;
            if self.values > MAX_VALUES {
                self.refused = Some(format!("more than {MAX_VALUES} values"));
                self.refused_at = Some(line);
                return;
            }
        }
        let path = self.next_path();
        match event {
            Event::Scalar(text, style, anchor, _) => {
                self.text_bytes += text.len();
                if self.text_bytes > MAX_TEXT_BYTES {
                    self.refused = Some(format!("more than {} MiB of text", MAX_TEXT_BYTES >> 20));
                    self.refused_at = Some(line);
                    return;
                }
                let is_key = path.is_none();
                let value = scalar(text, style);
                if is_key {
                    if let (Some(Frame::Map { path: p, .. }), Value::String(k)) =
                        (self.stack.last(), &value)
                    {
                        let full = if p.is_empty() {
                            k.clone()
                        } else {
                            format!("{p}.{k}")
                        };
                        self.lines.insert(full, line);
                    }
                } else if let Some(p) = path {
                    self.lines.entry(p).or_insert(line);
                }
                self.put(value, anchor);
            }
            Event::Alias(id) => match self.anchors.get(&id) {
                Some((_, n, _)) if self.values + n > MAX_VALUES => {
                    self.refused = Some(format!(
                        "more than {MAX_VALUES} values once its aliases are expanded"
                    ));
                    self.refused_at = Some(line);
                }
                Some((_, _, bytes)) if self.text_bytes + bytes > MAX_TEXT_BYTES => {
                    self.refused = Some(format!(
                        "more than {} MiB of text once its aliases are expanded",
                        MAX_TEXT_BYTES >> 20
                    ));
                    self.refused_at = Some(line);
                }
                Some((v, n, bytes)) => {
                    let v = v.clone();
                    self.values += n;
                    self.text_bytes += bytes;
                    self.put(v, 0);
                }
                None => {
                    self.refused = Some("an alias to an anchor that is not defined".into());
                    self.refused_at = Some(line);
                }
            },
            Event::SequenceStart(anchor, _) | Event::MappingStart(anchor, _) => {
                let Some(path) = path else {
                    self.refused = Some("a key must be a plain value".into());
                    self.refused_at = Some(line);
                    return;
                };
                self.lines.entry(path.clone()).or_insert(line);
                if self.stack.len() > 64 {
                    self.refused = Some("nested too deep".into());
                    self.refused_at = Some(line);
                    return;
                }
                self.stack
                    .push(if matches!(event, Event::SequenceStart(..)) {
                        Frame::Seq {
                            path,
                            items: Vec::new(),
                            anchor,
                        }
                    } else {
                        Frame::Map {
                            path,
                            map: Map::new(),
                            key: None,
                            anchor,
                        }
                    });
            }
            Event::SequenceEnd | Event::MappingEnd => {
                let (value, anchor) = match self.stack.pop() {
                    Some(Frame::Seq { items, anchor, .. }) => (Value::Array(items), anchor),
                    Some(Frame::Map { map, anchor, .. }) => (Value::Object(map), anchor),
                    None => return,
                };
                self.put(value, anchor);
            }
            _ => {}
        }
    }
}

/// A scalar as YAML 1.2's core schema reads it: quoted ones are strings; plain ones may be
/// null, a boolean or a number.
fn scalar(text: String, style: TScalarStyle) -> Value {
    if style != TScalarStyle::Plain {
        return Value::String(text);
    }
    match text.as_str() {
        "" | "~" | "null" | "Null" | "NULL" => return Value::Null,
        "true" | "True" | "TRUE" => return Value::Bool(true),
        "false" | "False" | "FALSE" => return Value::Bool(false),
        _ => {}
    }
    if let Ok(i) = text.parse::<i64>() {
        return Value::Number(i.into());
    }
    let numeric = text
        .chars()
        .all(|c| c.is_ascii_digit() || "+-.eE".contains(c))
        && text.chars().any(|c| c.is_ascii_digit());
    if numeric {
        if let Some(n) = text.parse::<f64>().ok().and_then(Number::from_f64) {
            return Value::Number(n);
        }
    }
    Value::String(text)
}

#[cfg(test)]
mod tests;
