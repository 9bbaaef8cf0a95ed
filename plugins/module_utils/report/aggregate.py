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
import operator

from ansible_collections.ibtune.fabric.plugins.module_utils.validate import resultfile
from ansible_collections.ibtune.fabric.plugins.module_utils.validate.table import (
    columns_of,
    grouped_ends,
    failed_indices,
    kind_figures,
    row_reader,
)

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


def _values_by_group(groups, ends, figures):
    """{group: [figures of its ends]}: each result's figure at its server's end, then at its client's, None left out
    (the order within a group is of no account: min and median). The appends run in C: map over list.append,
    drained by a deque that keeps nothing."""
    values = dict((group, []) for group in groups)
    present = list(map(operator.is_not, figures, itertools.repeat(None)))
    kept = figures if all(present) else list(itertools.compress(figures, present))
    for side in (ends[0::2], ends[1::2]):
        side = side if kept is figures else itertools.compress(side, present)
        collections.deque(map(list.append, map(values.__getitem__, side), kept), maxlen=0)
    return values


def _worst_and_median(numbers, kind, nan):
    """(the lowest figure, the highest for latency; the median) of ``numbers`` (sorted in place)."""
    if not numbers:
        return None, None
    if nan:  # sorting does not order a NaN: min and max as they always were
        worst = max(numbers) if kind == "latency" else min(numbers)
        return worst, _median(numbers)
    numbers.sort()
    mid = len(numbers) // 2
    median = numbers[mid] if len(numbers) % 2 else (numbers[mid - 1] + numbers[mid]) / 2.0
    return numbers[-1] if kind == "latency" else numbers[0], median


def _host_device_test(host, device, _kind, _rail, test):
    return host, device, test


def by_host_rail(results):
    """[{host, device, test, kind, pairs, failing: [result], failed, worst, median}] sorted by host, device, test:
    every pair result counted at both of its ends (its server's and its client's device). ``results``: dicts or a
    ResultTable, read a column at a time (4.2 M results at 1024 hosts x 8 rails all_pairs)."""
    kinds, passed, bws, lats = columns_of(results, "kind", "passed", "bw_avg_gbps", "t_typical_us")
    first, ends = grouped_ends(results, _host_device_test)
    figures = kind_figures(kinds, bws, lats)
    floats = set(map(type, figures)) <= {float, type(None)}  # then float() of each changes nothing
    nan = any(map(operator.ne, figures, figures))  # in C: only a NaN differs from itself
    values = _values_by_group(first.values(), ends, figures)
    pairs = collections.Counter(ends)  # in C
    failing = dict((group, []) for group in first.values())
    row = row_reader(results)
    for index in failed_indices(passed):
        res = row(index)
        failing[ends[2 * index]].append(res)
        failing[ends[2 * index + 1]].append(res)
    out = []
    for key in sorted(first, key=lambda k: tuple(str(p) for p in k)):  # stable: groups first met first
        group = first[key]
        kind = kinds[group // 2] or "bandwidth"
        worst, median = _worst_and_median(values[group] if floats else list(map(float, values[group])), kind, nan)
        out.append(
            {
                "host": key[0],
                "device": key[1],
                "test": key[2],
                "kind": kind,
                "pairs": pairs[group],
                "failing": failing[group],
                "failed": len(failing[group]),
                "worst": worst,
                "median": median,
            }
        )
    return out
