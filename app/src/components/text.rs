//! Small text formatting for values from the API.

pub use crate::sentences::sentence;
use klaxon_domain::Timestamp;

pub use klaxon_domain::text::escape_html;

/// A link taken from stored text (an alert's `runbook_url`) when it is an absolute `http` or
/// `https` URL; anything else (`javascript:`, `data:`, relative paths) is not a link.
pub fn web_link(url: &str) -> Option<&str> {
    let url = url.trim();
    let scheme = url.split_once("://")?.0;
    let host_follows = url.len() > scheme.len() + 3;
    (host_follows && (scheme.eq_ignore_ascii_case("http") || scheme.eq_ignore_ascii_case("https")))
        .then_some(url)
}

/// Stored text (an alert's description, a note) with its web URLs as links: each
/// whitespace-separated word that `web_link` accepts, less trailing punctuation, opens in a new
/// tab; everything else stays text.
#[leptos::component]
pub fn Linked(#[prop(into)] text: String) -> impl leptos::IntoView {
    use leptos::prelude::*;
    pieces(&text)
        .into_iter()
        .map(|(piece, link)| match link {
            true => {
                let href = piece.clone();
                view! { <a href=href rel="noreferrer noopener" target="_blank">{piece}</a> }
                    .into_any()
            }
            false => piece.into_any(),
        })
        .collect_view()
}

/// `text` cut into runs of plain text and links (`true`), in order.
fn pieces(text: &str) -> Vec<(String, bool)> {
    let mut out: Vec<(String, bool)> = Vec::new();
    let mut plain = String::new();
    for word in text.split_inclusive(char::is_whitespace) {
        let bare = word.trim_end();
        let url = bare.trim_end_matches(['.', ',', ';', ':', ')', '!', '?', '"', '\'']);
        if url.starts_with("http") && web_link(url) == Some(url) {
            if !plain.is_empty() {
                out.push((std::mem::take(&mut plain), false));
            }
            out.push((url.to_string(), true));
            plain.push_str(&word[url.len()..]);
        } else {
            plain.push_str(word);
        }
    }
    if !plain.is_empty() {
        out.push((plain, false));
    }
    out
}

/// The zone the viewer reads times in: their own setting, else their browser's (a cookie the
/// shell sets). The signed-in frame provides it; outside it times are UTC.
#[derive(Debug, Clone, Default)]
pub struct ViewerZone(pub Option<String>);

/// `2026-11-22 10:00 Europe/Berlin`: short enough for a phone row, explicit about the zone,
/// in the viewer's zone.
pub fn when(t: Timestamp) -> String {
    let zone = leptos::prelude::use_context::<ViewerZone>().and_then(|z| z.0);
    when_in(t, zone.as_deref())
}

/// `when` in a given zone (`None` or an unknown one: UTC).
pub fn when_in(t: Timestamp, zone: Option<&str>) -> String {
    if let Some(zone) = zone.filter(|z| *z != "UTC") {
        if let Some(stamp) = local_stamp(t.0, zone) {
            return format!("{stamp} {zone}");
        }
    }
    let s = t.to_rfc3339();
    match (s.get(0..10), s.get(11..16)) {
        (Some(date), Some(time)) => format!("{date} {time} UTC"),
        _ => s,
    }
}

/// `2026-11-22 10:00` on `zone`'s wall clock: the server reads its bundled zone database.
#[cfg(not(all(target_arch = "wasm32", feature = "hydrate")))]
fn local_stamp(t: i64, zone: &str) -> Option<String> {
    klaxon_domain::oncall_day::local_stamp(t, zone)
}

/// In the browser, the browser's own zone database (`Intl.DateTimeFormat`), so the wasm does
/// not carry one; each zone's formatter is made once.
#[cfg(all(target_arch = "wasm32", feature = "hydrate"))]
fn local_stamp(t: i64, zone: &str) -> Option<String> {
    use js_sys::{Array, Date, Intl, Object, Reflect};
    use std::collections::HashMap;
    use wasm_bindgen::{JsCast, JsValue};
    thread_local! {
        static FORMATS: std::cell::RefCell<HashMap<String, Option<Intl::DateTimeFormat>>> =
            Default::default();
    }
    let make = || -> Option<Intl::DateTimeFormat> {
        let options = Object::new();
        for (k, v) in [
            ("timeZone", zone),
            ("year", "numeric"),
            ("month", "2-digit"),
            ("day", "2-digit"),
            ("hour", "2-digit"),
            ("minute", "2-digit"),
            ("hourCycle", "h23"),
        ] {
            Reflect::set(&options, &k.into(), &v.into()).ok()?;
        }
        // A zone the browser does not know throws: constructed through Reflect, it is an Err.
        let args = Array::of2(&JsValue::from("en-CA"), &options);
        let intl = Reflect::get(&js_sys::global(), &"Intl".into()).ok()?;
        let constructor: js_sys::Function = Reflect::get(&intl, &"DateTimeFormat".into())
            .ok()?
            .dyn_into()
            .ok()?;
        Reflect::construct(&constructor, &args)
            .ok()?
            .dyn_into()
            .ok()
    };
    let format = FORMATS.with(|f| {
        f.borrow_mut()
            .entry(zone.to_string())
            .or_insert_with(make)
            .clone()
    })?;
    let parts = format.format_to_parts(&Date::new(&JsValue::from_f64(t as f64 * 1000.0)));
    let mut got: HashMap<String, String> = HashMap::new();
    for part in parts.iter() {
        let kind = Reflect::get(&part, &"type".into()).ok()?.as_string()?;
        let value = Reflect::get(&part, &"value".into()).ok()?.as_string()?;
        got.insert(kind, value);
    }
    let get = |k: &str| got.get(k).cloned();
    Some(format!(
        "{}-{}-{} {}:{}",
        get("year")?,
        get("month")?,
        get("day")?,
        get("hour")?,
        get("minute")?
    ))
}

/// A span of time the way people say it on a phone: `45 s`, `12 min`, `3 h 5 min`, `2 days`.
pub fn span(seconds: i64) -> String {
    let s = seconds.max(0);
    match s {
        0..=59 => format!("{s} s"),
        60..=3_599 => format!("{} min", s / 60),
        3_600..=86_399 => match (s / 3_600, s % 3_600 / 60) {
            (h, 0) => format!("{h} h"),
            (h, m) => format!("{h} h {m} min"),
        },
        _ => match s / 86_400 {
            1 => "1 day".to_string(),
            d => format!("{d} days"),
        },
    }
}

/// How long before `now` something happened: `just now`, `12 min ago`.
pub fn ago(now: Timestamp, t: Timestamp) -> String {
    let s = now.0 - t.0;
    if s < 60 {
        "just now".to_string()
    } else {
        format!("{} ago", span(s))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_text_for_hand_written_html() {
        assert_eq!(
            escape_html(r#"X</title><meta http-equiv="refresh" content='0'> & co"#),
            "X&lt;/title&gt;&lt;meta http-equiv=&quot;refresh&quot; content=&#39;0&#39;&gt; &amp; co"
        );
    }

    #[test]
    fn only_web_urls_become_links() {
        assert_eq!(
            web_link(" https://wiki.example/runbook "),
            Some("https://wiki.example/runbook")
        );
        assert_eq!(
            web_link("HTTP://wiki.example/"),
            Some("HTTP://wiki.example/")
        );
        for bad in [
            "javascript:alert(1)",
            "javascript://%0aalert(1)",
            "data:text/html,<script>x</script>",
            "/relative/path",
            "//evil.example/",
            "https://",
            "ftp://files.example/",
        ] {
            assert_eq!(web_link(bad), None, "{bad}");
        }
    }

    #[test]
    fn urls_in_text_become_links_and_nothing_else_does() {
        let p = |t: &str| pieces(t);
        assert_eq!(
            p("See https://grafana.example/d/x?from=now-1h. Then javascript:alert(1) or (http://a/b)"),
            vec![
                ("See ".to_string(), false),
                ("https://grafana.example/d/x?from=now-1h".to_string(), true),
                (". Then javascript:alert(1) or (http://a/b)".to_string(), false),
            ]
        );
        assert_eq!(
            p("db\nhttp://a.example/ down"),
            vec![
                ("db\n".to_string(), false),
                ("http://a.example/".to_string(), true),
                (" down".to_string(), false)
            ]
        );
        assert_eq!(
            p("http://a.example/\nnext"),
            vec![
                ("http://a.example/".to_string(), true),
                ("\nnext".to_string(), false)
            ]
        );
        assert_eq!(p(""), vec![]);
    }

    #[test]
    fn formats_minutes_in_utc() {
        assert_eq!(when(Timestamp(1_700_000_000)), "2023-11-14 22:13 UTC");
        assert_eq!(
            when_in(Timestamp(1_700_000_000), Some("Europe/Berlin")),
            "2023-11-14 23:13 Europe/Berlin"
        );
        assert_eq!(
            when_in(Timestamp(1_700_000_000), Some("Mars/Olympus")),
            "2023-11-14 22:13 UTC"
        );
    }

    #[test]
    fn spans_read_naturally() {
        assert_eq!(span(-5), "0 s");
        assert_eq!(span(59), "59 s");
        assert_eq!(span(12 * 60 + 30), "12 min");
        assert_eq!(span(3_600), "1 h");
        assert_eq!(span(3 * 3_600 + 5 * 60), "3 h 5 min");
        assert_eq!(span(86_400), "1 day");
        assert_eq!(span(3 * 86_400 + 7), "3 days");
        assert_eq!(ago(Timestamp(100), Timestamp(70)), "just now");
        assert_eq!(ago(Timestamp(1_000), Timestamp(280)), "12 min ago");
    }

    #[test]
    fn core_phrases_become_sentences() {
        assert_eq!(
            sentence("current_password: that is not your current password"),
            "That is not your current password."
        );
        assert_eq!(
            sentence("push_topic must be 1 to 64 letters, digits, _ or -"),
            "Push topic must be 1 to 64 letters, digits, _ or -."
        );
        assert_eq!(
            sentence("too many failed sign-ins for this username; try again in 15 minutes"),
            "Too many failed sign-ins for this username; try again in 15 minutes."
        );
        assert_eq!(
            sentence("level 2: no reachable target (bob has no push topic)"),
            "Level 2: no reachable target (bob has no push topic)."
        );
    }
}
