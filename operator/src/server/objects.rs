//! The objects a `KlaxonServer` owns, built from its spec alone (pure, so tests read them
//! directly): a Deployment, a ClusterIP Service and, when `pod.disruptionBudget` is set, a
//! PodDisruptionBudget. No Ingress or Route: exposing the Service is the user's choice.

use crate::crd::{KlaxonServer, KlaxonServerSpec, SecretKeyRef};
use k8s_openapi::api::apps::v1::{Deployment, DeploymentSpec, DeploymentStrategy};
use k8s_openapi::api::core::v1::{
    Container, ContainerPort, EmptyDirVolumeSource, EnvVar, EnvVarSource, HTTPGetAction, PodSpec,
    PodTemplateSpec, Probe, SecretKeySelector, Service, ServicePort, ServiceSpec, Volume,
    VolumeMount,
};
use k8s_openapi::api::policy::v1::{PodDisruptionBudget, PodDisruptionBudgetSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kube::{Resource, ResourceExt};
use std::collections::BTreeMap;

/// Where the server keeps SQLite when no database is given.
const DATA_DIR: &str = "/var/lib/klaxon";

/// The labels that select one server's pods.
pub fn selector_labels(server: &KlaxonServer) -> BTreeMap<String, String> {
    BTreeMap::from([
        ("app.kubernetes.io/name".to_string(), "klaxon".to_string()),
        ("app.kubernetes.io/instance".to_string(), server.name_any()),
    ])
}

fn labels(server: &KlaxonServer) -> BTreeMap<String, String> {
    let mut labels = selector_labels(server);
    labels.insert(
        "app.kubernetes.io/managed-by".into(),
        "klaxon-operator".into(),
    );
    labels
}

/// Metadata of an object named after the server, in its namespace, owned by it.
fn owned_meta(server: &KlaxonServer) -> ObjectMeta {
    ObjectMeta {
        name: Some(server.name_any()),
        namespace: server.namespace(),
        labels: Some(labels(server)),
        owner_references: server.controller_owner_ref(&()).map(|r| vec![r]),
        ..ObjectMeta::default()
    }
}

/// The address the operator reaches the server at.
pub fn endpoint(server: &KlaxonServer) -> String {
    server.spec.endpoint.clone().unwrap_or_else(|| {
        format!(
            "http://{}.{}.svc:{}",
            server.name_any(),
            server.namespace().unwrap_or_else(|| "default".into()),
            server.spec.networking.service_port
        )
    })
}

fn plain(name: &str, value: impl Into<String>) -> EnvVar {
    EnvVar {
        name: name.into(),
        value: Some(value.into()),
        value_from: None,
    }
}

fn secret(name: &str, from: &SecretKeyRef) -> EnvVar {
    EnvVar {
        name: name.into(),
        value: None,
        value_from: Some(EnvVarSource {
            secret_key_ref: Some(SecretKeySelector {
                name: from.name.clone(),
                key: from.key.clone(),
                optional: None,
            }),
            ..EnvVarSource::default()
        }),
    }
}

/// The server's environment, from the spec (then `pod.extraEnv`, which may override).
pub fn env(spec: &KlaxonServerSpec) -> Vec<EnvVar> {
    let mut env = vec![plain(
        "KLAXON_ADDR",
        format!("0.0.0.0:{}", spec.networking.service_port),
    )];
    if let Some(host) = &spec.networking.hostname {
        env.push(plain("KLAXON_PUBLIC_URL", format!("https://{host}")));
    }
    if let Some(db) = &spec.database {
        if let Some(cluster) = &db.postgres_cluster_ref {
            // CloudNativePG writes the whole connection URI into `{cluster}-app`.
            let uri = SecretKeyRef {
                name: format!("{}-app", cluster.name),
                key: "uri".into(),
            };
            env.push(secret("KLAXON_DATABASE_URL", &uri));
        } else if let Some(password) = &db.password_secret_ref {
            // Kubernetes expands `$(VAR)` from variables defined before it.
            env.push(secret("KLAXON_DATABASE_PASSWORD", password));
            env.push(plain(
                "KLAXON_DATABASE_URL",
                format!(
                    "postgres://{}:$(KLAXON_DATABASE_PASSWORD)@{}:{}/{}",
                    db.user.as_deref().unwrap_or("klaxon"),
                    db.host.as_deref().unwrap_or("postgres"),
                    db.port.unwrap_or(5432),
                    db.name.as_deref().unwrap_or("klaxon"),
                ),
            ));
        }
    }
    if let Some(s) = &spec.sweeper {
        env.extend(
            s.stale_after
                .as_ref()
                .map(|v| plain("KLAXON_STALE_AFTER", v)),
        );
        env.extend(
            s.archive_after
                .as_ref()
                .map(|v| plain("KLAXON_ARCHIVE_AFTER", v)),
        );
    }
    if let Some(d) = &spec.deadman {
        for (name, value) in [
            ("KLAXON_DEADMAN_NAME", &d.name),
            ("KLAXON_DEADMAN_MATCHER", &d.matcher),
            ("KLAXON_DEADMAN_TIMEOUT", &d.timeout),
            ("KLAXON_DEADMAN_SEVERITY", &d.severity),
        ] {
            env.extend(value.as_ref().map(|v| plain(name, v)));
        }
    }
    if let Some(n) = &spec.notify {
        env.extend(n.url.as_ref().map(|v| plain("KLAXON_NTFY_URL", v)));
        env.extend(
            n.token_secret_ref
                .as_ref()
                .map(|r| secret("KLAXON_NTFY_TOKEN", r)),
        );
        env.extend(
            n.repeat_interval
                .as_ref()
                .map(|v| plain("KLAXON_NOTIFY_REPEAT_INTERVAL", v)),
        );
    }
    if let Some(o) = &spec.oidc {
        env.push(plain("KLAXON_OIDC_ISSUER", &o.issuer));
        env.push(plain("KLAXON_OIDC_CLIENT_ID", &o.client_id));
        env.extend(
            o.client_secret_ref
                .as_ref()
                .map(|r| secret("KLAXON_OIDC_CLIENT_SECRET", r)),
        );
        if !o.allowed_groups.is_empty() {
            env.push(plain(
                "KLAXON_OIDC_ALLOWED_GROUPS",
                o.allowed_groups.join(","),
            ));
        }
        if !o.admin_groups.is_empty() {
            env.push(plain("KLAXON_OIDC_ADMIN_GROUPS", o.admin_groups.join(",")));
        }
        env.extend(
            o.display_name
                .as_ref()
                .map(|v| plain("KLAXON_OIDC_DISPLAY_NAME", v)),
        );
    }
    if let Some(pod) = &spec.pod {
        env.extend(pod.extra_env.iter().cloned());
    }
    env
}

fn probe() -> Probe {
    Probe {
        http_get: Some(HTTPGetAction {
            path: Some("/healthz".into()),
            port: IntOrString::String("http".into()),
            ..HTTPGetAction::default()
        }),
        period_seconds: Some(10),
        ..Probe::default()
    }
}

fn non_empty<T>(v: &[T]) -> Option<Vec<T>>
where
    T: Clone,
{
    (!v.is_empty()).then(|| v.to_vec())
}

pub fn deployment(server: &KlaxonServer) -> Deployment {
    let spec = &server.spec;
    let pod = spec.pod.clone().unwrap_or_default();
    let mut volumes = vec![Volume {
        name: "data".into(),
        empty_dir: Some(EmptyDirVolumeSource::default()),
        ..Volume::default()
    }];
    volumes.extend(pod.extra_volumes.iter().cloned());
    let mut mounts = vec![VolumeMount {
        name: "data".into(),
        mount_path: DATA_DIR.into(),
        ..VolumeMount::default()
    }];
    mounts.extend(pod.extra_volume_mounts.iter().cloned());
    let container = Container {
        name: "klaxon".into(),
        image: Some(format!("{}:{}", spec.image.repository, spec.image.tag)),
        image_pull_policy: spec.image.pull_policy.clone(),
        args: Some(vec!["serve".into()]),
        ports: Some(vec![ContainerPort {
            name: Some("http".into()),
            container_port: spec.networking.service_port,
            // Part of the list's key for server-side apply (v1.20 has no default for it).
            protocol: Some("TCP".into()),
            ..ContainerPort::default()
        }]),
        env: Some(env(spec)),
        env_from: non_empty(&pod.extra_env_from),
        readiness_probe: Some(probe()),
        liveness_probe: Some(Probe {
            failure_threshold: Some(6),
            ..probe()
        }),
        resources: pod.resources.clone(),
        security_context: pod.container_security_context.clone(),
        volume_mounts: Some(mounts),
        ..Container::default()
    };
    Deployment {
        metadata: owned_meta(server),
        spec: Some(DeploymentSpec {
            replicas: Some(spec.replicas),
            selector: LabelSelector {
                match_labels: Some(selector_labels(server)),
                ..LabelSelector::default()
            },
            // Kubernetes' defaults (25% surge and unavailable): at 2 replicas, 1 up and 0 down.
            strategy: Some(DeploymentStrategy {
                type_: Some("RollingUpdate".into()),
                rolling_update: None,
            }),
            template: PodTemplateSpec {
                metadata: Some(ObjectMeta {
                    labels: Some(labels(server)),
                    annotations: (!pod.annotations.is_empty()).then(|| pod.annotations.clone()),
                    ..ObjectMeta::default()
                }),
                spec: Some(PodSpec {
                    containers: vec![container],
                    node_selector: (!pod.node_selector.is_empty())
                        .then(|| pod.node_selector.clone()),
                    tolerations: non_empty(&pod.tolerations),
                    affinity: pod.affinity.clone(),
                    topology_spread_constraints: non_empty(&pod.topology_spread_constraints),
                    security_context: pod.security_context.clone(),
                    service_account_name: pod.service_account_name.clone(),
                    image_pull_secrets: non_empty(&pod.image_pull_secrets),
                    volumes: Some(volumes),
                    // Klaxon stops taking requests and finishes in-flight work on SIGTERM.
                    termination_grace_period_seconds: Some(30),
                    ..PodSpec::default()
                }),
            },
            ..DeploymentSpec::default()
        }),
        status: None,
    }
}

pub fn service(server: &KlaxonServer) -> Service {
    Service {
        metadata: owned_meta(server),
        spec: Some(ServiceSpec {
            type_: Some("ClusterIP".into()),
            selector: Some(selector_labels(server)),
            ports: Some(vec![ServicePort {
                name: Some("http".into()),
                port: server.spec.networking.service_port,
                target_port: Some(IntOrString::String("http".into())),
                protocol: Some("TCP".into()),
                ..ServicePort::default()
            }]),
            ..ServiceSpec::default()
        }),
        status: None,
    }
}

/// The budget `pod.disruptionBudget` asks for; `None` means there must be none.
pub fn disruption_budget(server: &KlaxonServer) -> Option<PodDisruptionBudget> {
    let budget = server.spec.pod.as_ref()?.disruption_budget.as_ref()?;
    Some(PodDisruptionBudget {
        metadata: owned_meta(server),
        spec: Some(PodDisruptionBudgetSpec {
            min_available: budget.min_available.clone(),
            max_unavailable: budget.max_unavailable.clone(),
            selector: Some(LabelSelector {
                match_labels: Some(selector_labels(server)),
                ..LabelSelector::default()
            }),
            ..PodDisruptionBudgetSpec::default()
        }),
        status: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn server(spec: serde_json::Value) -> KlaxonServer {
        let mut s: KlaxonServer = serde_json::from_value(json!({
            "apiVersion": "klaxon.dev/v1alpha1",
            "kind": "KlaxonServer",
            "metadata": {"name": "paging", "namespace": "ops", "uid": "u-1"},
            "spec": spec,
        }))
        .unwrap();
        s.metadata.uid = Some("u-1".into());
        s
    }

    fn env_of(d: &Deployment) -> BTreeMap<String, EnvVar> {
        d.spec
            .as_ref()
            .unwrap()
            .template
            .spec
            .as_ref()
            .unwrap()
            .containers[0]
            .env
            .clone()
            .unwrap()
            .into_iter()
            .map(|e| (e.name.clone(), e))
            .collect()
    }

    #[test]
    fn a_bare_server_gets_two_replicas_probes_and_a_cluster_ip_service() {
        let s = server(json!({}));
        let d = deployment(&s);
        let spec = d.spec.as_ref().unwrap();
        assert_eq!(spec.replicas, Some(2));
        assert_eq!(spec.strategy.as_ref().unwrap().rolling_update, None);
        let pod = spec.template.spec.as_ref().unwrap();
        assert_eq!(pod.affinity, None, "never generated");
        let c = &pod.containers[0];
        assert_eq!(c.ports.as_ref().unwrap()[0].container_port, 8080);
        let ready = c
            .readiness_probe
            .as_ref()
            .unwrap()
            .http_get
            .as_ref()
            .unwrap();
        assert_eq!(ready.path.as_deref(), Some("/healthz"));
        assert_eq!(
            env_of(&d)["KLAXON_ADDR"].value.as_deref(),
            Some("0.0.0.0:8080")
        );
        let owner = &d.metadata.owner_references.as_ref().unwrap()[0];
        assert_eq!(
            (owner.kind.as_str(), owner.controller),
            ("KlaxonServer", Some(true))
        );
        let svc = service(&s);
        let svc_spec = svc.spec.unwrap();
        assert_eq!(svc_spec.type_.as_deref(), Some("ClusterIP"));
        assert_eq!(svc_spec.ports.unwrap()[0].port, 8080);
        assert_eq!(svc_spec.selector, Some(selector_labels(&s)));
        assert!(disruption_budget(&s).is_none());
        assert_eq!(endpoint(&s), "http://paging.ops.svc:8080");
    }

    #[test]
    fn the_spec_becomes_environment_and_pod_settings() {
        let s = server(json!({
            "replicas": 3,
            "networking": {"hostname": "klaxon.example.com", "servicePort": 9000},
            "database": {"host": "db", "name": "pager", "user": "pager",
                         "passwordSecretRef": {"name": "db", "key": "password"}},
            "notify": {"url": "https://ntfy.sh", "tokenSecretRef": {"name": "ntfy", "key": "token"}},
            "oidc": {"issuer": "https://id.example.com", "clientId": "klaxon",
                     "clientSecretRef": {"name": "oidc", "key": "secret"},
                     "allowedGroups": ["sre", "dev"]},
            "sweeper": {"staleAfter": "2h"},
            "pod": {
                "nodeSelector": {"pool": "system"},
                "tolerations": [{"key": "dedicated", "operator": "Exists"}],
                "affinity": {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": []}},
                "extraEnv": [{"name": "KLAXON_LOG", "value": "debug"}],
                "imagePullSecrets": [{"name": "regcred"}],
                "disruptionBudget": {"minAvailable": "50%"}
            }
        }));
        let d = deployment(&s);
        let env = env_of(&d);
        assert_eq!(
            env["KLAXON_PUBLIC_URL"].value.as_deref(),
            Some("https://klaxon.example.com")
        );
        assert_eq!(env["KLAXON_ADDR"].value.as_deref(), Some("0.0.0.0:9000"));
        assert_eq!(
            env["KLAXON_DATABASE_URL"].value.as_deref(),
            Some("postgres://pager:$(KLAXON_DATABASE_PASSWORD)@db:5432/pager")
        );
        let password = env["KLAXON_DATABASE_PASSWORD"].value_from.as_ref().unwrap();
        assert_eq!(password.secret_key_ref.as_ref().unwrap().name, "db");
        assert!(env["KLAXON_NTFY_TOKEN"].value_from.is_some());
        assert!(env["KLAXON_OIDC_CLIENT_SECRET"].value_from.is_some());
        assert_eq!(
            env["KLAXON_OIDC_ALLOWED_GROUPS"].value.as_deref(),
            Some("sre,dev")
        );
        assert_eq!(env["KLAXON_STALE_AFTER"].value.as_deref(), Some("2h"));
        assert_eq!(env["KLAXON_LOG"].value.as_deref(), Some("debug"));
        let spec = d.spec.unwrap();
        assert_eq!(spec.replicas, Some(3));
        let pod = spec.template.spec.unwrap();
        assert_eq!(pod.node_selector.unwrap()["pool"], "system");
        assert_eq!(pod.tolerations.unwrap().len(), 1);
        assert!(pod.affinity.is_some(), "passed through as given");
        assert_eq!(pod.image_pull_secrets.unwrap()[0].name, "regcred");
        let pdb = disruption_budget(&s).unwrap().spec.unwrap();
        assert_eq!(pdb.min_available, Some(IntOrString::String("50%".into())));
        assert_eq!(
            pdb.selector.unwrap().match_labels,
            Some(selector_labels(&s))
        );
    }

    #[test]
    fn a_cloudnativepg_cluster_gives_the_whole_uri() {
        let s = server(json!({"database": {"postgresClusterRef": {"name": "pg"}}}));
        let env = env_of(&deployment(&s));
        let uri = env["KLAXON_DATABASE_URL"].value_from.as_ref().unwrap();
        let key = uri.secret_key_ref.as_ref().unwrap();
        assert_eq!((key.name.as_str(), key.key.as_str()), ("pg-app", "uri"));
    }
}
