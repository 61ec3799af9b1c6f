#!/usr/bin/env bash
# Runs Schemathesis (PyPI) against the release binary's own OpenAPI document, with an
# administrator's key: every operation, the event stream included (each event checked against
# its schema until the request times out), its examples, its coverage cases and 50 generated
# cases each (SCHEMATHESIS_EXAMPLES), with a fixed seed, so each run sends the same requests and
# ends when they are sent (about 2 minutes). No --max-time: under it the fuzzing phase keeps
# drawing cases until the time is spent, so a run took all of it whatever it covered.
# SCHEMATHESIS_SECONDS (default 600) only stops a run that hangs. Fails on a server error (5xx),
# an undocumented status, or an answer or event whose type or body contradicts the document.
# Requests the document allows but the handler refuses for reasons a schema cannot state (a
# duration out of range, a user who is not a member) are counted and printed, not failed.
# scripts/schemathesis.toml says where a check does not apply, and why.
# SCHEMATHESIS_BIN checks another build (a debug one, say) instead of the release binary.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
seconds="${SCHEMATHESIS_SECONDS:-600}"
examples="${SCHEMATHESIS_EXAMPLES:-50}"
bin="${SCHEMATHESIS_BIN:-$TARGET_DIR/release/klaxon}"
work="$(mktemp -d)"
port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')"
KLAXON_DATA_DIR="$work/data" KLAXON_ADDR="127.0.0.1:$port" KLAXON_LOG=warn "$bin" serve >"$work/server.log" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null || true; rm -rf "$work"' EXIT
base="http://127.0.0.1:$port"
for _ in $(seq 100); do curl -sf "$base/healthz" >/dev/null && break; sleep 0.1; done
key="$(curl -sf -X POST "$base/api/bootstrap" -H 'content-type: application/json' \
  -d '{"username":"admin","password":"schemathesis admin"}' | python3 -c 'import json,sys; print(json.load(sys.stdin)["api_key"])')"
# A spare key, the one scripts/schemathesis.toml points key deletion at (the run's own key is the first).
spare="$(curl -sf -X POST "$base/api/users/1/api-keys" -H "authorization: Bearer $key" -H 'content-type: application/json' \
  -d '{"name":"spare"}' | python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')"
if [ "$spare" != 2 ]; then
  echo "schemathesis: the spare key is $spare, not 2 as scripts/schemathesis.toml expects"
  exit 1
fi
set +e
timeout "$seconds" schemathesis --config-file "$ROOT/scripts/schemathesis.toml" --no-color run "$base/api/openapi.json" \
  -H "Authorization: Bearer $key" \
  --phases examples,coverage,fuzzing -n "$examples" --seed 42 --request-timeout 3 -w 2 \
  >"$work/report.txt" 2>&1
rc=$?
set -e
if [ "$rc" = 124 ]; then
  tail -n 20 "$work/report.txt"
  echo "schemathesis: FAILED: did not finish within $seconds s"
  exit 1
fi
# The whole report, when asked for (SCHEMATHESIS_REPORT=path), to read every case.
if [ -n "${SCHEMATHESIS_REPORT:-}" ]; then cp "$work/report.txt" "$SCHEMATHESIS_REPORT"; fi
sed -n '/^=* SUMMARY/,$p' "$work/report.txt"
# Every operation was tried with a working administrator's key: a run that lost it part way
# tested the rest only for 401s.
if [ "$(curl -s -o /dev/null -w '%{http_code}' -H "authorization: Bearer $key" "$base/api/admin/settings")" != 200 ]; then
  echo "schemathesis: FAILED: the run's administrator key stopped working part way"
  exit 1
fi
# Each failure kind is a line "  ❌ STnnn <title>: <count>" under "Failures:".
kinds="$(sed -n '/^Failures:/,/^$/p' "$work/report.txt" | grep -oE 'ST[0-9]+ [^:]+' || true)"
# ST202 (a request the document allows, refused) is listed, not failed: some rules are not a
# schema's to state (a name already taken, a user who is not a member).
refused="$(grep -E '^ST202 ' <<<"$kinds" || true)"
hard="$(grep -vE '^ST202 ' <<<"$kinds" | grep . || true)"
if ! grep -q 'API Operations:' "$work/report.txt"; then
  cat "$work/report.txt"
  echo "schemathesis: did not run"
  exit 1
fi
if [ -n "$refused" ]; then
  echo "schemathesis: reported, not failed: $refused"
  # Each such case: the operation and the server's reason, to tell a rule the document could
  # state (then state it) from one it cannot.
  awk '/^_+ [A-Z]+ \/.* _+$/ { op = $2 " " $3 } /^    `\{"error"/ { print "schemathesis:   " op ": " $0 }' "$work/report.txt" | sed 's/:  *`/: /; s/`$//'
fi
if [ -n "$hard" ]; then
  sed -n '/^=* FAILURES/,/^=* SUMMARY/p' "$work/report.txt"
  echo "schemathesis: FAILED: $hard"
  exit 1
fi
echo "schemathesis: no server error, every answer as documented"
