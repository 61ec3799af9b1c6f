//! The file's YAML. Written with yaml-rust2's emitter, which quotes a string a YAML 1.1 reader
//! would take for a number, boolean or null ("18:30" is a number there, "on" a boolean; a bare
//! date is left plain, as YAML 1.2 reads it); read with yaml-rust2's event parser into a JSON value
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
    let body = body.strip_prefix("---\n").unwrap_or(&body);
    format!("# Klaxon configuration: `klaxon diff -f FILE` shows what `klaxon apply -f FILE` would change.\n{body}\n")
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
mod tests {
    use super::*;

    const FILE: &str = "apiVersion: klaxon.dev/v1alpha1
kind: KlaxonConfig
teams:
  - name: payments
    handoffTime: \"09:00\"
    members:
      - username: alice
        role: owner
    escalation:
      levels:
        - timeout: 5m
          targets: [{type: oncall}, {type: user, username: alice}]
";

    #[test]
    fn reads_a_file_and_the_line_of_each_field() {
        let p = read(FILE).unwrap();
        assert_eq!(p.file.teams[0].handoff_time.as_deref(), Some("09:00"));
        assert_eq!(p.line_of("teams[0].name"), Some(4));
        assert_eq!(p.line_of("teams[0].members[0].role"), Some(8));
        assert_eq!(
            p.line_of("teams[0].escalation.levels[0].targets[1].username"),
            Some(12)
        );
        // A path with no line of its own takes its parent's.
        assert_eq!(p.line_of("teams[0].members[0].nothing"), Some(7));
    }

    #[test]
    fn an_unknown_field_is_refused_at_its_line() {
        let text = FILE.replace(
            "        role: owner",
            "        role: owner\n        rol: member",
        );
        let e = read(&text).err().unwrap();
        assert_eq!(e.line, Some(9), "{e}");
        assert!(e.message.contains("unknown field `rol`"), "{e}");
        assert!(e.path.starts_with("teams[0].members[0]"), "{e}");
    }

    #[test]
    fn a_wrong_type_and_bad_yaml_are_refused_at_their_line() {
        let e = read(&FILE.replace("role: owner", "role: [owner]"))
            .err()
            .unwrap();
        assert_eq!(
            (e.line, e.path.as_str()),
            (Some(8), "teams[0].members[0].role"),
            "{e}"
        );
        let e = read("apiVersion: x\nkind: [\n").err().unwrap();
        assert!(e.message.starts_with("not YAML"), "{e}");
        assert!(e.line.is_some());
    }

    #[test]
    fn aliases_that_multiply_are_refused() {
        let mut text = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
        for i in 1..8 {
            let p = i - 1;
            let ten = vec![format!("*a{p}"); 10].join(", ");
            text.push_str(&format!("a{i}: &a{i} [{ten}]\n"));
        }
        let e = read(&text).err().unwrap();
        assert!(e.message.contains("more than 100000 values"), "{e}");
        // A modest alias is read.
        let p =
            read("apiVersion: &v klaxon.dev/v1alpha1\nkind: KlaxonConfig\nteams: []\n").unwrap();
        assert!(p.file.teams.is_empty());
    }

    #[test]
    fn one_long_string_aliased_many_times_is_refused_by_size() {
        // 1 MB of text, aliased 3 000 times: few values, 3 GB once expanded.
        let mut text = format!("a: &a \"{}\"\nb: [", "x".repeat(1_000_000));
        text.push_str(&vec!["*a"; 3000].join(", "));
        text.push_str("]\n");
        let e = read(&text).err().unwrap();
        assert!(
            e.message
                .contains("MiB of text once its aliases are expanded"),
            "{e}"
        );
        // Refused at the alias that goes past the bound, as it is read, not once built.
        assert_eq!(e.line, Some(2), "{e}");
    }

    #[test]
    fn what_is_written_reads_back_the_same() {
        let p = read(FILE).unwrap();
        let again = read(&write(&p.file)).unwrap();
        assert_eq!(again.file, p.file);
    }

    #[test]
    fn strings_a_yaml_1_1_reader_would_take_for_numbers_or_booleans_are_quoted() {
        let mut file = read(FILE).unwrap().file;
        file.teams[0].handoff_time = Some("18:30".into());
        file.teams[0].display_name = Some("on".into());
        let text = write(&file);
        assert!(text.contains("handoffTime: \"18:30\""), "{text}");
        assert!(text.contains("displayName: \"on\""), "{text}");
        // The fields keep the file's order: a team starts with its name.
        assert!(text.contains("- name: payments"), "{text}");
        assert_eq!(read(&text).unwrap().file, file);
    }
}
