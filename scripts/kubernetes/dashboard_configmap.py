#!/usr/bin/env python3
"""Checks that every rendered overlay ships the Grafana dashboard as deploy/grafana has it.

    dashboard_configmap.py RENDERED.yaml...

In each rendered file: exactly one ConfigMap carries the Grafana sidecar's label
(grafana_dashboard: "1"), under the fixed name the docs give, and its one key holds
deploy/grafana/profile-lookup.json byte for byte (kustomize's configMapGenerator reads the file
itself, so a difference means an overlay patched or replaced it). Run by
scripts/kubernetes-check.sh with the venv's python (PyYAML).
"""

import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
DASHBOARD = ROOT / "deploy/grafana/profile-lookup.json"
NAME = "profile-lookup-dashboard"


def main(paths: list[str]) -> int:
    want = DASHBOARD.read_text(encoding="utf-8")
    errors = []
    for path in paths:
        with open(path, encoding="utf-8") as f:
            objects = [o for o in yaml.safe_load_all(f) if o]
        found = [
            o for o in objects
            if o.get("kind") == "ConfigMap"
            and o["metadata"].get("labels", {}).get("grafana_dashboard") == "1"
        ]
        where = Path(path).name
        if len(found) != 1:
            errors.append(f"{where}: {len(found)} ConfigMaps labelled grafana_dashboard: \"1\", not 1")
            continue
        cm = found[0]
        if cm["metadata"]["name"] != NAME:
            errors.append(f"{where}: the dashboard ConfigMap is {cm['metadata']['name']}, not {NAME}")
        if cm.get("data") != {DASHBOARD.name: want}:
            errors.append(f"{where}: {NAME} does not hold {DASHBOARD.relative_to(ROOT)} as it is")
        else:
            print(f"{where}: {NAME} holds {DASHBOARD.relative_to(ROOT)} ({len(want)} characters)")
    for e in errors:
        print(f"FAIL: {e}")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
