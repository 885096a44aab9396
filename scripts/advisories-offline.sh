#!/usr/bin/env bash
# Checks Cargo.lock against an offline copy of the RustSec advisory database (plain files; CI's
# copy is at $ADVISORY_DB, default ../shared/advisory-db) with cargo-deny, which wants the
# database as a git repository in its own cache layout. Nothing is fetched. Without the copy
# the check is skipped, or fails under CI=true. With a network, plain `cargo deny check
# advisories` fetches the database itself.
set -euo pipefail
cd "$(dirname "$0")/.."
src="${ADVISORY_DB:-../shared/advisory-db}"
if [ ! -d "$src" ]; then
  if [ "${CI:-}" = true ]; then
    echo "no advisory database at $src (set ADVISORY_DB); CI=true requires it" >&2
    exit 1
  fi
  echo "no advisory database at $src (set ADVISORY_DB); skipping"
  exit 0
fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# cargo-deny names the clone of the default database by a hash of its URL.
db="$work/dbs/advisory-db-3157b0e258782691"
mkdir -p "$work/dbs"
cp -r "$src" "$db"
git -C "$db" init -q
git -C "$db" add -A
git -C "$db" -c user.email=ci@localhost -c user.name=ci commit -qm "offline snapshot"
touch "$db/.git/FETCH_HEAD"
cat > "$work/deny.toml" <<TOML
[advisories]
version = 2
db-path = "$work/dbs"
unmaintained = "all"
yanked = "deny"
TOML
cargo deny --offline --all-features --config "$work/deny.toml" check advisories
