//! The server reconciler against a mocked Kubernetes API (tower-test, as in kube-rs's
//! controller-rs): each request it makes is asserted in order — including the
//! PodDisruptionBudget under `policy/v1`, which the v1.20 API server of `cluster.rs` lacks —
//! while Klaxon itself is the real router.

mod common;

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
