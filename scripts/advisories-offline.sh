#!/usr/bin/env bash
# Checks Cargo.lock against the workplace's offline copy of the RustSec advisory database
# (../shared/advisory-db, plain files) with cargo-deny, which wants the database as a git
# repository in its own cache layout. Nothing is fetched.
set -euo pipefail
cd "$(dirname "$0")/.."
src="${ADVISORY_DB:-../shared/advisory-db}"
[ -d "$src" ] || { echo "no advisory database at $src; skipping"; exit 0; }
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
cargo deny --offline --config "$work/deny.toml" check advisories
