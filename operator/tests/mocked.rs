//! The server reconciler against a mocked Kubernetes API (tower-test, as in kube-rs's
//! controller-rs): each request it makes is asserted in order — including the
//! PodDisruptionBudget under `policy/v1`, which the v1.20 API server of `cluster.rs` lacks —
//! while Klaxon itself is the real router.

use crate::common;

use http::{Method, Request, Response};
use klaxon_operator::controller::{server, Context};
use klaxon_operator::crd::KlaxonServer;
use klaxon_operator::klaxon::Klaxon;
use klaxon_operator::ops::Metrics;
use kube::client::Body;
use kube::Client;
use serde_json::{json, Value};
use std::sync::Arc;

type Handle = tower_test::mock::Handle<Request<Body>, Response<Body>>;

/// Takes the next request, checks its method and path, answers `answer` with `status`, and
/// returns the body it carried.
async fn expect(
    handle: &mut Handle,
    method: Method,
    path: &str,
    status: u16,
    answer: Value,
) -> Value {
    let (request, send) = handle.next_request().await.expect("another request");
    assert_eq!(request.method(), method, "{}", request.uri());
    assert_eq!(request.uri().path(), path);
    let body = request.into_body().collect_bytes().await.unwrap();
    send.send_response(
        Response::builder()
            .status(status)
            .body(Body::from(answer.to_string().into_bytes()))
            .unwrap(),
    );
    serde_json::from_slice(&body).unwrap_or(Value::Null)
}

fn server(endpoint: &str, pod: Value) -> KlaxonServer {
    serde_json::from_value(json!({
        "apiVersion": "klaxon.dev/v1alpha1", "kind": "KlaxonServer",
        "metadata": {"name": "paging", "namespace": "ops", "uid": "u-1", "generation": 3},
        "spec": {"endpoint": endpoint, "credentialsSecretRef": {"name": "given", "key": "key"}, "pod": pod},
    }))
    .unwrap()
}

#[tokio::test]
async fn a_server_with_a_budget_applies_it_and_one_without_deletes_it() {
    let klaxon = common::klaxon().await;
    let admin = Klaxon::new(&klaxon.url, None)
        .bootstrap("admin")
        .await
        .unwrap();
    let mut secret = serde_json::to_value(k8s_openapi::api::core::v1::Secret {
        data: Some(
            [(
                "key".to_string(),
                k8s_openapi::ByteString(admin.api_key.clone().into_bytes()),
            )]
            .into(),
        ),
        ..Default::default()
    })
    .unwrap();
    secret["metadata"] = json!({"name": "given"});

    for (pod, wants_budget) in [
        (json!({"disruptionBudget": {"maxUnavailable": 1}}), true),
        (json!({}), false),
    ] {
        let (service, mut handle) = tower_test::mock::pair::<Request<Body>, Response<Body>>();
        let ctx = Arc::new(Context::new(
            Client::new(service, "default"),
            "klaxon-system".into(),
            Arc::new(Metrics::default()),
        ));
        let resource = server(&klaxon.url, pod);
        let echo = serde_json::to_value(&resource).unwrap();
        let secret = secret.clone();
        let mock = tokio::spawn(async move {
            let d = expect(
                &mut handle,
                Method::PATCH,
                "/apis/apps/v1/namespaces/ops/deployments/paging",
                200,
                json!({}),
            )
            .await;
            assert_eq!(d["spec"]["replicas"], 2);
            assert_eq!(d["metadata"]["ownerReferences"][0]["kind"], "KlaxonServer");
            expect(
                &mut handle,
                Method::PATCH,
                "/api/v1/namespaces/ops/services/paging",
                200,
                json!({}),
            )
            .await;
            let budget = "/apis/policy/v1/namespaces/ops/poddisruptionbudgets/paging";
            if wants_budget {
                let pdb = expect(&mut handle, Method::PATCH, budget, 200, json!({})).await;
                assert_eq!(pdb["spec"]["maxUnavailable"], 1);
                assert_eq!(
                    pdb["spec"]["selector"]["matchLabels"]["app.kubernetes.io/instance"],
                    "paging"
                );
            } else {
                let not_found = json!({"kind": "Status", "apiVersion": "v1", "status": "Failure",
                    "message": "not found", "reason": "NotFound", "code": 404});
                expect(&mut handle, Method::DELETE, budget, 404, not_found).await;
            }
            expect(
                &mut handle,
                Method::GET,
                "/api/v1/namespaces/klaxon-system/secrets/given",
                200,
                secret,
            )
            .await;
            let status = expect(
                &mut handle,
                Method::PATCH,
                "/apis/klaxon.dev/v1alpha1/namespaces/ops/klaxonservers/paging/status",
                200,
                echo,
            )
            .await;
            let conditions = status["status"]["conditions"].as_array().unwrap().clone();
            let ready = conditions.iter().find(|c| c["type"] == "Ready").unwrap();
            assert_eq!(ready["status"], "True", "{conditions:?}");
            assert_eq!(ready["observedGeneration"], 3);
            assert_eq!(status["status"]["credentialsSecretRef"]["name"], "given");
        });
        server::reconcile(Arc::new(resource), ctx).await.unwrap();
        mock.await.unwrap();
    }
}

#[tokio::test]
async fn a_team_gets_its_finalizer_then_says_its_server_is_missing() {
    use klaxon_operator::controller::team;
    use klaxon_operator::crd::KlaxonTeam;
    let (service, mut handle) = tower_test::mock::pair::<Request<Body>, Response<Body>>();
    let ctx = Arc::new(Context::new(
        Client::new(service, "default"),
        "klaxon-system".into(),
        Arc::new(Metrics::default()),
    ));
    let fresh: KlaxonTeam = serde_json::from_value(json!({
        "apiVersion": "klaxon.dev/v1alpha1", "kind": "KlaxonTeam",
        "metadata": {"name": "payments", "namespace": "ops", "uid": "t-1", "resourceVersion": "7"},
        "spec": {"serverRef": {"name": "nowhere"}},
    }))
    .unwrap();
    let mut with_finalizer = serde_json::to_value(&fresh).unwrap();
    with_finalizer["metadata"]["finalizers"] = json!(["klaxon.dev/cleanup"]);
    let echo = with_finalizer.clone();
    let mock = tokio::spawn(async move {
        // First the finalizer, so a deletion always comes back to clean up.
        let patch = expect(
            &mut handle,
            Method::PATCH,
            "/apis/klaxon.dev/v1alpha1/namespaces/ops/klaxonteams/payments",
            200,
            echo.clone(),
        )
        .await;
        assert!(patch.to_string().contains("klaxon.dev/cleanup"), "{patch}");
        let not_found = json!({"kind": "Status", "apiVersion": "v1", "status": "Failure",
            "message": "not found", "reason": "NotFound", "code": 404});
        expect(
            &mut handle,
            Method::GET,
            "/apis/klaxon.dev/v1alpha1/namespaces/ops/klaxonservers/nowhere",
            404,
            not_found,
        )
        .await;
        let status = expect(
            &mut handle,
            Method::PATCH,
            "/apis/klaxon.dev/v1alpha1/namespaces/ops/klaxonteams/payments/status",
            200,
            echo,
        )
        .await;
        let ready = &status["status"]["conditions"][0];
        assert_eq!(
            (
                ready["type"].as_str(),
                ready["status"].as_str(),
                ready["reason"].as_str()
            ),
            (Some("Ready"), Some("False"), Some("ServerRefNotFound"))
        );
    });
    team::reconcile(Arc::new(fresh), ctx.clone()).await.unwrap();
    let second: KlaxonTeam = serde_json::from_value(with_finalizer).unwrap();
    team::reconcile(Arc::new(second), ctx).await.unwrap();
    mock.await.unwrap();
}

/// A Secret answer holding `data` (values base64-encoded as the API server does).
fn secret_with(name: &str, data: &[(&str, &str)]) -> Value {
    let mut s = serde_json::to_value(k8s_openapi::api::core::v1::Secret {
        data: Some(
            data.iter()
                .map(|(k, v)| {
                    (
                        k.to_string(),
                        k8s_openapi::ByteString(v.as_bytes().to_vec()),
                    )
                })
                .collect(),
        ),
        ..Default::default()
    })
    .unwrap();
    s["metadata"] = json!({"name": name});
    s
}

#[tokio::test]
async fn a_refused_kind_changed_event_never_costs_a_second_integration() {
    use klaxon_operator::controller::children;
    use klaxon_operator::crd::KlaxonAlertSource;
    let klaxon = common::klaxon().await;
    let admin = Klaxon::new(&klaxon.url, None)
        .bootstrap("admin")
        .await
        .unwrap();
    let admin = Klaxon::new(&klaxon.url, Some(admin.api_key));
    let team = admin.create_team("payments", None).await.unwrap();
    let account = admin
        .create_team_account(team.id, "operator-payments")
        .await
        .unwrap();
    let key = admin.mint_key(account.id, "operator").await.unwrap().key;
    let scoped = Klaxon::new(&klaxon.url, Some(key.clone()));
    let old = scoped
        .create_integration(team.id, "prometheus", "alertmanager")
        .await
        .unwrap();

    let (service, mut handle) = tower_test::mock::pair::<Request<Body>, Response<Body>>();
    let ctx = Arc::new(Context::new(
        Client::new(service, "default"),
        "klaxon-system".into(),
        Arc::new(Metrics::default()),
    ));
    // The kind changed from alertmanager to grafana since the integration was made.
    let source: KlaxonAlertSource = serde_json::from_value(json!({
        "apiVersion": "klaxon.dev/v1alpha1", "kind": "KlaxonAlertSource",
        "metadata": {"name": "prometheus", "namespace": "ops", "uid": "s-1", "generation": 2,
                     "finalizers": ["klaxon.dev/cleanup"]},
        "spec": {"teamRef": {"name": "payments"}, "kind": "grafana"},
        "status": {"integrationID": old.integration.id, "kind": "alertmanager",
                   "webhookURLSecretRef": {"name": "prometheus-webhook"}},
    }))
    .unwrap();
    let echo = serde_json::to_value(&source).unwrap();
    let team_resource = json!({
        "apiVersion": "klaxon.dev/v1alpha1", "kind": "KlaxonTeam",
        "metadata": {"name": "payments", "namespace": "ops", "uid": "t-1"},
        "spec": {"serverRef": {"name": "paging"}},
        "status": {"teamID": team.id, "serverEndpoint": klaxon.url,
                   "credentialsSecretRef": {"name": "klaxon-team-ops-payments", "key": "key"}},
    });
    let old_id = old.integration.id;
    let mock = tokio::spawn(async move {
        let teams = "/apis/klaxon.dev/v1alpha1/namespaces/ops/klaxonteams/payments";
        expect(&mut handle, Method::GET, teams, 200, team_resource).await;
        let credential = secret_with("klaxon-team-ops-payments", &[("key", &key)]);
        let path = "/api/v1/namespaces/klaxon-system/secrets/klaxon-team-ops-payments";
        expect(&mut handle, Method::GET, path, 200, credential).await;
        let webhook = "/api/v1/namespaces/ops/secrets/prometheus-webhook";
        let stored = secret_with(
            "prometheus-webhook",
            &[("integration_id", &old_id.to_string())],
        );
        expect(&mut handle, Method::GET, webhook, 200, stored).await;
        let written = expect(&mut handle, Method::PATCH, webhook, 200, json!({})).await;
        let status = expect(
            &mut handle,
            Method::PATCH,
            "/apis/klaxon.dev/v1alpha1/namespaces/ops/klaxonalertsources/prometheus/status",
            200,
            echo,
        )
        .await;
        // The operator may not publish events here: the API server refuses.
        let forbidden = json!({"kind": "Status", "apiVersion": "v1", "status": "Failure",
            "message": "events.events.k8s.io is forbidden", "reason": "Forbidden", "code": 403});
        expect(
            &mut handle,
            Method::POST,
            "/apis/events.k8s.io/v1/namespaces/ops/events",
            403,
            forbidden,
        )
        .await;
        (written, status)
    });
    children::reconcile(Arc::new(source), ctx)
        .await
        .expect("a refused event is no failed reconcile");
    let (written, status) = mock.await.unwrap();
    let new_id = status["status"]["integrationID"].as_i64().unwrap();
    assert_ne!(new_id, old_id, "the status records the new integration");
    assert_eq!(status["status"]["kind"], "grafana");
    assert!(written.to_string().contains("data"), "{written}");
    let left = scoped
        .create_integration(team.id, "probe", "alertmanager")
        .await
        .unwrap();
    // Exactly one integration was made for the change: the probe's id follows the new one's.
    assert_eq!(left.integration.id, new_id + 1);
}
