// Records the commit the binary was built from, for `klaxon version` and `/api/version`.
fn main() {
    // scripts/lib.sh names the last commit that changed what the binary is built from, so a
    // commit that changes only documentation rebuilds nothing; a plain `cargo build` asks git.
    println!("cargo:rerun-if-env-changed=KLAXON_COMMIT");
    let commit = match std::env::var("KLAXON_COMMIT") {
        Ok(given) if !given.is_empty() => given,
        _ => {
            println!("cargo:rerun-if-changed=../.git/HEAD");
            println!("cargo:rerun-if-changed=../.git/refs/heads");
            std::process::Command::new("git")
                .args(["rev-parse", "--short=12", "HEAD"])
                .output()
                .ok()
                .filter(|o| o.status.success())
                .and_then(|o| String::from_utf8(o.stdout).ok())
                .map(|s| s.trim().to_string())
                .unwrap_or_else(|| "unknown".into())
        }
    };
    println!("cargo:rustc-env=KLAXON_COMMIT={commit}");
    // The PostgreSQL half of every test is built to run only when a database is named, and is
    // reported as ignored otherwise, never as passed. (CI names the same database every run, so
    // the value does not change and the tests are not rebuilt for it.)
    println!("cargo:rustc-check-cfg=cfg(postgres_tests)");
    println!("cargo:rerun-if-env-changed=KLAXON_TEST_DATABASE_URL");
    if std::env::var("KLAXON_TEST_DATABASE_URL").is_ok_and(|u| !u.is_empty()) {
        println!("cargo:rustc-cfg=postgres_tests");
    }
}
