#!/usr/bin/env python3
"""Writes deploy/kubernetes/base/prometheusrule.yaml from deploy/prometheus/alerts.yml.

The alert rules have one source, alerts.yml (promtool checks and tests it); Prometheus
Operator users get the same groups as a PrometheusRule. The groups are copied as text,
indented under `spec:`, so the comments that explain each rule come along.

    python3 scripts/kubernetes/prometheus_rule.py           # rewrite the file
    python3 scripts/kubernetes/prometheus_rule.py --check   # exit 1 if it is out of date

Standard library only. scripts/kubernetes/validate.py also compares the parsed groups of
the rendered PrometheusRule with alerts.yml, so an edit by hand fails CI too.
"""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SOURCE = ROOT / "deploy/prometheus/alerts.yml"
TARGET = ROOT / "deploy/kubernetes/base/prometheusrule.yaml"

HEADER = """\
# GENERATED from deploy/prometheus/alerts.yml by scripts/kubernetes/prometheus_rule.py:
# do not edit; change alerts.yml and run that script (CI fails when the two differ).
# The service's alert rules for the Prometheus Operator. Your Prometheus may select rules by
# a label (often `release: <name>`): add it in your overlay.
apiVersion: monitoring.coreos.com/v1
kind: PrometheusRule
metadata:
  name: profile-lookup
  labels:
    app.kubernetes.io/name: profile-lookup
spec:
"""


def render(alerts: str) -> str:
    """The PrometheusRule text: HEADER, then alerts.yml from `groups:` on, indented by 2."""
    lines = alerts.splitlines()
    try:
        start = lines.index("groups:")
    except ValueError:
        sys.exit(f"{SOURCE}: no top-level `groups:` line")
    body = [("  " + line) if line.strip() else "" for line in lines[start:]]
    return HEADER + "\n".join(body) + "\n"


def main() -> int:
    wanted = render(SOURCE.read_text(encoding="utf-8"))
    if sys.argv[1:] == ["--check"]:
        if TARGET.read_text(encoding="utf-8") != wanted:
            print(
                f"{TARGET.relative_to(ROOT)} is not what {SOURCE.relative_to(ROOT)} gives: "
                "run python3 scripts/kubernetes/prometheus_rule.py",
                file=sys.stderr,
            )
            return 1
        print(f"{TARGET.relative_to(ROOT)} matches {SOURCE.relative_to(ROOT)}")
        return 0
    if sys.argv[1:]:
        sys.exit("usage: prometheus_rule.py [--check]")
    TARGET.write_text(wanted, encoding="utf-8")
    print(f"wrote {TARGET.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
