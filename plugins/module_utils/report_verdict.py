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

from ansible_collections.ibtune.fabric.plugins.module_utils.report_normalize import (
    _median,
    fmt_gbps,
    fmt_value,
    value_of,
)

SYSTEMIC_SHARE = 0.8  # this share of the pair results failing the same way is a common cause
MIN_PEERS = 3  # the peer-relative gate needs at least this many other pairs of the same test and rail
MEASURED_KINDS = frozenset(("missing_rail",))  # host failures whose host still took part in pairs
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


def peer_gate(results, min_peer_fraction):
    """Fail (in place) the results that passed their absolute gate but are below min_peer_fraction x
    the median of their peers: the first-pass results of the same kind, test and rail (a retest is
    held to the first pass's median). Latency mirrors it: above median / min_peer_fraction fails.
    Needs MIN_PEERS peers. Sets `peer_median` on every result that had enough peers. Returns the
    number of results it failed."""
    if not min_peer_fraction:
        return 0
    groups = {}
    for res in results:
        value = value_of(res)
        if res["pass"] == 1 and value is not None:
            groups.setdefault((res["kind"], res["test"], str(res["rail"])), []).append(value)
    for values in groups.values():
        values.sort()
    failed = 0
    for res in results:
        value = value_of(res)
        ordered = groups.get((res["kind"], res["test"], str(res["rail"])))
        if value is None or not ordered:
            continue
        own = res["pass"] == 1
        peers = len(ordered) - (1 if own else 0)
        if peers < MIN_PEERS:
            continue
        median = _median_without(ordered, value) if own else _median(ordered)
        res["peer_median"] = round(median, 3)
        if not res["passed"] or not median:
            continue
        latency = res["kind"] == "latency"
        slow = value > median / min_peer_fraction if latency else value < min_peer_fraction * median
        if not slow:
            continue
        failed += 1
        res["passed"] = False
        res["failure_kind"] = "slow_vs_peers"
        if latency:
            res["failure"] = (
                "%s is %s x the %s median of its %d peers on rail %s (%s, limit %s x, min_peer_fraction %s)"
                % (
                    fmt_value(res, value),
                    _fmt_fraction(value / median),
                    fmt_value(res, median),
                    peers,
                    res["rail"],
                    res["test"],
                    _fmt_fraction(1.0 / min_peer_fraction),
                    _fmt_fraction(min_peer_fraction),
                )
            )
        else:
            res["failure"] = "%s is %s of the %s median of its %d peers on rail %s (%s, min_peer_fraction %s)" % (
                fmt_value(res, value),
                _fmt_fraction(value / median),
                fmt_value(res, median),
                peers,
                res["rail"],
                res["test"],
                _fmt_fraction(min_peer_fraction),
            )
    return failed


# ---------------------------------------------------------------------------------------------
# Systemic verdict


def line_rate_of(results, line_rate_gbps=None):
    """The line rate: the option when given, else the highest rate the results carry (None if none)."""
    if line_rate_gbps:
        return float(line_rate_gbps)
    best = None
    for res in results:
        for key in LINE_RATE_KEYS:
            value = res.get(key)
            if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0:
                best = value if best is None or value > best else best
    return None if best is None else float(best)


def _fmt_rate(value):
    return ("%d" % value) if float(value).is_integer() else ("%g" % value)


def systemic_cause(results, line_rate_gbps=None, min_gbps=None):
    """One sentence naming the common cause when >= SYSTEMIC_SHARE of the pair results failed with the
    same failure kind on at least two links, else None."""
    total = len(results)
    if not total:
        return None
    counts = {}
    links = {}
    for res in results:
        if not res["passed"]:
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
        failing = [r for r in results if not r["passed"] and r["failure_kind"] == kind]
        measured = _median([r["bw_avg_gbps"] for r in failing if r["bw_avg_gbps"] is not None])
        threshold = _median([r["threshold_gbps"] for r in failing if r["threshold_gbps"] is not None])
        line_rate = line_rate_of(results, line_rate_gbps)
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


def host_verdicts(hosts, results, host_failures, loc, violations, regressions, texts):
    """(failed_hosts, passed_hosts) over `hosts`: every host is failed unless it has a passing result
    and no failure. One entry per failed host, its failure_kind the most important reason's, its
    reason every reason joined. `texts` are the sentence makers {node, link, violation, regression}."""
    reasons = {}

    def add(host, rank, kind, reason):
        reasons.setdefault(host, []).append((rank, kind, reason))

    for item in host_failures:
        add(item["host"], 0, item["failure_kind"], item["reason"])
    for node in loc["suspect_nodes"]:
        add(node["host"], 1, "bad_node" if node["verdict"] == "bad_node" else "suspect_node", texts["node"](node))
    by_host = {}
    for v in violations:
        by_host.setdefault(v["host"], []).append(texts["violation"](v))
    for host, lines in by_host.items():
        add(host, 2, "counters", "counter violation: %s" % "; ".join(lines))
    for link in loc["suspect_links"]:
        for host in (link["server"], link["client"]):
            add(host, 3, "bad_link", texts["link"](link))
    passing = set()
    measured = {}
    for res in results:
        for host in (res["server"], res["client"]):
            measured.setdefault(host, []).append(res)
        if res["passed"]:
            passing.add(res["server"])
            passing.add(res["client"])
        elif res["failure_kind"] == "missing_rail":
            for host in _missing_rail_hosts(res):
                add(host, 4, "missing_rail", res["failure"])
    for reg in regressions:
        for host in (reg["server"], reg["client"]):
            add(host, 5, "regression", texts["regression"](reg))
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
