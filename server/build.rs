// Records the commit the binary was built from, for `klaxon version` and `/api/version`.
fn main() {
    let commit = std::process::Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|| "unknown".into());
    println!("cargo:rustc-env=KLAXON_COMMIT={commit}");
    println!("cargo:rerun-if-changed=../.git/HEAD");
    println!("cargo:rerun-if-changed=../.git/refs/heads");
    // The PostgreSQL half of every test is built to run only when a database is named, and is
    // reported as ignored otherwise, never as passed.
    println!("cargo:rustc-check-cfg=cfg(postgres_tests)");
    println!("cargo:rerun-if-env-changed=KLAXON_TEST_DATABASE_URL");
    if std::env::var("KLAXON_TEST_DATABASE_URL").is_ok_and(|u| !u.is_empty()) {
        println!("cargo:rustc-cfg=postgres_tests");
    }
}
