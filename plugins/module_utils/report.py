# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The fabric validation report: verdict, fault localization, baseline and the report files.

Pure functions (no Ansible imports); the fabric_report module is the thin wrapper.

Pair result (one per measured pair and rail, as the fabric_validate role gathers them):
  {server, server_device, server_port, client, client_device, client_port, test, bw_avg_gbps,
   bw_peak_gbps, threshold_gbps, passed, failure, round, pass (1 first pass, 2 retest), duration_s}
Counter violation (ib_counters, plus the host):
  {host, device, port, counter, before, after, delta, allowed, category}
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import datetime
import time

from ansible_collections.ibtune.fabric.plugins.module_utils.report_baseline import (  # noqa: F401 (re-exported)
    BASELINE_VERSION,
    DEFAULT_BASELINE_KEEP,
    baseline_median,
    empty_baseline,
    find_regressions,
    load_baseline,
    update_baseline,
)
from ansible_collections.ibtune.fabric.plugins.module_utils.report_localize import first_pass_suspects, localize  # noqa: F401 (re-exported)
from ansible_collections.ibtune.fabric.plugins.module_utils.report_normalize import (  # noqa: F401 (re-exported)
    _figures,
    _int_or,
    _median,
    _pair_label,
    _violation,
    endpoint,
    fmt_gbps,
    link_key,
    normalize_results,
)
from ansible_collections.ibtune.fabric.plugins.module_utils.report_render import (  # noqa: F401 (re-exported)
    REPORT_FILES,
    _link_text,
    _node_text,
    _regression_text,
    _violation_text,
    render_all,
    to_json,
    to_junit,
    to_markdown,
    to_prometheus,
    write_atomic,
)

MESSAGE_ITEMS = 10  # culprits named in the failure message before "and N more"


def failure_message(report):
    items = [_link_text(x) for x in report["suspect_links"]]
    items += [_node_text(x) for x in report["suspect_nodes"]]
    items += [_violation_text(x) for x in report["counter_violations"]]
    items += [_regression_text(x) for x in report["regressions"]]
    if not items and report["failed_pairs"]:
        items = ["%s %s: %s" % (_pair_label(r), r["test"], _figures(r)) for r in report["failed_pairs"]]
    more = len(items) - MESSAGE_ITEMS
    text = "; ".join(items[:MESSAGE_ITEMS])
    if more > 0:
        text += "; and %d more (see summary.md)" % more
    return "Fabric validation failed: %s" % text


def _iso(ts):
    return datetime.datetime.fromtimestamp(ts, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def build_report(
    results,
    counter_violations=None,
    saturated=None,
    baseline=None,
    regression_tolerance=0.1,
    min_gbps=None,
    run_id=None,
    now=None,
):
    """The whole verdict as one JSON-able dict (report.json); renderers turn it into the other files."""
    tolerance = float(regression_tolerance)
    if not 0.0 <= tolerance < 1.0:
        raise ValueError("regression_tolerance must be >= 0 and < 1 (0.1 = 10%% below baseline), got %r" % tolerance)
    if min_gbps is not None and float(min_gbps) < 0:
        raise ValueError("min_gbps must be >= 0, got %r" % min_gbps)
    now = time.time() if now is None else float(now)
    results = normalize_results(results, min_gbps)
    violations = [_violation(v, i) for i, v in enumerate(counter_violations or [])]
    violations.sort(key=lambda v: (v["host"], v["device"], v["port"], v["counter"]))
    stuck = []
    for item in saturated or []:
        if isinstance(item, dict):
            entry = dict(item)
            entry["host"] = str(item.get("host") or "unknown")
            stuck.append(entry)
    stuck.sort(key=lambda v: (v["host"], str(v.get("device")), _int_or(v.get("port"), 0), str(v.get("counter"))))

    loc = localize(results)
    regressions, medians = find_regressions(results, baseline, tolerance)
    for res in results:
        res["baseline_gbps"] = medians.get((res["link"], res["test"]))
    regressed = set((r["link"], r["test"]) for r in regressions)
    for res in results:
        res["regressed"] = (res["link"], res["test"]) in regressed and res["bw_avg_gbps"] is not None
    failed_pairs = [r for r in results if not r["passed"]]
    hosts = set()
    for res in results:
        hosts.add(res["server"])
        hosts.add(res["client"])
    passed = not failed_pairs and not violations and not regressions
    report = {
        "schema": 1,
        "run_id": run_id or datetime.datetime.fromtimestamp(now, datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ"),
        "timestamp": _iso(now),
        "timestamp_seconds": now,
        "passed": passed,
        "totals": {
            "results": len(results),
            "failed": len(failed_pairs),
            "hosts": len(hosts),
            "rounds": len(set((r["pass"], r["round"]) for r in results)),
            "retests": sum(1 for r in results if r["pass"] != 1),
            "suspect_nodes": len(loc["suspect_nodes"]),
            "suspect_links": len(loc["suspect_links"]),
            "counter_violations": len(violations),
            "regressions": len(regressions),
            "saturated": len(stuck),
        },
        "settings": {
            "min_gbps": None if min_gbps is None else float(min_gbps),
            "regression_tolerance": tolerance,
            "baseline": bool(baseline and baseline.get("links")),
        },
        "failed_pairs": failed_pairs,
        "suspect_nodes": loc["suspect_nodes"],
        "suspect_links": loc["suspect_links"],
        "known_good": loc["known_good"],
        "cleared": loc["cleared"],
        "regressions": regressions,
        "counter_violations": violations,
        "saturated": stuck,
        "results": results,
    }
    report["headline"] = headline(report)
    report["message"] = (
        "Fabric validation passed: %s" % report["headline"][len("PASSED: ") :] if passed else failure_message(report)
    )
    return report


def _plural(n, word):
    return "%d %s%s" % (n, word, "" if n == 1 else "s")


def headline(report):
    t = report["totals"]
    text = "%d of %s failed%s on %s" % (
        t["failed"],
        _plural(t["results"], "pair result"),
        " (%s included)" % _plural(t["retests"], "retest") if t["retests"] else "",
        _plural(t["hosts"], "host"),
    )
    text += ", %s, %s, %s, %s" % (
        _plural(t["suspect_nodes"], "suspect node"),
        _plural(t["suspect_links"], "suspect link"),
        _plural(t["counter_violations"], "counter violation"),
        _plural(t["regressions"], "regression"),
    )
    return ("PASSED: " if report["passed"] else "FAILED: ") + text
