#!/usr/bin/env bash
# A throwaway Kubernetes API server (etcd + kube-apiserver v1.20) for the operator's integration tests.
#   kube-test-cluster.sh start DIR   starts both, waits for /readyz, prints the path of DIR/kubeconfig
#   kube-test-cluster.sh stop DIR    stops both
# Env: ETCD_PORT (default 2379), KUBE_PORT (default 16443); when unset and the default is taken, the next
# free port is used. DIR/env records the ports and the admin token. Needs scripts/kube-apiserver.sh first.
# No controller-manager or scheduler runs: objects are stored and served, nothing reconciles them.
set -euo pipefail
KUBE_APISERVER="${KUBE_APISERVER:-/var/cache/klaxon/kube/bin/kube-apiserver}"
say() { echo "kube-test-cluster: $*" >&2; }
[ $# -eq 2 ] && { [ "$1" = start ] || [ "$1" = stop ]; } || { say "usage: $0 start|stop DIR"; exit 2; }
dir="$(realpath -m "$2")"

# Pid from DIR/NAME.pid if that process is still NAME (pids get reused).
alive() {
  local pid
  pid="$(cat "$dir/$1.pid" 2>/dev/null)" || return 1
  [ "$(basename "$(head -zn1 "/proc/$pid/cmdline" 2>/dev/null | tr -d '\0')")" = "$1" ] && echo "$pid"
}
stop() {
  local name pid
  for name in kube-apiserver etcd; do
    if pid="$(alive "$name")"; then
      kill "$pid"
      for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
      kill -9 "$pid" 2>/dev/null || true
      say "stopped $name ($pid)"
    fi
    rm -f "$dir/$name.pid"
  done
}
if [ "$1" = stop ]; then stop; exit 0; fi

[ -x "$KUBE_APISERVER" ] || { say "$KUBE_APISERVER is missing: run scripts/kube-apiserver.sh"; exit 1; }
if alive etcd >/dev/null || alive kube-apiserver >/dev/null; then say "already running in $dir"; exit 1; fi
busy() { ss -Htln "sport = :$1" | grep -q .; }
free_port() { local p=$1; while busy "$p"; do p=$((p + 1)); done; echo "$p"; }
ETCD_PORT="${ETCD_PORT:-$(free_port 2379)}"
ETCD_PEER_PORT="$(free_port $((ETCD_PORT + 1)))"
KUBE_PORT="${KUBE_PORT:-$(free_port 16443)}"
for p in "$ETCD_PORT" "$KUBE_PORT"; do busy "$p" && { say "port $p is in use"; exit 1; }; done

mkdir -p "$dir/etcd" "$dir/certs"
chmod 700 "$dir/etcd" # etcd wants its data dir private
token="$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"
echo "$token,klaxon-test-admin,klaxon-test-admin,system:masters" >"$dir/tokens.csv"
# Service-account tokens are signed with this key; kube-apiserver 1.20 requires the issuer and both files.
[ -f "$dir/sa.key" ] || openssl genrsa -out "$dir/sa.key" 2048 2>/dev/null
openssl rsa -in "$dir/sa.key" -pubout -out "$dir/sa.pub" 2>/dev/null
fail() { say "$1; last lines of $2:"; tail -n 20 "$2" >&2; stop; exit 1; }

say "starting etcd on 127.0.0.1:$ETCD_PORT"
etcd_url="http://127.0.0.1:$ETCD_PORT" peer_url="http://127.0.0.1:$ETCD_PEER_PORT"
etcd --name klaxon-test --data-dir "$dir/etcd" --listen-client-urls "$etcd_url" --advertise-client-urls "$etcd_url" \
  --listen-peer-urls "$peer_url" --initial-advertise-peer-urls "$peer_url" --initial-cluster "klaxon-test=$peer_url" \
  </dev/null >"$dir/etcd.log" 2>&1 &
echo $! >"$dir/etcd.pid"
for _ in $(seq 100); do curl -sf "$etcd_url/health" >/dev/null && break; sleep 0.1; done
curl -sf "$etcd_url/health" >/dev/null || fail "etcd did not start" "$dir/etcd.log"

say "starting kube-apiserver on https://127.0.0.1:$KUBE_PORT"
# No controller-manager creates the "default" service accounts, so the ServiceAccount admission plugin
# would reject every Pod: turn it off.
"$KUBE_APISERVER" --etcd-servers="$etcd_url" --bind-address=127.0.0.1 --advertise-address=127.0.0.1 \
  --secure-port="$KUBE_PORT" --insecure-port=0 --cert-dir="$dir/certs" --token-auth-file="$dir/tokens.csv" \
  --authorization-mode=RBAC --disable-admission-plugins=ServiceAccount \
  --service-account-issuer=https://kubernetes.default.svc.cluster.local \
  --service-account-key-file="$dir/sa.pub" --service-account-signing-key-file="$dir/sa.key" \
  --service-cluster-ip-range=10.96.0.0/12 </dev/null >"$dir/kube-apiserver.log" 2>&1 &
echo $! >"$dir/kube-apiserver.pid"
ready() { [ "$(curl -sk -m 2 -H "Authorization: Bearer $token" "https://127.0.0.1:$KUBE_PORT/readyz")" = ok ]; }
for _ in $(seq 300); do
  ready && break
  alive kube-apiserver >/dev/null || fail "kube-apiserver exited" "$dir/kube-apiserver.log"
  sleep 0.2
done
ready || fail "kube-apiserver not ready after 60 s" "$dir/kube-apiserver.log"

cat >"$dir/kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: klaxon-test
  cluster:
    server: https://127.0.0.1:$KUBE_PORT
    insecure-skip-tls-verify: true
users:
- name: klaxon-test-admin
  user:
    token: $token
contexts:
- name: klaxon-test
  context:
    cluster: klaxon-test
    user: klaxon-test-admin
current-context: klaxon-test
EOF
printf 'KUBE_PORT=%s\nETCD_PORT=%s\nKUBE_TOKEN=%s\nKUBECONFIG=%s\n' \
  "$KUBE_PORT" "$ETCD_PORT" "$token" "$dir/kubeconfig" >"$dir/env"
say "ready"
echo "$dir/kubeconfig"
