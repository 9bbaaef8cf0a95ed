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

import itertools
import re

from ansible_collections.ibtune.fabric.plugins.module_utils.validate.results import (
    fmt_gbps,
    median_of,
    pair_label,
    producer,
)
from ansible_collections.ibtune.fabric.plugins.module_utils.validate.table import columns_of, grouped_ends
from ansible_collections.ibtune.fabric.plugins.module_utils.report.text import (
    link_text,
    node_text,
    regression_text,
    saturated_text,
    violation_text,
)

SYSTEMIC_SHARE = 0.8  # this share of the pair results failing the same way is a common cause
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
# Systemic verdict


def _distinct(column):
    """The column's distinct values (a column is millions of results, of a few rates), or itself when a value
    cannot be hashed."""
    try:
        return set(column)
    except TypeError:
        return column


def line_rate_of(results, line_rate_gbps=None):
    """The line rate: the option when given, else the highest rate the results carry (a rate key, or
    the rate in gate.py's threshold_basis, "0.9 x 400 Gb/s port rate"); None if none."""
    if line_rate_gbps:
        return float(line_rate_gbps)
    best = None
    columns = columns_of(results, *(LINE_RATE_KEYS + ("threshold_basis",)))
    for column in columns[:-1]:
        for value in _distinct(column):
            if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0:
                best = value if best is None or value > best else best
    for basis in _distinct(columns[-1]):
        if basis and isinstance(basis, str):
            match = _BASIS_RATE.search(basis)
            if match:
                value = float(match.group(1))
                best = value if best is None or value > best else best
    return None if best is None else float(best)


def _fmt_rate(value):
    return ("%d" % value) if float(value).is_integer() else ("%g" % value)


def _dominant(failed):
    """(failure kind most failed results share, its count, the links it failed on), or (None, 0, set())."""
    counts = {}
    links = {}
    for res in failed:
        kind = res["failure_kind"] or "failed"
        counts[kind] = counts.get(kind, 0) + 1
        links.setdefault(kind, set()).add(res["link"])
    if not counts:
        return None, 0, set()
    kind = max(sorted(counts), key=lambda k: counts[k])
    return kind, counts[kind], links[kind]


def _settings_cause(failed, share, every, line_rate_gbps, min_gbps):
    """The sentence for most links below their threshold: a threshold above the line rate, else the settings."""
    failing = [r for r in failed if r["failure_kind"] == "below_threshold"]
    measured = median_of([r["bw_avg_gbps"] for r in failing if r["bw_avg_gbps"] is not None])
    threshold = median_of([r["threshold_gbps"] for r in failing if r["threshold_gbps"] is not None])
    line_rate = line_rate_gbps() if callable(line_rate_gbps) else line_rate_gbps
    if min_gbps is not None and line_rate and float(min_gbps) > line_rate:
        return "min_gbps %s is above the %s Gb/s line rate (%s)" % (_fmt_rate(min_gbps), _fmt_rate(line_rate), share)
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


def reached_threshold(results):
    """Whether any bandwidth pair met its threshold: then no setting is wrong for every link, and a fabric that
    fails most pairs has a fault to localise (a spine layer), not a 'check your settings' cause."""
    for res in results:
        if res.get("kind") != "latency" and res.get("bw_avg_gbps") is not None and res.get("failure_kind") != "invalid":
            limit = res.get("threshold_gbps")
            if limit is None or res["bw_avg_gbps"] >= limit:
                return True
    return False


def systemic_cause(failed, total, line_rate_gbps=None, min_gbps=None, reached=False):
    """One sentence naming the common cause when >= SYSTEMIC_SHARE of the `total` pair results failed
    (`failed`: the failed ones) with the same failure kind on at least two links, else None.
    `line_rate_gbps` may be a function (asked only when the cause is below_threshold). ``reached``: some pair met
    its bandwidth threshold (reached_threshold): then below_threshold is no common cause (localisation names it)."""
    if not total:
        return None
    kind, count, links = _dominant(failed)
    if kind is None or count < SYSTEMIC_SHARE * total or len(links) < 2:
        return None
    every = count == total
    share = (
        "every pair failed with %s" % kind if every else "%d of %d pair results failed with %s" % (count, total, kind)
    )
    where = "any host" if every else "most hosts"
    if kind == "below_threshold":
        if reached and not (min_gbps is not None and line_rate_gbps):
            return None
        return _settings_cause(failed, share, every, line_rate_gbps, min_gbps)
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


# failed_hosts kinds that blame the host itself (slurm_remediate drains these); the others say the host could not
# be shown healthy (untested, unmeasured, ungated, a partner's failure) and are failed, never PASSED, but not drained
CULPRIT_KINDS = frozenset(
    ("preflight", "unreachable", "bad_node", "intermittent", "suspect_node", "counters", "saturated", "bad_link",
     "missing_rail", "invalid", "regression")
)  # fmt: skip
NODE_KINDS = {"bad_node": "bad_node", "intermittent": "intermittent", "suspect": "suspect_node"}


class _Reasons:
    """Per host, the (rank, kind, sentence) reasons it failed."""

    def __init__(self):
        self.by_host = {}

    def add(self, host, rank, kind, reason):
        self.by_host.setdefault(host, []).append((rank, kind, reason))

    def entries(self):
        out = []
        for host in sorted(self.by_host):
            items = sorted(self.by_host[host], key=lambda r: r[0])
            seen = []
            for _rank, _kind, reason in items:
                if reason not in seen:
                    seen.append(reason)
            kind = items[0][1]
            out.append(
                {"host": host, "failure_kind": kind, "reason": "; ".join(seen[:3]), "culprit": kind in CULPRIT_KINDS}
            )
        return out


def _add_named(reasons, host_failures, loc, violations, stuck):
    for item in host_failures:
        reasons.add(item["host"], 0, item["failure_kind"], item["reason"])
    for node in loc["suspect_nodes"]:
        reasons.add(node["host"], 1, NODE_KINDS.get(node["verdict"], "suspect_node"), node_text(node))
    by_host = {}
    for v in violations:
        by_host.setdefault(v["host"], []).append(violation_text(v))
    for host, lines in by_host.items():
        reasons.add(host, 2, "counters", "counter violation: %s" % "; ".join(lines))
    for item in stuck:
        if item.get("gated"):
            reasons.add(item["host"], 2, "saturated", saturated_text(item))
    for link in loc["suspect_links"]:
        for host in (link["server"], link["client"]):
            reasons.add(host, 3, "bad_link", link_text(link))


def _add_pair_kinds(reasons, failed, regressions):
    """Failures a pair result names its host for: a missing rail, an invalid figure (its producer), a gate that
    could not apply; regressions. Returns {host: [failed results]}."""
    measured = {}
    for res in failed:
        for host in (res["server"], res["client"]):
            measured.setdefault(host, []).append(res)
        kind = res["failure_kind"]
        if kind == "missing_rail":
            for host in _missing_rail_hosts(res):
                reasons.add(host, 4, "missing_rail", res["failure"])
        elif kind == "invalid":
            reasons.add(producer(res), 4, "invalid", "%s: %s" % (pair_label(res), res["failure"]))
        elif kind == "ungated":
            for host in (res["server"], res["client"]):
                reasons.add(host, 7, "ungated", "%s: %s" % (pair_label(res), res["failure"]))
    for reg in regressions:
        for host in (reg["server"], reg["client"]):
            reasons.add(host, 5, "regression", regression_text(reg))
    return measured


def _host_plane(host, _device, kind, rail, _test):
    return host, kind or "bandwidth", rail


def _rails_measured(results):
    """{host: {(kind, rail): passed on it at least once}} over every result, hosts and their planes in the order
    they are first met (a result's server, then its client). Over millions of results' columns in C: each end's
    (host, kind, rail) group (table.grouped_ends, from the ends the table grouped once), then the groups with a
    passed end."""
    (passed,) = columns_of(results, "passed")
    first, ends = grouped_ends(results, _host_plane)
    ok = set(itertools.compress(ends[0::2], passed))
    ok.update(itertools.compress(ends[1::2], passed))
    out = {}
    for (host, kind, rail), group in first.items():
        out.setdefault(host, {})[(kind, rail)] = group in ok
    return out


def _expected_rails(host, measured, host_rails, kinds):
    """(kind, rail) planes a host must have passed on: its declared rails (host_rails) for every kind that ran,
    else the planes its results carry."""
    declared = (host_rails or {}).get(host)
    if declared is None:
        return set(measured.get(host, {}))
    names = set(r.get("rail") if isinstance(r, dict) else r for r in declared)
    return set((kind, rail) for kind in kinds for rail in names)


def _add_unproven(reasons, hosts, results, failed_before, host_rails, measured_fails):
    """A host is PASSED only when every one of its rails was measured and passed: a rail with no result is
    `untested`, a host with no passing result at all is failed with the kind its results share."""
    measured = _rails_measured(results)
    kinds = sorted(set(k for rails in measured.values() for k, _r in rails)) or ["bandwidth"]
    for host in hosts:
        if host in failed_before:
            continue
        runs = measured_fails.get(host)
        if host not in measured:
            reasons.add(host, 6, "unmeasured", "no pair result: the host was never measured")
            continue
        if not any(measured[host].values()):
            _add_no_pass(reasons, host, runs or [])
            continue
        for kind, rail in sorted(_expected_rails(host, measured, host_rails, kinds), key=str):
            state = measured[host].get((kind, rail))
            if not state:
                reasons.add(host, 7, "untested", _untested_text(kind, rail, state))


def _untested_text(kind, rail, state):
    if state is None:
        return "rail %s was never measured (%s): no partner on it ran, or its pairs were refused" % (rail, kind)
    return "rail %s has no passing %s measurement: every pair of it failed, none named it" % (rail, kind)


def _add_no_pass(reasons, host, runs):
    kinds = {}
    for res in runs:
        kinds[res["failure_kind"] or "failed"] = kinds.get(res["failure_kind"] or "failed", 0) + 1
    kind = max(sorted(kinds), key=lambda k: kinds[k]) if kinds else "untested"
    reasons.add(host, 6, kind, "no passing result: %d pair result%s failed (%s)" % (
        len(runs), "" if len(runs) == 1 else "s", ", ".join("%s %d" % (k, kinds[k]) for k in sorted(kinds))
    ))  # fmt: skip


def host_verdicts(hosts, results, failed, host_failures, loc, violations, regressions, stuck=(), host_rails=None):
    """(failed_hosts, passed_hosts) over `hosts`. A host is PASSED only when every one of its rails (``host_rails``
    {host: [rail names]}, else the rails its results carry) has a passing result and nothing names it; hosts behind
    a switch fault are not failed for it. One entry per failed host: its failure_kind the most important reason's,
    its reason the sentences joined, ``culprit`` whether the verdict blames the host itself (CULPRIT_KINDS)."""
    reasons = _Reasons()
    _add_named(reasons, host_failures, loc, violations, stuck)
    measured_fails = _add_pair_kinds(reasons, failed, regressions)
    _add_unproven(reasons, hosts, results, unmeasured_hosts(host_failures), host_rails, measured_fails)
    failed_hosts = reasons.entries()
    failed_set = set(reasons.by_host)
    passed_hosts = sorted(h for h in hosts if h not in failed_set)
    return failed_hosts, passed_hosts
