//! Small charts drawn as inline SVG (no chart library, nothing from another origin). Each
//! carries its text equivalent: the SVG is an image with a one-sentence summary as its name,
//! and the weekly chart's numbers are also a table.

use crate::components::text::span;
use klaxon_domain::incident::{HourVolume, WeeklyStats};
use leptos::prelude::*;

/// Points of a polyline through `values`, scaled into `width`×`height` (top is the maximum).
fn line_points(values: &[i64], width: f64, height: f64) -> String {
    let max = values.iter().copied().max().unwrap_or(0).max(1) as f64;
    let step = if values.len() > 1 {
        width / (values.len() - 1) as f64
    } else {
        0.0
    };
    values
        .iter()
        .enumerate()
        .map(|(i, v)| {
            let x = i as f64 * step;
            let y = height - (*v as f64 / max) * (height - 2.0) - 1.0;
            format!("{x:.1},{y:.1}")
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// `14:00 UTC` for the start of an hour.
fn hour_label(unix: i64) -> String {
    format!("{:02}:00 UTC", unix.rem_euclid(86_400) / 3_600)
}

/// What a volume sparkline shows, in one sentence.
pub fn volume_summary(hours: &[HourVolume]) -> String {
    let total: i64 = hours.iter().map(|h| h.alerts).sum();
    let span_text = match hours.len() {
        1 => "the last hour".to_string(),
        n => format!("the last {n} hours"),
    };
    match hours.iter().max_by_key(|h| (h.alerts, h.hour.0)) {
        Some(peak) if total > 0 => format!(
            "{total} alert{} started in {span_text}; the busiest hour, {}, had {}.",
            if total == 1 { "" } else { "s" },
            hour_label(peak.hour.0),
            peak.alerts
        ),
        _ => format!("No alerts started in {span_text}."),
    }
}

/// Alerts per hour as a line, the newest hour at the right.
#[component]
pub fn Sparkline(hours: Vec<HourVolume>) -> impl IntoView {
    const W: f64 = 120.0;
    const H: f64 = 28.0;
    let values: Vec<i64> = hours.iter().map(|h| h.alerts).collect();
    let line = line_points(&values, W, H);
    let area = format!("0,{H} {line} {W},{H}");
    let summary = volume_summary(&hours);
    let label = summary.clone();
    view! {
        <svg class="sparkline" viewBox=format!("0 0 {W} {H}") width=W height=H role="img" aria-label=label preserveAspectRatio="none">
            <title>{summary}</title>
            <polygon class="area" points=area />
            <polyline class="line" points=line />
        </svg>
    }
}

/// One measure of the weekly chart.
#[derive(Clone, Copy)]
enum Measure {
    Mtta,
    Mttr,
}

impl Measure {
    fn of(self, w: &WeeklyStats) -> Option<i64> {
        match self {
            Measure::Mtta => w.mtta_seconds,
            Measure::Mttr => w.mttr_seconds,
        }
    }
    fn name(self) -> &'static str {
        match self {
            Measure::Mtta => "Mean time to acknowledge",
            Measure::Mttr => "Mean time to resolve",
        }
    }
    fn class(self) -> &'static str {
        match self {
            Measure::Mtta => "bars mtta",
            Measure::Mttr => "bars mttr",
        }
    }
}

/// What one measure's bars show, in one sentence.
fn weekly_summary(weeks: &[WeeklyStats], m: Measure) -> String {
    let name = m.name();
    let with: Vec<(&WeeklyStats, i64)> = weeks
        .iter()
        .filter_map(|w| m.of(w).map(|v| (w, v)))
        .collect();
    let Some((latest, latest_v)) = with.last() else {
        return format!("{name}: no data in the last {} weeks.", weeks.len());
    };
    let (worst, worst_v) = with
        .iter()
        .max_by_key(|(w, v)| (*v, w.week_start.clone()))
        .copied()
        .unwrap_or((latest, *latest_v));
    format!(
        "{name} per week, last {} weeks: {} in the week of {}; the longest was {} in the week of {}.",
        weeks.len(),
        span(*latest_v),
        latest.week_start,
        span(worst_v),
        worst.week_start
    )
}

/// One measure as a bar per week; a week without data has no bar, only its baseline mark.
#[component]
fn WeeklyBars(weeks: Vec<WeeklyStats>, measure: Measure) -> impl IntoView {
    const W: f64 = 300.0;
    const H: f64 = 80.0;
    let max = weeks
        .iter()
        .filter_map(|w| measure.of(w))
        .max()
        .unwrap_or(0)
        .max(1) as f64;
    let slot = W / weeks.len().max(1) as f64;
    let summary = weekly_summary(&weeks, measure);
    let label = summary.clone();
    let top = weeks.iter().filter_map(|w| measure.of(w)).max();
    let bars = weeks
        .iter()
        .enumerate()
        .map(|(i, w)| {
            let x = i as f64 * slot + slot * 0.15;
            let width = slot * 0.7;
            match measure.of(w) {
                Some(v) => {
                    let h = ((v as f64 / max) * (H - 4.0)).max(2.0);
                    view! { <rect x=format!("{x:.1}") y=format!("{:.1}", H - h) width=format!("{width:.1}") height=format!("{h:.1}") rx="2" /> }.into_any()
                }
                None => view! { <rect class="none" x=format!("{x:.1}") y=format!("{:.1}", H - 1.0) width=format!("{width:.1}") height="1" /> }.into_any(),
            }
        })
        .collect_view();
    let first = weeks
        .first()
        .map(|w| w.week_start.clone())
        .unwrap_or_default();
    let last = weeks
        .last()
        .map(|w| w.week_start.clone())
        .unwrap_or_default();
    view! {
        <figure class="chart">
            <figcaption>
                <strong>{measure.name()}</strong>
                <span class="meta">{top.map(|t| format!("longest {}", span(t))).unwrap_or_else(|| "no data yet".into())}</span>
            </figcaption>
            <svg class=measure.class() viewBox=format!("0 0 {W} {H}") role="img" aria-label=label preserveAspectRatio="none">
                <title>{summary}</title>
                {bars}
            </svg>
            <div class="axis meta" aria-hidden="true"><span>{first}</span><span>{last}</span></div>
        </figure>
    }
}

/// MTTA and MTTR per week, with the numbers as a table one tap away.
#[component]
pub fn WeeklyChart(weeks: Vec<WeeklyStats>) -> impl IntoView {
    let cell = |v: Option<i64>| v.map(span).unwrap_or_else(|| "–".into());
    let rows = weeks
        .iter()
        .rev()
        .map(|w| {
            view! {
                <tr>
                    <th scope="row">{w.week_start.clone()}</th>
                    <td>{w.opened}</td>
                    <td>{cell(w.mtta_seconds)}</td>
                    <td>{cell(w.mttr_seconds)}</td>
                </tr>
            }
        })
        .collect_view();
    view! {
        <WeeklyBars weeks=weeks.clone() measure=Measure::Mtta />
        <WeeklyBars weeks=weeks measure=Measure::Mttr />
        <details class="inner">
            <summary>"The numbers"</summary>
            <table class="numbers">
                <caption class="sr-only">"Incidents and response times per week, newest first"</caption>
                <thead>
                    <tr><th scope="col">"Week of"</th><th scope="col">"Opened"</th><th scope="col">"MTTA"</th><th scope="col">"MTTR"</th></tr>
                </thead>
                <tbody>{rows}</tbody>
            </table>
        </details>
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use klaxon_domain::Timestamp;

    #[test]
    fn the_line_spans_the_box_with_the_maximum_at_the_top() {
        assert_eq!(
            line_points(&[0, 5, 10], 100.0, 12.0),
            "0.0,11.0 50.0,6.0 100.0,1.0"
        );
        // All zero: a flat line along the bottom, not a division by zero.
        assert_eq!(line_points(&[0, 0], 10.0, 12.0), "0.0,11.0 10.0,11.0");
    }

    #[test]
    fn summaries_say_the_total_and_the_busiest_hour() {
        let hours = vec![
            HourVolume {
                hour: Timestamp(3_600 * 13),
                alerts: 2,
            },
            HourVolume {
                hour: Timestamp(3_600 * 14),
                alerts: 5,
            },
        ];
        assert_eq!(
            volume_summary(&hours),
            "7 alerts started in the last 2 hours; the busiest hour, 14:00 UTC, had 5."
        );
        let quiet = vec![HourVolume {
            hour: Timestamp(0),
            alerts: 0,
        }];
        assert_eq!(
            volume_summary(&quiet),
            "No alerts started in the last hour."
        );
    }

    #[test]
    fn weekly_summary_names_the_latest_and_longest_weeks() {
        let w = |d: &str, a: Option<i64>| WeeklyStats {
            week_start: d.into(),
            opened: 1,
            mtta_seconds: a,
            mttr_seconds: None,
        };
        let weeks = vec![
            w("2026-11-09", Some(3_600)),
            w("2026-11-16", Some(120)),
            w("2026-11-23", None),
        ];
        assert_eq!(
            weekly_summary(&weeks, Measure::Mtta),
            "Mean time to acknowledge per week, last 3 weeks: 2 min in the week of 2026-11-16; the longest was 1 h in the week of 2026-11-09."
        );
        assert_eq!(
            weekly_summary(&weeks, Measure::Mttr),
            "Mean time to resolve: no data in the last 3 weeks."
        );
    }
}
