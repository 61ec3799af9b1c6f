//! Durations on the wire: `90s`, `15m`, `1h30m`, `7d`; responses use the shortest exact form.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;
use std::str::FromStr;

/// A whole number of seconds, parsed from and printed as unit strings. The document's pattern is
/// the parser's grammar: units largest first, each at most once.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(value_type = String, example = "1h30m", pattern = "^([0-9]+d([0-9]+h)?([0-9]+m)?([0-9]+s)?|[0-9]+h([0-9]+m)?([0-9]+s)?|[0-9]+m([0-9]+s)?|[0-9]+s)$"))]
pub struct Duration(pub i64);

const UNITS: [(char, i64); 4] = [('d', 86_400), ('h', 3_600), ('m', 60), ('s', 1)];
/// Larger than any bound we accept, small enough that arithmetic on it cannot overflow.
const MAX_SECONDS: i64 = 100 * 365 * 86_400;

impl Duration {
    pub const fn seconds(s: i64) -> Self {
        Duration(s)
    }
    pub const fn minutes(m: i64) -> Self {
        Duration(m * 60)
    }
    pub const fn hours(h: i64) -> Self {
        Duration(h * 3_600)
    }
    pub const fn days(d: i64) -> Self {
        Duration(d * 86_400)
    }
    pub fn as_secs(self) -> i64 {
        self.0
    }
}

impl FromStr for Duration {
    type Err = String;

    /// Units must appear largest first and at most once (`1h30m`, not `30m1h`).
    fn from_str(s: &str) -> Result<Self, String> {
        let bad = || format!("\"{s}\" is not a duration like 90s, 15m, 1h30m or 7d");
        if s.is_empty() || s.len() > 32 {
            return Err(bad());
        }
        let mut total: i64 = 0;
        let mut number: Option<i64> = None;
        let mut last_unit = usize::MAX;
        for c in s.chars() {
            if let Some(d) = c.to_digit(10) {
                let n = number
                    .unwrap_or(0)
                    .checked_mul(10)
                    .and_then(|n| n.checked_add(d as i64));
                number = Some(n.filter(|n| *n <= MAX_SECONDS).ok_or_else(bad)?);
                continue;
            }
            let idx = UNITS.iter().position(|(u, _)| *u == c).ok_or_else(bad)?;
            if last_unit != usize::MAX && idx <= last_unit {
                return Err(bad());
            }
            last_unit = idx;
            let n = number.take().ok_or_else(bad)?;
            total = n
                .checked_mul(UNITS[idx].1)
                .and_then(|v| total.checked_add(v))
                .filter(|t| *t <= MAX_SECONDS)
                .ok_or_else(bad)?;
        }
        if number.is_some() || last_unit == usize::MAX {
            return Err(bad());
        }
        Ok(Duration(total))
    }
}

impl fmt::Display for Duration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0 <= 0 {
            return f.write_str("0s");
        }
        let mut rest = self.0;
        for (unit, size) in UNITS {
            if rest >= size {
                write!(f, "{}{}", rest / size, unit)?;
                rest %= size;
            }
        }
        Ok(())
    }
}

impl Serialize for Duration {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Duration {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_prints_shortest_form() {
        for (text, secs, printed) in [
            ("90s", 90, "1m30s"),
            ("15m", 900, "15m"),
            ("1h30m", 5400, "1h30m"),
            ("7d", 604_800, "7d"),
            ("1d2h3m4s", 93_784, "1d2h3m4s"),
            ("36h", 129_600, "1d12h"),
        ] {
            let d: Duration = text.parse().unwrap();
            assert_eq!(d.as_secs(), secs, "{text}");
            assert_eq!(d.to_string(), printed);
        }
    }

    #[test]
    fn rejects_malformed() {
        for bad in [
            "",
            "5",
            "m",
            "1x",
            "30m1h",
            "1h1h",
            "-5m",
            "1.5h",
            " 5m",
            "99999999999999999999d",
            "1000000d",
        ] {
            assert!(bad.parse::<Duration>().is_err(), "{bad:?} should fail");
        }
    }
}
