# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The peer-relative gate: a pair that met its absolute threshold but is slow against the other pairs of its
kind, test and rail fails as `slow_vs_peers`.

It lives below the report so that the retest planner (pairs.retest_plan) applies the same gate to pass 1 as the
report does: a pair that fails only this gate is retested too, from the same known-good set. Invalid figures (a
result whose failure kind is `invalid`, e.g. above the line rate) never enter a median.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import bisect
import collections
import itertools
import operator

from ansible_collections.ibtune.fabric.plugins.module_utils.validate.results import fmt_value, median_of
from ansible_collections.ibtune.fabric.plugins.module_utils.validate.table import (
    columns_of,
    group_numbers,
    kind_figures,
    row_changer,
    row_reader,
)

MIN_PEERS = 3  # the peer-relative gate needs at least this many other pairs of the same test and rail


def _median_without(ordered, value):
    """Median of the sorted list `ordered` with one occurrence of `value` left out."""
    n = len(ordered) - 1
    skip = bisect.bisect_left(ordered, value)

    def at(j):
        return ordered[j] if j < skip else ordered[j + 1]

    return at(n // 2) if n % 2 else (at(n // 2 - 1) + at(n // 2)) / 2.0


def _fmt_fraction(value):
    return ("%.2f" % value).rstrip("0").rstrip(".")


def _peer_failure(res, value, median, peers, fraction):
    if res["kind"] == "latency":
        return "%s is %s x the %s median of its %d peers on rail %s (%s, limit %s x, min_peer_fraction %s)" % (
            fmt_value(res, value),
            _fmt_fraction(value / median),
            fmt_value(res, median),
            peers,
            res["rail"],
            res["test"],
            _fmt_fraction(1.0 / fraction),
            _fmt_fraction(fraction),
        )
    return "%s is %s of the %s median of its %d peers on rail %s (%s, min_peer_fraction %s)" % (
        fmt_value(res, value),
        _fmt_fraction(value / median),
        fmt_value(res, median),
        peers,
        res["rail"],
        res["test"],
        _fmt_fraction(fraction),
    )


def _figure(res):
    return res["t_typical_us"] if res["kind"] == "latency" else res["bw_avg_gbps"]


def _worse(kind, value, than):
    return value > than if kind == "latency" else value < than


def _collect(passes, numbers, keys, figures, failure_kinds, passed):
    """({(kind, test, rail): [first-pass values, worst passed value]}, the retests' flags or None when every result
    is of the first pass) over the results' columns
    (``numbers``: each result's group, table.group_numbers; ``keys``: {group: key}), in C: a first-pass result with
    a figure (not an invalid one) enters its group's values (passed and failed ones appended apart, by map over
    list.append); its group's worst passed value is the min (max for latency) of the passed ones, as the loop that
    kept the first of the worst found it."""
    retests = None  # no retest at all (the common case): no flags
    if passes.count(1) != len(passes):
        retests = list(map(operator.ne, passes, itertools.repeat(1)))
    if retests is None and None not in figures and "invalid" not in failure_kinds:  # every result enters: in C
        ok, failed = passed, list(map(operator.not_, passed))
    else:
        valid = map(operator.is_not, figures, itertools.repeat(None))
        if retests is not None:
            valid = map(operator.and_, valid, map(operator.not_, retests))
        valid = list(map(operator.and_, valid, map(operator.ne, failure_kinds, itertools.repeat("invalid"))))
        ok = list(map(operator.and_, valid, map(operator.truth, passed)))
        failed = list(map(operator.and_, valid, map(operator.not_, ok)))
    good, bad = dict((number, []) for number in keys), dict((number, []) for number in keys)
    for lists, chosen in ((good, ok), (bad, failed)):
        side = map(lists.__getitem__, itertools.compress(numbers, chosen))
        collections.deque(map(list.append, side, itertools.compress(figures, chosen)), maxlen=0)
    groups = {}
    for number, key in keys.items():
        if good[number] or bad[number]:
            worst = (max if key[0] == "latency" else min)(good[number]) if good[number] else None
            groups[key] = [good[number] + bad[number], worst]
    return groups, retests


def _bounds(groups, fraction):
    """(stats {key: (sorted values, median)}, suspicious {key: bound}). Leaving one value out moves the median by
    at most one place: the median of a result's peers lies within values[half - 1] .. values[half + 1]. A value
    that clears the bound against that cannot fail; when the group's worst passed value does, no member can."""
    stats = {}
    suspicious = {}
    for key, (values, worst) in groups.items():
        if len(values) - 1 < MIN_PEERS:
            continue
        values.sort()
        stats[key] = (values, median_of(values))
        half = len(values) // 2
        if worst is None:
            continue
        bound = values[half - 1] / fraction if key[0] == "latency" else fraction * values[half + 1]
        if _worse(key[0], worst, bound):
            suspicious[key] = bound
    return stats, suspicious


def peer_gate(results, min_peer_fraction):
    """Fail (in place) the results that passed their absolute gate but are below min_peer_fraction x
    the median of their peers: the other first-pass results of the same kind, test and rail (a
    retest is held to the first pass's median). Latency mirrors it: above median / min_peer_fraction
    fails. Needs MIN_PEERS peers. A failed result gets `peer_median`. Returns how many it failed.
    ``results``: normalised result dicts, or a ResultTable (read a column at a time; a result that fails is
    promoted to its own dict)."""
    if not min_peer_fraction:
        return 0
    passes, kinds, tests, rails, bws, lats, failure_kinds, passed = columns_of(
        results, "pass", "kind", "test", "rail", "bw_avg_gbps", "t_typical_us", "failure_kind", "passed"
    )
    figures = kind_figures(kinds, bws, lats)
    planes, numbers = group_numbers(kinds, tests, rails)
    keys = dict((number, key) for key, number in planes.items())
    groups, retests = _collect(passes, numbers, keys, figures, failure_kinds, passed)
    stats, suspicious = _bounds(groups, min_peer_fraction)
    read, change = row_reader(results), row_changer(results)
    failed = 0
    if suspicious:  # the first-pass results of those groups, one by one
        chosen = set(planes[key] for key in suspicious)
        for index in itertools.compress(range(len(numbers)), map(chosen.__contains__, numbers)):
            key = keys[numbers[index]]
            if passes[index] != 1 or not passed[index]:
                continue
            if _worse(key[0], figures[index], suspicious[key]):
                failed += _peer_check(read, change, index, stats[key][0], None, min_peer_fraction)
    for index in itertools.compress(range(len(numbers)), retests or ()):
        entry = stats.get(keys[numbers[index]])
        if entry is not None:
            failed += _peer_check(read, change, index, entry[0], entry[1], min_peer_fraction)
    return failed


def _peer_check(read, change, index, ordered, median, fraction):
    """1 when result ``index`` (read(index) to read it, change(index) to fail it: table.row_reader, row_changer;
    passed so far) is slow against the sorted peer values (its own among them when median is None: then the median
    of the others is used), else 0."""
    res = read(index)
    value = _figure(res)
    if not res["passed"] or value is None:
        return 0
    peers = len(ordered) - (1 if median is None else 0)
    if median is None:
        median = _median_without(ordered, value)
    if not median:
        return 0
    limit = median / fraction if res["kind"] == "latency" else fraction * median
    if not _worse(res["kind"], value, limit):
        return 0
    res = change(index)
    res["passed"] = False
    res["failure_kind"] = "slow_vs_peers"
    res["peer_median"] = round(median, 3)
    res["failure"] = _peer_failure(res, value, median, peers, fraction)
    return 1
