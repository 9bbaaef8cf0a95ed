# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The report's pair results summarised per host and rail, for the outputs that cannot take one line per pair
at scale (pure; render.py and html.py call it).

512 hosts x 8 rails all_pairs is 2.1 M pair results: one Prometheus series per pair and metric is 3.1 M series
(374 MiB), one JUnit testcase per pair 247 MiB, one heatmap cell per pair a page no browser draws. Above
``AGGREGATE_ABOVE`` results those outputs carry instead one entry per (host, device, test) - its pairs, the
failed ones, the lowest and median figure - and every FAILED pair still on its own (a failure is never folded
into an aggregate); report.json lists the pairs that did not pass, and results.json every pair (table-encoded).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.ibtune.fabric.plugins.module_utils.validate import resultfile

# pair results; below, every output lists every pair (the same size as the results files go compact above)
AGGREGATE_ABOVE = resultfile.COMPACT_ABOVE
FAILED_LISTED = 20  # failing pairs a JUnit aggregate testcase names (the rest are counted)


def aggregated(report, limit=None):
    """True when the report has more pair results than the outputs list one by one (AGGREGATE_ABOVE)."""
    return len(report.get("results") or ()) > (AGGREGATE_ABOVE if limit is None else limit)


def _figure(res):
    if res.get("kind") == "latency":
        return res.get("t_typical_us")
    return res.get("bw_avg_gbps")


def _median(values):
    values = sorted(values)
    if not values:
        return None
    mid = len(values) // 2
    return values[mid] if len(values) % 2 else (values[mid - 1] + values[mid]) / 2.0


def by_host_rail(results):
    """[{host, device, test, kind, pairs, failed, worst, median, failing: [result]}] sorted by host, device, test:
    every pair result counted at both of its ends (its server's and its client's device)."""
    groups = {}
    for res in results:
        for host, device in ((res["server"], res.get("server_device")), (res["client"], res.get("client_device"))):
            key = (host, device, res.get("test"))
            entry = groups.get(key)
            if entry is None:
                kind = res.get("kind") or "bandwidth"
                entry = {"host": host, "device": device, "test": res.get("test"), "kind": kind, "pairs": 0}
                entry.update(failing=[], values=[])
                groups[key] = entry
            entry["pairs"] += 1
            if not res.get("passed"):
                entry["failing"].append(res)
            value = _figure(res)
            if value is not None:
                entry["values"].append(float(value))
    out = []
    for key in sorted(groups, key=lambda k: tuple(str(p) for p in k)):
        entry = groups[key]
        values = entry.pop("values")
        latency = entry["kind"] == "latency"
        entry.update(
            failed=len(entry["failing"]),
            worst=(max(values) if latency else min(values)) if values else None,
            median=_median(values),
        )
        out.append(entry)
    return out
