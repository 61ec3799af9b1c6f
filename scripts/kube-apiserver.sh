#!/usr/bin/env bash
# Builds a real kube-apiserver (v1.20.2) for the operator's integration tests and caches it in
# /var/cache/klaxon/kube/bin. No registry reachable here ships the binary, so it is built from
# Debian bookworm's `kubernetes` source package with Debian's Go 1.19 (about 6 minutes on 2 cores).
# Does nothing when the cached binary is already there. Start it with scripts/kube-test-cluster.sh.
set -euo pipefail
KUBE=/var/cache/klaxon/kube
BIN="$KUBE/bin/kube-apiserver"
VERSION=v1.20.2
say() { echo "kube-apiserver: $*"; }

if [ -x "$BIN" ] && "$BIN" --version 2>/dev/null | grep -qw "$VERSION"; then
  say "$BIN ($VERSION) is already built"
  exit 0
fi

# Debian packages: Go 1.19, etcd (which the apiserver stores into), reflect2 1.0.2 and dpkg-source.
pkgs=()
for p in golang-1.19-go etcd-server golang-github-modern-go-reflect2-dev dpkg-dev; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || pkgs+=("$p")
done
# apt-get source needs a deb-src entry; the machine's sources only list binary packages.
if ! grep -rqsE --include='*.list' --include='*.sources' '^\s*(deb-src\s|Types:.*deb-src)' \
  /etc/apt/sources.list /etc/apt/sources.list.d/; then
  say "adding a deb-src entry for bookworm main"
  cat >/etc/apt/sources.list.d/klaxon-deb-src.sources <<'EOF'
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
fi
if [ ${#pkgs[@]} -gt 0 ] || ! apt-cache showsrc kubernetes >/dev/null 2>&1; then apt-get update -q; fi
if [ ${#pkgs[@]} -gt 0 ]; then
  say "installing ${pkgs[*]}"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${pkgs[@]}"
fi

# apt-get source skips files it already has (hash checked). The tree is extracted afresh each time, so a
# half-finished earlier run cannot leave a patched or partial one; Go's build cache (GOCACHE) is keyed
# by content, so a rebuild still reuses it.
src="$KUBE/src"
say "fetching the kubernetes source package into $src"
mkdir -p "$src"
chown _apt "$src" # else apt warns and downloads as root, outside its sandbox
(cd "$src" && apt-get source -qq --download-only kubernetes)
rm -rf "$src/kubernetes"
# apt-get has checked the files against the signed Sources index; the .dsc signature check would need
# debian-keyring. This also applies Debian's patches (CVE-2021-25743 among them).
dpkg-source -x --no-check "$src"/kubernetes_*.dsc "$src/kubernetes" >/dev/null

# Build in GOPATH mode, as Debian's package does (debian/rules), with the tree linked at its import path.
export GOPATH="$KUBE/gopath" GOCACHE="$KUBE/gocache" GO111MODULE=off CGO_ENABLED=0 GOFLAGS=
export PATH="/usr/lib/go-1.19/bin:$PATH"
mkdir -p "$GOPATH/src/k8s.io" "$GOPATH/bin" "$KUBE/bin"
ln -sfn "$src/kubernetes" "$GOPATH/src/k8s.io/kubernetes"
cd "$GOPATH/src/k8s.io/kubernetes"

# The vendored reflect2 1.0.1 crashes at run time under Go 1.18+ (its map iteration relies on runtime
# internals that changed); 1.0.2 fixes that. Vendored packages carry no go.mod, so drop its one.
say "replacing the vendored reflect2 1.0.1 with Debian's 1.0.2"
rm -rf vendor/github.com/modern-go/reflect2
cp -rL /usr/share/gocode/src/github.com/modern-go/reflect2 vendor/github.com/modern-go/reflect2
rm -f vendor/github.com/modern-go/reflect2/go.mod

# The tarball lacks pkg/generated/openapi/zz_generated.openapi.go (upstream's make generates it).
# Same inputs as Makefile.generated_files: every package tagged +k8s:openapi-gen= outside vendor/,
# staging/ under its vendor/ name, minus code-generator and sample-apiserver.
say "generating pkg/generated/openapi"
go build -o "$GOPATH/bin/openapi-gen" ./vendor/k8s.io/kube-openapi/cmd/openapi-gen
inputs=$(grep -rl --include='*.go' -e '+k8s:openapi-gen=' --exclude-dir=vendor --exclude-dir='_*' -- * |
  xargs -n1 dirname | sed 's|^staging/src/|vendor/|' | sort -u |
  grep -v -e '^vendor/k8s.io/code-generator/' -e '^vendor/k8s.io/sample-apiserver/' |
  sed 's|^|k8s.io/kubernetes/|' | paste -sd,)
# -r: write API rule violations to a report instead of failing on them.
"$GOPATH/bin/openapi-gen" -i "$inputs" -p k8s.io/kubernetes/pkg/generated/openapi -O zz_generated.openapi \
  -h vendor/k8s.io/code-generator/hack/boilerplate.go.txt -r "$KUBE/openapi-violations.report"

# Without the version ldflags /version reports empty major/minor, which clients (kube-rs) reject. Both
# packages, as upstream's hack/lib/version.sh does: --version reads component-base's, but /version is
# answered by the aggregator, which reads client-go's.
say "building kube-apiserver (several minutes)"
ldflags="-s -w" built="$(date -u +%FT%TZ)"
for pkg in client-go/pkg/version component-base/version; do
  for kv in gitVersion=$VERSION gitMajor=1 gitMinor=20 gitTreeState=clean buildDate=$built; do
    ldflags+=" -X k8s.io/kubernetes/vendor/k8s.io/$pkg.$kv"
  done
done
go build -o "$BIN.tmp" -ldflags "$ldflags" ./cmd/kube-apiserver
mv "$BIN.tmp" "$BIN"
say "built $BIN: $("$BIN" --version)"
