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
    """[{host, device, test, kind, pairs, failing: [result], failed, worst, median}] sorted by host, device, test:
    every pair result counted at both of its ends (its server's and its client's device)."""
    groups = {}  # (host, device, test) -> [kind, pairs, failing results, figures]
    get = groups.get
    for res in results:
        test = res.get("test")
        value = _figure(res)
        failed = not res.get("passed")
        # the figure once per result, counted at both ends (4.2 M results at 1024 hosts x 8 rails all_pairs)
        for key in ((res["server"], res.get("server_device"), test), (res["client"], res.get("client_device"), test)):
            tally = get(key)
            if tally is None:
                tally = groups[key] = [res.get("kind") or "bandwidth", 0, [], []]
            tally[1] += 1
            if failed:
                tally[2].append(res)
            if value is not None:
                tally[3].append(value)
    out = []
    for key in sorted(groups, key=lambda k: tuple(str(p) for p in k)):
        kind, pairs, failing, values = groups[key]
        values = [float(v) for v in values]
        out.append(
            {
                "host": key[0],
                "device": key[1],
                "test": key[2],
                "kind": kind,
                "pairs": pairs,
                "failing": failing,
                "failed": len(failing),
                "worst": (max(values) if kind == "latency" else min(values)) if values else None,
                "median": _median(values),
            }
        )
    return out
