# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The verdict rules that need every result at once: the peer-relative gate, the systemic verdict
and the per-host verdict (every expected host is passed or failed, never absent).

The absolute gate (threshold per pair) is gate.py's and is applied before the report; the baseline
regression is report_baseline's.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import bisect
import re

from ansible_collections.ibtune.fabric.plugins.module_utils.validate.results import (
    median_of,
    fmt_gbps,
    fmt_value,
)
from ansible_collections.ibtune.fabric.plugins.module_utils.report.text import (
    link_text,
    node_text,
    regression_text,
    violation_text,
)

SYSTEMIC_SHARE = 0.8  # this share of the pair results failing the same way is a common cause
MIN_PEERS = 3  # the peer-relative gate needs at least this many other pairs of the same test and rail
MEASURED_KINDS = frozenset(("missing_rail",))  # host failures whose host still took part in pairs
_BASIS_RATE = re.compile(r"x ([0-9]+(?:\.[0-9]+)?) Gb/s (?:port|expected) rate")
LINE_RATE_KEYS = ("line_rate_gbps", "expected_rate_gbps", "link_rate_gbps", "server_rate_gbps", "client_rate_gbps")

# failure kind -> the common cause, said once for the whole fabric
CAUSES = {
    "no_device": "no RDMA device on %s",
    "connect": "perftest could not connect on %s: a firewall or the TCP port range blocks its handshake, or no "
    "server started",
    "timeout": "the tests timed out on %s: raise the timeout or check that both sides start",
    "server_failed": "the perftest servers failed on %s",
    "port_busy": "perftest could not listen on its TCP port on %s: another process holds the port range",
    "modify_qp_rtr": "perftest could not connect the queue pairs on %s: check the GID index, MTU and link layer",
    "mr_alloc": "perftest could not register its memory on %s: raise the locked-memory limit",
    "missing_rail": "the hosts' rails do not match on %s: check the rail map (fabric_validate_rails)",
    "invalid": "the measurements are invalid on %s: the perftest output was not read right",
    "crash": "perftest crashed on %s",
}


# ---------------------------------------------------------------------------------------------
# Peer-relative gate


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


def peer_gate(results, min_peer_fraction):
    """Fail (in place) the results that passed their absolute gate but are below min_peer_fraction x
    the median of their peers: the other first-pass results of the same kind, test and rail (a
    retest is held to the first pass's median). Latency mirrors it: above median / min_peer_fraction
    fails. Needs MIN_PEERS peers. A failed result gets `peer_median`. Returns how many it failed."""
    if not min_peer_fraction:
        return 0
    groups = {}  # (kind, test, rail) -> [first-pass values, worst passed value]
    retests = []
    for res in results:  # one pass; the members of a group are only looked at again when one may fail
        if res["pass"] != 1:
            retests.append(res)
            continue
        kind = res["kind"]
        value = res["t_typical_us"] if kind == "latency" else res["bw_avg_gbps"]
        if value is None:
            continue
        key = (kind, res["test"], res["rail"])
        group = groups.get(key)
        if group is None:
            group = groups[key] = [[], None]
        group[0].append(value)
        if res["passed"]:
            worst = group[1]
            if worst is None or (value > worst if kind == "latency" else value < worst):
                group[1] = value
    stats = {}
    suspicious = {}
    for key, (values, worst) in groups.items():
        if len(values) - 1 < MIN_PEERS:
            continue
        values.sort()
        stats[key] = (values, median_of(values))
        # Leaving one value out moves the median by at most one place: the median of a result's
        # peers lies within values[half - 1] .. values[half + 1]. A value that clears the bound
        # against that cannot fail; when the group's worst passed value does, no member can.
        half = len(values) // 2
        if worst is None:
            continue
        if key[0] == "latency":
            bound = values[half - 1] / min_peer_fraction
            if worst > bound:
                suspicious[key] = bound
        else:
            bound = min_peer_fraction * values[half + 1]
            if worst < bound:
                suspicious[key] = bound
    failed = 0
    if suspicious:
        for res in results:
            if res["pass"] != 1 or not res["passed"]:
                continue
            key = (res["kind"], res["test"], res["rail"])
            bound = suspicious.get(key)
            if bound is None:
                continue
            latency = key[0] == "latency"
            value = res["t_typical_us"] if latency else res["bw_avg_gbps"]
            if value > bound if latency else value < bound:
                failed += _peer_check(res, stats[key][0], None, min_peer_fraction)
    for res in retests:
        entry = stats.get((res["kind"], res["test"], res["rail"]))
        if entry is not None:
            failed += _peer_check(res, entry[0], entry[1], min_peer_fraction)
    return failed


def _peer_check(res, ordered, median, fraction):
    """1 when res (passed so far) is slow against the sorted peer values (its own among them when
    median is None: then the median of the others is used), else 0."""
    if not res["passed"]:
        return 0
    latency = res["kind"] == "latency"
    value = res["t_typical_us"] if latency else res["bw_avg_gbps"]
    if value is None:
        return 0
    peers = len(ordered) - (1 if median is None else 0)
    if median is None:
        median = _median_without(ordered, value)
    if not median:
        return 0
    if not (value > median / fraction if latency else value < fraction * median):
        return 0
    res["passed"] = False
    res["failure_kind"] = "slow_vs_peers"
    res["peer_median"] = round(median, 3)
    res["failure"] = _peer_failure(res, value, median, peers, fraction)
    return 1


# ---------------------------------------------------------------------------------------------
# Systemic verdict


def line_rate_of(results, line_rate_gbps=None):
    """The line rate: the option when given, else the highest rate the results carry (a rate key, or
    the rate in gate.py's threshold_basis, "0.9 x 400 Gb/s port rate"); None if none."""
    if line_rate_gbps:
        return float(line_rate_gbps)
    best = None
    for res in results:
        for key in LINE_RATE_KEYS:
            value = res.get(key)
            if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0:
                best = value if best is None or value > best else best
        basis = res.get("threshold_basis")
        if basis and isinstance(basis, str):
            match = _BASIS_RATE.search(basis)
            if match:
                value = float(match.group(1))
                best = value if best is None or value > best else best
    return None if best is None else float(best)


def _fmt_rate(value):
    return ("%d" % value) if float(value).is_integer() else ("%g" % value)


def systemic_cause(failed, total, line_rate_gbps=None, min_gbps=None):
    """One sentence naming the common cause when >= SYSTEMIC_SHARE of the `total` pair results failed
    (`failed`: the failed ones) with the same failure kind on at least two links, else None.
    `line_rate_gbps` may be a function (asked only when the cause is below_threshold)."""
    if not total:
        return None
    counts = {}
    links = {}
    for res in failed:
        kind = res["failure_kind"] or "failed"
        counts[kind] = counts.get(kind, 0) + 1
        links.setdefault(kind, set()).add(res["link"])
    if not counts:
        return None
    kind = max(sorted(counts), key=lambda k: counts[k])
    count = counts[kind]
    if count < SYSTEMIC_SHARE * total or len(links[kind]) < 2:
        return None
    every = count == total
    share = (
        "every pair failed with %s" % kind if every else "%d of %d pair results failed with %s" % (count, total, kind)
    )
    where = "any host" if every else "most hosts"
    if kind == "below_threshold":
        failing = [r for r in failed if r["failure_kind"] == kind]
        measured = median_of([r["bw_avg_gbps"] for r in failing if r["bw_avg_gbps"] is not None])
        threshold = median_of([r["threshold_gbps"] for r in failing if r["threshold_gbps"] is not None])
        line_rate = line_rate_gbps() if callable(line_rate_gbps) else line_rate_gbps
        if min_gbps is not None and line_rate and float(min_gbps) > line_rate:
            return "min_gbps %s is above the %s Gb/s line rate (%s)" % (
                _fmt_rate(min_gbps),
                _fmt_rate(line_rate),
                share,
            )
        if threshold is not None and line_rate and threshold > line_rate:
            return "the threshold %s is above the %s Gb/s line rate (%s)" % (
                fmt_gbps(threshold),
                _fmt_rate(line_rate),
                share,
            )
        text = "every link is below its bandwidth threshold" if every else "most links are below their threshold"
        if measured is not None and threshold is not None:
            text += ": the median measured %s against a threshold of %s" % (fmt_gbps(measured), fmt_gbps(threshold))
        return "%s (%s): check min_gbps and min_link_fraction against the port rate" % (text, share)
    if kind == "above_threshold":
        text = "every link is above its latency ceiling" if every else "most links are above their latency ceiling"
        return "%s (%s): check max_typical_us and max_p99_us against this fabric" % (text, share)
    if kind in CAUSES:
        return "%s (%s)" % (CAUSES[kind] % where, share)
    return "a common cause, not one node or link (%s): read the failure sentences in summary.md" % share


# ---------------------------------------------------------------------------------------------
# Hosts


def normalize_host_failures(items):
    """[{host, reason, failure_kind}] sorted by host; a host listed twice keeps its reasons joined."""
    out = {}
    for index, item in enumerate(items or []):
        if isinstance(item, str):
            item = {"host": item}
        if not isinstance(item, dict) or not item.get("host") or not isinstance(item.get("host"), str):
            raise ValueError(
                "host_failures[%d] must be a dict with a host name ({host, reason, failure_kind}), got %r"
                % (index, item)
            )
        host = item["host"]
        reason = str(item.get("reason") or "failed before it could be measured")
        kind = str(item.get("failure_kind") or "preflight")
        if host in out:
            out[host]["reason"] += "; " + reason
        else:
            out[host] = {"host": host, "reason": reason, "failure_kind": kind}
    return [out[h] for h in sorted(out)]


def unmeasured_hosts(host_failures):
    """Hosts of host_failures that were not measured at all (preflight, unreachable, ...): a host that
    only lacks a rail (failure_kind missing_rail) was measured on its other rails."""
    return set(item["host"] for item in host_failures if item["failure_kind"] not in MEASURED_KINDS)


def _missing_rail_hosts(res):
    """The end(s) a missing_rail result blames: the one(s) without a device, else the one its sentence
    names, else both."""
    ends = [h for h, dev in ((res["server"], res["server_device"]), (res["client"], res["client_device"])) if not dev]
    if not ends:
        ends = [h for h in (res["server"], res["client"]) if h in (res["failure"] or "")]
    return ends or [res["server"], res["client"]]


def host_verdicts(hosts, failed, passing, host_failures, loc, violations, regressions):
    """(failed_hosts, passed_hosts) over `hosts`: every host is failed unless it is in `passing` (it
    has a passed pair result) and has no failure. `failed` are the failed pair results. One entry per
    failed host, its failure_kind the most important reason's, its reason every reason joined."""
    reasons = {}

    def add(host, rank, kind, reason):
        reasons.setdefault(host, []).append((rank, kind, reason))

    for item in host_failures:
        add(item["host"], 0, item["failure_kind"], item["reason"])
    for node in loc["suspect_nodes"]:
        add(node["host"], 1, "bad_node" if node["verdict"] == "bad_node" else "suspect_node", node_text(node))
    by_host = {}
    for v in violations:
        by_host.setdefault(v["host"], []).append(violation_text(v))
    for host, lines in by_host.items():
        add(host, 2, "counters", "counter violation: %s" % "; ".join(lines))
    for link in loc["suspect_links"]:
        for host in (link["server"], link["client"]):
            add(host, 3, "bad_link", link_text(link))
    measured = {}  # failed results per host: a host without a passing result has only those
    for res in failed:
        for host in (res["server"], res["client"]):
            measured.setdefault(host, []).append(res)
        if res["failure_kind"] == "missing_rail":
            for host in _missing_rail_hosts(res):
                add(host, 4, "missing_rail", res["failure"])
    for reg in regressions:
        for host in (reg["server"], reg["client"]):
            add(host, 5, "regression", regression_text(reg))
    failed_before = unmeasured_hosts(host_failures)
    for host in hosts:
        if host in passing or host in failed_before:
            continue
        runs = measured.get(host)
        if not runs:
            add(host, 6, "unmeasured", "no pair result: the host was never measured")
            continue
        kinds = {}
        for res in runs:
            kinds[res["failure_kind"] or "failed"] = kinds.get(res["failure_kind"] or "failed", 0) + 1
        kind = max(sorted(kinds), key=lambda k: kinds[k])
        add(host, 6, kind, "no passing result: %d pair result%s failed (%s)" % (
            len(runs), "" if len(runs) == 1 else "s", ", ".join("%s %d" % (k, kinds[k]) for k in sorted(kinds))
        ))  # fmt: skip
    failed_hosts = []
    for host in sorted(reasons):
        items = sorted(reasons[host], key=lambda r: r[0])
        seen = []
        for _rank, _kind, reason in items:
            if reason not in seen:
                seen.append(reason)
        failed_hosts.append({"host": host, "failure_kind": items[0][1], "reason": "; ".join(seen[:3])})
    failed_set = set(reasons)
    passed_hosts = sorted(h for h in hosts if h not in failed_set and h in passing)
    return failed_hosts, passed_hosts
