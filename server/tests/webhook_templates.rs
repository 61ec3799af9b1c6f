//! A generic JSON webhook: the owner's Jinja templates turn any sender's body into an alert
//! (fires, refreshes, resolves by its dedup key), the "try it" endpoint shows what a sample
//! would become before saving, and bad templates or bodies are refused, naming the field.

use crate::common::{Auth, TestApp};
use reqwest::Method;
use serde_json::{json, Value};

/// Templates as a team moving from Grafana OnCall has them for an uptime checker.
fn templates() -> Value {
    json!({
        "title": "{{ payload.check }} is {{ payload.status }}",
        "severity": "{{ payload.level }}",
        "dedup_key": "{{ payload.check }}",
        "resolved": "{{ payload.status == 'up' }}",
        "labels": {"service": "{{ payload.tags.service }}"},
        "link": "{{ payload.url }}",
        "message": "{{ payload.detail | json_dumps }}"
    })
}

fn body(status: &str) -> Value {
    json!({"check": "api-health", "status": status, "level": "high",
           "tags": {"service": "api"}, "url": "https://up.example/checks/7",
           "detail": {"code": 503}})
}

/// Posts `body` (raw bytes) to the integration's URL, as any sender would.
async fn post(app: &TestApp, url: &str, body: &[u8]) -> (u16, Value) {
    let path = &url[url.find("/api/").unwrap()..];
    let res = app
        .raw(
            Method::POST,
            path,
            &[("content-type", "application/json")],
            body.to_vec(),
        )
        .await;
    (res.status.as_u16(), res.body)
}

async fn webhook_team(app: &TestApp, templates: Value) -> (Auth, i64, Value) {
    let admin = app.bootstrap().await;
    let team = app.team(&admin, "web").await;
    let created = app
        .post(
            &format!("/api/teams/{team}/integrations"),
            &admin,
            json!({"name": "uptime", "kind": "webhook", "templates": templates}),
        )
        .await
        .expect(201);
    (admin, team, created)
}

both!(
    a_json_body_is_read_by_its_templates_and_fires_then_resolves_one_incident,
    |app| {
        let (admin, team, created) = webhook_team(&app, templates()).await;
        assert_eq!(created["kind"], "webhook");
        assert_eq!(created["templates"], templates());
        let url = created["webhook_url"].as_str().unwrap().to_string();

        // The owner tries a sample first: nothing is stored.
        let tried = app
            .post(
                "/api/webhook-templates/try",
                &admin,
                json!({"templates": templates(), "sample": body("down").to_string()}),
            )
            .await
            .expect(200);
        assert_eq!(tried["action"], "fires");
        assert_eq!(tried["title"], "api-health is down");
        assert_eq!(tried["severity"], "critical");
        assert_eq!(tried["labels"]["service"], "api");
        assert!(app.incidents(&admin, team).await.is_empty());

        let down = serde_json::to_vec(&body("down")).unwrap();
        let (status, answer) = post(&app, &url, &down).await;
        assert_eq!((status, &answer["accepted"]), (200, &json!(1)), "{answer}");
        // The same body again is the same alert, refreshed: still one incident.
        assert_eq!(post(&app, &url, &down).await.0, 200);
        let list = app.incidents(&admin, team).await;
        assert_eq!(list.len(), 1);
        let incident = &list[0];
        // The title, then what the message says, as for any alert with a description.
        assert_eq!(incident["title"], r#"api-health is down: {"code": 503}"#);
        assert_eq!(incident["severity"], "critical");
        assert_eq!(incident["state"], "triggered");
        let alert = app.alert_by_fingerprint(&admin, "api-health").await;
        assert_eq!(alert["labels"]["service"], "api");
        assert_eq!(alert["generator_url"], "https://up.example/checks/7");
        assert_eq!(alert["annotations"]["description"], r#"{"code": 503}"#);

        // The resolve condition holds: the alert its key names resolves, and the incident.
        let up = serde_json::to_vec(&body("up")).unwrap();
        assert_eq!(post(&app, &url, &up).await.0, 200);
        let list = app.incidents(&admin, team).await;
        assert_eq!((list.len(), &list[0]["state"]), (1, &json!("resolved")));

        // A body that is not JSON is refused and changes nothing; the stamp still follows.
        let (status, answer) = post(&app, &url, b"down!").await;
        assert_eq!(status, 400, "{answer}");
        assert!(answer["message"]
            .as_str()
            .unwrap()
            .starts_with("not a JSON webhook body"));
        assert_eq!(app.incidents(&admin, team).await.len(), 1);
        let listed = app
            .get(&format!("/api/teams/{team}/integrations"), &admin)
            .await
            .expect(200);
        assert!(listed[0]["last_webhook_at"].is_string());
    }
);

both!(
    templates_are_checked_when_saved_and_tried_and_their_work_is_bounded,
    |app| {
        let (admin, team, created) = webhook_team(&app, templates()).await;
        let id = created["id"].as_i64().unwrap();
        let path = format!("/api/teams/{team}/integrations");
        let mut broken = templates();
        broken["severity"] = json!("{{ payload.level ");
        let why = app
            .post(
                &path,
                &admin,
                json!({"name": "b", "kind": "webhook", "templates": broken}),
            )
            .await
            .expect_error(400, "invalid");
        assert!(why.starts_with("templates.severity: "), "{why}");
        let why = app
            .post(
                &path,
                &admin,
                json!({"name": "c", "kind": "alertmanager", "templates": templates()}),
            )
            .await
            .expect_error(400, "invalid");
        assert!(why.contains("only a generic webhook"), "{why}");

        // A webhook made without templates starts with the starter set.
        let plain = app
            .post(&path, &admin, json!({"name": "d", "kind": "webhook"}))
            .await
            .expect(201);
        assert!(plain["templates"]["title"]
            .as_str()
            .unwrap()
            .contains("payload.title"));

        // Templates are replaced whole; a broken set leaves the stored one.
        let one = format!("{path}/{id}");
        let replaced = json!({"title": "{{ payload.name }}"});
        let saved = app
            .send(
                Method::PATCH,
                &one,
                &admin,
                Some(json!({"templates": replaced})),
            )
            .await
            .expect(200);
        assert_eq!(saved["templates"], replaced);
        app.send(
            Method::PATCH,
            &one,
            &admin,
            Some(json!({"templates": {"title": "{% for %}"}})),
        )
        .await
        .expect_error(400, "invalid");
        let listed = app.get(&path, &admin).await.expect(200);
        let kept = listed.as_array().unwrap().iter().find(|i| i["id"] == id);
        assert_eq!(kept.unwrap()["templates"], replaced);

        // Trying: a sample that is not JSON, a loop that would run for ages, no title.
        let try_it =
            |templates: Value, sample: &str| json!({"templates": templates, "sample": sample});
        let why = app
            .post(
                "/api/webhook-templates/try",
                &admin,
                try_it(templates(), "{oops"),
            )
            .await
            .expect_error(400, "invalid");
        assert!(why.starts_with("sample: not JSON"), "{why}");
        let endless = json!({"title":
            "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}"});
        let why = app
            .post("/api/webhook-templates/try", &admin, try_it(endless, "{}"))
            .await
            .expect_error(400, "invalid");
        assert!(why.contains("too much work"), "{why}");
        let why = app
            .post(
                "/api/webhook-templates/try",
                &admin,
                try_it(json!({"title": "{{ payload.none }}"}), "{}"),
            )
            .await
            .expect_error(400, "invalid");
        assert_eq!(
            why,
            "templates.title: the template rendered nothing for this body"
        );
        // Signed out, there is nothing to try.
        app.post(
            "/api/webhook-templates/try",
            &Auth::None,
            try_it(templates(), "{}"),
        )
        .await
        .expect(401);
    }
);

both!(the_configuration_file_carries_a_webhooks_templates, |app| {
    use klaxon_server::config_file::remote::Remote;
    use klaxon_server::config_file::{apply, prepare};
    let admin = app.bootstrap().await;
    let key = app.instance_key(&admin, "config").await;
    let sa = Auth::Key(key.clone());
    let env = |_: &str| None;
    let mut remote = Remote::new(&app.url, &key).unwrap();
    let file = |title: &str| {
        format!(
            "apiVersion: klaxon.dev/v1alpha1
kind: KlaxonConfig
teams:
  - name: web
    alertSources:
      - name: uptime
        kind: webhook
        templates:
          title: '{title}'
          dedup_key: '{{{{ payload.check }}}}'
          labels:
            service: '{{{{ payload.service }}}}'
"
        )
    };
    let first = file("{{ payload.check }} is down");
    let p = prepare(&mut remote, &first, false, &env).await.unwrap();
    assert_eq!(apply(&mut remote, &p.steps, &env).await.failed, None);
    let team = app.get("/api/teams?name=web", &sa).await.expect(200)[0]["id"]
        .as_i64()
        .unwrap();
    let listed = app
        .get(&format!("/api/teams/{team}/integrations"), &admin)
        .await
        .expect(200);
    let kept = &listed[0]["templates"];
    assert_eq!(kept["title"], "{{ payload.check }} is down");
    assert_eq!(kept["labels"]["service"], "{{ payload.service }}");
    // Applied again, nothing changes; new templates change in place (the URL stays).
    let again = prepare(&mut remote, &first, false, &env).await.unwrap();
    assert_eq!(again.steps, vec![]);
    let second = file("{{ payload.check }} failed");
    let p = prepare(&mut remote, &second, false, &env).await.unwrap();
    let plan: Vec<String> = p.steps.iter().map(|s| s.to_string()).collect();
    assert_eq!(plan.len(), 1);
    assert!(
        plan[0].starts_with("~ change alert source web/uptime"),
        "{plan:?}"
    );
    assert_eq!(apply(&mut remote, &p.steps, &env).await.failed, None);
    let listed = app
        .get(&format!("/api/teams/{team}/integrations"), &admin)
        .await
        .expect(200);
    assert_eq!(listed.as_array().unwrap().len(), 1, "changed in place");
    assert_eq!(
        listed[0]["templates"]["title"],
        "{{ payload.check }} failed"
    );
    // Templates on another kind are refused before anything is sent.
    let wrong = second.replace("kind: webhook", "kind: alertmanager");
    let refused = prepare(&mut remote, &wrong, false, &env)
        .await
        .err()
        .unwrap();
    assert!(
        format!("{refused:?}").contains("only a source of kind webhook has templates"),
        "{refused:?}"
    );
});
