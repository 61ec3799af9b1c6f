//! Timestamps are stored as Unix seconds and travel as RFC 3339 UTC strings.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use time::format_description::well_known::Rfc3339;
use time::OffsetDateTime;

/// Seconds since the Unix epoch, UTC.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(value_type = String, format = DateTime))]
pub struct Timestamp(pub i64);

impl Timestamp {
    pub fn to_rfc3339(self) -> String {
        OffsetDateTime::from_unix_timestamp(self.0)
            .ok()
            .and_then(|t| t.format(&Rfc3339).ok())
            .unwrap_or_else(|| self.0.to_string())
    }

    /// Parses an RFC 3339 string; `None` for anything else.
    pub fn parse(s: &str) -> Option<Timestamp> {
        OffsetDateTime::parse(s, &Rfc3339)
            .ok()
            .map(|t| Timestamp(t.unix_timestamp()))
    }
}

impl Serialize for Timestamp {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_rfc3339())
    }
}

impl<'de> Deserialize<'de> for Timestamp {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        Timestamp::parse(&s)
            .ok_or_else(|| serde::de::Error::custom("expected an RFC 3339 timestamp"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_rfc3339() {
        let t = Timestamp(1_700_000_000);
        let s = t.to_rfc3339();
        assert_eq!(s, "2023-11-14T22:13:20Z");
        assert_eq!(Timestamp::parse(&s), Some(t));
        assert_eq!(serde_json::to_string(&t).unwrap(), format!("\"{s}\""));
    }

    #[test]
    fn rejects_garbage() {
        assert_eq!(Timestamp::parse("yesterday"), None);
        assert!(serde_json::from_str::<Timestamp>("12").is_err());
    }
}
