//! An integration's routing rules: the first that matches an alert sends it to another team,
//! sets its severity and labels, or drops it; the decision is on the alert; a firing alert stays
//! with the team holding it when the rules change; a simulation answers what a sample would do;
//! bad rules and teams the owner is not in are refused.

use crate::common::{Auth, Payload, TestApp};
use reqwest::Method;
use serde_json::{json, Value};

fn rules() -> Value {
    json!([
        {"matchers": "{alertname=\"Heartbeat\"}", "drop": true},
        {"matchers": "{service=~\"db-.*\"}", "team": "db", "severity": "critical",
         "labels": {"routed": "yes"}}
    ])
}

fn storm(status: &str, ends: Option<i64>) -> Payload {
    Payload::new("{}:{alertname=\"mixed\"}")
        .alert(
            "fp-db",
            status,
            0,
            ends,
            json!({"alertname": "Slow", "service": "db-main", "severity": "warning"}),
        )
        .alert(
            "fp-web",
            status,
            0,
            ends,
            json!({"alertname": "Slow", "service": "web"}),
        )
        .alert("fp-hb", status, 0, ends, json!({"alertname": "Heartbeat"}))
}

async fn put_rules(
    app: &TestApp,
    auth: &Auth,
    team: i64,
    id: i64,
    rules: Value,
) -> crate::common::Res {
    let path = format!("/api/teams/{team}/integrations/{id}/rules");
    app.send(Method::PUT, &path, auth, Some(json!({ "rules": rules })))
        .await
}

/// Teams `web` (with an Alertmanager integration) and `db`, both owned by the administrator.
async fn two_teams(app: &TestApp) -> (Auth, i64, i64, i64, String) {
    let admin = app.bootstrap().await;
    let web = app.team(&admin, "web").await;
    let db = app.team(&admin, "db").await;
    let made = app
        .post(
            &format!("/api/teams/{web}/integrations"),
            &admin,
            json!({"name": "prom"}),
        )
        .await
        .expect(201);
    let id = made["id"].as_i64().unwrap();
    (
        admin,
        web,
        db,
        id,
        made["key"].as_str().unwrap().to_string(),
    )
}

both!(
    rules_route_set_and_drop_and_a_firing_alert_resolves_where_it_fired,
    |app| {
        let (admin, web, db, id, key) = two_teams(&app).await;
        let saved = put_rules(&app, &admin, web, id, rules()).await.expect(200);
        assert_eq!(saved["rules"], rules());

        // Simulated first: nothing is stored.
        let sim = app
            .post(
                &format!("/api/teams/{web}/integrations/{id}/rules/simulate"),
                &admin,
                json!({"sample": storm("firing", None).json().to_string()}),
            )
            .await
            .expect(200);
        let by_fp = |fp: &str| {
            sim.as_array()
                .unwrap()
                .iter()
                .find(|a| a["fingerprint"] == fp)
                .cloned()
                .unwrap()
        };
        assert_eq!(by_fp("fp-db")["decision"]["team"], "db");
        assert_eq!(by_fp("fp-db")["decision"]["labels"]["severity"], "critical");
        assert_eq!(by_fp("fp-hb")["decision"]["dropped"], true);
        assert_eq!(by_fp("fp-web")["decision"]["rule"], Value::Null);
        assert!(app.incidents(&admin, db).await.is_empty());

        let outcome = app.webhook(&key, &storm("firing", None)).await.expect(200);
        assert_eq!(
            (outcome["accepted"].as_i64(), outcome["ignored"].as_i64()),
            (Some(2), Some(1))
        );
        let at_db = app.incidents(&admin, db).await;
        assert_eq!(at_db.len(), 1);
        assert_eq!(at_db[0]["severity"], "critical");
        let at_web = app.incidents(&admin, web).await;
        assert_eq!(
            at_web.len(),
            1,
            "the web alert stays; the heartbeat is dropped"
        );
        let alert = app.alert_by_fingerprint(&admin, "fp-db").await;
        assert_eq!(alert["labels"]["routed"], "yes");
        let said = alert["annotations"]["routing"].as_str().unwrap();
        assert!(
            said.starts_with("routing rule 2 ({service=~\"db-.*\"}): to team db"),
            "{said}"
        );

        // The rules go; the db alert, firing at db, still resolves there.
        put_rules(&app, &admin, web, id, json!([]))
            .await
            .expect(200);
        app.webhook(&key, &storm("resolved", Some(60)))
            .await
            .expect(200);
        let at_db = app.incidents(&admin, db).await;
        assert_eq!((at_db.len(), &at_db[0]["state"]), (1, &json!("resolved")));
        assert_eq!(app.incidents(&admin, web).await.len(), 1);
    }
);

both!(
    bad_rules_and_teams_out_of_reach_are_refused_and_change_nothing,
    |app| {
        let (admin, web, _db, id, _key) = two_teams(&app).await;
        put_rules(&app, &admin, web, id, rules()).await.expect(200);
        let why = put_rules(&app, &admin, web, id, json!([{"matchers": "{service=~"}]))
            .await
            .expect_error(400, "invalid");
        assert!(why.starts_with("rules[0].matchers: "), "{why}");
        let why = put_rules(&app, &admin, web, id, json!([{"team": "nowhere"}]))
            .await
            .expect_error(400, "invalid");
        assert_eq!(why, "rules[0].team: you are in no team named nowhere");
        let why = put_rules(&app, &admin, web, id, json!([{"drop": true, "team": "db"}]))
            .await
            .expect_error(400, "invalid");
        assert!(why.starts_with("rules[0]: a rule that drops"), "{why}");
        // An owner of web who is not in db may not send web's alerts there.
        let (carol_id, carol) = app.user(&admin, "carol").await;
        app.post(
            &format!("/api/teams/{web}/members"),
            &admin,
            json!({"user_id": carol_id, "role": "owner"}),
        )
        .await
        .expect(201);
        let why = put_rules(&app, &carol, web, id, json!([{"team": "db"}]))
            .await
            .expect_error(400, "invalid");
        assert_eq!(why, "rules[0].team: you are in no team named db");
        // Nothing changed.
        let listed = app
            .get(&format!("/api/teams/{web}/integrations"), &admin)
            .await
            .expect(200);
        assert_eq!(listed[0]["rules"], rules());
    }
);

both!(
    an_event_is_routed_by_its_trigger_and_resolved_where_its_alert_is,
    |app| {
        let (admin, web, db, _, _) = two_teams(&app).await;
        let made = app
            .post(
                &format!("/api/teams/{web}/integrations"),
                &admin,
                json!({"name": "uptime", "kind": "pagerduty"}),
            )
            .await
            .expect(201);
        let (id, key) = (
            made["id"].as_i64().unwrap(),
            made["key"].as_str().unwrap().to_string(),
        );
        put_rules(
            &app,
            &admin,
            web,
            id,
            json!([{"matchers": "{source=\"db-1\"}", "team": "db"}]),
        )
        .await
        .expect(200);
        let event = |action: &str| {
            json!({"routing_key": key, "event_action": action, "dedup_key": "disk-db-1",
                   "payload": {"summary": "Disk full", "source": "db-1", "severity": "error"}})
        };
        let send = |body: Value| {
            let app = &app;
            async move {
                app.raw(
                    Method::POST,
                    "/v2/enqueue",
                    &[("content-type", "application/json")],
                    serde_json::to_vec(&body).unwrap(),
                )
                .await
                .status
                .as_u16()
            }
        };
        assert_eq!(send(event("trigger")).await, 202);
        assert!(app.incidents(&admin, web).await.is_empty());
        assert_eq!(app.incidents(&admin, db).await[0]["state"], "triggered");
        // A resolve names the alert by its key alone: it goes where the alert is.
        let sim = app
            .post(
                &format!("/api/teams/{web}/integrations/{id}/rules/simulate"),
                &admin,
                json!({"sample": event("resolve").to_string()}),
            )
            .await
            .expect(200);
        assert_eq!(sim[0]["decision"], Value::Null);
        assert_eq!(send(event("resolve")).await, 202);
        assert_eq!(app.incidents(&admin, db).await[0]["state"], "resolved");
        assert!(app.incidents(&admin, web).await.is_empty());
    }
);

both!(the_configuration_file_carries_routing_rules, |app| {
    use klaxon_server::config_file::remote::Remote;
    use klaxon_server::config_file::{apply, prepare};
    let admin = app.bootstrap().await;
    let key = app.instance_key(&admin, "config").await;
    let env = |_: &str| None;
    let mut remote = Remote::new(&app.url, &key).unwrap();
    let file = |rules: &str| {
        format!(
            "apiVersion: klaxon.dev/v1alpha1
kind: KlaxonConfig
teams:
  - name: db
  - name: web
    alertSources:
      - name: prom
        rules: {rules}
"
        )
    };
    // A rule sends alerts to a team the same file makes: apply's own key may route anywhere.
    let first = file(r#"[{matchers: '{service=~"db-.*"}', team: db, severity: critical}]"#);
    let p = prepare(&mut remote, &first, false, &env).await.unwrap();
    let plan: Vec<String> = p.steps.iter().map(|s| s.to_string()).collect();
    assert!(
        plan.contains(&"+ create alert source web/prom (alertmanager) with 1 routing rule".into()),
        "{plan:?}"
    );
    assert_eq!(apply(&mut remote, &p.steps, &env).await.failed, None);
    let sa = Auth::Key(key.clone());
    let web = app.get("/api/teams?name=web", &sa).await.expect(200)[0]["id"]
        .as_i64()
        .unwrap();
    let listed = app
        .get(&format!("/api/teams/{web}/integrations"), &admin)
        .await
        .expect(200);
    assert_eq!(
        listed[0]["rules"],
        json!([{"matchers": "{service=~\"db-.*\"}", "team": "db", "severity": "critical"}])
    );
    // Applied again, nothing changes; an empty list removes them in place (the URL stays).
    let again = prepare(&mut remote, &first, false, &env).await.unwrap();
    assert_eq!(again.steps, vec![]);
    let none = file("[]");
    let p = prepare(&mut remote, &none, false, &env).await.unwrap();
    let plan: Vec<String> = p.steps.iter().map(|s| s.to_string()).collect();
    assert_eq!(plan.len(), 1, "{plan:?}");
    assert!(
        plan[0].starts_with("~ change alert source web/prom"),
        "{plan:?}"
    );
    assert_eq!(apply(&mut remote, &p.steps, &env).await.failed, None);
    let listed = app
        .get(&format!("/api/teams/{web}/integrations"), &admin)
        .await
        .expect(200);
    assert_eq!(listed.as_array().unwrap().len(), 1, "changed in place");
    assert_eq!(listed[0]["rules"], Value::Null, "none left");
    // Rules whose matchers do not parse are refused before anything is sent, naming the rule.
    let bad = file(r#"[{matchers: '{service=}', drop: true}]"#);
    let refused = prepare(&mut remote, &bad, false, &env).await.err().unwrap();
    assert!(
        format!("{refused:?}").contains("teams[1].alertSources[0].rules[0].matchers"),
        "{refused:?}"
    );
    // So is a rule naming a team neither the file nor the server has.
    let lost = file("[{team: nowhere}]");
    let refused = prepare(&mut remote, &lost, false, &env)
        .await
        .err()
        .unwrap();
    assert!(
        refused.iter().any(|p| p
            .ends_with("rules[0].team: no team named \"nowhere\" in the file or on the server")),
        "{refused:?}"
    );
});
