//! The configuration as a file: `export` → `apply` to a second, empty Klaxon → `export` gives
//! the same file; `diff` after `apply` is empty; a bad file is refused, line and field named,
//! before anything changes; `--prune`; a run that fails part-way and a re-run that finishes.

use crate::common;
use common::*;
use klaxon_core::clock::Clock;
use klaxon_server::config_file::remote::Remote;
use klaxon_server::config_file::{apply, export, prepare};
use serde_json::json;

const HOOK: &str = "http://127.0.0.1:9/hooks/payments";

fn env(var: &str) -> Option<String> {
    (var == "KLAXON_CHANNEL_PAYMENTS_CHAT").then(|| HOOK.to_string())
}

/// A second, empty Klaxon on the same kind of database as `app`.
async fn second(app: &TestApp) -> TestApp {
    let backend = if app.database_url.starts_with("postgres") {
        Backend::Postgres(postgres_schema().await)
    } else {
        Backend::Sqlite
    };
    TestApp::spawn(backend).await
}

/// The people (accounts are never made from a file) and an instance-scoped service account's
/// key, as `klaxon apply` uses.
async fn people_and_key(app: &TestApp) -> (Auth, String) {
    let admin = app.bootstrap().await;
    // Ladders name only people a page can reach.
    for name in ["alice", "bob", "carol"] {
        let (id, _) = app.user(&admin, name).await;
        app.put(
            &format!("/api/users/{id}/push-topic"),
            &admin,
            json!({"push_topic": format!("{name}-pages")}),
        )
        .await
        .expect(200);
    }
    let key = app.instance_key(&admin, "config").await;
    (admin, key)
}

async fn user_id(app: &TestApp, admin: &Auth, name: &str) -> i64 {
    app.get(&format!("/api/users?username={name}"), admin)
        .await
        .expect(200)[0]["id"]
        .as_i64()
        .unwrap()
}

/// A team set up by hand through the API, with one of everything the file describes.
async fn set_up_by_hand(app: &TestApp, admin: &Auth) -> i64 {
    let team = app.team(admin, "payments").await;
    let t = |p: &str| format!("/api/teams/{team}{p}");
    let alice = user_id(app, admin, "alice").await;
    let bob = user_id(app, admin, "bob").await;
    app.put(&t(""), admin, json!({"display_name": "Payments"}))
        .await
        .expect(200);
    app.put(
        &t("/on-call-day"),
        admin,
        json!({"time_zone": "Europe/Berlin", "handoff_time": "09:00"}),
    )
    .await
    .expect(200);
    app.post(
        &t("/members"),
        admin,
        json!({"user_id": alice, "role": "owner"}),
    )
    .await
    .expect(201);
    app.post(&t("/members"), admin, json!({"user_id": bob}))
        .await
        .expect(201);
    app.post(
        &t("/integrations"),
        admin,
        json!({"name": "prod", "kind": "alertmanager"}),
    )
    .await
    .expect(201);
    app.post(
        &t("/integrations"),
        admin,
        json!({"name": "dashboards", "kind": "grafana"}),
    )
    .await
    .expect(201);
    let weekly = app.post(&t("/rotations"), admin, json!({"name": "weekly", "user_ids": [alice, bob], "shift_days": 7, "start_date": "2026-12-07"}))
        .await
        .expect(201)["id"]
        .as_i64()
        .unwrap();
    // The rota's next weeks come from the rotation; one date is alice's by hand.
    let today = app.get(&t("/on-call-day"), admin).await.expect(200)["today"]
        .as_str()
        .unwrap()
        .to_string();
    let in_days = |n: i64| {
        let d: jiff::civil::Date = today.parse().unwrap();
        d.checked_add(jiff::Span::new().days(n))
            .unwrap()
            .to_string()
    };
    app.post(
        &t(&format!("/rotations/{weekly}/apply")),
        admin,
        json!({"from": in_days(1), "to": in_days(20)}),
    )
    .await
    .expect(200);
    app.post(
        &t("/schedule"),
        admin,
        json!({"user_id": alice, "dates": [today]}),
    )
    .await
    .expect(201);
    // Bob covers alice for an afternoon.
    let start = app.clock.now() + 2 * 86_400;
    let cover = json!({"user_id": bob, "covered_user_id": alice, "starts_at": klaxon_domain::Timestamp(start).to_rfc3339(), "ends_at": klaxon_domain::Timestamp(start + 4 * 3600).to_rfc3339()});
    app.post(&t("/covers"), admin, cover).await.expect(201);
    // The first level is whoever is on call, alone.
    app.put(
        &t("/escalation"),
        admin,
        json!({"levels": [
            {"timeout": "5m", "targets": [{"type": "oncall"}]},
            {"timeout": "15m", "targets": [{"type": "user", "user_id": alice}, {"type": "user", "user_id": bob}]}
        ], "repeat": 1, "fallback_topic": "payments-all", "low_urgency": ["info"]}),
    )
    .await
    .expect(200);
    app.post(&t("/deadman/switches"), admin, json!({"name": "Watchdog", "matcher": "{alertname=\"Watchdog\"}", "timeout": "10m", "severity": "warning"}))
        .await
        .expect(201);
    let start = app.clock.now() + 86_400;
    let window = json!({"starts_at": klaxon_domain::Timestamp(start).to_rfc3339(), "ends_at": klaxon_domain::Timestamp(start + 3600).to_rfc3339()});
    app.post(&t("/maintenance"), admin, window)
        .await
        .expect(201);
    app.post(&t("/channels"), admin, json!({"name": "chat", "kind": "slack", "target": HOOK, "events": ["opened", "resolved"], "severities": ["critical"]}))
        .await
        .expect(201);
    app.put(&t("/handoff"), admin, json!({"enabled": true}))
        .await
        .expect(200);
    app.put(
        "/api/admin/settings",
        admin,
        json!({"signup_mode": "open", "stale_after": "12h"}),
    )
    .await
    .expect(200);
    team
}

both!(
    an_exported_file_applied_to_an_empty_klaxon_exports_the_same,
    |app| {
        let (admin, key) = people_and_key(&app).await;
        set_up_by_hand(&app, &admin).await;
        let file = export(&Remote::new(&app.url, &key).unwrap()).await.unwrap();
        for expected in [
            "name: payments",
            "timeZone: Europe/Berlin",
            "handoffTime: \"09:00\"",
            "username: alice",
            "kind: grafana",
            "type: oncall",
            "fallbackTopic: payments-all",
            "covers:",
            "covering: alice",
            "rota:",
            "startDate: \"2026-12-07\"",
            "urlFromEnv: KLAXON_CHANNEL_PAYMENTS_CHAT",
            "signupMode: open",
        ] {
            assert!(file.contains(expected), "{expected} missing from\n{file}");
        }
        assert!(!file.contains(HOOK), "the webhook URL is a secret:\n{file}");

        let empty = second(&app).await;
        let (_, key_b) = people_and_key(&empty).await;
        let mut b = Remote::new(&empty.url, &key_b).unwrap();
        let prepared = prepare(&mut b, &file, false, &env)
            .await
            .unwrap_or_else(|e| panic!("{e:?}"));
        assert!(prepared.steps.len() > 10, "{:?}", prepared.steps);
        let report = apply(&mut b, &prepared.steps, &env).await;
        assert_eq!(report.failed, None);
        assert!(report.not_applied.is_empty());
        // The new integrations' URLs are shown once: two of them.
        let urls: Vec<_> = report
            .made
            .iter()
            .filter(|m| m.what.contains("webhook URL"))
            .collect();
        assert_eq!(
            urls.len(),
            2,
            "{:?}",
            report.made.iter().map(|m| &m.what).collect::<Vec<_>>()
        );
        assert!(
            urls.iter()
                .all(|m| m.value.contains("/api/alertmanager/webhook/")),
            "{:?}",
            urls.iter().map(|m| &m.value).collect::<Vec<_>>()
        );

        let again = export(&Remote::new(&empty.url, &key_b).unwrap())
            .await
            .unwrap();
        assert_eq!(again, file);
        // A YAML 1.1 reader and an independent JSON Schema implementation take it too.
        valid_under_the_schema(&file);
        // A second apply has nothing to do.
        let prepared = prepare(&mut b, &file, true, &env).await.unwrap();
        assert_eq!(prepared.steps, vec![]);
        // The channel posts to the URL read from the environment.
        let team = empty
            .get("/api/teams?name=payments", &admin_of(&empty).await)
            .await
            .expect(200)[0]["id"]
            .as_i64()
            .unwrap();
        let channels = empty
            .get(
                &format!("/api/teams/{team}/channels"),
                &admin_of(&empty).await,
            )
            .await
            .expect(200);
        assert_eq!(channels[0]["target"], "http://127.0.0.1:9");
    }
);

/// Asserts that PyYAML's default (YAML 1.1) loader and Python's jsonschema accept `text` under
/// the published schema (`scripts/validate-config-examples.py`).
pub fn valid_under_the_schema(text: &str) {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("klaxon.yaml");
    std::fs::write(&path, text).unwrap();
    let out = std::process::Command::new("python3")
        .arg(format!("{root}/scripts/validate-config-examples.py"))
        .arg(format!("{root}/docs/klaxon-config.schema.json"))
        .arg(&path)
        .output()
        .expect("python3 runs");
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && said.trim() == "valid",
        "{said}{}\n{text}",
        String::from_utf8_lossy(&out.stderr)
    );
}

async fn admin_of(app: &TestApp) -> Auth {
    app.login("admin", "admin password").await
}

both!(
    a_bad_file_is_refused_with_its_line_and_nothing_changes,
    |app| {
        let (admin, key) = people_and_key(&app).await;
        set_up_by_hand(&app, &admin).await;
        let mut remote = Remote::new(&app.url, &key).unwrap();
        let before = export(&remote).await.unwrap();
        let base = "apiVersion: klaxon.dev/v1alpha1
kind: KlaxonConfig
teams:
  - name: payments
    displayName: Payments and billing
    members:
      - username: alice
        role: owner
      - username: bob
        role: member
    escalation:
      levels:
        - timeout: 5m
          targets:
            - type: user
              username: bob
";
        let refusal = async |remote: &mut Remote, text: &str| -> Vec<String> {
            match prepare(remote, text, false, &env).await {
                Ok(p) => panic!("accepted: {:?}", p.steps),
                Err(problems) => problems,
            }
        };
        // An unknown field.
        let e = refusal(
            &mut remote,
            &base.replace(
                "        role: member",
                "        role: member\n        shift: night",
            ),
        )
        .await;
        assert_eq!(e.len(), 1);
        assert!(
            e[0].starts_with("line 11: teams[0].members[1]")
                && e[0].contains("unknown field `shift`"),
            "{e:?}"
        );
        // A user the server does not have.
        let e = refusal(
            &mut remote,
            &base.replace(
                "username: bob\n        role",
                "username: dave\n        role",
            ),
        )
        .await;
        assert!(
            e.iter().any(|p| p
                .starts_with("line 9: teams[0].members[1].username: no account named \"dave\"")),
            "{e:?}"
        );
        // A ladder with nobody reachable: carol exists but is not in the team.
        let e = refusal(
            &mut remote,
            &base.replace(
                "              username: bob",
                "              username: carol",
            ),
        )
        .await;
        assert_eq!(e, vec!["line 14: teams[0].escalation.levels[0].targets: nobody on this level can be paged: name a member of the team, or oncall in a team with someone on its rota (a rota, or a rotation with fillDays)".to_string()]);
        // Whoever is on call, with the file emptying the rota: refused before any change.
        let e = refusal(
            &mut remote,
            &base.replace(
                "            - type: user\n              username: bob\n",
                "            - type: oncall\n    rota: []\n",
            ),
        )
        .await;
        assert_eq!(e, vec!["line 14: teams[0].escalation.levels[0].targets: nobody on this level can be paged: name a member of the team, or oncall in a team with someone on its rota (a rota, or a rotation with fillDays)".to_string()]);
        // …or giving it only dates that are history.
        let e = refusal(
            &mut remote,
            &base.replace(
                "            - type: user\n              username: bob\n",
                "            - type: oncall\n    rota:\n      - {username: bob, from: \"2020-01-01\", to: \"2020-01-07\"}\n",
            ),
        )
        .await;
        assert_eq!(e.len(), 1, "{e:?}");
        assert!(
            e[0].starts_with("line 14: teams[0].escalation.levels[0].targets: nobody"),
            "{e:?}"
        );
        // A rota whose runs overlap, or name someone outside the team.
        let e = refusal(
            &mut remote,
            &format!("{base}    rota:\n      - {{username: bob, from: \"2030-01-01\", to: \"2030-01-07\"}}\n      - {{username: carol, from: \"2030-01-07\", to: \"2030-01-08\"}}\n"),
        )
        .await;
        assert_eq!(
            e,
            vec![
                "line 19: teams[0].rota[1].username: \"carol\" is not a member of the team"
                    .to_string(),
                "line 19: teams[0].rota[1].from: its dates overlap those of rota[0]".to_string(),
            ]
        );
        // The same team twice.
        let twice = format!("{base}  - name: payments\n");
        let e = refusal(&mut remote, &twice).await;
        assert_eq!(
            e,
            vec!["line 17: teams[1].name: a second team named \"payments\"".to_string()]
        );
        // A syntax error.
        let e = refusal(
            &mut remote,
            "apiVersion: klaxon.dev/v1alpha1\nkind: [KlaxonConfig\n",
        )
        .await;
        assert!(
            e[0].starts_with("line ") && e[0].contains("not YAML"),
            "{e:?}"
        );
        assert_eq!(
            export(&remote).await.unwrap(),
            before,
            "a refused file changed the server"
        );

        // The good file's plan: a readable change, and nothing deleted without --prune.
        let p = prepare(&mut remote, base, false, &env).await.unwrap();
        let plan: Vec<String> = p.steps.iter().map(|s| s.to_string()).collect();
        assert_eq!(
            plan[0],
            "~ change team payments\n    displayName: \"Payments\" → \"Payments and billing\""
        );
        assert!(plan.iter().any(|s| s.starts_with("~ change team payments's escalation\n    levels: 5m oncall, then 15m alice+bob → 5m bob")), "{plan:?}");
        assert!(plan.iter().all(|s| !s.starts_with('-')), "{plan:?}");
    }
);

both!(
    prune_deletes_what_the_file_does_not_name_and_a_failed_run_is_finished_by_the_next,
    |app| {
        let (admin, key) = people_and_key(&app).await;
        let team = set_up_by_hand(&app, &admin).await;
        let mut remote = Remote::new(&app.url, &key).unwrap();
        let file = "apiVersion: klaxon.dev/v1alpha1
kind: KlaxonConfig
teams:
  - name: payments
    alertSources:
      - name: prod
        kind: alertmanager
      - name: staging
    deadmanSwitches:
      - name: Watchdog
        matcher: '{alertname=\"Watchdog\"}'
        timeout: 10m
        severity: warning
      - name: Broken
        matcher: '{alertname=\"Broken\"'
        timeout: 10m
    channels:
      - name: chat
        kind: slack
        urlFromEnv: KLAXON_CHANNEL_PAYMENTS_CHAT
        events: [opened, resolved]
        severities: [critical]
";
        let p = prepare(&mut remote, file, true, &env).await.unwrap();
        let plan: Vec<String> = p.steps.iter().map(|s| s.to_string()).collect();
        assert_eq!(
            plan,
            vec![
                "- delete alert source payments/dashboards (its webhook URL stops working)",
                "+ create alert source payments/staging (alertmanager)",
                "+ create dead man's switch payments/Broken",
            ]
        );
        // The server refuses the broken matcher: the run stops there and says what was done.
        let report = apply(&mut remote, &p.steps, &env).await;
        assert_eq!(report.applied.len(), 2);
        let (failed, why) = report.failed.unwrap();
        assert_eq!(failed, "+ create dead man's switch payments/Broken");
        assert!(why.contains("matcher"), "{why}");
        let integrations = app
            .get(&format!("/api/teams/{team}/integrations"), &admin)
            .await
            .expect(200);
        let mut names: Vec<_> = integrations
            .as_array()
            .unwrap()
            .iter()
            .map(|i| i["name"].as_str().unwrap())
            .collect();
        names.sort();
        assert_eq!(names, ["prod", "staging"]);
        // Fixed, the next run does only what is left; without --prune nothing is deleted.
        let fixed = file.replace("\"Broken\"'", "\"Broken\"}'");
        let p = prepare(&mut remote, &fixed, false, &env).await.unwrap();
        assert_eq!(
            p.steps.iter().map(|s| s.to_string()).collect::<Vec<_>>(),
            ["+ create dead man's switch payments/Broken"]
        );
        assert_eq!(apply(&mut remote, &p.steps, &env).await.failed, None);
        assert_eq!(
            prepare(&mut remote, &fixed, true, &env)
                .await
                .unwrap()
                .steps,
            vec![]
        );
    }
);

both!(
    a_window_or_cover_that_has_begun_is_made_from_now_and_one_that_has_ended_is_history,
    |app| {
        let (_, key) = people_and_key(&app).await;
        let mut remote = Remote::new(&app.url, &key).unwrap();
        let now = app.clock.now();
        let at = |offset: i64| klaxon_domain::Timestamp(now + offset).to_rfc3339();
        // The same instant an hour later on the clock, as someone in Berlin in winter writes it.
        let berlin = |offset: i64| {
            klaxon_domain::Timestamp(now + offset + 3600)
                .to_rfc3339()
                .replace('Z', "+01:00")
        };
        let file = format!(
            "apiVersion: klaxon.dev/v1alpha1
kind: KlaxonConfig
teams:
  - name: ops
    members:
      - username: alice
        role: owner
      - username: bob
        role: member
    maintenanceWindows:
      - startsAt: {}
        endsAt: {}
      - startsAt: {}
        endsAt: {}
      - startsAt: {}
        endsAt: {}
    covers:
      - username: bob
        startsAt: {}
        endsAt: {}
",
            at(-86_400),
            at(-82_800),
            at(-3600),
            at(7200),
            berlin(10_800),
            berlin(14_400),
            at(-3600),
            at(18_000),
        );
        let p = prepare(&mut remote, &file, true, &env).await.unwrap();
        let plan: Vec<String> = p.steps.iter().map(|s| s.to_string()).collect();
        // Yesterday's window is history; the ones that began start now, as the server makes
        // nothing in the past; the one to come is made as written.
        let from_now = "(from now: the file's start has passed)";
        assert!(
            plan.contains(&format!(
                "+ create maintenance window ops {} – {} {from_now}",
                at(0),
                at(7200)
            )),
            "{plan:#?}"
        );
        assert!(
            plan.contains(&format!(
                "+ create maintenance window ops {} – {}",
                berlin(10_800),
                berlin(14_400)
            )),
            "{plan:#?}"
        );
        assert!(
            plan.contains(&format!(
                "+ create cover ops: bob {} – {} {from_now}",
                at(0),
                at(18_000)
            )),
            "{plan:#?}"
        );
        assert!(!plan.iter().any(|s| s.contains(&at(-82_800))), "{plan:#?}");
        let report = apply(&mut remote, &p.steps, &env).await;
        assert_eq!(report.failed, None);
        // Applied, the file matches the server: a time written with its offset is the same
        // instant, and what began is the server's from when it was made.
        assert_eq!(
            prepare(&mut remote, &file, true, &env).await.unwrap().steps,
            vec![]
        );
        let exported = klaxon_server::config_file::yaml::read(&export(&remote).await.unwrap())
            .unwrap()
            .file;
        let ops = exported.teams.iter().find(|t| t.name == "ops").unwrap();
        let windows = ops.maintenance_windows.as_ref().unwrap();
        assert_eq!(windows.len(), 2, "{windows:?}");
        assert_eq!(windows[0].starts_at, at(0), "{windows:?}");
        // Hours later everything in the file has ended: the same file still applies, with
        // nothing to do, rather than failing on a start in the past.
        app.clock.advance(20_000);
        assert_eq!(
            prepare(&mut remote, &file, true, &env).await.unwrap().steps,
            vec![]
        );
    }
);

both!(a_team_exports_as_a_file_for_its_members_only, |app| {
    let (admin, _) = people_and_key(&app).await;
    let team = set_up_by_hand(&app, &admin).await;
    let alice = app.login("alice", "alice password").await;
    let r = app
        .get(&format!("/api/teams/{team}/config?format=yaml"), &alice)
        .await;
    assert_eq!(r.status, 200);
    assert_eq!(
        r.headers["content-disposition"],
        "attachment; filename=\"payments.yaml\""
    );
    let parsed = klaxon_server::config_file::yaml::read(&r.text).unwrap();
    assert_eq!(parsed.file.settings, None);
    assert_eq!(parsed.file.teams[0].name, "payments");
    let carol = app.login("carol", "carol password").await;
    app.get(&format!("/api/teams/{team}/config"), &carol)
        .await
        .expect(404);
    // The whole install's file is for administrators and instance-scoped service accounts.
    app.get("/api/config", &alice).await.expect(403);
    app.get("/api/config?format=toml", &admin).await.expect(400);
});

#[test]
fn diff_exits_0_when_nothing_would_change_and_2_when_something_would() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let (app, key) = rt.block_on(async {
        let app = TestApp::spawn(Backend::Sqlite).await;
        let (admin, key) = people_and_key(&app).await;
        set_up_by_hand(&app, &admin).await;
        (app, key)
    });
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("klaxon.yaml");
    let klaxon = |args: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_klaxon"))
            .args(args)
            .env("KLAXON_SERVER", &app.url)
            .env("KLAXON_API_KEY", &key)
            .env("KLAXON_CHANNEL_PAYMENTS_CHAT", HOOK)
            .output()
            .unwrap()
    };
    let out = klaxon(&["export", "-o", path.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = klaxon(&["diff", "-f", path.to_str().unwrap()]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("No changes"));
    let text = std::fs::read_to_string(&path)
        .unwrap()
        .replace("displayName: Payments", "displayName: Money");
    std::fs::write(&path, text).unwrap();
    let out = klaxon(&["diff", "-f", path.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "~ change team payments\n    displayName: \"Payments\" → \"Money\"\n1 step to change.\n"
    );
    let out = klaxon(&["apply", "-f", path.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        klaxon(&["diff", "-f", path.to_str().unwrap()])
            .status
            .code(),
        Some(0)
    );
    // A refused key is one sentence.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_klaxon"))
        .args(["diff", "-f", path.to_str().unwrap()])
        .env("KLAXON_SERVER", &app.url)
        .env("KLAXON_API_KEY", "not-a-key")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("refused the API key"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    drop(rt);
}

#[test]
fn the_schema_in_the_repository_is_the_one_klaxon_prints() {
    let printed = klaxon_server::config_file::schema();
    let kept = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../docs/klaxon-config.schema.json"
    ))
    .unwrap_or_default();
    assert!(kept == printed, "docs/klaxon-config.schema.json is stale: run `klaxon schema > docs/klaxon-config.schema.json`");
}

#[test]
fn the_examples_match_the_published_schema() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
    let example = format!("{root}/docs/examples/klaxon.yaml");
    // Klaxon reads it…
    let parsed =
        klaxon_server::config_file::yaml::read(&std::fs::read_to_string(&example).unwrap())
            .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(parsed.file.teams.len(), 2);
    // …and an independent JSON Schema implementation accepts it under the published schema.
    let out = std::process::Command::new("python3")
        .arg(format!("{root}/scripts/validate-config-examples.py"))
        .arg(format!("{root}/docs/klaxon-config.schema.json"))
        .arg(&example)
        .output()
        .expect("python3 runs");
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{said}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(said.trim(), "valid");
}

/// A generated client needs every schema the document refers to: the file's endpoints added
/// several, and none may dangle.
#[tokio::test]
async fn every_schema_the_document_refers_to_is_in_it() {
    let app = TestApp::spawn(Backend::Sqlite).await;
    let doc = app.get("/api/openapi.json", &Auth::None).await.expect(200);
    let text = doc.to_string();
    let schemas = doc["components"]["schemas"].as_object().unwrap();
    let mut missing: Vec<&str> = text
        .split("#/components/schemas/")
        .skip(1)
        .map(|rest| rest.split('"').next().unwrap())
        .filter(|name| !schemas.contains_key(*name))
        .collect();
    missing.dedup();
    assert!(missing.is_empty(), "dangling: {missing:?}");
    for path in ["/api/config", "/api/teams/{team_id}/config"] {
        assert!(
            doc["paths"][path]["get"]["responses"]["200"].is_object(),
            "{path}"
        );
    }
}
