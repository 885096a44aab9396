#!/usr/bin/env bash
# Checks Cargo.lock against an offline copy of the RustSec advisory database (plain files; CI's
# copy is at $ADVISORY_DB, default ../shared/advisory-db) with cargo-deny, which wants the
# database as a git repository in its own cache layout. Nothing is fetched. Without the copy
# the check is skipped, or fails under CI=true. With a network, plain `cargo deny check
# advisories` fetches the database itself.
set -euo pipefail
# shellcheck source=lib/rig.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/rig.sh"
cd "$REPO"
src="${ADVISORY_DB:-../shared/advisory-db}"
[ -d "$src" ] || skip_unless_ci "no advisory database at $src (set ADVISORY_DB)"
rig_workdir advisories
work="$T"
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
