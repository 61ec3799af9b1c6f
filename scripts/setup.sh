#!/usr/bin/env bash
# Installs what building and running Klaxon needs, skipping whatever is already there; with
# --tests, also what the test command needs (Chromium, Alertmanager, Schemathesis, aiosmtpd,
# http_ece, Synapse, mdBook). Only the package registries are assumed reachable, so every tool comes
# from one of them: cargo-leptos, wasm-bindgen-cli and mdBook from crates.io, wasm-opt and
# Playwright from npm, Chromium and Alertmanager from Debian, the Python tools from PyPI.
set -euo pipefail
tests=false
[ "${1:-}" = --tests ] && tests=true
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export PATH="$ROOT/end2end/node_modules/.bin:$HOME/.cargo/bin:$PATH"
# cargo install would otherwise build inside a shared CARGO_TARGET_DIR.
unset CARGO_TARGET_DIR
say() { echo "setup: $*"; }

# Rust: the wasm target, rustfmt and clippy.
if ! rustup target list --installed | grep -qx wasm32-unknown-unknown; then
  say "installing the wasm32-unknown-unknown target"
  rustup target add wasm32-unknown-unknown
fi
for c in rustfmt clippy; do
  if ! rustup component list --installed | grep -q "^$c"; then
    say "installing $c"
    rustup component add "$c"
  fi
done

# Debian packages.
apt_pkgs=()
if $tests; then
  [ -x /usr/bin/chromium ] || apt_pkgs+=(chromium)
  command -v prometheus-alertmanager >/dev/null || apt_pkgs+=(prometheus-alertmanager)
fi
command -v npm >/dev/null || apt_pkgs+=(nodejs npm)
if [ ${#apt_pkgs[@]} -gt 0 ]; then
  say "installing ${apt_pkgs[*]} (Debian)"
  apt-get update -q
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${apt_pkgs[@]}"
fi

# npm: Playwright (without its browser download, which cannot work here), axe-core, binaryen's wasm-opt and
# oidc-provider, the real OpenID Connect provider the single sign-on tests sign in through, and
# web-push-testing, a push service that checks VAPID and decrypts messages, for the Web Push test.
# Debian's binaryen is too old: its wasm-opt produces a release wasm that fails to hydrate.
e2e="$ROOT/end2end"
if [ ! -x "$e2e/node_modules/.bin/wasm-opt" ] || [ ! -x "$e2e/node_modules/.bin/playwright" ] \
  || [ ! -d "$e2e/node_modules/oidc-provider" ] || [ ! -d "$e2e/node_modules/axe-core" ] \
  || [ ! -d "$e2e/node_modules/web-push-testing" ] || [ ! -d "$e2e/node_modules/lighthouse" ] \
  || [ "$e2e/package-lock.json" -nt "$e2e/node_modules/.package-lock.json" ]; then
  say "installing end2end npm packages"
  (cd "$e2e" && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund)
fi

# crates.io. cargo-leptos would download wasm-bindgen and wasm-opt from GitHub unless they are on PATH,
# and it does not check their versions: wasm-bindgen-cli must match the wasm-bindgen crate in Cargo.lock.
wbg_version="$(grep -A1 '^name = "wasm-bindgen"$' "$ROOT/Cargo.lock" | sed -n 's/^version = "\(.*\)"$/\1/p')"
if [ "$(wasm-bindgen --version 2>/dev/null | awk '{print $2}')" != "$wbg_version" ]; then
  say "installing wasm-bindgen-cli $wbg_version (about 3 minutes)"
  # Not --locked: its lockfile pins a crate version the registry index here lacks.
  cargo install wasm-bindgen-cli --version "=$wbg_version" --force
fi
leptos_version=0.3.10 # 0.3.11 needs a newer rustc
if [ "$(cargo leptos --version 2>/dev/null | awk '{print $2}')" != "$leptos_version" ]; then
  say "installing cargo-leptos $leptos_version (about 21 minutes)"
  cargo install cargo-leptos --locked --version "$leptos_version" --force
fi
if ! $tests; then
  say "done"
  exit 0
fi
# crates.io: mdBook, which builds the user guide in docs/guide (the test command builds it).
mdbook_version=0.4.52
if [ "$(mdbook --version 2>/dev/null | awk '{print $2}')" != "v$mdbook_version" ]; then
  say "installing mdbook $mdbook_version (about 3 minutes)"
  cargo install mdbook --version "=$mdbook_version" --locked --no-default-features --force
fi
# PyPI: Schemathesis, which checks the server against its own OpenAPI document.
schemathesis_version=4.32.5
if [ "$(schemathesis --version 2>/dev/null | awk '{print $NF}')" != "$schemathesis_version" ]; then
  say "installing schemathesis $schemathesis_version (PyPI)"
  python3 -m pip install --quiet "schemathesis==$schemathesis_version"
fi
# PyPI: aiosmtpd, the real SMTP server (STARTTLS and AUTH) the email tests send to.
aiosmtpd_version=1.4.6
if [ "$(python3 -c 'import aiosmtpd; print(aiosmtpd.__version__)' 2>/dev/null)" != "$aiosmtpd_version" ]; then
  say "installing aiosmtpd $aiosmtpd_version (PyPI)"
  python3 -m pip install --quiet "aiosmtpd==$aiosmtpd_version"
fi
# PyPI: http_ece, which the Web Push tests' recording push service decrypts messages with
# (an implementation of RFC 8291 that is not Klaxon's); it brings `cryptography` for VAPID.
http_ece_version=1.2.1
if [ "$(python3 -m pip show http_ece 2>/dev/null | awk '/^Version:/ {print $2}')" != "$http_ece_version" ]; then
  say "installing http_ece $http_ece_version (PyPI)"
  python3 -m pip install --quiet "http-ece==$http_ece_version"
fi
# PyPI: twilio, whose RequestValidator signs the stand-in carrier's callbacks and whose TwiML
# writer the call menu is compared with (an implementation of Twilio's that is not Klaxon's).
twilio_version=9.13.0
if [ "$(python3 -m pip show twilio 2>/dev/null | awk '/^Version:/ {print $2}')" != "$twilio_version" ]; then
  say "installing twilio $twilio_version (PyPI)"
  python3 -m pip install --quiet "twilio==$twilio_version"
fi
# PyPI: Synapse, the real Matrix homeserver the team-channel tests post to, in a virtualenv of its
# own outside the clone (it brings many packages); the tests find it at KLAXON_SYNAPSE_PYTHON.
synapse_version=1.163.2
synapse_python="${KLAXON_SYNAPSE_PYTHON:-/var/cache/klaxon/synapse/bin/python}"
if [ "$("$synapse_python" -c 'import synapse; print(synapse.__version__)' 2>/dev/null)" != "$synapse_version" ]; then
  say "installing matrix-synapse $synapse_version (PyPI, into $(dirname "$(dirname "$synapse_python")"))"
  python3 -m venv "$(dirname "$(dirname "$synapse_python")")"
  "$synapse_python" -m pip install --quiet "matrix-synapse==$synapse_version"
fi
say "done"
