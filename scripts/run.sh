#!/usr/bin/env bash
# Installs what is missing, builds the release binary and starts Klaxon.
# Extra arguments go to `klaxon serve`; the KLAXON_* environment variables are passed through.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
"$ROOT/scripts/setup.sh"
build_release

# Only for the message below: the address the server will listen on.
addr="${KLAXON_ADDR:-127.0.0.1:8080}"
args=("$@")
for i in "${!args[@]}"; do
  case "${args[$i]}" in
    --addr=*) addr="${args[$i]#--addr=}" ;;
    --addr) addr="${args[$((i + 1))]:-$addr}" ;;
  esac
done
cat <<MSG

Klaxon is starting at ${KLAXON_PUBLIC_URL:-http://$addr} (data in ${KLAXON_DATA_DIR:-$ROOT/data}).
On a fresh database, create the first administrator (the sign-in page explains this too):
  curl -X POST http://$addr/api/bootstrap -H 'content-type: application/json' \\
    -d '{"username":"admin","password":"choose-a-long-password"}'

MSG
cd "$ROOT" # the default data directory ./data is the checkout's
exec "$TARGET_DIR/release/klaxon" serve "$@"
