//! `klaxon import` against recorded answers of Grafana OnCall, PagerDuty and Opsgenie
//! (`fixtures/import/`, built from each vendor's published API reference), served by a test
//! HTTP server that pages, limits the rate once (429 with Retry-After) and checks the token. The
//! file it writes is checked field by field, then applied to a Klaxon.

use crate::common;
use axum::extract::{Request, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect, Response};
use axum::Json;
use common::*;
use futures::StreamExt;
use klaxon_domain::incident::IntegrationKind;
use klaxon_server::config_file::remote::Remote;
use klaxon_server::config_file::{apply, prepare, yaml};
use klaxon_server::import::{self, Vendor};
use serde_json::{json, Value};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// 2026-11-28T00:00:00Z: overrides are taken from here to 90 days on.
const NOW: i64 = 1_795_824_000;

#[derive(Clone)]
struct Recorded {
    dir: String,
    base: Arc<Mutex<String>>,
    /// What the token header must say.
    token: String,
    /// The path answered 429 the first time it is asked for.
    limited: String,
    limited_once: Arc<std::sync::atomic::AtomicBool>,
    seen: Arc<Mutex<Vec<String>>>,
}

impl Recorded {
    /// Whether `path_and_query` was asked for.
    fn asked(&self, path_and_query: &str) -> bool {
        self.seen
            .lock()
            .unwrap()
            .iter()
            .any(|p| p == path_and_query)
    }
}

/// Whether a line of a report's list says `words`.
fn says(list: &[String], words: &str) -> bool {
    list.iter().any(|line| line.contains(words))
}

/// The file a request is answered from: its path, then the paging keys of its query.
fn file_name(path: &str, query: &str) -> String {
    let mut name: String = path
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    for pair in query.split('&') {
        if let Some((k, v)) = pair.split_once('=') {
            if ["offset", "page", "escalation_chain_id"].contains(&k) {
                name.push_str(&format!("_{k}_{v}"));
            }
        }
    }
    let mut out = String::new();
    for c in name.trim_matches('_').chars() {
        if !(c == '_' && out.ends_with('_')) {
            out.push(c);
        }
    }
    out
}

async fn answer(State(r): State<Recorded>, req: Request) -> Response {
    let path = req.uri().path().to_string();
    let query = req.uri().query().unwrap_or_default().to_string();
    r.seen.lock().unwrap().push(format!("{path}?{query}"));
    let auth = req
        .headers()
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    if auth != r.token {
        return (StatusCode::UNAUTHORIZED, "{\"error\":\"unauthorized\"}").into_response();
    }
    if path == r.limited
        && !r
            .limited_once
            .swap(true, std::sync::atomic::Ordering::SeqCst)
    {
        return (StatusCode::TOO_MANY_REQUESTS, [("retry-after", "7")], "{}").into_response();
    }
    let file = format!("{}/{}.json", r.dir, file_name(&path, &query));
    match std::fs::read_to_string(&file) {
        Ok(text) => {
            let base = r.base.lock().unwrap().clone();
            (
                [("content-type", "application/json")],
                text.replace("{{BASE}}", &base),
            )
                .into_response()
        }
        Err(_) => (StatusCode::NOT_FOUND, format!("no recorded answer {file}")).into_response(),
    }
}

async fn serve(vendor: &str, token: &str, limited: &str) -> (String, Recorded) {
    let recorded = Recorded {
        dir: format!(
            "{}/tests/fixtures/import/{vendor}",
            env!("CARGO_MANIFEST_DIR")
        ),
        base: Arc::new(Mutex::new(String::new())),
        token: token.into(),
        limited: limited.into(),
        limited_once: Arc::new(std::sync::atomic::AtomicBool::new(false)),
        seen: Arc::new(Mutex::new(Vec::new())),
    };
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    *recorded.base.lock().unwrap() = url.clone();
    let app = axum::Router::new()
        .fallback(answer)
        .with_state(recorded.clone());
    tokio::spawn(async move { axum::serve(listener, app).await });
    (url, recorded)
}

/// The accounts Klaxon has (Dave has none yet).
fn accounts() -> import::Accounts {
    let by_email = HashMap::from([
        ("alice@example.com".to_string(), "alice".to_string()),
        ("bob@example.com".to_string(), "bob".to_string()),
    ]);
    import::Accounts {
        names: by_email.values().cloned().collect(),
        by_email,
    }
}

async fn import(
    vendor: Vendor,
    name: &str,
    header: &str,
    limited: &str,
) -> (
    klaxon_domain::config::ConfigFile,
    import::Report,
    Recorded,
    Vec<u64>,
) {
    let (url, recorded) = serve(name, header, limited).await;
    let mut api = import::api_for(vendor, Some(&url), "s3cret").unwrap();
    api.sleep = false;
    let source = import::read(vendor, &api, NOW)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let (file, report) = import::to_file(&source, &accounts(), NOW);
    let waits = api.waits.lock().unwrap().clone();
    (file, report, recorded, waits)
}

/// The team every vendor's answers describe.
fn payments(file: &klaxon_domain::config::ConfigFile) -> &klaxon_domain::config::TeamSpec {
    let t = file.teams.iter().find(|t| t.name == "payments-platform");
    t.unwrap_or_else(|| panic!("{file:#?}"))
}

fn team_names(file: &klaxon_domain::config::ConfigFile) -> Vec<&str> {
    file.teams.iter().map(|t| t.name.as_str()).collect()
}

/// What every vendor's answers describe, in Klaxon's terms.
fn check_common(file: &klaxon_domain::config::ConfigFile, report: &import::Report) {
    let t = payments(file);
    assert_eq!(t.name, "payments-platform");
    assert_eq!(t.display_name.as_deref(), Some("Payments Platform"));
    assert_eq!(t.time_zone.as_deref(), Some("America/New_York"));
    // 09:00 New York time in July (EDT, UTC−4): not 08:00 (EST) nor 13:00 (UTC).
    assert_eq!(t.handoff_time.as_deref(), Some("09:00"));
    let rotations = t.rotations.as_ref().unwrap();
    assert_eq!(rotations.len(), 2);
    assert_eq!(
        (
            rotations[0].name.as_str(),
            rotations[0].shift_days,
            rotations[0].start_date.as_str()
        ),
        ("Primary", 7, "2026-07-06")
    );
    assert_eq!(rotations[0].members, ["alice", "bob", "dave"]);
    assert_eq!(
        (rotations[0].fill_days, rotations[1].fill_days),
        (Some(90), None)
    );
    assert_eq!(
        (rotations[1].name.as_str(), rotations[1].shift_days),
        ("Secondary", 1)
    );
    assert_eq!(rotations[1].members, ["bob", "alice"]);
    // The override in the next 90 days: a cover, in UTC.
    let covers = t.covers.as_ref().unwrap();
    assert_eq!(covers.len(), 1);
    assert_eq!(
        (
            covers[0].username.as_str(),
            covers[0].starts_at.as_str(),
            covers[0].ends_at.as_str()
        ),
        ("dave", "2026-12-10T18:00:00Z", "2026-12-11T06:00:00Z")
    );
    // For the person the first rotation has on call then: Bob's week is 7 to 13 December.
    assert_eq!(covers[0].covering.as_deref(), Some("bob"));
    let ladder = t.escalation.as_ref().unwrap();
    let levels: Vec<(String, Vec<String>)> = ladder
        .levels
        .iter()
        .map(|l| {
            (
                l.timeout.clone(),
                l.targets
                    .iter()
                    .map(|x| x.username.clone().unwrap_or_else(|| "oncall".into()))
                    .collect(),
            )
        })
        .collect();
    assert_eq!(
        levels,
        vec![
            ("5m".to_string(), vec!["oncall".to_string()]),
            ("10m".to_string(), vec!["alice".to_string()])
        ]
    );
    let sources = t.alert_sources.as_ref().unwrap();
    // One source of a kind Klaxon reads itself; OnCall's others are generic webhooks.
    let own = sources
        .iter()
        .filter(|s| s.kind != IntegrationKind::Webhook);
    assert_eq!(own.count(), 1);
    // Dave has no account: the report says to invite him, by the name the file uses.
    assert_eq!(
        report.to_invite,
        vec![("dave@example.com".to_string(), "dave".to_string())]
    );
    assert!(
        says(&report.approximated, "2 layers became 2 rotations"),
        "{report}"
    );
}

#[tokio::test]
async fn grafana_oncall() {
    let (file, report, recorded, waits) =
        import(Vendor::Oncall, "oncall", "s3cret", "/api/v1/teams/").await;
    check_common(&file, &report);
    // A second team's chain, which the routes of two integrations send some alerts to.
    assert_eq!(team_names(&file), ["databases", "payments-platform"]);
    let t = payments(&file);
    // OnCall's API says nothing of team roles: everyone is a member.
    assert!(t
        .members
        .as_ref()
        .unwrap()
        .iter()
        .all(|m| m.role == klaxon_domain::team::Role::Member));
    assert_eq!(t.escalation.as_ref().unwrap().repeat, 5);
    let source = &t.alert_sources.as_ref().unwrap()[0];
    assert_eq!(
        (source.name.as_str(), source.kind),
        ("prod", IntegrationKind::Alertmanager)
    );
    // Any other type becomes a generic webhook with OnCall's templates as they are written…
    let jobs = t
        .alert_sources
        .as_ref()
        .unwrap()
        .iter()
        .find(|s| s.name == "Jobs");
    let jobs = jobs.expect("the webhook integration");
    assert_eq!(jobs.kind, IntegrationKind::Webhook);
    let templates = jobs.templates.as_ref().unwrap();
    assert_eq!(templates.title, "{{ payload.job }} failed");
    assert_eq!(
        templates.dedup_key.as_deref(),
        Some("{{ payload.get('job') }}")
    );
    assert_eq!(
        templates.resolved.as_deref(),
        Some("{{ payload.state == 'ok' }}")
    );
    assert_eq!(templates.link.as_deref(), Some("{{ payload.url }}"));
    // …and one whose built-in templates Klaxon does not know gets the starter set, said so.
    let datadog = t
        .alert_sources
        .as_ref()
        .unwrap()
        .iter()
        .find(|s| s.name == "Datadog");
    assert_eq!(datadog.unwrap().kind, IntegrationKind::Webhook);
    assert!(
        says(
            &report.approximated,
            "integration \"Datadog\" (datadog): OnCall's built-in title"
        ),
        "{report}"
    );
    assert!(says(&report.no_equivalent, "trigger_webhook"), "{report}");
    // Its routes: the templates compute which matched first, a rule sends route 2's alerts to
    // the team of its chain (route 1's stay, as their chain is the integration's team's).
    assert_eq!(
        serde_json::to_value(&jobs.rules).unwrap(),
        json!([{"matchers": "{oncall_route=\"2\"}", "team": "databases"}])
    );
    assert!(templates.labels["oncall_route"].contains("regex_search"));
    assert!(
        says(
            &report.approximated,
            "integration \"Jobs\": its 2 routes became a label"
        ),
        "{report}"
    );
    // An Alertmanager integration's alerts have no such template: its route is reported.
    assert_eq!(source.rules, None);
    assert!(
        says(
            &report.no_equivalent,
            "integration \"prod\": route 1 (regex `\"service\": \"postgres\"`) went to another team's chain"
        ),
        "{report}"
    );
    // Both pages of people were read, and the 429 was waited out as it asked.
    assert!(recorded.asked("/api/v1/users/?page=2"));
    assert_eq!(waits, [7]);
}

#[tokio::test]
async fn pagerduty() {
    let (file, report, recorded, waits) = import(
        Vendor::Pagerduty,
        "pagerduty",
        "Token token=s3cret",
        "/teams",
    )
    .await;
    check_common(&file, &report);
    assert_eq!(team_names(&file), ["payments-platform"]);
    let t = payments(&file);
    let roles: Vec<_> = t
        .members
        .as_ref()
        .unwrap()
        .iter()
        .map(|m| (m.username.as_str(), m.role.as_str()))
        .collect();
    assert_eq!(
        roles,
        [("alice", "owner"), ("bob", "member"), ("dave", "member")]
    );
    assert_eq!(t.escalation.as_ref().unwrap().repeat, 2);
    // An Events API integration stays one: its senders change only their URL and key.
    let source = &t.alert_sources.as_ref().unwrap()[0];
    assert_eq!(source.name, "Payments prod");
    assert_eq!(source.kind, IntegrationKind::PagerDuty);
    assert!(says(&report.no_equivalent, "Payments email"), "{report}");
    // Bob's override during his own week covers nobody: left out, and said.
    assert!(
        says(
            &report.no_equivalent,
            "an override of bob from 2026-12-12T15:00:00Z while the rota has bob on call anyway"
        ),
        "{report}"
    );
    let seen = recorded.seen.lock().unwrap().clone();
    assert!(
        seen.iter()
            .any(|p| p.starts_with("/users?") && p.contains("offset=2")),
        "{seen:?}"
    );
    assert!(
        seen.iter()
            .any(|p| p.contains("overrides?since=2026-11-28T00:00:00Z&until=2027-02-26T00:00:00Z")),
        "{seen:?}"
    );
    assert_eq!(waits, [7]);
}

#[tokio::test]
async fn opsgenie() {
    let (file, report, recorded, waits) =
        import(Vendor::Opsgenie, "opsgenie", "GenieKey s3cret", "/v2/teams").await;
    check_common(&file, &report);
    assert_eq!(team_names(&file), ["payments-platform"]);
    let t = payments(&file);
    assert_eq!(t.escalation.as_ref().unwrap().repeat, 2);
    assert_eq!(t.members.as_ref().unwrap()[0].role.as_str(), "owner");
    // Alertmanager posting to Opsgenie's Alert API (a "Prometheus" integration) keeps that API:
    // its `opsgenie_configs` change their URL and key alone.
    let source = &t.alert_sources.as_ref().unwrap()[0];
    assert_eq!(
        (source.name.as_str(), source.kind),
        ("prod", IntegrationKind::Opsgenie)
    );
    assert!(
        says(&report.no_equivalent, "a recipient of type team"),
        "{report}"
    );
    assert!(
        says(&report.no_equivalent, "a participant of type escalation"),
        "{report}"
    );
    assert!(recorded.asked("/v2/users?limit=100&offset=2"));
    assert_eq!(waits, [7]);
}

#[tokio::test]
async fn a_refused_token_is_one_sentence() {
    let (url, _) = serve("pagerduty", "Token token=right", "").await;
    let api = import::api_for(Vendor::Pagerduty, Some(&url), "wrong").unwrap();
    let e = import::read(Vendor::Pagerduty, &api, NOW)
        .await
        .unwrap_err();
    assert_eq!(e, "PagerDuty refused the token (401): check it, and that it may read users, teams, schedules and escalation policies");
}

/// A fresh Klaxon on the same kind of database as `app`.
async fn another(app: &TestApp) -> TestApp {
    let backend = if app.database_url.starts_with("postgres") {
        Backend::Postgres(postgres_schema().await)
    } else {
        Backend::Sqlite
    };
    TestApp::spawn(backend).await
}

both!(
    an_imported_file_applies_once_its_people_have_signed_up,
    |app| {
        apply_imported(&app, Vendor::Oncall, "oncall", "s3cret").await;
        apply_imported(
            &another(&app).await,
            Vendor::Pagerduty,
            "pagerduty",
            "Token token=s3cret",
        )
        .await;
        apply_imported(
            &another(&app).await,
            Vendor::Opsgenie,
            "opsgenie",
            "GenieKey s3cret",
        )
        .await;
    }
);

async fn apply_imported(app: &TestApp, vendor: Vendor, name: &str, header: &str) {
    let (file, report, _, _) = import(vendor, name, header, "").await;
    let admin = app.bootstrap().await;
    for person in ["alice", "bob"] {
        let (id, _) = app.user(&admin, person).await;
        app.put(
            &format!("/api/users/{id}/push-topic"),
            &admin,
            json!({"push_topic": format!("{person}-pages")}),
        )
        .await
        .expect(200);
    }
    let key = app.instance_key(&admin, "importer").await;
    let text = yaml::write(&file);
    // A YAML 1.1 reader and an independent JSON Schema implementation take the file.
    crate::config::valid_under_the_schema(&text);
    let mut remote = Remote::new(&app.url, &key).unwrap();
    let none = |_: &str| None;
    // Before Dave signs up the file is refused where it names him.
    let e = match prepare(&mut remote, &text, false, &none).await {
        Ok(_) => panic!("{name}: dave has no account yet"),
        Err(e) => e,
    };
    assert!(e.iter().all(|p| p.contains("\"dave\"")), "{name}: {e:?}");
    assert!(e[0].starts_with("line "), "{name}: {e:?}");
    // The report's invitation, followed.
    assert_eq!(report.to_invite[0].1, "dave");
    app.user(&admin, "dave").await;
    let p = prepare(&mut remote, &text, false, &none)
        .await
        .unwrap_or_else(|e| panic!("{name}: {e:?}"));
    let done = apply(&mut remote, &p.steps, &none).await;
    assert_eq!(done.failed, None, "{name}");
    assert_eq!(
        prepare(&mut remote, &text, false, &none)
            .await
            .unwrap()
            .steps,
        vec![],
        "{name}"
    );
    let team = app
        .get("/api/teams?name=payments-platform", &Auth::Key(key.clone()))
        .await
        .expect(200)[0]["id"]
        .as_i64()
        .unwrap();
    let day = app
        .get(&format!("/api/teams/{team}/on-call-day"), &admin)
        .await
        .expect(200);
    assert_eq!(
        (day["time_zone"].as_str(), day["handoff_time"].as_str()),
        (Some("America/New_York"), Some("09:00")),
        "{name}"
    );
    let covers = app
        .get(&format!("/api/teams/{team}/covers"), &admin)
        .await
        .expect(200);
    assert_eq!(covers[0]["username"], "dave", "{name}");
    // The first rotation filled the rota from the team's today: someone holds the pager.
    let rota = app
        .get(&format!("/api/teams/{team}/schedule"), &admin)
        .await
        .expect(200);
    assert_eq!(rota.as_array().map(Vec::len), Some(90), "{name}: {rota}");
    // The alert source is there, with a new key.
    let sources = app
        .get(&format!("/api/teams/{team}/integrations"), &admin)
        .await
        .expect(200);
    // A PagerDuty Events API or Opsgenie Alert API source stays one of its kind.
    let kind = match name {
        "pagerduty" | "opsgenie" => name,
        _ => "alertmanager",
    };
    let own = sources
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["kind"] != "webhook");
    assert_eq!(own.unwrap()["kind"], kind, "{name}");
    if name == "oncall" {
        oncall_routes_route(app, &admin, team, &sources).await;
    }
}

/// OnCall's routes, as imported, send what OnCall sent: a body its regex route finds goes to
/// the databases team, one its earlier template route takes stays, one no route takes stays.
async fn oncall_routes_route(app: &TestApp, admin: &Auth, team: i64, sources: &Value) {
    let jobs = sources
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "Jobs");
    let id = jobs.unwrap()["id"].as_i64().unwrap();
    let path = format!("/api/teams/{team}/integrations/{id}/rules/simulate");
    for (job, to) in [
        ("db-backup", json!("databases")),
        ("db-nightly-report", Value::Null),
        ("web-deploy", Value::Null),
    ] {
        let sample = json!({"job": job, "state": "failed", "url": "https://ci.example/1"});
        let sim = app
            .post(&path, admin, json!({"sample": sample.to_string()}))
            .await
            .expect(200);
        assert_eq!(sim[0]["decision"]["team"], to, "{job}: {sim}");
    }
}

#[test]
fn the_command_writes_the_file_and_the_report_and_matches_people_by_email() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let (app, admin_key, url) = rt.block_on(async {
        let app = TestApp::spawn(Backend::Sqlite).await;
        let admin = app.bootstrap().await;
        // Alice's account carries her email in another case; Bob's none.
        app.post(
            "/api/users",
            &admin,
            json!({"username": "ally", "password": "ally password", "email": "ALICE@example.com"}),
        )
        .await
        .expect(201);
        app.user(&admin, "bob").await;
        let Auth::Key(key) = admin else {
            unreachable!()
        };
        let (url, _) = serve("opsgenie", "GenieKey s3cret", "/v2/teams").await;
        (app, key, url)
    });
    let dir = tempfile::tempdir().unwrap();
    let (file, report) = (dir.path().join("klaxon.yaml"), dir.path().join("report.md"));
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_klaxon"))
        .args([
            "import",
            "opsgenie",
            "--url",
            &url,
            "-o",
            file.to_str().unwrap(),
            "--report",
            report.to_str().unwrap(),
        ])
        .env("KLAXON_IMPORT_TOKEN", "s3cret")
        .env("KLAXON_SERVER", &app.url)
        .env("KLAXON_API_KEY", &admin_key)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let parsed =
        yaml::read(&std::fs::read_to_string(&file).unwrap()).unwrap_or_else(|e| panic!("{e}"));
    let members: Vec<_> = parsed.file.teams[0]
        .members
        .as_ref()
        .unwrap()
        .iter()
        .map(|m| m.username.clone())
        .collect();
    // Bob's email is on no account, and the account named bob may be someone else's: the
    // file does not hand it his place.
    assert_eq!(members, ["ally", "bob-2", "dave"]);
    let report = std::fs::read_to_string(&report).unwrap();
    assert!(
        report.contains("- bob@example.com: invite them; the file names them bob-2"),
        "{report}"
    );
    assert!(
        report.contains("the account bob has no email on file, so the file names this person bob-2; if bob is theirs, give it this email and import again"),
        "{report}"
    );
    assert!(
        report.contains("- dave@example.com: invite them; the file names them dave"),
        "{report}"
    );
    assert!(!report.contains("alice@example.com: invite"), "{report}");
    // A refused token: one sentence, exit 1.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_klaxon"))
        .args(["import", "opsgenie", "--url", &url, "--token", "nope"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr).trim(),
        "klaxon: Opsgenie refused the token (401): check it, and that it may read users, teams, schedules and escalation policies"
    );
    drop(rt);
}

/// A vendor API that answers every request with `answer`, recording the token of each.
async fn hostile_api(answer: fn(&str) -> Response) -> (String, Arc<Mutex<Vec<String>>>) {
    let seen: Arc<Mutex<Vec<String>>> = Arc::default();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let recorded = seen.clone();
    let app = axum::Router::new().fallback(move |req: Request| {
        let recorded = recorded.clone();
        async move {
            let token = req
                .headers()
                .get("authorization")
                .and_then(|v| v.to_str().ok())
                .unwrap_or_default()
                .to_string();
            recorded.lock().unwrap().push(token);
            answer(req.uri().path())
        }
    });
    tokio::spawn(async move { axum::serve(listener, app).await });
    (url, seen)
}

#[tokio::test]
async fn the_vendors_token_never_leaves_the_vendors_origin_and_answers_are_capped() {
    // A second host, which must never see the token.
    let (elsewhere, asked_elsewhere) =
        hostile_api(|_| Json(json!({"results": []})).into_response()).await;
    static ELSEWHERE: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    ELSEWHERE.set(elsewhere).unwrap();
    // A `next` link to it.
    let (url, _) = hostile_api(|_| {
        Json(json!({"results": [], "next": format!("{}/api/v1/users/?page=2", ELSEWHERE.get().unwrap())}))
            .into_response()
    })
    .await;
    let api = import::api_for(Vendor::Oncall, Some(&url), "s3cret").unwrap();
    let e = api
        .follow("/api/v1/users/", "results", "/next")
        .await
        .unwrap_err();
    assert!(e.contains("a link to another host"), "{e}");
    // A redirect to it.
    let (url, _) = hostile_api(|_| {
        Redirect::temporary(&format!("{}/api/v1/users/", ELSEWHERE.get().unwrap())).into_response()
    })
    .await;
    let api = import::api_for(Vendor::Oncall, Some(&url), "s3cret").unwrap();
    let e = api
        .follow("/api/v1/users/", "results", "/next")
        .await
        .unwrap_err();
    assert!(e.contains("not followed"), "{e}");
    assert!(
        asked_elsewhere.lock().unwrap().is_empty(),
        "the token went elsewhere"
    );
    // An answer without end is read up to the cap, not into memory.
    let (url, _) = hostile_api(|_| {
        let chunk = axum::body::Bytes::from(vec![b' '; 1 << 20]);
        let endless = futures::stream::repeat(chunk).map(Ok::<_, std::io::Error>);
        axum::body::Body::from_stream(endless).into_response()
    })
    .await;
    let api = import::api_for(Vendor::Oncall, Some(&url), "s3cret").unwrap();
    let e = api
        .follow("/api/v1/users/", "results", "/next")
        .await
        .unwrap_err();
    assert!(e.contains("over 32 MiB"), "{e}");
}
