//! The real OpenID Connect provider (npm `oidc-provider`, `end2end/oidc/provider.mjs`) on
//! 127.0.0.1, with accounts the test chooses, and a browser stand-in: reqwest with a cookie jar
//! that answers the provider's login and consent forms.

use super::TestApp;
use klaxon_core::sso::OidcConfig;
use serde_json::{json, Value};
use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};

/// Where the default test config sends the provider back (the harness's `public_url`).
pub const CALLBACK: &str = "http://127.0.0.1:8080/api/oidc/callback";

pub struct Provider {
    pub issuer: String,
    state_file: PathBuf,
    state: std::sync::Mutex<Value>,
    child: Child,
    _dir: tempfile::TempDir,
}

impl Drop for Provider {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Provider {
    /// Starts a provider whose accounts are `accounts` (`{"login": {claims…}}`).
    pub fn start(accounts: Value) -> Provider {
        Self::start_on(accounts, None)
    }

    /// Starts a provider on a given port (for a provider that comes up after Klaxon).
    pub fn start_on(accounts: Value, port: Option<u16>) -> Provider {
        let dir = tempfile::tempdir().unwrap();
        let state_file = dir.path().join("state.json");
        let state = json!({"accounts": accounts, "publish_other_key": false});
        std::fs::write(&state_file, state.to_string()).unwrap();
        let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../end2end/oidc/provider.mjs");
        let mut child = Command::new("node")
            .arg(script)
            .env("OIDC_STATE_FILE", &state_file)
            .env("OIDC_REDIRECT_URIS", CALLBACK)
            .env("OIDC_PORT", port.map(|p| p.to_string()).unwrap_or_default())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("node runs end2end/oidc/provider.mjs (scripts/setup.sh installs it)");
        let mut line = String::new();
        let mut out = BufReader::new(child.stdout.take().unwrap());
        out.read_line(&mut line).unwrap();
        // Keep reading: a closed pipe would end the provider at its next line of output.
        std::thread::spawn(move || std::io::copy(&mut out, &mut std::io::sink()));
        let started: Value = serde_json::from_str(&line)
            .unwrap_or_else(|_| panic!("the provider did not start: {line:?}"));
        Provider {
            issuer: started["issuer"].as_str().unwrap().to_string(),
            state_file,
            state: std::sync::Mutex::new(state),
            child,
            _dir: dir,
        }
    }

    fn write(&self, change: impl FnOnce(&mut Value)) {
        let mut state = self.state.lock().unwrap();
        change(&mut state);
        std::fs::write(&self.state_file, state.to_string()).unwrap();
    }

    /// Replaces (or adds) one account's claims.
    pub fn set_account(&self, login: &str, claims: Value) {
        self.write(|s| s["accounts"][login] = claims);
    }

    /// Publishes another key under the signing key's id: tokens then fail their signature check.
    pub fn publish_other_key(&self) {
        self.write(|s| s["publish_other_key"] = json!(true));
    }

    /// Klaxon's configuration for this provider: everyone may sign in, nobody is made admin.
    pub fn config(&self) -> OidcConfig {
        OidcConfig {
            issuer: self.issuer.clone(),
            client_id: "klaxon".into(),
            client_secret: Some("klaxon-secret".into()),
            scopes: None,
            groups_claim: "groups".into(),
            allowed_groups: Vec::new(),
            admin_groups: Vec::new(),
            trust_email: false,
            session_ttl: OidcConfig::DEFAULT_SESSION_TTL,
            display_name: Some("Test IdP".into()),
        }
    }
}

/// What Klaxon's callback answered.
pub struct Outcome {
    pub status: u16,
    pub location: String,
    /// The `klaxon_session` token, when a session was started.
    pub session: Option<String>,
    /// The whole `Set-Cookie` of the session.
    pub session_cookie: Option<String>,
}

impl Outcome {
    pub fn refusal(&self) -> Option<&str> {
        self.location
            .split_once("sso_error=")
            .map(|(_, rest)| rest.split('&').next().unwrap_or(rest))
    }
}

/// One browser: its own cookies for Klaxon and the provider.
pub struct Browser {
    pub client: reqwest::Client,
    app: String,
}

impl Browser {
    pub fn new(app: &TestApp) -> Browser {
        Browser {
            client: Browser::jar(),
            app: app.url.clone(),
        }
    }

    fn jar() -> reqwest::Client {
        reqwest::Client::builder()
            .cookie_store(true)
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .unwrap()
    }

    /// `GET /api/oidc/login`: the status and where it redirects.
    pub async fn start(&self, next: Option<&str>) -> (u16, String) {
        let mut url = format!("{}/api/oidc/login", self.app);
        if let Some(n) = next {
            url = reqwest::Url::parse_with_params(&url, [("next", n)])
                .unwrap()
                .to_string();
        }
        let r = self.client.get(url).send().await.unwrap();
        (r.status().as_u16(), location(&r))
    }

    /// Signs `login` in at the provider, answering its forms, and returns the callback URL it
    /// redirects to, pointed at the test server.
    pub async fn at_provider(&self, authorize_url: &str, login: &str) -> String {
        let origin = {
            let u = reqwest::Url::parse(authorize_url).unwrap();
            format!("{}://{}", u.scheme(), u.authority())
        };
        let absolute = |l: &str| {
            if l.starts_with('/') {
                format!("{origin}{l}")
            } else {
                l.to_string()
            }
        };
        let mut r = self.client.get(authorize_url).send().await.unwrap();
        for _ in 0..12 {
            if r.status().is_redirection() {
                let next = absolute(&location(&r));
                if let Some(rest) = next.strip_prefix(CALLBACK) {
                    return format!("{}/api/oidc/callback{rest}", self.app);
                }
                r = self.client.get(next).send().await.unwrap();
                continue;
            }
            let page = r.text().await.unwrap();
            let action = between(&page, "action=\"", "\"").expect("a form at the provider");
            let prompt = between(&page, "name=\"prompt\" value=\"", "\"").unwrap();
            let form: Vec<(&str, &str)> = match prompt.as_str() {
                "login" => vec![("prompt", "login"), ("login", login), ("password", "any")],
                _ => vec![("prompt", "consent")],
            };
            r = self
                .client
                .post(absolute(&action))
                .form(&form)
                .send()
                .await
                .unwrap();
        }
        panic!("the provider never redirected back");
    }

    /// Brings a callback URL to Klaxon, as the browser would.
    pub async fn callback(&self, url: &str) -> Outcome {
        let r = self.client.get(url).send().await.unwrap();
        let session_cookie = r
            .headers()
            .get_all("set-cookie")
            .iter()
            .filter_map(|v| v.to_str().ok())
            .find(|c| c.starts_with("klaxon_session=") && !c.starts_with("klaxon_session=;"))
            .map(str::to_string);
        Outcome {
            status: r.status().as_u16(),
            location: location(&r),
            session: session_cookie.as_ref().map(|c| {
                c.trim_start_matches("klaxon_session=")
                    .split(';')
                    .next()
                    .unwrap()
                    .to_string()
            }),
            session_cookie,
        }
    }

    /// The whole browser flow for `login`, coming back to `next`, in a fresh browser (the
    /// provider would otherwise sign in whoever signed in there last).
    pub async fn sign_in(&self, login: &str, next: Option<&str>) -> Outcome {
        let fresh = Browser {
            client: Browser::jar(),
            app: self.app.clone(),
        };
        fresh.sign_in_here(login, next).await
    }

    /// The whole browser flow in this browser, with its cookies.
    pub async fn sign_in_here(&self, login: &str, next: Option<&str>) -> Outcome {
        let (status, to_provider) = self.start(next).await;
        assert_eq!(status, 302, "the sign-in starts with a redirect");
        assert!(
            !to_provider.starts_with("/login"),
            "the sign-in was refused before the provider: {to_provider}"
        );
        let back = self.at_provider(&to_provider, login).await;
        self.callback(&back).await
    }
}

fn location(r: &reqwest::Response) -> String {
    r.headers()
        .get("location")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_string()
}

fn between(s: &str, start: &str, end: &str) -> Option<String> {
    let from = s.find(start)? + start.len();
    let len = s[from..].find(end)?;
    Some(s[from..from + len].replace("&amp;", "&"))
}
