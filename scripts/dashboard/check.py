#!/usr/bin/env python3
"""Checks the Grafana dashboard and the alert rules against a running Prometheus.

Run by scripts/dashboard-check.sh once Prometheus has scraped the demo for a while; standard
library only. Fails (exit 1, every problem listed) when:

  - the dashboard is not importable as it stands: no uid or title, a panel without the
    `${datasource}` variable as its data source, two panels with one id, a target without
    refId or expr, or a file too big for `kubectl apply` to keep as its last-applied annotation;
  - a template variable's `label_values(...)` finds nothing;
  - a panel's query (every target of every panel, template variables substituted) does not
    parse or returns no series: a panel added later is checked the same way, with no list to
    keep;
  - an alert rule Prometheus loaded from deploy/prometheus/alerts.yml is not healthy, or a
    metric name it uses has no series;
  - a profile_lookup_* metric the demo exports is shown by no panel (unless NOT_SHOWN says why).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
import urllib.error
import urllib.parse
import urllib.request

# What Grafana puts in place of its built-in variables, for an instant query at "now". The
# scrape interval is 1 s, so one minute holds plenty of samples for rate().
BUILT_INS = {
    "__rate_interval": "1m",
    "__interval": "15s",
    "__range": "5m",
}
# The biggest dashboard `kubectl apply` can keep in its last-applied-configuration annotation
# (annotations are limited to 256 KiB in all, and the ConfigMap around the JSON takes a little).
MAX_DASHBOARD_BYTES = 250 * 1024
# profile_lookup_* metrics deliberately shown by no panel, with the reason. Empty: every metric
# has a place.
NOT_SHOWN: dict[str, str] = {}
# Metric families whose panels may find no series in the demo, with the reason: the demo has no
# proxy of the kind that makes them. Their queries must still parse.
EMPTY_IN_DEMO: dict[str, str] = {
    "profile_lookup_gateway_sessions_started_total": "the demo configures no gateway",
    "profile_lookup_gateway_sessions_retired_total": "the demo configures no gateway",
    "profile_lookup_gateway_rests_total": "the demo configures no gateway",
    "profile_lookup_query_changed_total": "the demo's query ids never retire",
}
# PromQL words that look like metric names.
KEYWORDS = {
    "and", "or", "unless", "by", "without", "on", "ignoring", "group_left", "group_right",
    "bool", "offset", "inf", "nan", "atan2",
}

problems: list[str] = []


def fail(message: str) -> None:
    problems.append(message)
    print(f"FAIL: {message}")


def get(base: str, path: str, **params: str) -> dict:
    url = f"{base}{path}"
    if params:
        url += "?" + urllib.parse.urlencode(params)
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return json.load(response)
    except urllib.error.HTTPError as e:  # Prometheus answers 400/422 with a JSON error
        return json.load(e)


def query(base: str, expr: str) -> tuple[list | None, str]:
    """The instant query's result, or None and Prometheus's error."""
    answer = get(base, "/api/v1/query", query=expr)
    if answer.get("status") != "success":
        return None, f"{answer.get('errorType')}: {answer.get('error')}"
    return answer["data"]["result"], ""


def metric_names(expr: str) -> set[str]:
    """The metric names a PromQL expression selects (not functions, keywords or labels)."""
    text = re.sub(r'"(?:\\.|[^"\\])*"|\'(?:\\.|[^\'\\])*\'|`[^`]*`', '""', expr)
    text = re.sub(r"\{[^}]*\}", " ", text)  # label matchers
    text = re.sub(r"\[[^\]]*\]", " ", text)  # ranges and subqueries
    text = re.sub(r"\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", " ", text)
    names = set()
    for m in re.finditer(r"(?<![\w:.$])([a-zA-Z_:][a-zA-Z0-9_:]*)(?![\w:])(\s*\()?", text):
        name, call = m.group(1), m.group(2)
        if call or name.lower() in KEYWORDS:
            continue
        names.add(name)
    return names


def substitute(expr: str, values: dict[str, str]) -> str:
    def one(m: re.Match) -> str:
        name = m.group(1) or m.group(2)
        if name not in values:
            fail(f"unknown variable ${name} in: {expr}")
            return m.group(0)
        return values[name]

    return re.sub(r"\$\{(\w+)(?::\w+)?\}|\$(\w+)", one, expr)


def panels_of(dashboard: dict) -> list[tuple[str, dict]]:
    """Every panel with the title of the row it sits under (collapsed rows hold theirs)."""
    out, row = [], ""
    for panel in dashboard.get("panels", []):
        if panel.get("type") == "row":
            row = panel.get("title", "")
            out.extend((row, p) for p in panel.get("panels", []))
        else:
            out.append((row, panel))
    return out


def check_structure(dashboard: dict, size: int) -> None:
    for key in ("uid", "title"):
        if not dashboard.get(key):
            fail(f"the dashboard has no {key}")
    if not isinstance(dashboard.get("schemaVersion"), int):
        fail("the dashboard has no schemaVersion")
    if size > MAX_DASHBOARD_BYTES:
        fail(f"the dashboard is {size} bytes: kubectl apply cannot keep more than "
             f"{MAX_DASHBOARD_BYTES} in its last-applied annotation")
    variables = {v.get("name"): v for v in dashboard.get("templating", {}).get("list", [])}
    source = variables.get("datasource", {})
    if source.get("type") != "datasource" or source.get("query") != "prometheus":
        fail("no `datasource` variable of type datasource for prometheus")
    ids = [p.get("id") for p in dashboard.get("panels", [])]
    ids += [p.get("id") for row in dashboard.get("panels", []) for p in row.get("panels", [])]
    for i in set(ids):
        if ids.count(i) > 1 and i is not None:
            fail(f"two panels have the id {i}")
    for row, panel in panels_of(dashboard):
        title = f"{row} / {panel.get('title')}"
        if panel.get("id") is None or "gridPos" not in panel:
            fail(f"{title}: no id or gridPos")
        if panel.get("type") == "text":
            continue
        sources = [panel.get("datasource")] + [t.get("datasource") for t in panel.get("targets", [])]
        for ds in sources:
            if not (isinstance(ds, dict) and ds.get("uid") == "${datasource}"):
                fail(f"{title}: data source {ds!r} is not the ${{datasource}} variable")
        if not panel.get("targets"):
            fail(f"{title}: no query")
        for t in panel.get("targets", []):
            if not t.get("refId") or not t.get("expr", "").strip():
                fail(f"{title}: a target without refId or expr")


def variable_values(dashboard: dict) -> dict[str, str]:
    values = dict(BUILT_INS)
    for v in dashboard.get("templating", {}).get("list", []):
        if v.get("type") == "query":
            values[v["name"]] = v.get("allValue") or ".*"
        elif v.get("type") == "datasource":
            values[v["name"]] = ""
    return values


def check_variables(base: str, dashboard: dict, values: dict[str, str]) -> None:
    for v in dashboard.get("templating", {}).get("list", []):
        if v.get("type") != "query":
            continue
        q = v.get("query")
        q = q.get("query", "") if isinstance(q, dict) else q or ""
        m = re.fullmatch(r"\s*label_values\((.*),\s*(\w+)\s*\)\s*", q, re.S)
        if not m:
            fail(f"variable {v['name']}: not label_values(SELECTOR, LABEL): {q}")
            continue
        expr = f"count by ({m.group(2)}) ({substitute(m.group(1), values)})"
        result, error = query(base, expr)
        if result is None or not result:
            fail(f"variable {v['name']}: {q} finds nothing ({error or 'no series'})")
        else:
            print(f"ok   {len(result):3} values  variable {v['name']}")


def check_panels(base: str, dashboard: dict, values: dict[str, str]) -> set[str]:
    shown: set[str] = set()
    for row, panel in panels_of(dashboard):
        for t in panel.get("targets", []):
            expr = t.get("expr", "")
            shown |= metric_names(expr)
            where = f"{row} / {panel.get('title')} [{t.get('refId')}]"
            result, error = query(base, substitute(expr, values))
            if result is None:
                fail(f"{where}: the query does not parse ({error})\n  {expr}")
            elif not result and metric_names(expr) & EMPTY_IN_DEMO.keys():
                print(f"note {where}: no series ({EMPTY_IN_DEMO[min(metric_names(expr) & EMPTY_IN_DEMO.keys())]})")
            elif not result:
                fail(f"{where}: the query returns no series\n  {expr}")
            else:
                print(f"ok   {len(result):3} series  {where}")
    return shown


def check_alerts(base: str, rules_file: str) -> None:
    with open(rules_file, encoding="utf-8") as f:
        written = len(re.findall(r"^\s*-\s*alert:", f.read(), re.M))
    # Every rule must have been evaluated once (rules run every second here).
    deadline = time.monotonic() + 15
    while True:
        rules = [r for g in get(base, "/api/v1/rules")["data"]["groups"] for r in g["rules"]]
        if rules and all(not r.get("lastEvaluation", "").startswith("0001") for r in rules):
            break
        if time.monotonic() > deadline:
            fail("Prometheus did not evaluate every alert rule within 15 s")
            break
        time.sleep(0.5)
    if len(rules) != written:
        fail(f"Prometheus loaded {len(rules)} alert rules, {rules_file} has {written}")
    names: dict[str, list[str]] = {}
    for r in rules:
        if r.get("health") != "ok":
            fail(f"alert {r['name']}: {r.get('health')}: {r.get('lastError')}")
        for name in metric_names(r["query"]):
            names.setdefault(name, []).append(r["name"])
    for name, alerts in sorted(names.items()):
        result, error = query(base, name)
        if not result:
            fail(f"metric {name} (alerts {', '.join(alerts)}) has no series {error}")
        else:
            print(f"ok   {len(result):3} series  {name}  ({', '.join(alerts)})")
    print(f"ok   {len(rules)} alert rules healthy, {len(names)} metric names found")


def check_coverage(metrics_url: str, shown: set[str]) -> None:
    with urllib.request.urlopen(metrics_url, timeout=10) as response:
        text = response.read().decode()
    families = dict(re.findall(r"^# TYPE (profile_lookup_\w+) (\w+)", text, re.M))
    for family, kind in sorted(families.items()):
        names = {family} | ({f"{family}_bucket", f"{family}_sum", f"{family}_count"}
                            if kind in ("histogram", "summary") else set())
        if names & shown:
            continue
        if family in NOT_SHOWN:
            print(f"note {family} has no panel: {NOT_SHOWN[family]}")
            continue
        fail(f"{family} ({kind}) is exported but no panel shows it: add one to the dashboard "
             "or say why not in NOT_SHOWN (scripts/dashboard/check.py)")
    print(f"ok   every one of the {len(families)} profile_lookup_* metrics exported has a panel")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--prometheus", required=True, help="http://127.0.0.1:PORT")
    parser.add_argument("--dashboard", required=True)
    parser.add_argument("--rules", required=True, help="deploy/prometheus/alerts.yml")
    parser.add_argument("--metrics-url", required=True, help="the demo's /metrics")
    args = parser.parse_args()
    with open(args.dashboard, "rb") as f:
        raw = f.read()
    dashboard = json.loads(raw)
    print(f"== {args.dashboard}: {len(panels_of(dashboard))} panels")
    check_structure(dashboard, len(raw))
    values = variable_values(dashboard)
    check_variables(args.prometheus, dashboard, values)
    shown = check_panels(args.prometheus, dashboard, values)
    print(f"== alert rules ({args.rules})")
    check_alerts(args.prometheus, args.rules)
    print("== every exported metric on the dashboard")
    check_coverage(args.metrics_url, shown)
    if problems:
        print(f"\n{len(problems)} problem(s): see FAIL above", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
