//! Live pages: one server-sent event stream per tab (`GET /api/events`), opened by the signed-in
//! frame once the page is interactive; what it heard, as signals pages key their loads on; and
//! the line that says whether a page is live and, when not, how old what it shows is.

use klaxon_domain::live::{EventData, EventKind};
use leptos::prelude::*;

/// The page head's meta tag naming the event a signed-in page was rendered after (`content`):
/// its stream resumes there (`GET /api/events?after=`), so what changed while the page loaded is
/// replayed and the page is not loaded again when its stream opens.
const RESUME_META: &str = "klaxon-events";

/// Where a page's stream resumes (`Core::resume_point`), read by the server before the page's
/// own reads and handed to the render in the request's extensions.
#[derive(Clone, Copy, Debug)]
pub struct ResumePoint(pub i64);

/// The `klaxon-events` meta tag, in the document's head (rendered on the server only).
#[component]
pub fn ResumeMeta() -> impl IntoView {
    #[cfg(feature = "ssr")]
    let point = use_context::<axum::http::request::Parts>()
        .and_then(|p| p.extensions.get::<ResumePoint>().copied());
    #[cfg(not(feature = "ssr"))]
    let point: Option<ResumePoint> = None;
    point.map(|p| view! { <meta name=RESUME_META content=p.0.to_string() /> })
}

/// What the stream heard since the last batch a page saw. `everything` is set when the stream
/// (re)opens without resuming where the page was rendered: what happened while it was closed is
/// unknown, so every page reloads.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Batch {
    pub seq: u64,
    pub everything: bool,
    pub events: Vec<(EventKind, EventData)>,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Stream {
    /// Not opened yet (and always, on the server).
    Starting,
    Open,
    /// Lost at this time (milliseconds since the epoch); the browser or the page retries.
    Lost(f64),
}

/// The tab's stream, shared by every page inside the signed-in frame.
#[derive(Clone, Copy)]
pub struct Live {
    batch: RwSignal<Batch>,
    stream: RwSignal<Stream>,
    /// Ticks once a second after hydration, for the ages shown.
    clock: RwSignal<u64>,
}

impl Live {
    fn inert() -> Self {
        Live {
            batch: RwSignal::new(Batch::default()),
            stream: RwSignal::new(Stream::Starting),
            clock: RwSignal::new(0),
        }
    }
}

/// Opens the tab's stream (in the browser only) and shares it with the pages below.
pub fn provide_live() {
    let live = Live::inert();
    provide_context(live);
    #[cfg(feature = "hydrate")]
    browser::open(live);
}

fn use_live() -> Live {
    use_context::<Live>().unwrap_or_else(Live::inert)
}

/// A page's view of the stream: a counter that moves when an event the page shows arrives (key
/// a `Resource` on `changes()`), and the page's own load record for its `Freshness` line.
#[derive(Clone, Copy)]
pub struct PageLive {
    changes: RwSignal<u64>,
    /// When the page last loaded (ms since the epoch); `None` until it has in the browser.
    loaded_at: RwSignal<Option<f64>>,
    failing: RwSignal<bool>,
    live: Live,
}

impl PageLive {
    pub fn changes(&self) -> u64 {
        self.changes.get()
    }
    /// Records a successful load.
    pub fn loaded(&self) {
        self.loaded_at.set(now_ms());
        self.failing.set(false);
    }
    /// Records a failed reload: the page keeps what it had and says it may be out of date.
    pub fn failed(&self) {
        self.failing.set(true);
    }
}

/// Follows the events `shows` says the page displays.
pub fn use_page_live(
    shows: impl Fn(EventKind, &EventData) -> bool + Send + Sync + 'static,
) -> PageLive {
    let live = use_live();
    let page = PageLive {
        changes: RwSignal::new(0),
        loaded_at: RwSignal::new(None),
        failing: RwSignal::new(false),
        live,
    };
    // Effects run only in the browser: on the server the counter stays 0.
    let seen = StoredValue::new(live.batch.get_untracked().seq);
    Effect::new(move |_| {
        let batch = live.batch.get();
        if batch.seq == seen.get_value() {
            return;
        }
        seen.set_value(batch.seq);
        if batch.everything || batch.events.iter().any(|(k, d)| shows(*k, d)) {
            page.changes.update(|n| *n += 1);
        }
    });
    // "Klaxon keeps trying": while the last reload failed, the page asks again every few
    // seconds, so it recovers when the network does even if no event arrives.
    #[cfg(feature = "hydrate")]
    Effect::new(move |_| {
        if page.failing.get() {
            if let Ok(h) = set_interval_with_handle(
                move || page.changes.update(|n| *n += 1),
                RELOAD_WHILE_FAILING,
            ) {
                on_cleanup(move || h.clear());
            }
        }
    });
    page
}

/// How often a page whose reload failed tries again.
#[cfg(feature = "hydrate")]
const RELOAD_WHILE_FAILING: std::time::Duration = std::time::Duration::from_secs(3);

/// The team page's live view, shared with its sections.
#[derive(Clone, Copy)]
pub struct TeamUpdates(pub PageLive);

/// Moves when the team page's team or schedule changes (0 outside a team page): its sections
/// add it to what their loads are keyed on.
pub fn use_team_changes() -> impl Fn() -> usize + Copy + Send + Sync + 'static {
    let team = use_context::<TeamUpdates>();
    move || team.map_or(0, |t| t.0.changes() as usize)
}

/// "Live", or, once the stream is lost or a reload failed, an announced notice of how old the
/// page is. Empty until the page is interactive (the server cannot know the reader's time zone).
#[component]
pub fn Freshness(page: PageLive) -> impl IntoView {
    let notice = move || {
        page.live.clock.track();
        let loaded = page.loaded_at.get()?;
        let shown = format!(
            "Showing what was loaded at {} ({}).",
            clock_time(loaded),
            age(now_ms()? - loaded)
        );
        Some(match (page.live.stream.get(), page.failing.get()) {
            (Stream::Lost(since), _) => format!(
                "Not live: the connection to Klaxon was lost at {}. {shown} Klaxon keeps trying.",
                clock_time(since)
            ),
            (_, true) => format!(
                "Could not reload, so this may be out of date. {shown} Klaxon keeps trying."
            ),
            _ => String::new(),
        })
    };
    let is_live = move || {
        page.live.stream.get() == Stream::Open
            && !page.failing.get()
            && page.loaded_at.get().is_some()
    };
    view! {
        <div class="freshness">
            <p class="updated" hidden=move || !is_live()>
                <span class="live-dot" aria-hidden="true"></span>
                "Live"
            </p>
            <p class="stale" role="alert" hidden=move || notice().is_none_or(|n| n.is_empty())>
                {move || notice().unwrap_or_default()}
            </p>
        </div>
    }
}

fn age(ms: f64) -> String {
    let seconds = (ms / 1000.0).max(0.0) as i64;
    if seconds < 60 {
        "less than a minute ago".into()
    } else {
        format!("{} ago", crate::components::text::span(seconds))
    }
}

#[cfg(feature = "hydrate")]
fn now_ms() -> Option<f64> {
    Some(js_sys::Date::now())
}

#[cfg(not(feature = "hydrate"))]
fn now_ms() -> Option<f64> {
    None
}

/// HH:MM in the reader's time zone.
#[cfg(feature = "hydrate")]
pub fn clock_time(ms: f64) -> String {
    let d = js_sys::Date::new(&wasm_bindgen::JsValue::from_f64(ms));
    format!("{:02}:{:02}", d.get_hours(), d.get_minutes())
}

#[cfg(not(feature = "hydrate"))]
pub fn clock_time(_ms: f64) -> String {
    String::new()
}

#[cfg(feature = "hydrate")]
mod browser {
    use super::{Batch, Live, Stream, RESUME_META};
    use klaxon_domain::live::{EventData, EventKind};
    use leptos::prelude::*;
    use std::cell::RefCell;
    use std::rc::Rc;
    use std::time::Duration;
    use wasm_bindgen::closure::Closure;
    use wasm_bindgen::JsCast;
    use web_sys::{EventSource, MessageEvent};

    /// Events are handed to pages at most this often, so a storm reloads a page a few times, not
    /// once per alert.
    const FLUSH: Duration = Duration::from_millis(400);
    /// After the server refuses the stream (the browser gives up on a non-200 answer), the page
    /// opens a new one this much later.
    const REOPEN: Duration = Duration::from_secs(5);

    struct Tab {
        live: Live,
        source: Option<EventSource>,
        /// The event the page was rendered after, until the first stream is opened with it.
        resume: Option<i64>,
        /// The open stream resumes from the page's render and has not opened yet: its opening
        /// brings what changed since in its replay, not a reason to reload everything.
        resuming: bool,
        pending: Vec<(EventKind, EventData)>,
        everything: bool,
        flushing: bool,
        handlers: Vec<Closure<dyn FnMut(MessageEvent)>>,
    }

    type Shared = Rc<RefCell<Tab>>;

    pub fn open(live: Live) {
        Effect::new(move |_| {
            if let Ok(h) = set_interval_with_handle(
                move || live.clock.update(|s| *s += 1),
                Duration::from_secs(1),
            ) {
                on_cleanup(move || h.clear());
            }
            let tab: Shared = Rc::new(RefCell::new(Tab {
                live,
                source: None,
                resume: rendered_after(),
                resuming: false,
                pending: Vec::new(),
                everything: false,
                flushing: false,
                handlers: Vec::new(),
            }));
            connect(&tab);
            let keep = StoredValue::new_local(Some(tab));
            on_cleanup(move || {
                if let Some(tab) = keep.try_update_value(|t| t.take()).flatten() {
                    if let Some(s) = tab.borrow_mut().source.take() {
                        s.close();
                    }
                }
            });
        });
    }

    /// The event the page was rendered after, from its head (none on a page without it).
    fn rendered_after() -> Option<i64> {
        document()
            .query_selector(&format!("meta[name={RESUME_META}]"))
            .ok()??
            .get_attribute("content")?
            .parse()
            .ok()
    }

    fn connect(tab: &Shared) {
        let resume = tab.borrow_mut().resume.take();
        let url = match resume {
            Some(after) => format!("/api/events?after={after}"),
            None => "/api/events".to_string(),
        };
        let Ok(source) = EventSource::new(&url) else {
            return lost(tab);
        };
        tab.borrow_mut().resuming = resume.is_some();
        let mut handlers: Vec<Closure<dyn FnMut(MessageEvent)>> = Vec::new();
        for kind in EventKind::ALL {
            let t = tab.clone();
            let kind = *kind;
            let on = Closure::<dyn FnMut(MessageEvent)>::new(move |m: MessageEvent| {
                let data = m.data().as_string().unwrap_or_default();
                if let Ok(d) = serde_json::from_slice::<EventData>(data.as_bytes()) {
                    heard(&t, Some((kind, d)));
                }
            });
            let _ =
                source.add_event_listener_with_callback(kind.as_str(), on.as_ref().unchecked_ref());
            handlers.push(on);
        }
        let t = tab.clone();
        let on_open = Closure::<dyn FnMut(MessageEvent)>::new(move |_| {
            let resumed = std::mem::take(&mut t.borrow_mut().resuming);
            t.borrow().live.stream.set(Stream::Open);
            if !resumed {
                heard(&t, None);
            }
        });
        source.set_onopen(Some(on_open.as_ref().unchecked_ref()));
        handlers.push(on_open);
        let t = tab.clone();
        let on_error = Closure::<dyn FnMut(MessageEvent)>::new(move |_| {
            let closed = t
                .borrow()
                .source
                .as_ref()
                .is_none_or(|s| s.ready_state() == EventSource::CLOSED);
            if closed && std::mem::take(&mut t.borrow_mut().resuming) {
                // Refused where the page was rendered (its events are no longer all kept):
                // open at once without it, which reloads everything.
                if let Some(s) = t.borrow_mut().source.take() {
                    s.close();
                }
                reopen(&t, Duration::ZERO);
            } else if closed {
                lost(&t);
            } else if !matches!(t.borrow().live.stream.get_untracked(), Stream::Lost(_)) {
                // The browser reconnects by itself; the page says it is not live meanwhile.
                t.borrow()
                    .live
                    .stream
                    .set(Stream::Lost(js_sys::Date::now()));
            }
        });
        source.set_onerror(Some(on_error.as_ref().unchecked_ref()));
        handlers.push(on_error);
        let mut t = tab.borrow_mut();
        t.source = Some(source);
        t.handlers = handlers;
    }

    /// The stream is closed for good: say so and open another later.
    fn lost(tab: &Shared) {
        {
            let t = tab.borrow();
            if !matches!(t.live.stream.get_untracked(), Stream::Lost(_)) {
                t.live.stream.set(Stream::Lost(js_sys::Date::now()));
            }
        }
        if let Some(s) = tab.borrow_mut().source.take() {
            s.close();
        }
        reopen(tab, REOPEN);
    }

    /// Opens a new stream `after` this long; never from inside a handler of the old one, which
    /// opening replaces.
    fn reopen(tab: &Shared, after: Duration) {
        let weak = Rc::downgrade(tab);
        set_timeout(
            move || {
                if let Some(tab) = weak.upgrade() {
                    connect(&tab);
                }
            },
            after,
        );
    }

    /// Queues what was heard (`None`: the stream opened, so everything) and flushes soon.
    fn heard(tab: &Shared, event: Option<(EventKind, EventData)>) {
        let mut t = tab.borrow_mut();
        match event {
            Some(e) => t.pending.push(e),
            None => t.everything = true,
        }
        if t.flushing {
            return;
        }
        t.flushing = true;
        let weak = Rc::downgrade(tab);
        set_timeout(
            move || {
                let Some(tab) = weak.upgrade() else { return };
                let mut t = tab.borrow_mut();
                t.flushing = false;
                let events = std::mem::take(&mut t.pending);
                let everything = std::mem::take(&mut t.everything);
                let live = t.live;
                drop(t);
                live.batch.update(|b| {
                    *b = Batch {
                        seq: b.seq + 1,
                        everything,
                        events,
                    }
                });
            },
            FLUSH,
        );
    }
}
