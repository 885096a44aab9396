#!/usr/bin/env python3
"""Validates rendered manifests against the Kubernetes API schemas, offline.

    validate.py RENDERED.yaml...

Every object is checked with kubernetes-validate (the OpenAPI schemas of each release,
shipped inside the package, strict: unknown fields fail) against the oldest and the newest
Kubernetes release it covers of those still supported (KUBERNETES_VERSIONS). Prometheus
Operator objects have no schema there: they are skipped with the reason printed, and the
PrometheusRule is checked instead by promtool (its spec is a Prometheus rule file) and
compared with deploy/prometheus/alerts.yml, the one source of its groups.

Run by scripts/kubernetes-check.sh inside its venv (kubernetes-validate, PyYAML).
"""

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import kubernetes_validate
import yaml

ROOT = Path(__file__).resolve().parents[2]
ALERTS = ROOT / "deploy/prometheus/alerts.yml"
# The supported releases when this was written: the oldest and the newest are checked.
KUBERNETES_VERSIONS = ("1.35.0", "1.37.0")
OPERATOR_GROUP = "monitoring.coreos.com/"
PROMTOOL_TIMEOUT_S = 60


def name_of(obj: dict) -> str:
    return f"{obj.get('kind')}/{obj.get('metadata', {}).get('name')}"


def validate_builtin(obj: dict, where: str) -> list[str]:
    errors = []
    for version in KUBERNETES_VERSIONS:
        try:
            kubernetes_validate.validate(obj, version, strict=True)
        except kubernetes_validate.ValidationError as e:
            path = ".".join(str(p) for p in e.path)
            errors.append(f"{where}: {name_of(obj)} against {version}: {path}: {e.message}")
        except kubernetes_validate.SchemaNotFoundError as e:
            errors.append(f"{where}: {name_of(obj)}: {e.message}")
    return errors


def check_prometheus_rule(obj: dict, where: str) -> list[str]:
    alerts = yaml.safe_load(ALERTS.read_text(encoding="utf-8"))
    groups = obj.get("spec", {}).get("groups")
    if groups != alerts.get("groups"):
        return [
            f"{where}: {name_of(obj)}: spec.groups differ from {ALERTS.relative_to(ROOT)}; "
            "run python3 scripts/kubernetes/prometheus_rule.py"
        ]
    promtool = shutil.which("promtool")
    if promtool is None:
        if os.environ.get("CI") == "true":
            return [f"{where}: promtool is not installed (CI=true requires it)"]
        print(f"SKIP {where}: {name_of(obj)}: promtool is not installed")
        return []
    with tempfile.NamedTemporaryFile("w", suffix=".yml") as rules:
        yaml.safe_dump(obj["spec"], rules)
        rules.flush()
        run = subprocess.run(
            [promtool, "check", "rules", rules.name],
            capture_output=True,
            text=True,
            timeout=PROMTOOL_TIMEOUT_S,
            check=False,
        )
    if run.returncode != 0:
        return [f"{where}: {name_of(obj)}: promtool check rules: {run.stdout}{run.stderr}"]
    print(f"ok   {where}: {name_of(obj)}: groups equal alerts.yml, promtool check rules passed")
    return []


def main(files: list[str]) -> int:
    if not files:
        sys.exit("usage: validate.py RENDERED.yaml...")
    errors: list[str] = []
    for file in files:
        where = Path(file).name
        with open(file, encoding="utf-8") as f:
            objects = [o for o in yaml.safe_load_all(f) if o]
        checked = 0
        for obj in objects:
            if str(obj.get("apiVersion", "")).startswith(OPERATOR_GROUP):
                print(
                    f"SKIP {where}: {name_of(obj)}: a Prometheus Operator custom resource; "
                    "the Kubernetes schemas do not cover it and its CRD's schema is not "
                    "vendored here"
                )
                if obj.get("kind") == "PrometheusRule":
                    errors += check_prometheus_rule(obj, where)
                continue
            found = validate_builtin(obj, where)
            errors += found
            checked += not found
        print(
            f"ok   {where}: {checked} of {len(objects)} objects valid against Kubernetes "
            f"{' and '.join(KUBERNETES_VERSIONS)} (strict)"
        )
    for error in errors:
        print(f"FAIL {error}", file=sys.stderr)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
