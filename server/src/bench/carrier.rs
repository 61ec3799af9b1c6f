//! The carrier `klaxon bench paging --road sms|voice` pages into: Twilio's REST API (a form POST
//! to `Accounts/{sid}/Messages.json` or `Calls.json`, answered 201). A text arrives when its
//! request does. A call arrives when its request does, and is then answered as a phone would be:
//! its TwiML fetched from the URL Klaxon gave, signed as Twilio signs (the incident is read from
//! what the call says); in a quiet run the carrier then presses 4 and times the answer, which
//! Klaxon gives once the acknowledgement is stored.

use super::err;
use super::sinks::{titled, Arrivals};
use axum::body::Bytes;
use axum::extract::State;
use axum::routing::post as route_post;
use klaxon_core::callbacks::form;
use klaxon_core::roads::phone::twilio::{signature, TwilioConfig};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const SID: &str = "ACbench";
const TOKEN: &str = "bench-auth-token";

#[derive(Clone)]
pub(super) struct Carrier {
    pub url: String,
    /// Verification codes texted or said.
    pub codes: Arc<Mutex<Vec<String>>>,
    /// Key 4 pressed → Klaxon's answer (the acknowledgement stored), each call.
    pub acks: Arc<Mutex<Vec<Duration>>>,
    arrivals: Arrivals,
    press: bool,
    /// Every page's call goes unanswered (`--failover`): the carrier reports `no-answer` to
    /// Klaxon, noting when, and the figure is from that report to the next road's page.
    unanswered: bool,
    client: reqwest::Client,
}

impl Carrier {
    pub async fn start(
        arrivals: Arrivals,
        press: bool,
        unanswered: bool,
    ) -> Result<Carrier, String> {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .map_err(err)?;
        let url = format!("http://{}", listener.local_addr().map_err(err)?);
        let carrier = Carrier {
            url,
            codes: Arc::default(),
            acks: Arc::default(),
            arrivals,
            press,
            unanswered,
            client: reqwest::Client::new(),
        };
        let router = axum::Router::new()
            .route(
                &format!("/2010-04-01/Accounts/{SID}/Messages.json"),
                route_post(text),
            )
            .route(
                &format!("/2010-04-01/Accounts/{SID}/Calls.json"),
                route_post(call),
            )
            .with_state(carrier.clone());
        tokio::spawn(async move { axum::serve(listener, router).await });
        Ok(carrier)
    }

    /// Klaxon's settings for it.
    pub fn config(&self) -> TwilioConfig {
        TwilioConfig {
            url: self.url.clone(),
            account_sid: SID.into(),
            auth_token: TOKEN.into(),
            from: "+14155550100".into(),
        }
    }

    /// Twilio's signed form POST to `url`; the answer's body.
    async fn post(&self, url: &str, params: &[(&str, &str)]) -> Result<String, String> {
        let owned: Vec<(String, String)> = params
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let res = self
            .client
            .post(url)
            .header("x-twilio-signature", signature(TOKEN, url, &owned))
            .form(params)
            .send()
            .await
            .map_err(err)?;
        res.text().await.map_err(err)
    }

    /// Answers a page's call: what it says names the incident; then, in a quiet run, key 4. An
    /// unanswered run reports the call not answered instead, once it knows which page it was.
    async fn answer(self, url: String, status: String, at: Instant) -> Result<(), String> {
        let answered = [("CallSid", "CAbench"), ("CallStatus", "in-progress")];
        let said = self.post(&url, &answered).await?;
        let title = titled(&said).ok_or_else(|| format!("a call said no incident: {said}"))?;
        if self.unanswered {
            let reported = Instant::now();
            self.arrivals
                .refused
                .lock()
                .unwrap()
                .insert(title, reported);
            let params = [("CallSid", "CAbench"), ("CallStatus", "no-answer")];
            self.post(&status, &params).await?;
            return Ok(());
        }
        if self.press {
            let pressed = Instant::now();
            let done = self
                .post(&url, &[("CallSid", "CAbench"), ("Digits", "4")])
                .await?;
            if !done.contains("Acknowledged.") {
                return Err(format!("key 4 did not acknowledge: {done}"));
            }
            self.acks.lock().unwrap().push(pressed.elapsed());
        }
        self.arrivals.record_at(title, at);
        Ok(())
    }
}

fn created(sid: &str) -> (axum::http::StatusCode, String) {
    (
        axum::http::StatusCode::CREATED,
        format!(r#"{{"sid":"{sid}","status":"queued"}}"#),
    )
}

/// The six digits after `lead` in `text`.
fn code_after(text: &str, lead: &str) -> Option<String> {
    let at = text.find(lead)? + lead.len();
    let code: String = text[at..]
        .chars()
        .filter(char::is_ascii_digit)
        .take(6)
        .collect();
    (code.len() == 6).then_some(code)
}

async fn text(State(c): State<Carrier>, body: Bytes) -> (axum::http::StatusCode, String) {
    let at = Instant::now();
    let form = form(&body);
    let said = form
        .iter()
        .find(|(k, _)| k == "Body")
        .map_or("", |(_, v)| v.as_str());
    if let Some(code) = code_after(said, "Klaxon code: ") {
        c.codes.lock().unwrap().push(code);
    } else if let Some(title) = titled(said) {
        c.arrivals.record_at(title, at);
    }
    created("SMbench")
}

async fn call(State(c): State<Carrier>, body: Bytes) -> (axum::http::StatusCode, String) {
    let at = Instant::now();
    let form = form(&body);
    let get = |name: &str| form.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone());
    if let Some(code) = get("Twiml").and_then(|t| code_after(&t, "code is ")) {
        c.codes.lock().unwrap().push(code);
    } else if let (Some(url), Some(status)) = (get("Url"), get("StatusCallback")) {
        tokio::spawn(async move {
            if let Err(e) = c.answer(url, status, at).await {
                eprintln!("bench carrier: {e}");
            }
        });
    }
    created("CAbench")
}
