#!/usr/bin/env bash
# Checks the Kubernetes manifests of deploy/kubernetes/ offline, applying nothing to any
# cluster (none is needed or contacted):
#   1. kubectl kustomize renders both overlays, and one with components/proxy-egress, and
#      the example overlays of docs/deployment.md;
#   2. the PrometheusRule is what deploy/prometheus/alerts.yml generates, and the Grafana
#      dashboard's ConfigMap holds deploy/grafana/profile-lookup.json as it is;
#   3. every rendered object validates against the Kubernetes API schemas (kubernetes-validate,
#      strict), Prometheus Operator objects skipped with the reason printed (promtool checks
#      the PrometheusRule's rules instead);
#   4. checkov scans the rendered manifests and the Dockerfile: no failed check, skips only as
#      listed with reasons in scripts/kubernetes/checkov.yaml;
#   5. the Deployment agrees with the Dockerfile, config/default.toml and the served routes,
#      and `check --offline` of the binary ($PROFILE_LOOKUP_BIN, else the target dir's release
#      build) accepts the settings the container would get, with every key of the secret file
#      in effect from it, the docs' example overlays' too (scripts/kubernetes/agreement.py);
#   6. the manifests keep docs/deployment.md's promises: the Redis URL is set in the secret
#      file only, and every overlay, the docs' examples too, mounts the Secret by the name the
#      docs tell secret managers to create; the image tag is the crate's version there, in the
#      compose files and in the documented `docker build -t`; no ConfigMap value is empty and
#      no variable hides a setting of the secret file; the docs' overlays, rendered with the
#      secrets.toml the docs' commands write, get its canary accounts and the ConfigMap values
#      they merge (scripts/kubernetes/promises.py).
# The tools are pinned (scripts/kubernetes/requirements.txt, .lock) in a venv under
# ${CARGO_TARGET_DIR:-target}/k8s-venv, installed from PyPI once and reused; nothing else goes
# to the network, and steps 1, 3 and 4 run in a network namespace of their own when
# `unshare -n` works (as root), so they could not reach anything if they tried.
# Under CI=true a missing kubectl, promtool or binary, or a failed install, fails the run;
# outside CI they skip with the reason. Each phase prints its time.
set -euo pipefail
# shellcheck source=lib/common.sh
source "$(dirname "$0")/lib/common.sh"
cd "$REPO"
root=$PWD
target_dir=$CARGO_TARGET_DIR
case "$target_dir" in /*) ;; *) target_dir="$root/$target_dir" ;; esac
venv="$target_dir/k8s-venv"
out="$target_dir/k8s-check"
tools="$root/scripts/kubernetes"
ci() { [[ ${CI:-} == true ]]; }
missing() { skip_unless_ci "$1 ($2)"; }

command -v kubectl >/dev/null || missing "kubectl is not installed" "it renders the overlays"
command -v python3 >/dev/null || missing "python3 is not installed" "the checks are Python"

# No cluster configuration can be picked up, and neither checkov nor pip may phone home.
export KUBECONFIG=/dev/null
export BC_SKIP_MAPPING=TRUE CKV_SKIP_PACKAGE_UPDATE_CHECK=true
export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_INPUT=1
offline=()
if unshare -n true 2>/dev/null; then
  offline=(unshare -n)
  echo "rendering, validation and the scan run in a network namespace with no interfaces up"
else
  echo "note: unshare -n is not available; the tools run with their download flags off only"
fi

phase "venv ($venv)"
stamp="$venv/.requirements"
wanted=$(cat "$tools/requirements.txt" "$tools/requirements.lock" | sha256sum | cut -d' ' -f1)
if [ "$(cat "$stamp" 2>/dev/null)" != "$wanted" ]; then
  rm -rf "$venv"
  if ! { timeout 120 python3 -m venv "$venv" \
      && timeout 900 "$venv/bin/pip" install -q --default-timeout 60 \
           -r "$tools/requirements.txt" -c "$tools/requirements.lock"; }; then
    rm -rf "$venv"
    missing "the checks' tools did not install" "pip install from PyPI failed"
  fi
  echo "$wanted" > "$stamp"
  echo "installed: $("$venv/bin/pip" freeze | grep -iE '^(checkov|kubernetes-validate|pyyaml)==' | tr '\n' ' ')"
else
  echo "reused (requirements unchanged)"
fi

phase "render (kubectl kustomize, $(kubectl version --client 2>/dev/null | grep -i kustomize || echo kustomize))"
rm -rf "$out" && mkdir -p "$out/with-proxy-egress"
# The optional component on top of an overlay, as an operator's overlay would use it
# (kustomize wants relative paths).
rel=$(python3 -c 'import os, sys; print(os.path.relpath(sys.argv[1], sys.argv[2]))' \
  "$root/deploy/kubernetes" "$out/with-proxy-egress")
cat > "$out/with-proxy-egress/kustomization.yaml" <<YAML
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
  - $rel/overlays/redis-cluster
components:
  - $rel/components/proxy-egress
YAML
# rendered DIR: the overlay in DIR rendered to $out/<its folder's name>.yaml.
rendered() { echo "$out/$(basename "$1").yaml"; }
render() {
  timeout 60 "${offline[@]}" kubectl kustomize "$1" > "$(rendered "$1")"
  echo "$(basename "$1"): $(grep -c '^kind:' "$(rendered "$1")") objects -> $(rendered "$1")"
}
rendered=()
for dir in "$root"/deploy/kubernetes/overlays/{single-redis,redis-cluster} "$out/with-proxy-egress"; do
  render "$dir"
  rendered+=("$(rendered "$dir")")
done
# The overlays docs/deployment.md tells operators to write, as written there (the list is
# taken first, so that failing to find them stops the run).
examples=$("$venv/bin/python" "$tools/promises.py" --write-documented "$out/documented")
mapfile -t examples <<< "$examples"
documented=()
for dir in "${examples[@]}"; do
  render "$dir"
  documented+=("$(rendered "$dir")")
done

phase "PrometheusRule generated from deploy/prometheus/alerts.yml"
timeout 60 python3 "$tools/prometheus_rule.py" --check

phase "Grafana dashboard ConfigMap is deploy/grafana/profile-lookup.json"
timeout 60 "$venv/bin/python" "$tools/dashboard_configmap.py" "${rendered[@]}"

phase "schemas (kubernetes-validate)"
if ! command -v promtool >/dev/null && ci; then
  missing "promtool is not installed" "it checks the PrometheusRule's rules"
fi
# promtool and the venv's python are found by absolute path inside the namespace too.
timeout 300 "${offline[@]}" "$venv/bin/python" "$tools/validate.py" "${rendered[@]}"

phase "security scan (checkov: rendered manifests and the Dockerfile)"
echo "skipped checks, with their reasons (scripts/kubernetes/checkov.yaml):"
sed -n '/^skip-check:/,$p' "$tools/checkov.yaml" | tail -n +2
files=()
for f in "${rendered[@]}" "$root/Dockerfile"; do files+=(-f "$f"); done
(cd "$out" && timeout 600 "${offline[@]}" "$venv/bin/checkov" \
  --config-file "$tools/checkov.yaml" "${files[@]}")

phase "agreement with the Dockerfile, config/default.toml and the served routes"
binary="${PROFILE_LOOKUP_BIN:-$target_dir/release/profile-lookup}"
binary_arg=()
if [ -x "$binary" ]; then
  binary_arg=(--binary "$binary")
elif ci; then
  missing "no binary at $binary" "it loads the rendered settings"
else
  echo "SKIP the settings load: no binary at $binary (cargo build --release first)"
fi
timeout 120 "$venv/bin/python" "$tools/agreement.py" "${binary_arg[@]}" "${rendered[@]}" "${documented[@]}"

phase "docs/deployment.md's promises"
timeout 60 "$venv/bin/python" "$tools/promises.py" "${rendered[@]}" --documented "${documented[@]}"
phase_end
echo "kubernetes manifests: all checks passed"
