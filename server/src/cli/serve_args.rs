//! `klaxon serve`'s flags (each with its `KLAXON_*` variable) and how they become a `Config`,
//! every value checked before the server starts, so a mistake stops it with the setting's name.

use super::DbArgs;
use clap::Args;
use klaxon_core::client::TrustedProxies;
use klaxon_core::outbound::OutboundAllow;
use klaxon_core::roads::email::SmtpConfig;
use klaxon_core::roads::matrix::{MatrixAuth, MatrixConfig};
use klaxon_core::roads::phone::gateway::GatewayConfig;
use klaxon_core::roads::phone::twilio::TwilioConfig;
use klaxon_core::roads::RoadSettings;
use klaxon_core::sso::OidcConfig;
use klaxon_core::Config;
use klaxon_domain::alerting::Severity;
use klaxon_domain::deadman::{matcher::Matcher, SwitchSpec};
use klaxon_domain::settings::{self, validate_seed};
use std::net::SocketAddr;

#[derive(Args)]
pub(super) struct ServeArgs {
    #[command(flatten)]
    pub(super) db: DbArgs,
    /// Listen address.
    #[arg(long, env = "KLAXON_ADDR", default_value = "127.0.0.1:8080")]
    pub(super) addr: SocketAddr,
    /// Public base URL: links in pages, and the session cookie is Secure when it is https.
    /// Default: http://{addr}.
    #[arg(long, env = "KLAXON_PUBLIC_URL")]
    pub(super) public_url: Option<String>,
    /// `false` turns password sign-in off (refused unless single sign-on is configured).
    #[arg(long, env = "KLAXON_PASSWORD_LOGIN", default_value_t = true, action = clap::ArgAction::Set)]
    pub(super) password_login: bool,
    /// `false` turns `GET /metrics` off (it then answers 404).
    #[arg(long, env = "KLAXON_METRICS", default_value_t = true, action = clap::ArgAction::Set)]
    pub(super) metrics: bool,
    #[command(flatten)]
    pub(super) oidc: OidcArgs,
    /// Seed for the `signup_mode` setting (first start only): invite_only or open.
    #[arg(long, env = "KLAXON_SIGNUP_MODE")]
    pub(super) signup_mode: Option<String>,
    /// Seed for the stale window (first start only), e.g. 6h.
    #[arg(long, env = "KLAXON_STALE_AFTER")]
    pub(super) stale_after: Option<String>,
    /// Seed for the archive window (first start only), e.g. 7d.
    #[arg(long, env = "KLAXON_ARCHIVE_AFTER")]
    pub(super) archive_after: Option<String>,
    /// Seed for the reminder interval (first start only), e.g. 30m.
    #[arg(long, env = "KLAXON_NOTIFY_REPEAT_INTERVAL")]
    pub(super) notify_repeat_interval: Option<String>,
    /// Name of the dead man's switch seeded once into every team that has none (default
    /// Watchdog). Setting any KLAXON_DEADMAN_* variable turns the seeding on.
    #[arg(long, env = "KLAXON_DEADMAN_NAME")]
    pub(super) deadman_name: Option<String>,
    /// Matcher of the seeded switch (default {alertname="Watchdog"}).
    #[arg(long, env = "KLAXON_DEADMAN_MATCHER")]
    pub(super) deadman_matcher: Option<String>,
    /// Silence after which the seeded switch is dead (default 10m).
    #[arg(long, env = "KLAXON_DEADMAN_TIMEOUT")]
    pub(super) deadman_timeout: Option<String>,
    /// Severity of the incidents the seeded switch opens (default critical).
    #[arg(long, env = "KLAXON_DEADMAN_SEVERITY")]
    pub(super) deadman_severity: Option<String>,
    /// ntfy server URL, e.g. https://ntfy.sh.
    #[arg(long, env = "KLAXON_NTFY_URL")]
    pub(super) ntfy_url: Option<String>,
    /// ntfy access token (tk_…).
    #[arg(long, env = "KLAXON_NTFY_TOKEN", hide_env_values = true)]
    pub(super) ntfy_token: Option<String>,
    /// Twilio REST API base URL for texts and calls: https://api.twilio.com, or another service
    /// that serves its 2010-04-01 paths (SignalWire: https://SPACE.signalwire.com/api/laml).
    #[arg(
        long,
        env = "KLAXON_TWILIO_URL",
        default_value = "https://api.twilio.com"
    )]
    pub(super) twilio_url: String,
    /// The account SID (AC…); with the auth token and a number, texts and calls go by Twilio.
    #[arg(long, env = "KLAXON_TWILIO_ACCOUNT_SID")]
    pub(super) twilio_account_sid: Option<String>,
    /// The auth token: the API's password, and the key of the signatures on Twilio's callbacks.
    #[arg(long, env = "KLAXON_TWILIO_AUTH_TOKEN", hide_env_values = true)]
    pub(super) twilio_auth_token: Option<String>,
    /// The number texts and calls come from, with its country code (+15005550006).
    #[arg(long, env = "KLAXON_TWILIO_FROM")]
    pub(super) twilio_from: Option<String>,
    /// SMS Gateway for Android's API base: https://api.sms-gate.app/3rdparty/v1, a private
    /// server's, or the phone's own (http://192.168.1.10:8080).
    #[arg(long, env = "KLAXON_SMS_GATEWAY_URL")]
    pub(super) sms_gateway_url: Option<String>,
    /// The gateway's user name and password (the app's Home tab).
    #[arg(long, env = "KLAXON_SMS_GATEWAY_USERNAME")]
    pub(super) sms_gateway_username: Option<String>,
    #[arg(long, env = "KLAXON_SMS_GATEWAY_PASSWORD", hide_env_values = true)]
    pub(super) sms_gateway_password: Option<String>,
    /// The key the app signs its webhooks with (Settings → Webhooks → Signing Key).
    #[arg(long, env = "KLAXON_SMS_GATEWAY_SIGNING_KEY", hide_env_values = true)]
    pub(super) sms_gateway_signing_key: Option<String>,
    #[command(flatten)]
    pub(super) chat: super::chat_args::ChatArgs,
    /// The default phone provider when several are set: twilio or sms-gateway.
    #[arg(long, env = "KLAXON_PHONE_PROVIDER")]
    pub(super) phone_provider: Option<String>,
    /// Texts and calls the whole install sends in an hour at most; beyond it a page fails and
    /// its person's next road goes.
    #[arg(long, env = "KLAXON_PHONE_HOURLY_LIMIT", default_value_t = 100)]
    pub(super) phone_hourly_limit: i64,
    /// Mail server for email contact methods: smtp://[user:password@]host[:port] (STARTTLS, port
    /// 587) or smtps://… (TLS, port 465). Without it no mail is sent.
    #[arg(long, env = "KLAXON_SMTP_URL", hide_env_values = true)]
    pub(super) smtp_url: Option<String>,
    /// The sender of Klaxon's mail, e.g. "Klaxon <klaxon@example.org>"; needed with KLAXON_SMTP_URL.
    #[arg(long, env = "KLAXON_SMTP_FROM")]
    pub(super) smtp_from: Option<String>,
    /// A PEM file of certificates to trust for the mail server besides the public roots.
    #[arg(long, env = "KLAXON_SMTP_CA")]
    pub(super) smtp_ca: Option<std::path::PathBuf>,
    /// Matrix homeserver of the bot that posts to team channels' rooms, e.g.
    /// https://matrix.example.org. Without it no Matrix room can be a channel.
    #[arg(long, env = "KLAXON_MATRIX_HOMESERVER")]
    pub(super) matrix_homeserver: Option<String>,
    /// The bot's access token (or sign it in with KLAXON_MATRIX_USER and KLAXON_MATRIX_PASSWORD).
    #[arg(long, env = "KLAXON_MATRIX_TOKEN", hide_env_values = true)]
    pub(super) matrix_token: Option<String>,
    /// The bot's user name, signed in with KLAXON_MATRIX_PASSWORD when no token is given.
    #[arg(long, env = "KLAXON_MATRIX_USER")]
    pub(super) matrix_user: Option<String>,
    #[arg(long, env = "KLAXON_MATRIX_PASSWORD", hide_env_values = true)]
    pub(super) matrix_password: Option<String>,
    /// Pushes a topic gets in any minute before the rest of its pages go as one summary
    /// push; 0 sends every page on its own.
    #[arg(long, env = "KLAXON_PAGE_BUNDLE_AFTER", default_value_t = klaxon_domain::paging::BUNDLE_AFTER,
        value_parser = clap::value_parser!(i64).range(0..=1000))]
    pub(super) page_bundle_after: i64,
    /// Reverse proxies whose X-Forwarded-For is believed: comma-separated CIDRs or addresses,
    /// e.g. 10.0.0.0/8. Default none: the connection's address is the client's.
    #[arg(long, env = "KLAXON_TRUSTED_PROXIES", default_value = "")]
    pub(super) trusted_proxies: String,
    /// Internal networks that URLs users give (an integration's Alertmanager) may reach:
    /// comma-separated CIDRs or addresses, e.g. 10.0.0.0/8. Default none: loopback and private
    /// addresses are refused; link-local and metadata addresses always are.
    #[arg(long, env = "KLAXON_OUTBOUND_ALLOW", default_value = "")]
    pub(super) outbound_allow: String,
    /// Internal networks a person's own roads (Web Push subscriptions, personal webhooks) may
    /// reach, in the same form. Default none: anyone signed in can add such a URL, so they stay
    /// on public addresses unless the administrator says otherwise.
    #[arg(long, env = "KLAXON_OUTBOUND_ALLOW_PERSONAL", default_value = "")]
    pub(super) outbound_allow_personal: String,
    /// `true` serves the deprecated key-less webhook `POST /api/alertmanager/webhook`, which
    /// routes to the oldest team (for upgrades only).
    #[arg(long, env = "KLAXON_LEGACY_WEBHOOK", default_value_t = false, action = clap::ArgAction::Set)]
    pub(super) legacy_webhook: bool,
    /// Requests one integration key may send a minute (webhooks, PagerDuty and Opsgenie events),
    /// ten minutes' worth at once; past it 429 with Retry-After. 0 lifts the limit.
    #[arg(long, env = "KLAXON_INTAKE_RATE", default_value_t = klaxon_core::key_rate::PER_MINUTE)]
    pub(super) intake_rate: u32,
    /// Connections served at once; past it, only health checks are answered (default 1024).
    #[arg(long, env = "KLAXON_MAX_CONNECTIONS", default_value_t = crate::listen::MAX_CONNECTIONS)]
    pub(super) max_connections: usize,
    /// Log filter, e.g. info or klaxon=debug.
    #[arg(long, env = "KLAXON_LOG", default_value = "info")]
    pub(super) log: String,
    /// Log format: text or json.
    #[arg(long, env = "KLAXON_LOG_FORMAT", default_value = "text", value_parser = ["text", "json"])]
    pub(super) log_format: String,
}

/// Single sign-on through an OpenID Connect provider; off while `KLAXON_OIDC_ISSUER` is unset.
#[derive(Args)]
pub(super) struct OidcArgs {
    /// The provider's issuer URL (discovery reads {issuer}/.well-known/openid-configuration).
    /// Register {public_url}/api/oidc/callback as the redirect URI there.
    #[arg(long, env = "KLAXON_OIDC_ISSUER")]
    oidc_issuer: Option<String>,
    /// Client ID registered at the provider.
    #[arg(long, env = "KLAXON_OIDC_CLIENT_ID")]
    oidc_client_id: Option<String>,
    /// Client secret (a confidential client); leave unset for a public client.
    #[arg(long, env = "KLAXON_OIDC_CLIENT_SECRET", hide_env_values = true)]
    oidc_client_secret: Option<String>,
    /// Space- or comma-separated scopes. Default: openid profile email, plus groups when the
    /// provider offers it.
    #[arg(long, env = "KLAXON_OIDC_SCOPES")]
    oidc_scopes: Option<String>,
    /// ID token claim holding the person's groups (a list or one string).
    #[arg(long, env = "KLAXON_OIDC_GROUPS_CLAIM", default_value = "groups")]
    oidc_groups_claim: String,
    /// Comma-separated groups allowed to sign in; empty: anyone the provider signs in.
    #[arg(long, env = "KLAXON_OIDC_ALLOWED_GROUPS", default_value = "")]
    oidc_allowed_groups: String,
    /// Comma-separated groups whose members administer Klaxon.
    #[arg(long, env = "KLAXON_OIDC_ADMIN_GROUPS", default_value = "")]
    oidc_admin_groups: String,
    /// Link an existing account by email even when the provider does not mark it verified.
    #[arg(long, env = "KLAXON_OIDC_TRUST_EMAIL", default_value_t = false, action = clap::ArgAction::Set)]
    oidc_trust_email: bool,
    /// Hard ceiling of a single sign-on session (groups are read only at sign-in), e.g. 12h.
    #[arg(long, env = "KLAXON_OIDC_SESSION_TTL", default_value = "12h")]
    oidc_session_ttl: String,
    /// Name on the "Sign in with …" button. Default: the issuer's host.
    #[arg(long, env = "KLAXON_OIDC_DISPLAY_NAME")]
    oidc_display_name: Option<String>,
}

fn list(raw: &str) -> Vec<String> {
    raw.split([',', ' '])
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect()
}

impl OidcArgs {
    pub(super) fn config(&self) -> Result<Option<OidcConfig>, String> {
        let Some(issuer) = self.oidc_issuer.clone().filter(|i| !i.is_empty()) else {
            return Ok(None);
        };
        if !(issuer.starts_with("http://") || issuer.starts_with("https://")) {
            return Err("KLAXON_OIDC_ISSUER must start with https:// (or http://)".into());
        }
        let client_id = self
            .oidc_client_id
            .clone()
            .filter(|c| !c.is_empty())
            .ok_or("KLAXON_OIDC_CLIENT_ID is needed with KLAXON_OIDC_ISSUER")?;
        let ttl: klaxon_domain::Duration = self
            .oidc_session_ttl
            .parse()
            .map_err(|e| format!("KLAXON_OIDC_SESSION_TTL: {e}"))?;
        if !(300..=30 * 86_400).contains(&ttl.as_secs()) {
            return Err("KLAXON_OIDC_SESSION_TTL must be between 5m and 30d".into());
        }
        let scopes = self
            .oidc_scopes
            .as_deref()
            .map(list)
            .filter(|s| !s.is_empty());
        if scopes
            .as_ref()
            .is_some_and(|s| !s.iter().any(|s| s == "openid"))
        {
            return Err("KLAXON_OIDC_SCOPES must include openid".into());
        }
        if self.oidc_groups_claim.trim().is_empty() {
            return Err("KLAXON_OIDC_GROUPS_CLAIM must not be empty".into());
        }
        Ok(Some(OidcConfig {
            issuer,
            client_id,
            client_secret: self.oidc_client_secret.clone().filter(|s| !s.is_empty()),
            scopes,
            groups_claim: self.oidc_groups_claim.trim().to_string(),
            allowed_groups: list(&self.oidc_allowed_groups),
            admin_groups: list(&self.oidc_admin_groups),
            trust_email: self.oidc_trust_email,
            session_ttl: ttl.as_secs(),
            display_name: self
                .oidc_display_name
                .clone()
                .filter(|n| !n.trim().is_empty()),
        }))
    }
}

impl ServeArgs {
    /// `KLAXON_SMTP_*`, checked now so a mistake stops the start with its name.
    pub(super) fn smtp(&self) -> Result<Option<SmtpConfig>, String> {
        let given = |v: &Option<String>| v.clone().filter(|v| !v.is_empty());
        let (url, from) = match (given(&self.smtp_url), given(&self.smtp_from)) {
            (None, None) if self.smtp_ca.is_none() => return Ok(None),
            (Some(url), Some(from)) => (url, from),
            (None, _) => {
                return Err("KLAXON_SMTP_FROM and KLAXON_SMTP_CA need KLAXON_SMTP_URL".into())
            }
            (Some(_), None) => {
                return Err("KLAXON_SMTP_URL needs KLAXON_SMTP_FROM, the sender's address".into())
            }
        };
        let ca_pem = match &self.smtp_ca {
            Some(path) => Some(
                std::fs::read(path)
                    .map_err(|e| format!("KLAXON_SMTP_CA: cannot read {}: {e}", path.display()))?,
            ),
            None => None,
        };
        let config = SmtpConfig { url, from, ca_pem };
        klaxon_core::roads::email::Mailer::new(&config)?;
        Ok(Some(config))
    }

    /// `KLAXON_MATRIX_*`, checked now so a mistake stops the start with its name.
    pub(super) fn matrix(&self) -> Result<Option<MatrixConfig>, String> {
        let given = |v: &Option<String>| v.clone().filter(|v| !v.is_empty());
        let Some(homeserver) = given(&self.matrix_homeserver) else {
            if [&self.matrix_token, &self.matrix_user, &self.matrix_password]
                .iter()
                .any(|v| given(v).is_some())
            {
                return Err(
                    "KLAXON_MATRIX_TOKEN, _USER and _PASSWORD need KLAXON_MATRIX_HOMESERVER".into(),
                );
            }
            return Ok(None);
        };
        if !(homeserver.starts_with("http://") || homeserver.starts_with("https://")) {
            return Err("KLAXON_MATRIX_HOMESERVER must start with http:// or https://".into());
        }
        let auth = match (
            given(&self.matrix_token),
            given(&self.matrix_user),
            given(&self.matrix_password),
        ) {
            (Some(token), None, None) => MatrixAuth::Token(token),
            (None, Some(user), Some(password)) => MatrixAuth::Password { user, password },
            _ => {
                return Err("KLAXON_MATRIX_HOMESERVER needs KLAXON_MATRIX_TOKEN, or KLAXON_MATRIX_USER and KLAXON_MATRIX_PASSWORD".into())
            }
        };
        Ok(Some(MatrixConfig { homeserver, auth }))
    }

    /// Validates the start-time configuration; a bad value stops the start with a clear sentence.
    pub(super) fn config(&self) -> Result<Config, String> {
        let mut seeds = Vec::new();
        for (key, value) in [
            (settings::SIGNUP_MODE, &self.signup_mode),
            (settings::STALE_AFTER, &self.stale_after),
            (settings::ARCHIVE_AFTER, &self.archive_after),
            (
                settings::NOTIFY_REPEAT_INTERVAL,
                &self.notify_repeat_interval,
            ),
        ] {
            if let Some(v) = value {
                validate_seed(key, v)?;
                seeds.push((key, v.clone()));
            }
        }
        let oidc = self.oidc.config()?;
        if !self.password_login && oidc.is_none() {
            return Err("KLAXON_PASSWORD_LOGIN=false needs single sign-on to be configured".into());
        }
        let public_url = self
            .public_url
            .clone()
            .unwrap_or_else(|| format!("http://{}", self.addr));
        if !(public_url.starts_with("http://") || public_url.starts_with("https://")) {
            return Err("KLAXON_PUBLIC_URL must start with http:// or https://".into());
        }
        if let Some(url) = self.ntfy_url.as_deref().filter(|u| !u.is_empty()) {
            if !(url.starts_with("http://") || url.starts_with("https://")) {
                return Err("KLAXON_NTFY_URL must start with http:// or https://".into());
            }
        }
        let smtp = self.smtp()?;
        let trusted_proxies = TrustedProxies::parse(&self.trusted_proxies)
            .map_err(|e| format!("KLAXON_TRUSTED_PROXIES: {e}"))?;
        let outbound_allow = OutboundAllow::parse(&self.outbound_allow)
            .map_err(|e| format!("KLAXON_OUTBOUND_ALLOW: {e}"))?;
        let personal_outbound_allow = OutboundAllow::parse(&self.outbound_allow_personal)
            .map_err(|e| format!("KLAXON_OUTBOUND_ALLOW_PERSONAL: {e}"))?;
        Ok(Config {
            trusted_proxies,
            outbound_allow,
            personal_outbound_allow,
            legacy_webhook: self.legacy_webhook,
            intake_per_minute: self.intake_rate,
            deadman_seed: self.deadman_seed()?,
            public_url: public_url.trim_end_matches('/').to_string(),
            password_login: self.password_login,
            metrics: self.metrics,
            oidc,
            roads: RoadSettings {
                ntfy_url: self.ntfy_url.clone().filter(|u| !u.is_empty()),
                ntfy_token: self.ntfy_token.clone().filter(|t| !t.is_empty()),
                smtp,
                matrix: self.matrix()?,
                twilio: self.twilio()?,
                sms_gateway: self.sms_gateway()?,
                phone_provider: self.phone_provider.clone().filter(|p| !p.is_empty()),
                phone_hourly_limit: self.phone_hourly_limit.max(0),
                phone_number_limits: true,
                slack_signing_secret: self.chat.slack_signing_secret(),
                mattermost_token: self.chat.mattermost_token(),
                slack_bot: self.chat.slack_bot()?,
                mattermost_bot: self.chat.mattermost_bot()?,
                telegram: self.chat.telegram()?,
                discord: self.chat.discord()?,
            },
            page_bundle_after: self.page_bundle_after,
            lane_wait: klaxon_core::lanes::WAIT_FOR_LANES,
            setting_seeds: seeds,
        })
    }
}

impl ServeArgs {
    /// `KLAXON_TWILIO_*`: all three of SID, token and number, or none.
    fn twilio(&self) -> Result<Option<TwilioConfig>, String> {
        let given = |v: &Option<String>| v.clone().filter(|s| !s.trim().is_empty());
        match (
            given(&self.twilio_account_sid),
            given(&self.twilio_auth_token),
            given(&self.twilio_from),
        ) {
            (None, None, None) => Ok(None),
            (Some(account_sid), Some(auth_token), Some(from)) => Ok(Some(TwilioConfig {
                url: self.twilio_url.clone(),
                account_sid,
                auth_token,
                from: klaxon_core::roads::phone::number::check(&from)
                    .map_err(|e| format!("KLAXON_TWILIO_FROM: {e}"))?,
            })),
            _ => Err("KLAXON_TWILIO_ACCOUNT_SID, KLAXON_TWILIO_AUTH_TOKEN and KLAXON_TWILIO_FROM go together".into()),
        }
    }

    /// `KLAXON_SMS_GATEWAY_*`: the URL with its user name, password and signing key, or none.
    fn sms_gateway(&self) -> Result<Option<GatewayConfig>, String> {
        let given = |v: &Option<String>| v.clone().filter(|s| !s.trim().is_empty());
        match (
            given(&self.sms_gateway_url),
            given(&self.sms_gateway_username),
            given(&self.sms_gateway_password),
            given(&self.sms_gateway_signing_key),
        ) {
            (None, None, None, None) => Ok(None),
            (Some(url), Some(username), Some(password), Some(signing_key)) => {
                Ok(Some(GatewayConfig {
                    url,
                    username,
                    password,
                    signing_key,
                }))
            }
            _ => Err(
                "KLAXON_SMS_GATEWAY_URL, _USERNAME, _PASSWORD and _SIGNING_KEY go together".into(),
            ),
        }
    }

    /// The switch `KLAXON_DEADMAN_*` describes, checked like one made through the API.
    pub(super) fn deadman_seed(&self) -> Result<Option<SwitchSpec>, String> {
        let given = [
            &self.deadman_name,
            &self.deadman_matcher,
            &self.deadman_timeout,
            &self.deadman_severity,
        ];
        if given.iter().all(|v| v.as_deref().unwrap_or("").is_empty()) {
            return Ok(None);
        }
        let or = |v: &Option<String>, default: &str| {
            v.clone()
                .filter(|v| !v.is_empty())
                .unwrap_or_else(|| default.to_string())
        };
        let timeout = or(&self.deadman_timeout, "10m")
            .parse()
            .map_err(|e| format!("KLAXON_DEADMAN_TIMEOUT: {e}"))?;
        let severity = or(&self.deadman_severity, "critical");
        let severity = Severity::parse(&severity)
            .ok_or("KLAXON_DEADMAN_SEVERITY must be info, warning or critical")?;
        let spec = SwitchSpec {
            name: klaxon_domain::text::Label::parse(&or(&self.deadman_name, "Watchdog"))
                .map_err(|e| format!("KLAXON_DEADMAN_NAME {e}"))?,
            matcher: or(&self.deadman_matcher, r#"{alertname="Watchdog"}"#),
            pings: false,
            timeout,
            severity,
        }
        .validate()
        .map_err(|e| format!("KLAXON_DEADMAN_*: {e}"))?;
        Matcher::parse(&spec.matcher).map_err(|e| format!("KLAXON_DEADMAN_MATCHER: {e}"))?;
        Ok(Some(spec))
    }
}
