# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The fabric validation report: build_report() puts the verdict together; one module per concern.

  report_normalize  shape and types of the inputs (the absolute gate is gate.py's, applied before)
  report_verdict    peer-relative gate, systemic verdict, per-host verdict
  report_localize   suspect nodes and links
  report_baseline   regressions against the per-link baseline, baseline update
  report_render     report.json, junit.xml, summary.md, ibtune.prom (report_html: report.html)

Pure functions (no Ansible imports); the fabric_report module is the thin wrapper (report_module).

Pair result (one per measured pair and rail, as the join hands them over, already gated):
  {server, server_device, server_port, client, client_device, client_port, test, kind, rail,
   bw_avg_gbps, bw_peak_gbps, threshold_gbps | t_typical_us, p99_us, threshold_us, passed, failure,
   failure_kind, round, pass (1 first pass, 2 retest), duration_s}
Counter violation (ib_counters, plus the host):
  {host, device, port, counter, before, after, delta, allowed, category}
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import datetime
import itertools
import math
import operator
import time

from ansible_collections.ibtune.fabric.plugins.module_utils.common.memory import paused_gc
from ansible_collections.ibtune.fabric.plugins.module_utils.host import counters as host_counters
from ansible_collections.ibtune.fabric.plugins.module_utils.perftest.gate import check_thresholds
from ansible_collections.ibtune.fabric.plugins.module_utils.report.baseline import (
    PARAMS,
    find_regressions,
    params_tuple,
)
from ansible_collections.ibtune.fabric.plugins.module_utils.report.text import (
    link_text,
    node_text,
    regression_text,
    saturated_text,
    switch_fault_text,
    switch_violation_text,
    violation_text,
)
from ansible_collections.ibtune.fabric.plugins.module_utils.report.topology import apply as apply_topology
from ansible_collections.ibtune.fabric.plugins.module_utils.report import phy as _phy
from ansible_collections.ibtune.fabric.plugins.module_utils.validate import resultfile as _resultfile
from ansible_collections.ibtune.fabric.plugins.module_utils.report.verdict import (
    host_verdicts,
    line_rate_of,
    normalize_host_failures,
    reached_threshold,
    systemic_cause,
    unmeasured_hosts,
)
from ansible_collections.ibtune.fabric.plugins.module_utils.validate import switches
from ansible_collections.ibtune.fabric.plugins.module_utils.validate.localize import localize
from ansible_collections.ibtune.fabric.plugins.module_utils.validate.peer import peer_gate
from ansible_collections.ibtune.fabric.plugins.module_utils.validate.results import (
    figures_text,
    fmt_gbps,
    int_or,
    normalize_violation,
    pair_label,
)
from ansible_collections.ibtune.fabric.plugins.module_utils.validate.table import ResultTable, normalize_table

MESSAGE_ITEMS = 10  # culprits named in the failure message before "and N more"


# host failure kinds the message already names through a suspect, a violation or a regression; a missing rail is
# a host failure of the plan (no pair result exists for it), so it is named as the host's failure
NAMED_ELSEWHERE = frozenset(
    (
        "bad_node",
        "suspect_node",
        "intermittent",
        "counters",
        "saturated",
        "bad_link",
        "regression",
        "invalid",
        "ungated",
    )
)
NAMED_PAIR_KINDS = frozenset(("missing_rail", "invalid", "ungated", "refused"))  # failed pairs named as pairs
EMPTY_LOCALISATION = {"suspect_nodes": [], "suspect_links": [], "switch_faults": [], "known_good": [], "cleared": []}


def _message_items(report):
    items = list(report.get("problems") or [])
    items += [
        "%s (%s): %s" % (h["host"], h["failure_kind"], h["reason"])
        for h in report.get("failed_hosts") or []
        if h["failure_kind"] not in NAMED_ELSEWHERE
    ]
    items += [f["msg"] for f in report.get("topology_findings") or [] if f.get("severity") == "error"]
    items += _phy.error_messages(report)
    items += [x["text"] for x in report.get("suspect_cables") or []]
    items += [x["text"] for x in report.get("switch_faults") or []]
    items += [link_text(x) for x in report["suspect_links"]]
    items += [node_text(x) for x in report["suspect_nodes"]]
    items += [violation_text(x) for x in report["counter_violations"]]
    items += [saturated_text(x) for x in report.get("saturated") or [] if x.get("gated")]
    items += [switch_violation_text(x) for x in report.get("switch_counter_violations") or []]
    items += [regression_text(x) for x in report["regressions"]]
    items += [
        "%s %s: %s" % (pair_label(r), r["test"], r["failure"])
        for r in report["failed_pairs"]
        if r["failure_kind"] in NAMED_PAIR_KINDS
    ]
    if not items and report["failed_pairs"]:
        items = ["%s %s: %s" % (pair_label(r), r["test"], figures_text(r)) for r in report["failed_pairs"]]
    return items


def failure_message(report):
    if report.get("systemic"):
        return "Fabric validation failed: %s" % report["systemic"]
    items = _message_items(report)
    more = len(items) - MESSAGE_ITEMS
    text = "; ".join(items[:MESSAGE_ITEMS])
    if more > 0:
        text += "; and %d more (see summary.md)" % more
    return "Fabric validation failed: %s" % text


def _iso(ts):
    return datetime.datetime.fromtimestamp(ts, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _finite_or_none(value, name, low, high=None, low_open=False):
    """Setting check: None, or a finite number in [low, high] ((low, high] with low_open)."""
    if value is None:
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        number = float("nan")
    bad = (
        not math.isfinite(number)
        or number < low
        or (low_open and number == low)
        or (high is not None and number > high)
    )
    if bad:
        span = "%s %s" % ("above" if low_open else "from", low) + ("" if high is None else " to %s" % high)
        raise ValueError("%s must be a finite number %s, got %r" % (name, span, value))
    return number


def _regression_failure(reg):
    return "%s < %d%% of its baseline %s (median of its last runs): a regression" % (
        fmt_gbps(reg["bw_avg_gbps"]),
        round(100 * (1 - reg["tolerance"])),
        fmt_gbps(reg["baseline_gbps"]),
    )


def _no_result_problem(expected, failed_before, left, min_hosts):
    text = "no pair result: no link was measured"
    parts = []
    if expected:
        parts.append("%d expected host%s" % (len(expected), "" if len(expected) == 1 else "s"))
    if failed_before:
        parts.append("%d failed before measuring" % len(failed_before))
    if expected and len(left) < min_hosts:
        parts.append("%d left to validate, fewer than min_hosts %d" % (len(left), min_hosts))
    if parts:
        text += " (%s)" % ", ".join(parts)
    return text + ": validation needs at least two reachable hosts with an RDMA port, fix the failed hosts"


def _host_problems(results, seen, expected, host_failures, min_hosts):
    """Sentences for a run that validated too few hosts to mean anything (`seen`: hosts in a result)."""
    failed_before = unmeasured_hosts(host_failures)
    validated = seen - failed_before
    left = sorted(set(expected) - failed_before) if expected else sorted(validated)
    if not results:
        return [_no_result_problem(expected, failed_before, left, min_hosts)]
    if len(validated) < min_hosts:
        return [
            "only %d host%s validated (%s), fewer than min_hosts %d: fix the failed hosts or lower min_hosts"
            % (len(validated), "" if len(validated) == 1 else "s", ", ".join(sorted(validated)[:5]), min_hosts)
        ]
    return []


def build_report(results, counter_violations=None, saturated=None, baseline=None, regression_tolerance=0.1, **options):
    """The whole verdict as one dict (report.json, render.to_json); renderers turn it into the other files. Its
    ``results`` are a ResultTable (validate/table.py: the pair results as columns, a failed one as its own dict);
    ``results`` given may be a list of dicts or a ResultTable (taken as it is, and changed in place).

    ``results`` come already gated (gate.py): the report never re-decides a pair's absolute gate; it
    adds the peer-relative gate (``min_peer_fraction`` x the median of the same kind, test and rail,
    0 turns it off), the baseline regression, the systemic verdict and the per-host verdict over
    ``expected_hosts`` and ``host_failures``. Options (OPTIONS has their defaults): ``regression_tolerance``,
    ``min_gbps`` and ``line_rate_gbps`` (only checked, gate.check_thresholds, and used to name a systemic
    cause), ``run_id``, ``now``, ``min_hosts``,
    ``topology`` (the topology stage's compact fabric, report/topology.py: suspect_cables, host_order,
    switch_counter_violations), ``host_rails`` ({host: [rail names]}: a host is PASSED only when each was measured
    and passed), ``switch_groups`` ({host: leaf | {rail: leaf}}, the inventory's), ``lldp`` ({host: lldpd JSON})
    with ``netdevs`` ({host: {device: [netdev]}}): the switch grouping localisation uses (switches.resolve).
    ``phy`` (the fabric_validate PHY stage's phy_verdict) adds phy_findings (report/phy.py; errors fail the run).
    Raises ValueError (one sentence) on bad settings or inputs.
    """
    unknown = sorted(set(options) - set(OPTIONS))
    if unknown:
        raise TypeError("build_report() got unexpected options %s" % ", ".join(unknown))
    opts = dict(OPTIONS, **options)
    opts.update(
        counter_violations=counter_violations,
        saturated=saturated,
        baseline=baseline,
        regression_tolerance=regression_tolerance,
    )
    # Nothing here makes reference cycles, and with millions of result dicts alive the cyclic
    # collector's passes cost a fifth of the time (1024 hosts x 8 rails): it is paused meanwhile.
    with paused_gc():
        return _build_report(results, opts)


OPTIONS = {
    "regression_tolerance": 0.1,
    "min_gbps": None,
    "run_id": None,
    "now": None,
    "expected_hosts": None,
    "host_failures": None,
    "min_hosts": 2,
    "min_peer_fraction": 0.9,
    "line_rate_gbps": None,
    "topology": None,
    "host_rails": None,
    "switch_groups": None,
    "lldp": None,
    "netdevs": None,
    "phy": None,
}


def _check_settings(opts):
    """{tolerance, fraction, line_rate_gbps, min_hosts}; ValueError names the bad setting."""
    tolerance = float(opts["regression_tolerance"])
    if not 0.0 <= tolerance < 1.0:
        raise ValueError("regression_tolerance must be >= 0 and < 1 (0.1 = 10%% below baseline), got %r" % tolerance)
    problems = check_thresholds(min_gbps=opts["min_gbps"])
    if problems:
        raise ValueError("; ".join(problems))
    min_hosts = opts["min_hosts"]
    if isinstance(min_hosts, bool) or not isinstance(min_hosts, int) or min_hosts < 1:
        raise ValueError("min_hosts must be an integer >= 1, got %r" % (min_hosts,))
    expected = opts["expected_hosts"]
    if expected is not None and (
        isinstance(expected, (str, bytes, dict)) or not all(isinstance(h, str) and h for h in expected)
    ):
        raise ValueError("expected_hosts must be a list of host names, got %r" % (expected,))
    return {
        "tolerance": tolerance,
        "fraction": _finite_or_none(opts["min_peer_fraction"], "min_peer_fraction", 0.0, 1.0),
        "line_rate_gbps": _finite_or_none(opts["line_rate_gbps"], "line_rate_gbps", 0.0, low_open=True),
        "min_hosts": min_hosts,
    }


def _saturated_of(items):
    """Saturated counters, each with ``gated``: ib_counters says whether an increase of it fails the port; where
    an older caller does not, the physical-layer counters (allowed no increase by default) are."""
    stuck = []
    for item in items or []:
        if isinstance(item, dict):
            entry = dict(item)
            entry["host"] = str(item.get("host") or "unknown")
            if entry.get("gated") is None:
                entry["gated"] = entry.get("counter") in host_counters.DEFAULT_THRESHOLDS
            stuck.append(entry)
    stuck.sort(key=lambda v: (v["host"], str(v.get("device")), int_or(v.get("port"), 0), str(v.get("counter"))))
    return stuck


def _refuse(results, expected_hosts):
    """(kept results, refused sentences): a result for a host the run does not expect, or a second result of the
    same pass, round, rail, pair and test, is refused with its name, never merged. ``results``: a ResultTable."""
    known = set(expected_hosts) if expected_hosts is not None else None
    keys = results.columns("pass", "round", "rail", "server", "client", "kind", "test")
    servers, clients = keys[3], keys[4]
    # the common case first, in C: every host known, and no key twice (_distinct_keys), without a set of millions
    # of key tuples (500 MiB at 1024 hosts x 8 rails all_pairs); else the loop names them
    all_known = known is None or (known.issuperset(servers) and known.issuperset(clients))
    if all_known and _distinct_keys(keys):
        return results, []
    seen = set()
    kept, refused = [], []
    for index, key in enumerate(zip(*keys)):
        stranger = known is not None and (key[3] not in known or key[4] not in known)
        if stranger or key in seen:
            res = results.row(index)
            why = "names a host the run does not expect" if stranger else "is a second result of the same pair"
            refused.append("%s %s pass %d round %d %s: refused (not merged)" % (
                pair_label(res), res["test"], res["pass"], res["round"], why
            ))  # fmt: skip
            continue
        seen.add(key)
        kept.append(index)
    return results.select(kept), refused


REFUSE_SPANS = 64  # results a span of the same pass, round, kind and test holds at least, on average, for
# _distinct_keys to hash each span's keys apart


def _distinct_keys(keys):
    """Whether the results' keys (columns: pass, round, rail, server, client, kind, test) are told apart by their
    hashes: then no key comes twice (False: two hashes are the same, perhaps of two keys). A span of consecutive
    results with the same pass, round, kind and test (a round of a pass, as the join writes it) has its (rail,
    server, client) hashed into one set per distinct (pass, round, kind, test): sets of thousands, not one of 4.2
    M hashes whose every insertion missed the cache at 1024 hosts x 8 rails all_pairs. Where the spans are short,
    every key is hashed into one set."""
    count = len(keys[0])
    if not count:
        return True
    outer = [keys[0], keys[1], keys[5], keys[6]]
    starts = sorted(set().union(*map(_resultfile.changes, outer)))
    if len(starts) * REFUSE_SPANS > count:
        # a column holding one value throughout tells no two keys apart: left out of the hashed tuples
        varying = [column for column in keys if column.count(column[0]) != count] or keys[:1]
        return len(set(map(hash, zip(*varying)))) == count
    rails, servers, clients = keys[2], keys[3], keys[4]
    spans = {}
    bounds = [0] + starts + [count]
    for low, high in zip(bounds, bounds[1:]):
        hashes = spans.setdefault(tuple(column[low] for column in outer), set())
        hashes.update(map(hash, zip(rails[low:high], servers[low:high], clients[low:high])))
    return sum(map(len, spans.values())) == count


def _apply_baseline(results, medians, regressed):
    """Each result's baseline_gbps and regressed (set for every result); a passed result that regressed fails."""
    if not medians:
        results.set_const("baseline_gbps", None)
        results.set_const("regressed", False)
        return
    figures, flags = [], []
    links, bws, passed = results.columns("link", "bw_avg_gbps", "passed")
    for index, (link, params, bw, ok) in enumerate(zip(links, zip(*results.columns(*PARAMS)), bws, passed)):
        key = (link, params_tuple(*params))
        figures.append(medians.get(key))
        reg = regressed.get(key)
        flags.append(reg is not None and bw is not None)
        if flags[-1] and ok:
            res = results.promote(index)
            res["passed"] = False
            res["failure_kind"] = "regression"
            res["failure"] = _regression_failure(reg)
    results.set_column("baseline_gbps", figures)
    results.set_column("regressed", flags)


def _scan(results, regressions, medians):
    """Over every result (millions at 1024 hosts x 8 rails), a column at a time: baseline figures, failed pairs
    (held as dicts from here on: ResultTable.promote), the hosts seen, rounds and retests."""
    regressed = dict(((r["link"], tuple(r["params"][k] for k in PARAMS)), r) for r in regressions)
    _apply_baseline(results, medians, regressed)
    passes, rounds, servers, clients, passed = results.columns("pass", "round", "server", "client", "passed")
    failed = [results.promote(i) for i in itertools.compress(range(len(results)), map(operator.not_, passed))]
    return {
        "seen": set(servers) | set(clients),
        "failed": failed,
        "rounds": len(set(zip(passes, rounds))),
        "retests": len(passes) - passes.count(1),
    }


def _systemic(results, scan, settings, min_gbps):
    """The systemic sentence (a setting above the line rate, or most pairs failing the same way), else None."""
    line_rate = settings["line_rate_gbps"]
    if line_rate is None and min_gbps is not None:
        line_rate = line_rate_of(results)
    settings["line_rate_gbps"] = line_rate
    rate_problems = check_thresholds(min_gbps=min_gbps, line_rate_gbps=line_rate) if line_rate else []
    if rate_problems:
        return rate_problems[0]
    return systemic_cause(
        scan["failed"], len(results), lambda: line_rate or line_rate_of(results), min_gbps, reached_threshold(results)
    )


def _groups(opts):
    """(groups, source) for localisation: topology, LLDP, inventory (switches.resolve), else None (inferred)."""
    groups, source = switches.resolve(opts["topology"], opts["lldp"], opts["switch_groups"], opts["netdevs"])
    return (groups, source) if groups else None


def _totals(results, scan, expected, failed_hosts, passed_hosts, loc, violations, regressions, stuck):
    return {
        "results": len(results),
        "failed": len(scan["failed"]),
        "hosts": len(scan["seen"]),
        "expected_hosts": len(expected),
        "failed_hosts": len(failed_hosts),
        "passed_hosts": len(passed_hosts),
        "rounds": scan["rounds"],
        "retests": scan["retests"],
        "suspect_nodes": len(loc["suspect_nodes"]),
        "suspect_links": len(loc["suspect_links"]),
        "switch_faults": len(loc["switch_faults"]),
        "counter_violations": len(violations),
        "regressions": len(regressions),
        "saturated": len(stuck),
    }


def _build_report(results, opts):
    settings = _check_settings(opts)
    now = time.time() if opts["now"] is None else float(opts["now"])
    results = normalize_table(ResultTable.from_dicts(results))
    results, refused = _refuse(results, opts["expected_hosts"])
    violations = [normalize_violation(v, i) for i, v in enumerate(opts["counter_violations"] or [])]
    violations.sort(key=lambda v: (v["host"], v["device"], v["port"], v["counter"]))
    stuck = _saturated_of(opts["saturated"])
    host_failures = normalize_host_failures(opts["host_failures"])

    peer_gate(results, settings["fraction"])
    regressions, medians = find_regressions(results, opts["baseline"], settings["tolerance"])
    scan = _scan(results, regressions, medians)
    systemic = _systemic(results, scan, settings, opts["min_gbps"])
    groups = _groups(opts)
    excluded = unmeasured_hosts(host_failures)
    loc = EMPTY_LOCALISATION if systemic else localize(results, exclude_hosts=excluded, groups=groups)

    expected = set(opts["expected_hosts"] or ()) | set(h["host"] for h in host_failures)
    if opts["expected_hosts"] is None:
        expected |= scan["seen"]
    universe = sorted(expected | scan["seen"] | set(v["host"] for v in violations))
    failed_hosts, passed_hosts = host_verdicts(
        universe, results, scan["failed"], host_failures, loc, violations, regressions, stuck, opts["host_rails"]
    )
    problems = _host_problems(results, scan["seen"], sorted(expected), host_failures, settings["min_hosts"])
    if refused:
        problems.append("%d result%s refused: %s" % (len(refused), "" if len(refused) == 1 else "s", refused[0]))
    gated_stuck = [s for s in stuck if s.get("gated")]
    failing = problems or systemic or scan["failed"] or violations or regressions or failed_hosts or gated_stuck
    report = {
        "schema": 3,
        "run_id": opts["run_id"]
        or datetime.datetime.fromtimestamp(now, datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ"),
        "timestamp": _iso(now),
        "timestamp_seconds": now,
        "passed": not failing,
        "systemic": systemic,
        "problems": problems,
        "refused": refused,
        "totals": _totals(results, scan, expected, failed_hosts, passed_hosts, loc, violations, regressions, stuck),
        "settings": {
            "min_gbps": None if opts["min_gbps"] is None else float(opts["min_gbps"]),
            "regression_tolerance": settings["tolerance"],
            "baseline": bool(opts["baseline"] and opts["baseline"].get("links")),
            "min_hosts": settings["min_hosts"],
            "min_peer_fraction": settings["fraction"],
            "line_rate_gbps": settings["line_rate_gbps"],
            "switch_groups": groups[1] if groups else None,
        },
        "expected_hosts": sorted(expected),
        "failed_hosts": failed_hosts,
        "passed_hosts": passed_hosts,
        "host_failures": host_failures,
        "failed_pairs": scan["failed"],
        "suspect_nodes": loc["suspect_nodes"],
        "suspect_links": loc["suspect_links"],
        "switch_faults": loc["switch_faults"],
        "known_good": loc["known_good"],
        "cleared": loc["cleared"],
        "regressions": regressions,
        "counter_violations": violations,
        "saturated": stuck,
        "results": results,
    }
    for fault in report["switch_faults"]:
        fault["text"] = switch_fault_text(fault)
    if opts["topology"] is not None:
        apply_topology(report, opts["topology"])
    if opts["phy"] is not None:
        _phy.apply(report, opts["phy"])
    report["headline"] = headline(report)
    report["message"] = (
        "Fabric validation passed: %s" % report["headline"][len("PASSED: ") :]
        if report["passed"]
        else failure_message(report)
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
    if t.get("switch_faults"):
        text += ", %s" % _plural(t["switch_faults"], "switch fault")
    if "suspect_cables" in t:
        text += ", %s, %s" % (
            _plural(t["suspect_cables"], "suspect cable"),
            _plural(t["switch_counter_violations"], "switch counter violation"),
        )
    if t.get("topology_errors"):
        text += ", %s" % _plural(t["topology_errors"], "fabric check error")
    text += _phy.headline_part(t)
    if t.get("failed_hosts"):
        text += ", %s of %d" % (_plural(t["failed_hosts"], "failed host"), t.get("expected_hosts") or 0)
    return ("PASSED: " if report["passed"] else "FAILED: ") + text
