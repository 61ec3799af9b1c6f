//! A person's notification rules: which of their roads a page tries and when, by the page's
//! urgency, and the quiet hours in which a low-urgency page waits.

use crate::text::{ClockTime, ZoneName};
use serde::{Deserialize, Serialize};

/// At most this many steps per urgency.
pub const MAX_STEPS: usize = 20;
/// A step waits at most a day.
pub const MAX_AFTER_MINUTES: u32 = 1440;
/// A delivery retried this long (seconds) brings its person's next step forward, as one that
/// failed for good does.
pub const FAIL_OVER_AFTER: i64 = 120;

/// How hard a page tries: high pages every step at once and never waits; low waits out quiet
/// hours. A team maps each severity to one (`EscalationPolicy::low_urgency`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub enum Urgency {
    High,
    Low,
}

crate::words!(Urgency, "urgency" {
    High => "high",
    Low => "low",
});

/// After `after_minutes` of being paged, notify by `method_id`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Step {
    /// 0 to 1440.
    #[cfg_attr(feature = "openapi", schema(maximum = 1440))]
    pub after_minutes: u32,
    /// One of the person's own contact methods; none (or null) is their push topic.
    #[serde(default)]
    pub method_id: Option<i64>,
}

/// Local times between which low-urgency pages wait; `start` after `end` spans midnight.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct QuietHours {
    pub start: ClockTime,
    pub end: ClockTime,
}

/// `GET`/`PUT /api/users/{id}/notification-rules`: a person's steps per urgency, time zone and
/// quiet hours. No high steps means every verified road at once (the push topic alone, for a
/// person with nothing else); no low steps means the high ones.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct NotificationRules {
    /// At most 20.
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(max_items = 20))]
    pub high: Vec<Step>,
    /// At most 20.
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(max_items = 20))]
    pub low: Vec<Step>,
    /// Where the person is; quiet hours are read on its clock. None is UTC.
    #[serde(default)]
    pub time_zone: Option<ZoneName>,
    #[serde(default)]
    pub quiet_hours: Option<QuietHours>,
}

impl NotificationRules {
    /// Checks counts, delays and quiet hours. Whether each method is the person's own needs the
    /// database and is checked by the server.
    pub fn validate(&self) -> Result<(), String> {
        for (name, steps) in [("high", &self.high), ("low", &self.low)] {
            if steps.len() > MAX_STEPS {
                return Err(format!("{name}: at most {MAX_STEPS} steps"));
            }
            for (i, step) in steps.iter().enumerate() {
                if step.after_minutes > MAX_AFTER_MINUTES {
                    return Err(format!(
                        "{name}: step {}: after_minutes must be 0 to {MAX_AFTER_MINUTES}",
                        i + 1
                    ));
                }
            }
        }
        if let Some(q) = &self.quiet_hours {
            if q.start == q.end {
                return Err("quiet_hours: start and end must differ".into());
            }
        }
        Ok(())
    }

    /// The steps a page of `urgency` takes, in order of delay; empty is the default.
    pub fn steps(&self, urgency: Urgency) -> Vec<Step> {
        let steps = match urgency {
            Urgency::Low if !self.low.is_empty() => &self.low,
            _ => &self.high,
        };
        let mut steps = steps.clone();
        steps.sort_by_key(|s| s.after_minutes);
        steps
    }
}

impl QuietHours {
    /// Whether `minute` (after local midnight) is quiet: from `start` up to, not including, `end`.
    pub fn contains(&self, minute: u32) -> bool {
        let (start, end) = (self.start.minutes(), self.end.minutes());
        if start < end {
            (start..end).contains(&minute)
        } else {
            minute >= start || minute < end
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn quiet(start: &str, end: &str) -> QuietHours {
        QuietHours {
            start: ClockTime::parse(start).unwrap(),
            end: ClockTime::parse(end).unwrap(),
        }
    }

    #[test]
    fn quiet_hours_may_span_midnight() {
        let night = quiet("22:00", "07:00");
        assert!(night.contains(22 * 60));
        assert!(night.contains(3 * 60));
        assert!(!night.contains(7 * 60));
        assert!(!night.contains(12 * 60));
        let lunch = quiet("12:00", "13:30");
        assert!(lunch.contains(12 * 60 + 59));
        assert!(!lunch.contains(13 * 60 + 30));
        assert!(!lunch.contains(11 * 60));
    }

    #[test]
    fn clock_times_and_zone_names_are_checked() {
        for bad in ["24:00", "7:00", "07:60", "07-00", "", "07:00 "] {
            assert!(ClockTime::parse(bad).is_err(), "{bad}");
        }
        assert_eq!(ClockTime::parse("23:59").unwrap().minutes(), 23 * 60 + 59);
        for bad in [
            "",
            "/etc/passwd",
            "Europe/../x",
            "Europe Berlin",
            &"A".repeat(65),
        ] {
            assert!(ZoneName::parse(bad).is_err(), "{bad}");
        }
        assert!(ZoneName::parse("America/Argentina/Buenos_Aires").is_ok());
        assert!(ZoneName::parse("Etc/GMT+5").is_ok());
    }

    #[test]
    fn rules_bound_steps_and_delays_and_low_falls_back_to_high() {
        let step = |after_minutes, method_id| Step {
            after_minutes,
            method_id,
        };
        let mut rules = NotificationRules {
            high: vec![step(5, Some(2)), step(0, None)],
            ..Default::default()
        };
        assert!(rules.validate().is_ok());
        assert_eq!(rules.steps(Urgency::Low), rules.steps(Urgency::High));
        assert_eq!(rules.steps(Urgency::High)[0], step(0, None));
        rules.low = vec![step(1441, None)];
        assert!(rules.validate().unwrap_err().contains("low: step 1"));
        rules.low = vec![step(0, None); MAX_STEPS + 1];
        assert!(rules.validate().unwrap_err().contains("at most 20"));
        rules.low.clear();
        rules.quiet_hours = Some(quiet("07:00", "07:00"));
        assert!(rules.validate().is_err());
    }
}
