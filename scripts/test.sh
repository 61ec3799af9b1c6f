#!/usr/bin/env bash
# Runs every check: formatting, clippy, the Rust tests (SQLite, and PostgreSQL when one is available),
# the release build and the browser tests against the release binary.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$ROOT"

step=setup
done_steps=()
finish() {
  local rc=$?
  pg_drop_scratch_db
  if [ "$rc" -eq 0 ]; then
    echo "test.sh: OK: ${done_steps[*]}"
  else
    echo "test.sh: FAILED at $step (exit $rc); passed before it: ${done_steps[*]:-none}"
  fi
}
trap finish EXIT
begin() { step="$1"; step_start=$SECONDS; echo; echo "==> $1"; }
ok() { done_steps+=("$step ($((SECONDS - step_start))s)"); }

begin setup
"$ROOT/scripts/setup.sh" --tests
# Only the operator's tests need a real Kubernetes API server: built once from Debian's source
# package into /var/cache/klaxon/kube (about 7 minutes the first time), so running Klaxon never waits for it.
"$ROOT/scripts/kube-apiserver.sh"; ok

# Without a database URL, use the local PostgreSQL when one answers so a plain run covers it too.
if [ -z "${KLAXON_TEST_DATABASE_URL:-}" ] && pg_answers; then
  pg_create_scratch_db
fi
# CI must run the PostgreSQL half of every test; elsewhere it is reported ignored without one.
if [ "${CI:-}" = true ] && [ -z "${KLAXON_TEST_DATABASE_URL:-}" ]; then
  echo "test.sh: CI needs KLAXON_TEST_DATABASE_URL (PostgreSQL) and none answers"
  exit 1
fi
pg_note="sqlite"
[ -n "${KLAXON_TEST_DATABASE_URL:-}" ] && pg_note="sqlite+postgres"

begin fmt
cargo fmt --all -- --check; ok
begin guide
# The README and the docs link only to files that exist; the guide builds (mdBook).
python3 "$ROOT/scripts/check-guide.py"
mdbook build "$ROOT/docs/guide" >/dev/null; ok
begin clippy
# Default members (ssr) and the wasm entry point (hydrate) are linted apart: one cargo
# invocation over both would unify the app's ssr and hydrate features.
cargo clippy --all-targets -- -D warnings
cargo clippy -p klaxon-frontend --target wasm32-unknown-unknown -- -D warnings; ok
# The site is built before the Rust tests, which check that its files are served with ETags.
begin release-build
build_release; ok
begin wasm-budget
# What the first page downloads (main wasm and script, gzip -9) stays under 400 KiB.
node "$ROOT/scripts/wasm-budget.mjs" "$KLAXON_SITE_DIR"; ok
begin "cargo-test($pg_note)"
cargo test; ok
begin playwright
# Each Playwright worker starts the release binary on a free port with a fresh data dir (tests/support.ts).
(cd "$ROOT/end2end" && npx playwright test); ok
begin perf
# Figures only (first paint and hydration on "Fast 3G", file sizes, Lighthouse's mobile performance of
# sign-in, the list and an incident); nothing here is a timed assertion.
node "$ROOT/end2end/perf.mjs"
node "$ROOT/end2end/lighthouse.mjs"; ok
begin chaos
# Three replicas through kills, freezes, a PostgreSQL restart and a misbehaving push service under
# steady webhooks, on a PostgreSQL of its own; fails on a lost alert or page, a doubled one, or a
# page after its acknowledgement (about 3 minutes).
"$TARGET_DIR/release/klaxon" bench chaos --seconds 120 --seed 7; ok
begin schemathesis
# The release binary against its own OpenAPI document, every operation, bounded in time.
"$ROOT/scripts/schemathesis.sh"; ok
