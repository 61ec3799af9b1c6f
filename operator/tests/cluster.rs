//! The operator for real: a Kubernetes API server (v1.20 with etcd, `scripts/kube-test-cluster.sh`;
//! build it once with `scripts/kube-apiserver.sh`), the CRDs applied, the controllers running,
//! and a real Klaxon router on loopback HTTP standing in for the Deployment's pods (no kubelet
//! runs there), reached through `spec.endpoint`.

use crate::common;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{Namespace, Secret, Service};
use k8s_openapi::api::events::v1::Event;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use klaxon_operator::crd::{
    self, KlaxonAlertSource, KlaxonDeadmanSwitch, KlaxonEscalationRule, KlaxonServer, KlaxonTeam,
};
use klaxon_operator::klaxon::Klaxon;
use kube::api::{DeleteParams, PostParams};
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::{Api, Client, Config};
use serde_json::json;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

const OPERATOR_NS: &str = "klaxon-system";
/// The test Klaxon's clock (`common::klaxon`): invites it mints expire 7 days later.
const KLAXON_T0: i64 = 1_795_305_600;

struct Cluster {
    dir: tempfile::TempDir,
    client: Client,
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let _ = Command::new(script())
            .arg("stop")
            .arg(self.dir.path())
            .status();
    }
}

fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/kube-test-cluster.sh")
}

async fn cluster() -> Cluster {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(script())
        .arg("start")
        .arg(dir.path())
        .env("ETCD_PORT", "")
        .env("KUBE_PORT", "")
        .output()
        .expect("scripts/kube-test-cluster.sh runs");
    assert!(
        out.status.success(),
        "the test cluster did not start (build it with scripts/kube-apiserver.sh): {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let kubeconfig = Kubeconfig::read_from(String::from_utf8(out.stdout).unwrap().trim()).unwrap();
    let config = Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default())
        .await
        .unwrap();
    Cluster {
        dir,
        client: Client::try_from(config).unwrap(),
    }
}

/// Waits for what the operator does (never for a clock): polls `check` until it holds.
async fn eventually<T, F, Fut>(what: &str, mut check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    for _ in 0..300 {
        if let Some(v) = check().await {
            return v;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("the operator never got there: {what}");
}

/// One value of a Secret, `None` when the Secret or the key is missing.
async fn secret_value(client: &Client, namespace: &str, name: &str, key: &str) -> Option<String> {
    let s = Api::<Secret>::namespaced(client.clone(), namespace)
        .get_opt(name)
        .await
        .ok()??;
    String::from_utf8(s.data?.get(key)?.0.clone()).ok()
}

/// `GET url` with an API key, as JSON.
async fn get_json(url: String, key: &str) -> serde_json::Value {
    reqwest::Client::new()
        .get(url)
        .bearer_auth(key)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}

/// Waits until `name` no longer exists (its finalizer has run).
async fn until_gone<K>(api: &Api<K>, name: &str)
where
    K: kube::Resource + Clone + serde::de::DeserializeOwned + std::fmt::Debug,
{
    eventually(&format!("{name} deleted"), || async {
        api.get_opt(name).await.ok()?.is_none().then_some(())
    })
    .await
}

/// Waits until `name`'s `Ready` condition, written for its current generation (so a change
/// just made has been reconciled), is True (`reason` None) or False with `reason`, and returns
/// the resource as it then was.
async fn until_ready<K>(api: &Api<K>, name: &str, reason: Option<&str>) -> K
where
    K: kube::Resource + Clone + serde::de::DeserializeOwned + serde::Serialize + std::fmt::Debug,
{
    let what = format!("{name} Ready {}", reason.unwrap_or("True"));
    eventually(&what, || async {
        let obj = api.get(name).await.ok()?;
        let value = serde_json::to_value(&obj).ok()?;
        let ready = value["status"]["conditions"]
            .as_array()?
            .iter()
            .find(|c| c["type"] == "Ready")?
            .clone();
        let current = ready["observedGeneration"] == value["metadata"]["generation"];
        let wanted = match reason {
            None => ready["status"] == "True",
            Some(r) => ready["status"] == "False" && ready["reason"] == r,
        };
        (current && wanted).then_some(obj)
    })
    .await
}

#[tokio::test]
async fn servers_and_teams_are_reconciled_into_klaxon_and_cleaned_up() {
    let _ = tracing_subscriber::fmt()
        .with_test_writer()
        .with_env_filter("warn")
        .try_init();
    let cluster = cluster().await;
    let client = cluster.client.clone();
    let namespaces = Api::<Namespace>::all(client.clone());
    for ns in [OPERATOR_NS, "apps", "other"] {
        let n: Namespace = serde_json::from_value(json!({"metadata": {"name": ns}})).unwrap();
        namespaces.create(&PostParams::default(), &n).await.unwrap();
    }
    let crds = Api::<CustomResourceDefinition>::all(client.clone());
    for crd in crd::all() {
        crds.create(&PostParams::default(), &crd).await.unwrap();
    }
    for crd in crd::all() {
        let name = crd.metadata.name.clone().unwrap();
        eventually("CRDs established", || {
            let crds = crds.clone();
            let name = name.clone();
            async move {
                let c = crds.get(&name).await.ok()?;
                c.status?
                    .conditions?
                    .iter()
                    .any(|c| c.type_ == "Established" && c.status == "True")
                    .then_some(())
            }
        })
        .await;
    }
    let server_process = common::klaxon().await;
    let url = server_process.url.clone();
    let metrics = std::sync::Arc::new(klaxon_operator::ops::Metrics::default());
    // The operator's clock, which the invite refresh reads; it starts at Klaxon's test time.
    let now = std::sync::Arc::new(std::sync::atomic::AtomicI64::new(KLAXON_T0));
    let mut ctx = klaxon_operator::controller::Context::new(
        client.clone(),
        OPERATOR_NS.into(),
        metrics.clone(),
    );
    let clock = now.clone();
    ctx.now = std::sync::Arc::new(move || clock.load(std::sync::atomic::Ordering::SeqCst));
    tokio::spawn(klaxon_operator::controller::run(ctx));

    // A server: its Deployment and Service appear, the operator bootstraps it and is Ready.
    let servers = Api::<KlaxonServer>::namespaced(client.clone(), "apps");
    let server: KlaxonServer = serde_json::from_value(json!({
        "apiVersion": "klaxon.dev/v1alpha1", "kind": "KlaxonServer",
        "metadata": {"name": "paging"},
        "spec": {"endpoint": url, "networking": {"hostname": "klaxon.example.com"}},
    }))
    .unwrap();
    servers
        .create(&PostParams::default(), &server)
        .await
        .unwrap();
    let status = until_ready(&servers, "paging", None).await.status.unwrap();
    let deployment = Api::<Deployment>::namespaced(client.clone(), "apps")
        .get("paging")
        .await
        .unwrap();
    assert_eq!(deployment.spec.unwrap().replicas, Some(2));
    Api::<Service>::namespaced(client.clone(), "apps")
        .get("paging")
        .await
        .unwrap();
    let cred = status.credentials_secret_ref.unwrap();
    let key = secret_value(&client, OPERATOR_NS, &cred.name, &cred.key)
        .await
        .unwrap();
    let instance = Klaxon::new(&url, Some(key));

    // A team with a group mapping and an invite link.
    let teams = Api::<KlaxonTeam>::namespaced(client.clone(), "apps");
    let team: KlaxonTeam = serde_json::from_value(json!({
        "apiVersion": "klaxon.dev/v1alpha1", "kind": "KlaxonTeam",
        "metadata": {"name": "payments"},
        "spec": {"serverRef": {"name": "paging"}, "displayName": "Payments",
                 "oidc": {"memberGroups": ["payments-oncall"]},
                 "timeZone": "America/New_York", "handoffTime": "19:00",
                 "invite": {"enabled": true, "maxUses": 2}},
    }))
    .unwrap();
    teams.create(&PostParams::default(), &team).await.unwrap();
    let team_status = until_ready(&teams, "payments", None).await.status.unwrap();
    let team_key_for_invites = {
        let r = team_status.credentials_secret_ref.clone().unwrap();
        secret_value(&client, OPERATOR_NS, &r.name, &r.key)
            .await
            .unwrap()
    };
    let on_server = instance.team_by_name("payments").await.unwrap().unwrap();
    assert_eq!(Some(on_server.id), team_status.team_id);
    assert_eq!(on_server.display_name, "Payments");
    assert_eq!(
        on_server.oidc.member_groups,
        vec!["payments-oncall".to_string()]
    );
    let day = get_json(
        format!("{url}/api/teams/{}/on-call-day", on_server.id),
        &team_key_for_invites,
    )
    .await;
    assert_eq!(
        (day["time_zone"].as_str(), day["handoff_time"].as_str()),
        (Some("America/New_York"), Some("19:00")),
        "the spec's on-call day is the team's: {day}"
    );
    let url_in_secret = secret_value(&client, "apps", "payments-invite", "url")
        .await
        .unwrap();
    assert!(url_in_secret.contains("/signup?invite="));
    assert_eq!(team_status.server_endpoint.as_deref(), Some(url.as_str()));

    // A day before the invite expires, the next reconcile mints a new one and revokes the old;
    // a lost invite Secret is minted again without fuss.
    let invite_url = || secret_value(&client, "apps", "payments-invite", "url");
    let touch = |n: u32| {
        let teams = teams.clone();
        async move {
            let p = kube::api::Patch::Merge(
                json!({"metadata": {"annotations": {"test/touch": n.to_string()}}}),
            );
            teams
                .patch("payments", &kube::api::PatchParams::default(), &p)
                .await
                .unwrap();
        }
    };
    now.store(KLAXON_T0 + 6 * 86_400, std::sync::atomic::Ordering::SeqCst);
    touch(1).await;
    let refreshed = eventually("invite refreshed", || async {
        invite_url().await.filter(|u| *u != url_in_secret)
    })
    .await;
    let invites = get_json(
        format!("{url}/api/teams/{}/invites", team_status.team_id.unwrap()),
        &team_key_for_invites,
    )
    .await;
    let invites = invites.as_array().unwrap();
    let first = invites
        .iter()
        .find(|i| Some(i["id"].as_i64().unwrap()) == team_status.invite_id)
        .unwrap();
    assert_eq!(
        first["state"], "revoked",
        "the replaced invite no longer works"
    );
    Api::<Secret>::namespaced(client.clone(), "apps")
        .delete("payments-invite", &DeleteParams::default())
        .await
        .unwrap();
    touch(2).await;
    let reminted = eventually("invite re-minted", || {
        let refreshed = refreshed.clone();
        async move { invite_url().await.filter(|u| *u != refreshed) }
    })
    .await;
    assert!(reminted.contains("/signup?invite="));

    // Turning the invite off revokes it and removes its Secret.
    teams
        .patch(
            "payments",
            &kube::api::PatchParams::default(),
            &kube::api::Patch::Merge(json!({"spec": {"invite": {"enabled": false}}})),
        )
        .await
        .unwrap();
    eventually("invite Secret removed", || async {
        invite_url().await.is_none().then_some(())
    })
    .await;
    let invites = get_json(
        format!("{url}/api/teams/{}/invites", team_status.team_id.unwrap()),
        &team_key_for_invites,
    )
    .await;
    let invites = invites.as_array().unwrap();
    assert!(
        invites.iter().all(|i| i["state"] != "usable"),
        "{invites:?}"
    );

    // A missing server, and a server in a namespace that does not admit the team.
    let lost: KlaxonTeam = serde_json::from_value(json!({
        "apiVersion": "klaxon.dev/v1alpha1", "kind": "KlaxonTeam",
        "metadata": {"name": "lost"}, "spec": {"serverRef": {"name": "nowhere"}},
    }))
    .unwrap();
    teams.create(&PostParams::default(), &lost).await.unwrap();
    let foreign: KlaxonTeam = serde_json::from_value(json!({
        "apiVersion": "klaxon.dev/v1alpha1", "kind": "KlaxonTeam",
        "metadata": {"name": "foreign"}, "spec": {"serverRef": {"name": "paging", "namespace": "apps"}},
    }))
    .unwrap();
    let other_teams = Api::<KlaxonTeam>::namespaced(client.clone(), "other");
    other_teams
        .create(&PostParams::default(), &foreign)
        .await
        .unwrap();
    for (api, name, reason) in [
        (&teams, "lost", "ServerRefNotFound"),
        (&other_teams, "foreign", "NamespaceNotAllowed"),
    ] {
        until_ready(api, name, Some(reason)).await;
    }
    assert!(instance.team_by_name("foreign").await.unwrap().is_none());

    // The team's children, acting with the team's key.
    let team_key = team_key_for_invites.clone();
    let as_team = Klaxon::new(&url, Some(team_key.clone()));
    let team_id = team_status.team_id.unwrap();
    let create = |kind: &str, name: &str, spec: serde_json::Value| {
        serde_json::from_value::<serde_json::Value>(json!({
            "apiVersion": "klaxon.dev/v1alpha1", "kind": kind, "metadata": {"name": name}, "spec": spec,
        }))
        .unwrap()
    };
    let sources = Api::<KlaxonAlertSource>::namespaced(client.clone(), "apps");
    let source: KlaxonAlertSource = serde_json::from_value(create(
        "KlaxonAlertSource",
        "am",
        json!({"teamRef": {"name": "payments"}}),
    ))
    .unwrap();
    sources
        .create(&PostParams::default(), &source)
        .await
        .unwrap();
    let rules = Api::<KlaxonEscalationRule>::namespaced(client.clone(), "apps");
    let rule: KlaxonEscalationRule = serde_json::from_value(create("KlaxonEscalationRule", "ladder", json!({
        "teamRef": {"name": "payments"},
        "levels": [{"timeout": "5m", "targets": [{"type": "oncall"}]}, {"timeout": "10m", "targets": [{"type": "user", "username": "ghost"}]}],
    }))).unwrap();
    rules.create(&PostParams::default(), &rule).await.unwrap();
    let switches = Api::<KlaxonDeadmanSwitch>::namespaced(client.clone(), "apps");
    let switch: KlaxonDeadmanSwitch = serde_json::from_value(create("KlaxonDeadmanSwitch", "watchdog", json!({
        "teamRef": {"name": "payments"}, "matcher": "{alertname=\"Watchdog\"}", "timeout": "10m",
    }))).unwrap();
    switches
        .create(&PostParams::default(), &switch)
        .await
        .unwrap();

    let source_status = until_ready(&sources, "am", None).await.status.unwrap();
    let hook = secret_value(&client, "apps", "am-webhook", "url")
        .await
        .unwrap();
    assert!(hook.contains("/api/alertmanager/webhook/"), "{hook}");
    assert!(source_status.integration_id.is_some());

    // An unknown user keeps the ladder off the server until the person exists.
    until_ready(&rules, "ladder", Some("UnknownUser")).await;
    // The bootstrap administrator (its key beside the operator's) adds `ghost` with a topic to
    // the team and today's rota; the ladder then reaches the server.
    let admin_key = secret_value(
        &client,
        OPERATOR_NS,
        &cred.name,
        klaxon_operator::controller::server::ADMIN_KEY,
    )
    .await
    .unwrap();
    let http = reqwest::Client::new();
    let as_admin = |method: reqwest::Method, path: String, body: serde_json::Value| {
        let req = http
            .request(method, format!("{url}{path}"))
            .bearer_auth(&admin_key)
            .json(&body);
        async move {
            let res = req.send().await.unwrap();
            assert!(res.status().is_success(), "{path}: {}", res.status());
            res.json::<serde_json::Value>().await.unwrap()
        }
    };
    let ghost = as_admin(
        reqwest::Method::POST,
        "/api/users".into(),
        json!({"username": "ghost", "password": "ghost password"}),
    )
    .await["id"]
        .as_i64()
        .unwrap();
    as_admin(
        reqwest::Method::PUT,
        format!("/api/users/{ghost}/push-topic"),
        json!({"push_topic": "ghost-pager"}),
    )
    .await;
    as_admin(
        reqwest::Method::POST,
        format!("/api/teams/{team_id}/members"),
        json!({"user_id": ghost}),
    )
    .await;
    as_admin(
        reqwest::Method::POST,
        format!("/api/teams/{team_id}/schedule"),
        json!({"user_id": ghost, "dates": ["2026-11-22"]}),
    )
    .await;
    rules
        .patch(
            "ladder",
            &kube::api::PatchParams::default(),
            &kube::api::Patch::Merge(json!({"metadata": {"annotations": {"test/touch": "1"}}})),
        )
        .await
        .unwrap();
    until_ready(&rules, "ladder", None).await;
    let policy = || get_json(format!("{url}/api/teams/{team_id}/escalation"), &team_key);
    let on_server = policy().await;
    assert_eq!(
        on_server["levels"].as_array().unwrap().len(),
        2,
        "{on_server}"
    );
    assert_eq!(on_server["levels"][1]["targets"][0]["user_id"], ghost);

    let switch_status = until_ready(&switches, "watchdog", None)
        .await
        .status
        .unwrap();
    let on_server = as_team.switches(team_id).await.unwrap();
    assert_eq!(on_server.len(), 1);
    assert_eq!(Some(on_server[0].id), switch_status.switch_id);
    assert_eq!(on_server[0].name, "watchdog");

    // A kind Klaxon refuses changes nothing; the integration keeps working.
    let patch = |spec: serde_json::Value| kube::api::Patch::Merge(json!({"spec": spec}));
    sources
        .patch(
            "am",
            &kube::api::PatchParams::default(),
            &patch(json!({"kind": "nagios"})),
        )
        .await
        .unwrap();
    until_ready(&sources, "am", Some("InvalidKind")).await;
    let integrations = get_json(format!("{url}/api/teams/{team_id}/integrations"), &team_key).await;
    let integrations = integrations.as_array().unwrap();
    assert_eq!(integrations.len(), 1);
    assert_eq!(
        Some(integrations[0]["id"].as_i64().unwrap()),
        source_status.integration_id
    );

    // A new kind is a new integration: the old one is deleted, the Secret holds the new URL,
    // and a Warning event says the old URL stopped working.
    sources
        .patch(
            "am",
            &kube::api::PatchParams::default(),
            &patch(json!({"kind": "grafana"})),
        )
        .await
        .unwrap();
    let changed = eventually("kind changed", || {
        let sources = sources.clone();
        async move {
            let s = sources.get("am").await.ok()?.status?;
            (s.kind.as_deref() == Some("grafana")).then_some(s)
        }
    })
    .await;
    assert_ne!(changed.integration_id, source_status.integration_id);
    let integrations = get_json(format!("{url}/api/teams/{team_id}/integrations"), &team_key).await;
    let integrations = integrations.as_array().unwrap();
    assert_eq!(integrations.len(), 1, "{integrations:?}");
    assert_eq!(integrations[0]["kind"], "grafana");
    assert_eq!(
        Some(integrations[0]["id"].as_i64().unwrap()),
        changed.integration_id
    );
    let new_hook = secret_value(&client, "apps", "am-webhook", "url")
        .await
        .unwrap();
    assert_ne!(new_hook, hook);
    let old_key = hook.rsplit('/').next().unwrap();
    let refused = reqwest::Client::new()
        .post(format!("{url}/api/alertmanager/webhook/{old_key}"))
        .json(&json!({"alerts": []}))
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), 401, "the old URL no longer takes alerts");
    let warning = eventually("Warning event", || {
        let events = Api::<Event>::namespaced(client.clone(), "apps");
        async move {
            events
                .list(&Default::default())
                .await
                .ok()?
                .items
                .into_iter()
                .find(|e| e.reason.as_deref() == Some("KindChanged"))
        }
    })
    .await;
    assert_eq!(warning.type_.as_deref(), Some("Warning"));
    assert_eq!(warning.regarding.unwrap().name.as_deref(), Some("am"));
    assert!(
        warning
            .note
            .unwrap()
            .contains("from alertmanager to grafana"),
        "the event names both kinds"
    );

    // A lost webhook Secret is reported, not repaired (a new integration would move a live URL).
    sources
        .patch(
            "am",
            &kube::api::PatchParams::default(),
            &patch(json!({"kind": "alertmanager"})),
        )
        .await
        .unwrap();
    until_ready(&sources, "am", None).await;
    Api::<Secret>::namespaced(client.clone(), "apps")
        .delete("am-webhook", &DeleteParams::default())
        .await
        .unwrap();
    sources
        .patch(
            "am",
            &kube::api::PatchParams::default(),
            &patch(json!({"name": "Alertmanager"})),
        )
        .await
        .unwrap();
    until_ready(&sources, "am", Some("WebhookSecretLost")).await;

    // The switch is changed in place: same id, new timeout.
    switches
        .patch(
            "watchdog",
            &kube::api::PatchParams::default(),
            &kube::api::Patch::Merge(json!({"spec": {"timeout": "20m"}})),
        )
        .await
        .unwrap();
    eventually("switch updated in place", || {
        let as_team = as_team.clone();
        async move {
            let s = as_team.switches(team_id).await.ok()?;
            (s.len() == 1 && s[0].timeout.to_string() == "20m").then_some(())
        }
    })
    .await;
    assert_eq!(
        Some(as_team.switches(team_id).await.unwrap()[0].id),
        switch_status.switch_id
    );

    // Deleting the source removes its integration.
    sources
        .delete("am", &DeleteParams::default())
        .await
        .unwrap();
    until_gone(&sources, "am").await;
    switches
        .delete("watchdog", &DeleteParams::default())
        .await
        .unwrap();
    until_gone(&switches, "watchdog").await;
    assert!(as_team.switches(team_id).await.unwrap().is_empty());
    // No policy delete exists: deleting the rule leaves an empty ladder.
    rules
        .delete("ladder", &DeleteParams::default())
        .await
        .unwrap();
    until_gone(&rules, "ladder").await;
    let emptied = policy().await;
    assert!(
        emptied["levels"].as_array().unwrap().is_empty(),
        "{emptied}"
    );

    // Teams that never became ready go without touching the server; one whose team was made
    // but whose credential never came (its account's name is taken by another team's account) stays behind there.
    instance
        .create_team_account(team_id, "operator-stuck")
        .await
        .unwrap();
    let stuck: KlaxonTeam = serde_json::from_value(json!({
        "apiVersion": "klaxon.dev/v1alpha1", "kind": "KlaxonTeam",
        "metadata": {"name": "stuck"}, "spec": {"serverRef": {"name": "paging"}},
    }))
    .unwrap();
    teams.create(&PostParams::default(), &stuck).await.unwrap();
    eventually("stuck team made on the server", || {
        let instance = instance.clone();
        async move { instance.team_by_name("stuck").await.ok()? }
    })
    .await;
    for (api, name) in [
        (&teams, "stuck"),
        (&teams, "lost"),
        (&other_teams, "foreign"),
    ] {
        api.delete(name, &DeleteParams::default()).await.unwrap();
        until_gone(api, name).await;
    }
    assert!(instance.team_by_name("stuck").await.unwrap().is_some());

    // Deleting the team deletes it on the server and its credential.
    teams
        .delete("payments", &DeleteParams::default())
        .await
        .unwrap();
    until_gone(&teams, "payments").await;
    assert!(instance.team_by_name("payments").await.unwrap().is_none());
    let creds = Api::<Secret>::namespaced(client.clone(), OPERATOR_NS);
    assert!(creds
        .get_opt(&team_status.credentials_secret_ref.unwrap().name)
        .await
        .unwrap()
        .is_none());
    // Every kind's reconciles were counted.
    let text = metrics.text();
    for kind in [
        "KlaxonServer",
        "KlaxonTeam",
        "KlaxonAlertSource",
        "KlaxonEscalationRule",
        "KlaxonDeadmanSwitch",
    ] {
        assert!(
            text.contains(&format!(
                "klaxon_operator_reconciles_total{{kind=\"{kind}\"}}"
            )),
            "{kind}: {text}"
        );
    }

    // Leader election: one holder at a time; another identity waits until the lease expires.
    use klaxon_operator::lease;
    assert!(lease::try_hold(&client, OPERATOR_NS, "a").await.unwrap());
    assert!(
        lease::try_hold(&client, OPERATOR_NS, "a").await.unwrap(),
        "renewed"
    );
    assert!(
        !lease::try_hold(&client, OPERATOR_NS, "b").await.unwrap(),
        "held by a"
    );
}
