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

import collections
import itertools

from ansible_collections.ibtune.fabric.plugins.module_utils.validate import resultfile
from ansible_collections.ibtune.fabric.plugins.module_utils.validate.table import columns_of, failed_indices, row_reader

# pair results; below, every output lists every pair (the same size as the results files go compact above)
AGGREGATE_ABOVE = resultfile.COMPACT_ABOVE
FAILED_LISTED = 20  # failing pairs a JUnit aggregate testcase names (the rest are counted)


def aggregated(report, limit=None):
    """True when the report has more pair results than the outputs list one by one (AGGREGATE_ABOVE)."""
    return len(report.get("results") or ()) > (AGGREGATE_ABOVE if limit is None else limit)


def _median(values):
    values = sorted(values)
    if not values:
        return None
    mid = len(values) // 2
    return values[mid] if len(values) % 2 else (values[mid - 1] + values[mid]) / 2.0


def by_host_rail(results):
    """[{host, device, test, kind, pairs, failing: [result], failed, worst, median}] sorted by host, device, test:
    every pair result counted at both of its ends (its server's and its client's device). ``results``: dicts or a
    ResultTable, read a column at a time (4.2 M results at 1024 hosts x 8 rails all_pairs)."""
    servers, server_devices, clients, client_devices, tests, kinds, passed, bws, lats = columns_of(
        results, "server", "server_device", "client", "client_device", "test", "kind", "passed", "bw_avg_gbps",
        "t_typical_us",
    )  # fmt: skip
    count = len(servers)

    def ends(reverse=False):  # each end's (host, device, test), made as they are read (no list of millions)
        order = reversed if reverse else iter
        return (
            zip(order(servers), order(server_devices), order(tests)),
            zip(order(clients), order(client_devices), order(tests)),
        )

    # each group's first result (its server end before its client end): the kind it is reported as
    last_servers, last_clients = ends(reverse=True)
    first = dict(zip(last_clients, itertools.count(2 * count - 1, -2)))  # the last write is the first end: in C
    for key, index in dict(zip(last_servers, itertools.count(2 * count - 2, -2))).items():
        if index < first.get(key, index + 1):
            first[key] = index
    figures = [lat if kind == "latency" else bw for kind, bw, lat in zip(kinds, bws, lats)]
    values = dict((key, []) for key in first)
    pairs = collections.Counter()
    for side in ends():
        for key, value in zip(side, figures):
            if value is not None:
                values[key].append(value)
    for side in ends():
        pairs.update(side)  # in C
    failing = dict((key, []) for key in first)
    row = row_reader(results)
    for index in failed_indices(passed):
        res = row(index)
        failing[(servers[index], server_devices[index], tests[index])].append(res)
        failing[(clients[index], client_devices[index], tests[index])].append(res)
    out = []
    for key in sorted(first, key=lambda k: tuple(str(p) for p in k)):
        kind = kinds[first[key] // 2] or "bandwidth"
        numbers = [float(v) for v in values[key]]
        out.append(
            {
                "host": key[0],
                "device": key[1],
                "test": key[2],
                "kind": kind,
                "pairs": pairs[key],
                "failing": failing[key],
                "failed": len(failing[key]),
                "worst": (max(numbers) if kind == "latency" else min(numbers)) if numbers else None,
                "median": _median(numbers),
            }
        )
    return out
