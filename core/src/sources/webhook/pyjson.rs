//! JSON written as Python's `json.dumps(value)` writes it, the `json_dumps` filter of Grafana
//! OnCall's templates: `", "` and `": "` between items, every character outside printable ASCII
//! escaped (`ensure_ascii`). OnCall's regex routes search this text, so an imported route's
//! regex (`"severity": "critical"`) finds what it found there.

use serde_json::ser::{Formatter, Serializer};
use std::io::{self, Write};

struct Python;

impl Formatter for Python {
    fn begin_array_value<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        if first {
            Ok(())
        } else {
            w.write_all(b", ")
        }
    }

    fn begin_object_key<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        self.begin_array_value(w, first)
    }

    fn begin_object_value<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        w.write_all(b": ")
    }

    fn write_string_fragment<W: ?Sized + Write>(&mut self, w: &mut W, s: &str) -> io::Result<()> {
        for c in s.chars() {
            if (' '..='~').contains(&c) {
                w.write_all(&[c as u8])?;
            } else {
                let mut units = [0u16; 2];
                for u in c.encode_utf16(&mut units) {
                    write!(w, "\\u{u:04x}")?;
                }
            }
        }
        Ok(())
    }
}

/// `value` as `json.dumps(value)` writes it.
pub fn dumps(value: &serde_json::Value) -> String {
    let mut out = Vec::new();
    let mut ser = Serializer::with_formatter(&mut out, Python);
    serde::Serialize::serialize(value, &mut ser).expect("a JSON value serializes to memory");
    String::from_utf8(out).expect("only ASCII is written")
}

#[cfg(test)]
mod tests {
    use super::dumps;
    use serde_json::json;

    #[test]
    fn it_writes_what_python_writes() {
        // python3 -c 'import json; print(json.dumps({"a": [1, 2.5, None], "b": {"c": "é😀\n\u007f"}}))'
        let v = json!({"a": [1, 2.5, null], "b": {"c": "é😀\n\u{7f}"}});
        assert_eq!(
            dumps(&v),
            r#"{"a": [1, 2.5, null], "b": {"c": "\u00e9\ud83d\ude00\n\u007f"}}"#
        );
        assert_eq!(dumps(&json!([])), "[]");
        assert_eq!(dumps(&json!({})), "{}");
    }
}
