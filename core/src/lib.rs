//! Klaxon's service layer: the database, every operation with its authorization, and the
//! loops' tick functions. No HTTP server here (the outbound client and the request headers
//! `credentials` reads are its only HTTP types): the REST API and the UI's server functions both call
//! these operations and only translate.

pub mod accounts;
pub mod actor;
pub(crate) mod announcements;
pub mod authz;
pub mod callbacks;
pub mod changes;
pub mod channels;
pub mod chat;
pub mod client;
pub mod clock;
pub mod config;
pub mod credentials;
pub mod db;
pub mod deadman;
pub mod error;
pub mod events;
pub mod exports;
pub mod health;
pub mod incidents;
pub mod intake;
pub mod integrations;
pub mod key_rate;
pub mod lanes;
pub mod leases;
pub mod maintenance;
pub mod metrics;
pub(crate) mod oncall;
pub mod outbound;
pub mod outbox;
pub mod paging;
pub mod reports;
pub mod roads;
pub mod routing_rules;
pub mod schedule;
pub mod secrets;
pub mod settings;
pub mod silences;
pub mod sources;
pub mod sso;
pub mod sweeper;
pub mod teams;
pub mod throttle;
pub mod timeline;

use std::sync::Arc;

pub use actor::{Actor, Via};
pub use clock::{Clock, ManualClock, SystemClock};
pub use db::{Backend, Db};
pub use error::{field, Error, Result};

/// Start-time configuration the operations need (the rest of the environment is the server's).
#[derive(Debug, Clone)]
pub struct Config {
    /// Public base URL without a trailing slash; links in pages and the cookie's Secure flag follow it.
    pub public_url: String,
    pub password_login: bool,
    /// `GET /metrics` is served (`KLAXON_METRICS`).
    pub metrics: bool,
    /// `KLAXON_OIDC_*`; `None` leaves single sign-on off.
    pub oidc: Option<sso::OidcConfig>,
    /// The settings of the roads that need some (`roads::RoadSettings`).
    pub roads: roads::RoadSettings,
    /// Pushes a topic gets in a minute before its pages are bundled; 0 never bundles
    /// (`KLAXON_PAGE_BUNDLE_AFTER`).
    pub page_bundle_after: i64,
    /// How long a notifier or announcer pass waits for its destinations' sends before leaving
    /// the slow ones to finish alone (`lanes::WAIT_FOR_LANES`). Tests of delivery rules wait
    /// for every send, so a pass's report and the rows after it are the whole story.
    pub lane_wait: std::time::Duration,
    /// Values copied into the settings table at first start only.
    pub setting_seeds: Vec<(&'static str, String)>,
    /// The dead man's switch `KLAXON_DEADMAN_*` asks for: seeded once per install into the
    /// teams that have none.
    pub deadman_seed: Option<klaxon_domain::deadman::SwitchSpec>,
    /// Proxies whose `X-Forwarded-For` is believed (`KLAXON_TRUSTED_PROXIES`).
    pub trusted_proxies: client::TrustedProxies,
    /// Internal networks the URLs team owners give (channels, Alertmanager) may reach
    /// (`KLAXON_OUTBOUND_ALLOW`).
    pub outbound_allow: outbound::OutboundAllow,
    /// Internal networks a person's own roads (Web Push, personal webhooks) may reach
    /// (`KLAXON_OUTBOUND_ALLOW_PERSONAL`; none by default).
    pub personal_outbound_allow: outbound::OutboundAllow,
    /// `POST /api/alertmanager/webhook` without a key is served (`KLAXON_LEGACY_WEBHOOK`).
    pub legacy_webhook: bool,
    /// Requests an integration key may send a minute, 0 for no limit (`KLAXON_INTAKE_RATE`).
    pub intake_per_minute: u32,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            public_url: "http://127.0.0.1:8080".into(),
            password_login: true,
            metrics: true,
            oidc: None,
            roads: roads::RoadSettings::default(),
            page_bundle_after: klaxon_domain::paging::BUNDLE_AFTER,
            lane_wait: lanes::WAIT_FOR_LANES,
            setting_seeds: Vec::new(),
            deadman_seed: None,
            trusted_proxies: client::TrustedProxies::default(),
            outbound_allow: outbound::OutboundAllow::default(),
            personal_outbound_allow: outbound::OutboundAllow::default(),
            legacy_webhook: false,
            intake_per_minute: key_rate::PER_MINUTE,
        }
    }
}

/// The service: cheap to clone, shared by the HTTP handlers, the UI and the loops.
#[derive(Clone)]
pub struct Core {
    pub db: Db,
    pub clock: Arc<dyn Clock>,
    pub config: Arc<Config>,
    /// Every road a message can take, set up once (`roads::Roads`).
    pub roads: Arc<roads::Roads>,
    /// The identity provider, when single sign-on is configured.
    pub sso: Option<Arc<sso::Sso>>,
    /// Wakes this replica's notifier when a page is queued, so it leaves at once.
    pub wake: Arc<tokio::sync::Notify>,
    /// Set by `wake_notifier`: the next pass does the due work too.
    due_wanted: Arc<std::sync::atomic::AtomicBool>,
    /// A provider's report came before its page was recorded as sent (`callbacks::status`).
    pub(crate) phone_reports_waiting: Arc<std::sync::atomic::AtomicBool>,
    /// Dead man's switch matchers, parsed once.
    pub(crate) matchers: Arc<deadman::MatcherCache>,
    /// This replica's name in leases and page claims: unique per process.
    pub holder: Arc<str>,
    pub metrics: Arc<metrics::Metrics>,
    pub(crate) watch: Arc<health::Watch>,
    /// Live updates for this replica's browsers.
    pub(crate) events: Arc<events::Feed>,
    /// Requests to URLs team owners gave (`outbound`'s address policy applies).
    pub(crate) outbound: outbound::Outbound,
    /// Requests to a person's own roads' URLs (the policy with its own allowed networks).
    pub(crate) personal_outbound: outbound::Outbound,
    /// The install's VAPID key pair, for Web Push.
    pub vapid: Arc<roads::webpush::Vapid>,
    /// Password hashing, bounded (`secrets::Hasher`).
    pub(crate) hasher: Arc<secrets::Hasher>,
    /// The page topics and team channels with sends in flight on this replica (`lanes`).
    pub(crate) page_lanes: Arc<lanes::Lanes<String>>,
    pub(crate) channel_lanes: Arc<lanes::Lanes<i64>>,
    /// The integrations whose times this replica has stamped this second (`intake`).
    pub(crate) stamps: Arc<intake::Stamps>,
    /// Each integration key's requests this minute (`intake::rate`).
    pub(crate) key_rate: Arc<key_rate::KeyRate>,
    /// Turns to read reports (`reports::Turns`).
    pub(crate) record_reads: Arc<reports::Turns>,
}

impl Core {
    /// Migrates the database, seeds settings on first start, and returns the service.
    pub async fn start(db: Db, clock: Arc<dyn Clock>, config: Config) -> Result<Core> {
        db.migrate().await?;
        let roads = Arc::new(roads::Roads::new(&config).map_err(Error::Invalid)?);
        let sso = match &config.oidc {
            Some(oidc) => Some(Arc::new(
                sso::Sso::new(oidc.clone(), &config.public_url).map_err(Error::Invalid)?,
            )),
            None => None,
        };
        let outbound = outbound::Outbound::for_users(config.outbound_allow.clone());
        let personal_outbound =
            outbound::Outbound::for_personal_roads(config.personal_outbound_allow.clone());
        let vapid = Arc::new(roads::webpush::Vapid::load_or_make(&db, clock.now()).await?);
        let key_rate = Arc::new(key_rate::KeyRate::new(
            config.intake_per_minute,
            clock.clone(),
        ));
        let core = Core {
            key_rate,
            vapid,
            sso,
            db,
            clock,
            config: Arc::new(config),
            roads,
            wake: Arc::new(tokio::sync::Notify::new()),
            due_wanted: Arc::default(),
            phone_reports_waiting: Arc::default(),
            matchers: Arc::default(),
            holder: format!(
                "{}-{}",
                std::process::id(),
                secrets::new_token().get(..12).unwrap_or_default()
            )
            .into(),
            metrics: Arc::default(),
            watch: Arc::default(),
            events: Arc::default(),
            hasher: Arc::new(secrets::Hasher::for_this_machine()),
            outbound,
            personal_outbound,
            page_lanes: lanes::Lanes::new(),
            channel_lanes: lanes::Lanes::new(),
            stamps: Arc::default(),
            record_reads: Arc::new(reports::Turns::new(
                reports::READS_AT_ONCE,
                reports::Pace::REPORTS,
            )),
        };
        core.seed_settings().await?;
        core.seed_switches().await?;
        Ok(core)
    }

    /// Waits until every page and channel message this replica has started sending is sent or
    /// failed and recorded (a pass leaves slow sends to finish on their own: `lanes`).
    pub async fn deliveries_settled(&self) {
        self.page_lanes.settled().await;
        self.channel_lanes.settled().await;
    }

    /// This service with the database's paging lane (`Db::paging_lane`), for the notifier.
    pub fn paging_lane(&self) -> Core {
        Core {
            db: self.db.paging_lane(),
            ..self.clone()
        }
    }

    /// Tells this replica's notifier that pages are waiting or that something may have come
    /// due (a snooze ended, a ladder level, a reminder): its next pass does both halves.
    pub fn wake_notifier(&self) {
        self.due_wanted
            .store(true, std::sync::atomic::Ordering::Release);
        self.wake.notify_one();
    }

    /// Tells this replica's notifier that pages were queued and nothing else came due: the
    /// pass it wakes may only deliver (`Core::notify_pass`), so a storm's pages do not each cost
    /// a pass of the due work's reads.
    pub fn wake_delivery(&self) {
        self.wake.notify_one();
    }

    /// Whether a lane of this replica's notifier is still sending (`lanes`): its destination's
    /// later pages wait for it to close, which wakes the notifier.
    pub fn pages_sending(&self) -> bool {
        self.page_lanes.room() < lanes::MAX_LANES
    }

    /// Whether a wake since the last call asked for the due work (`wake_notifier`).
    pub fn take_due_wanted(&self) -> bool {
        self.due_wanted
            .swap(false, std::sync::atomic::Ordering::AcqRel)
    }

    pub fn now(&self) -> i64 {
        self.clock.now()
    }

    /// True when the public URL is https, so cookies must be Secure.
    pub fn secure_cookies(&self) -> bool {
        self.config.public_url.starts_with("https://")
    }
}
