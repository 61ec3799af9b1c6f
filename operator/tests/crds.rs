//! The CRDs in `deploy/crds/` are exactly what the Rust types generate.

use klaxon_operator::crd;
use std::path::Path;

/// `deploy/crds/` is what the types generate; refresh it with
/// `cargo run -p klaxon-operator -- crd` split per file, or `KLAXON_WRITE_CRDS=1 cargo test -p klaxon-operator`.
#[test]
fn deployed_crds_match_the_types() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../deploy/crds");
    let write = std::env::var_os("KLAXON_WRITE_CRDS").is_some();
    for crd in crd::all() {
        let path = dir.join(crd::file_name(&crd));
        let generated = serde_yaml::to_string(&crd).unwrap();
        if write {
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(&path, &generated).unwrap();
        }
        let deployed = std::fs::read_to_string(&path)
            .unwrap_or_else(|_| panic!("{} is missing", path.display()));
        assert_eq!(
            deployed,
            generated,
            "{} drifted from the types; regenerate with KLAXON_WRITE_CRDS=1 cargo test -p klaxon-operator",
            path.display()
        );
    }
}

#[test]
fn every_kind_has_status_and_a_ready_column() {
    for crd in crd::all() {
        let version = &crd.spec.versions[0];
        assert_eq!(crd.spec.group, "klaxon.dev");
        assert_eq!(version.name, "v1alpha1");
        assert!(version.subresources.as_ref().unwrap().status.is_some());
        let columns = version.additional_printer_columns.as_ref().unwrap();
        assert_eq!(columns[0].name, "Ready");
    }
}

/// Every key of `given` is in `read` with the same value (`read` may add defaults).
fn known(given: &serde_json::Value, read: &serde_json::Value, at: &str) {
    use serde_json::Value;
    match (given, read) {
        (Value::Object(g), Value::Object(r)) => {
            for (k, v) in g {
                let inner = r
                    .get(k)
                    .unwrap_or_else(|| panic!("{at}.{k} is not a field of the resource"));
                known(v, inner, &format!("{at}.{k}"));
            }
        }
        (Value::Array(g), Value::Array(r)) => {
            assert_eq!(g.len(), r.len(), "{at}");
            for (i, (a, b)) in g.iter().zip(r).enumerate() {
                known(a, b, &format!("{at}[{i}]"));
            }
        }
        _ => assert_eq!(given, read, "{at}"),
    }
}

#[test]
fn the_examples_are_valid_resources() {
    use klaxon_operator::crd::*;
    fn check<K: serde::de::DeserializeOwned + serde::Serialize>(file: &str) {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../deploy/examples")
            .join(file);
        let given: serde_json::Value =
            serde_yaml::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let typed: K =
            serde_json::from_value(given.clone()).unwrap_or_else(|e| panic!("{file}: {e}"));
        let read = serde_json::to_value(&typed).unwrap();
        known(&given["spec"], &read["spec"], &format!("{file}: spec"));
    }
    check::<KlaxonServer>("server.yaml");
    check::<KlaxonTeam>("team.yaml");
    check::<KlaxonAlertSource>("alertsource.yaml");
    check::<KlaxonEscalationRule>("escalation.yaml");
    check::<KlaxonDeadmanSwitch>("deadman.yaml");
}
