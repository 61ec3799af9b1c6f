#!/usr/bin/env bash
# Prints the size and footprint figures of a release build: binary size, wasm size (raw and gzip),
# and the server's resident memory when idle after start. Run scripts/run.sh or test.sh first
# (or pass --build to build here).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$ROOT"
[ "${1:-}" = "--build" ] && build_release

bin="$TARGET_DIR/release/klaxon"
wasm="$KLAXON_SITE_DIR/pkg/klaxon.wasm"
echo "release binary: $(stat -c %s "$bin") bytes"
echo "release wasm:   $(stat -c %s "$wasm") bytes raw, $(gzip -9 -c "$wasm" | wc -c) bytes gzip"

data=$(mktemp -d)
trap 'kill "$pid" 2>/dev/null || true; rm -rf "$data"' EXIT
KLAXON_DATA_DIR="$data" KLAXON_ADDR=127.0.0.1:18181 "$bin" serve >/dev/null 2>&1 &
pid=$!
for _ in $(seq 100); do curl -fs http://127.0.0.1:18181/healthz >/dev/null && break; sleep 0.1; done
curl -fs http://127.0.0.1:18181/login >/dev/null # one page render, as a first visitor would
sleep 2
echo "idle RSS after start and one page: $(awk '/VmRSS/ {print $2, $3}' /proc/$pid/status)"
