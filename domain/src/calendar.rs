//! Date arithmetic of the schedule (calendar dates; when a date's on-call day begins is
//! `oncall_day`'s): dates are `YYYY-MM-DD` strings and months `YYYY-MM`, as
//! on the wire. Pure, so the server functions and the month calendar share it.

use time::{Date, Month};

/// The most dates one call may give out: a year of shifts.
pub const MAX_DATES: usize = 366;

/// A calendar date, `YYYY-MM-DD` on the wire: it can hold only a real date, and reads itself
/// from JSON through that check.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(try_from = "String", into = "String")]
pub struct Day(Date);

impl Day {
    pub fn parse(raw: &str) -> Result<Day, String> {
        parse_date(raw.trim())
            .map(Day)
            .ok_or_else(|| format!("{:?} is not a date YYYY-MM-DD", raw.trim()))
    }
    pub fn date(self) -> Date {
        self.0
    }
}

impl From<Date> for Day {
    fn from(d: Date) -> Day {
        Day(d)
    }
}

impl TryFrom<String> for Day {
    type Error = String;
    fn try_from(s: String) -> Result<Day, String> {
        Day::parse(&s)
    }
}

impl From<Day> for String {
    fn from(d: Day) -> String {
        d.to_string()
    }
}

impl std::fmt::Display for Day {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&format_date(self.0))
    }
}

#[cfg(feature = "openapi")]
impl utoipa::PartialSchema for Day {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        use utoipa::openapi::schema::{KnownFormat, ObjectBuilder, SchemaFormat, Type};
        ObjectBuilder::new()
            .schema_type(Type::String)
            .format(Some(SchemaFormat::KnownFormat(KnownFormat::Date)))
            .description(Some("A calendar date, `YYYY-MM-DD`."))
            .into()
    }
}

#[cfg(feature = "openapi")]
impl utoipa::ToSchema for Day {}

fn first_of(month: &str) -> Option<Date> {
    if month.len() != 7 {
        return None;
    }
    parse_date(&format!("{month}-01"))
}

/// `YYYY-MM` of a date.
pub fn this_month(date: &str) -> String {
    date.get(0..7).unwrap_or_default().to_string()
}

/// First and last date of a month, or `None` when `month` is not `YYYY-MM`.
pub fn month_range(month: &str) -> Option<(String, String)> {
    let first = first_of(month)?;
    let last = next_month_first(first)?.previous_day()?;
    Some((format_date(first), format_date(last)))
}

fn next_month_first(first: Date) -> Option<Date> {
    let (y, m) = match first.month() {
        Month::December => (first.year() + 1, Month::January),
        m => (first.year(), m.next()),
    };
    Date::from_calendar_date(y, m, 1).ok()
}

/// The month `delta` months away (`-1` or `1`); the same month if that is out of range.
pub fn add_months(month: &str, delta: i32) -> String {
    let Some(first) = first_of(month) else {
        return month.to_string();
    };
    let index = first.year() * 12 + (first.month() as i32 - 1) + delta;
    let (y, m) = (index.div_euclid(12), index.rem_euclid(12) + 1);
    format!("{y:04}-{m:02}")
}

/// "November 2026".
pub fn month_title(month: &str) -> String {
    match first_of(month) {
        Some(d) => format!("{} {}", d.month(), d.year()),
        None => month.to_string(),
    }
}

/// "Sun 22 Nov".
pub fn short_day(date: &str) -> String {
    match parse_date(date) {
        Some(d) => {
            let wd = d.weekday().to_string();
            let mon = d.month().to_string();
            format!("{} {} {}", &wd[..3], d.day(), &mon[..3])
        }
        None => date.to_string(),
    }
}

/// "Tuesday 23 December".
pub fn long_day(date: &str) -> String {
    match parse_date(date) {
        Some(d) => format!("{} {} {}", d.weekday(), d.day(), d.month()),
        None => date.to_string(),
    }
}

/// `count` consecutive dates starting at `first`.
pub fn days_from(first: &str, count: usize) -> Vec<String> {
    let mut out = Vec::with_capacity(count);
    let mut d = parse_date(first);
    while let (Some(day), true) = (d, out.len() < count) {
        out.push(format_date(day));
        d = day.next_day();
    }
    out
}

/// Every date from `first` through `last`, as a sentence when that is not a usable range.
pub fn date_span(first: &str, last: &str) -> Result<Vec<Day>, String> {
    let start = parse_date(first).ok_or("Choose the first day.")?;
    let end = parse_date(last).ok_or("The last day is not a date.")?;
    if end < start {
        return Err("The last day must not be before the first.".into());
    }
    let days = (end - start).whole_days() as usize + 1;
    if days > MAX_DATES {
        return Err(format!("Give at most {MAX_DATES} days at once."));
    }
    Ok(std::iter::successors(Some(start), |d| d.next_day())
        .take(days)
        .map(Day)
        .collect())
}

/// The month as weeks from Monday to Sunday; `None` pads the days of other months.
pub fn weeks(month: &str) -> Vec<[Option<String>; 7]> {
    let Some(first) = first_of(month) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut week: [Option<String>; 7] = Default::default();
    let mut col = first.weekday().number_days_from_monday() as usize;
    let mut d = Some(first);
    while let Some(day) = d.filter(|day| day.month() == first.month()) {
        week[col] = Some(format_date(day));
        col += 1;
        if col == 7 {
            out.push(std::mem::take(&mut week));
            col = 0;
        }
        d = day.next_day();
    }
    if col > 0 {
        out.push(week);
    }
    out
}

/// Parses a `YYYY-MM-DD` date (UTC); `None` for anything else, including impossible dates.
pub fn parse_date(s: &str) -> Option<time::Date> {
    let format = time::macros::format_description!("[year]-[month]-[day]");
    if s.len() != 10 {
        return None;
    }
    time::Date::parse(s, &format).ok()
}

/// The UTC calendar date of a Unix time, as `YYYY-MM-DD`.
pub fn utc_date(unix: i64) -> String {
    format_date(
        time::OffsetDateTime::from_unix_timestamp(unix)
            .map(|t| t.date())
            .unwrap_or(time::Date::MIN),
    )
}

/// `YYYY-MM-DD`.
pub fn format_date(d: time::Date) -> String {
    format!("{:04}-{:02}-{:02}", d.year(), d.month() as u8, d.day())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn months() {
        assert_eq!(
            month_range("2026-02"),
            Some(("2026-02-01".into(), "2026-02-28".into()))
        );
        assert_eq!(
            month_range("2024-12"),
            Some(("2024-12-01".into(), "2024-12-31".into()))
        );
        assert_eq!(month_range("2026-13"), None);
        assert_eq!(month_range("2026-1"), None);
        assert_eq!(add_months("2026-01", -1), "2025-12");
        assert_eq!(add_months("2026-12", 1), "2027-01");
        assert_eq!(month_title("2026-11"), "November 2026");
        assert_eq!(short_day("2026-11-22"), "Sun 22 Nov");
        assert_eq!(long_day("2026-12-22"), "Tuesday 22 December");
        assert_eq!(long_day("not a date"), "not a date");
    }

    #[test]
    fn weeks_start_on_monday() {
        // 1 November 2026 is a Sunday.
        let w = weeks("2026-11");
        assert_eq!(w.len(), 6);
        assert_eq!(w[0][6].as_deref(), Some("2026-11-01"));
        assert!(w[0][0].is_none());
        assert_eq!(w[5][0].as_deref(), Some("2026-11-30"));
    }

    #[test]
    fn spans() {
        assert_eq!(
            date_span("2026-12-30", "2027-01-02")
                .unwrap()
                .iter()
                .map(Day::to_string)
                .collect::<Vec<_>>(),
            vec!["2026-12-30", "2026-12-31", "2027-01-01", "2027-01-02"]
        );
        assert_eq!(date_span("2026-11-22", "2026-11-22").unwrap().len(), 1);
        assert!(date_span("2026-11-22", "2026-11-21").is_err());
        assert!(date_span("", "").is_err());
        assert!(date_span("2026-01-01", "2027-01-01").is_ok());
        assert!(date_span("2026-01-01", "2027-01-02").is_err());
    }

    #[test]
    fn days_read_only_real_dates() {
        let d: Day = serde_json::from_str("\"2028-02-29\"").unwrap();
        assert_eq!(serde_json::to_string(&d).unwrap(), "\"2028-02-29\"");
        for bad in ["\"2027-02-29\"", "\"2027-1-01\"", "\"\"", "7"] {
            assert!(serde_json::from_str::<Day>(bad).is_err(), "{bad}");
        }
        assert_eq!(days_from("2026-11-22", 14).len(), 14);
    }
}
