# Shared by run.sh, test.sh and .ci/run (source it). Sets ROOT, TARGET_DIR, PATH and KLAXON_SITE_DIR (the site folder).
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# wasm-opt must be npm's binaryen, found before any other on PATH.
export PATH="$ROOT/end2end/node_modules/.bin:$HOME/.cargo/bin:$PATH"
if [ -n "${CARGO_TARGET_DIR:-}" ]; then
  export CARGO_TARGET_DIR="$(realpath -m "$CARGO_TARGET_DIR")"
fi
TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"

# The commit the binary reports (`klaxon version`): the last one that changed what it is built from,
# so a commit of documentation or tests alone does not rebuild the server (server/build.rs).
if [ -z "${KLAXON_COMMIT:-}" ]; then
  KLAXON_COMMIT="$(cd "$ROOT" && git log -1 --format=%h --abbrev=12 -- app core domain frontend server \
    migrations style public .cargo Cargo.toml Cargo.lock \
    ':(exclude)core/tests' ':(exclude)domain/tests' ':(exclude)server/tests' 2>/dev/null || true)"
  export KLAXON_COMMIT
fi

# cargo-leptos writes the site (wasm, JS, CSS, public/) to <workspace>/target/site even when
# CARGO_TARGET_DIR points elsewhere; the server embeds that folder (server/src/assets.rs).
KLAXON_SITE_DIR="$ROOT/target/site"
mkdir -p "$KLAXON_SITE_DIR"

# Release build. cargo-leptos builds the wasm and the server in parallel, but the server embeds the site
# files, so build the site first and the server after.
build_release() {
  # The site is built again only when a file it is built from changed: rewriting the same files would
  # make wasm-opt run again and rust-embed rebuild the server.
  local inputs stamp="$ROOT/target/site-built-from.txt" # beside the site, not in it (it is embedded)
  inputs="$(site_inputs)"
  if [ ! -d "$KLAXON_SITE_DIR/pkg" ] || [ "$(cat "$stamp" 2>/dev/null)" != "$inputs" ]; then
    # --split: each lazy route's page goes to a wasm chunk of its own (see app/src/pages/on_demand.rs);
    # the folder is emptied first so no chunk of an earlier build is embedded.
    rm -rf "$KLAXON_SITE_DIR/pkg" "$stamp"
    (cd "$ROOT" && cargo leptos build --release --frontend-only --split)
    node "$ROOT/scripts/compress-site.mjs" "$KLAXON_SITE_DIR"
    echo "$inputs" >"$stamp"
  else
    echo "build_release: the site's sources are unchanged since its last build: kept"
  fi
  # rust-embed makes the server rebuild when an embedded file changes, not when files are added or
  # removed: force it when the list of site files differs from the last build's.
  local list="$TARGET_DIR/klaxon-site-files.txt"
  if ! (cd "$KLAXON_SITE_DIR" && find . -type f | sort) | cmp -s - "$list"; then
    touch -c "$ROOT/server/src/assets.rs" # holds the RustEmbed derive
  fi
  (cd "$ROOT" && cargo leptos build --release --server-only)
  mkdir -p "$TARGET_DIR"
  (cd "$KLAXON_SITE_DIR" && find . -type f | sort) >"$list"
}

# One hash of everything the site is built from: the crates compiled to wasm, the styles and public
# files, the lock file and build settings, the scripts that finish it, and the tools' versions.
site_inputs() {
  (
    cd "$ROOT" || exit 1
    find app domain frontend style public .cargo Cargo.toml Cargo.lock scripts/compress-site.mjs \
      -type f -print0 2>/dev/null | sort -z | xargs -0 sha256sum
    rustc --version
    cargo leptos --version 2>/dev/null
    wasm-bindgen --version 2>/dev/null
    wasm-opt --version 2>/dev/null
    true # a missing tool is a version too; building then says what is missing
  ) | sha256sum | cut -d' ' -f1
}

# A scratch PostgreSQL database for the tests (trust auth as user postgres on 127.0.0.1:5432).
pg_answers() {
  PGCONNECT_TIMEOUT=3 psql -h 127.0.0.1 -p 5432 -U postgres -d postgres -w -Atqc 'select 1' >/dev/null 2>&1
}
# Creates the database (named $1, made anew, or a random name), exports KLAXON_TEST_DATABASE_URL and
# sets PG_SCRATCH_DB.
pg_create_scratch_db() {
  PG_SCRATCH_DB="${1:-klaxon_test_$(od -An -N4 -tx4 /dev/urandom | tr -d ' ')}"
  psql -h 127.0.0.1 -p 5432 -U postgres -d postgres -w -qc "DROP DATABASE IF EXISTS $PG_SCRATCH_DB WITH (FORCE)" >/dev/null
  psql -h 127.0.0.1 -p 5432 -U postgres -d postgres -w -qc "CREATE DATABASE $PG_SCRATCH_DB" >/dev/null
  export KLAXON_TEST_DATABASE_URL="postgres://postgres@127.0.0.1:5432/$PG_SCRATCH_DB"
  echo "PostgreSQL tests use scratch database $PG_SCRATCH_DB"
}
pg_drop_scratch_db() {
  [ -n "${PG_SCRATCH_DB:-}" ] || return 0
  psql -h 127.0.0.1 -p 5432 -U postgres -d postgres -w -qc "DROP DATABASE IF EXISTS $PG_SCRATCH_DB WITH (FORCE)" >/dev/null || true
  PG_SCRATCH_DB=""
}
