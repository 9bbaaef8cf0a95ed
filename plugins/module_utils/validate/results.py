# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Pair results and counter violations in, validated and normalised dicts out (the report's first step).

The absolute gate is decided once, before the report (gate.py, applied by the join): a result's
`passed`, `failure` and `failure_kind` are kept as they come. Normalising only checks shape and
types: a non-finite or negative figure fails the result as `invalid` (a figure that contradicts a
claimed pass too), a failed result without a failure kind gets one read from its sentence. Where a
result carries no `passed` at all (an older gatherer), gate.py decides it from its own threshold.

Also the small text helpers the other report modules share (endpoint, link key, figures).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import operator
import re

from ansible_collections.ibtune.fabric.plugins.module_utils.perftest.gate import judge_bandwidth, judge_latency

KINDS = ("bandwidth", "latency")
BANDWIDTH_FIGURES = ("bw_avg_gbps", "bw_peak_gbps", "threshold_gbps")
LATENCY_FIGURES = ("t_typical_us", "p99_us", "threshold_us")
ALL_FIGURES = BANDWIDTH_FIGURES + LATENCY_FIGURES + ("duration_s",)
MAX_FIGURE = 1.7976931348623157e308  # the largest float: inf is above it
# failure sentence -> failure kind, for results that come without one (first match wins)
KIND_PATTERNS = (
    ("no_device", re.compile(r"no (rdma |ib |infiniband )?devices?\b|no ib devices found|device \S+ not found", re.I)),
    ("missing_rail", re.compile(r"missing rail|lacks rail|has no rail|rail \S+ (is )?missing", re.I)),
    ("connect", re.compile(r"could(n't| not) connect|connection refused|unable to connect|connect(ion)? failed", re.I)),
    ("timeout", re.compile(r"timed out|timeout", re.I)),
    ("server_failed", re.compile(r"server (side )?(failed|exited|died)", re.I)),
    ("below_threshold", re.compile(r"gb/s\s*<|below (the |its )?threshold", re.I)),
    ("above_threshold", re.compile(r"us\s*>|above (the |its )?(threshold|ceiling)", re.I)),
)


def _float_or_none(value, what, index):
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        raise ValueError("results[%d].%s must be a number, got %r" % (index, what, value))
    try:
        return float(value)
    except (TypeError, ValueError):
        raise ValueError("results[%d].%s must be a number or null, got %r" % (index, what, value))


def int_or(value, default):
    if value is None or value == "":
        return default
    try:
        return int(value)
    except (TypeError, ValueError):
        return default


def endpoint(host, device):
    return "%s/%s" % (host, device) if device else str(host)


def link_key(server, server_device, client, client_device):
    """Baseline/link key `hostA/devA<->hostB/devB` with the two ends sorted."""
    ends = sorted((endpoint(server, server_device), endpoint(client, client_device)))
    return "%s<->%s" % (ends[0], ends[1])


def fmt_gbps(value):
    return "n/a" if value is None else "%.1f Gb/s" % value


def fmt_us(value):
    return "n/a" if value is None else "%.2f us" % value


def infer_failure_kind(sentence):
    """A short failure kind for a failure sentence that came without one ('failed' when unknown)."""
    for kind, pattern in KIND_PATTERNS:
        if sentence and pattern.search(sentence):
            return kind
    return "failed"


def _kind(item, index):
    kind = item.get("kind")
    if kind in (None, ""):
        test = str(item.get("test") or "")
        return "latency" if test.endswith("_lat") or item.get("t_typical_us") is not None else "bandwidth"
    if kind not in KINDS:
        raise ValueError("results[%d].kind must be bandwidth or latency, got %r" % (index, kind))
    return kind


# every key the normaliser reads, fetched at once (operator.itemgetter: one C call per result)
FETCHED = (
    "server", "client", "server_device", "client_device", "server_port", "client_port", "pass", "round", "kind",
    "test", "rail", "bw_avg_gbps", "bw_peak_gbps", "threshold_gbps", "duration_s", "passed", "failure", "failure_kind",
)  # fmt: skip
_FETCH = operator.itemgetter(*FETCHED)
# A figure above the slower end's line rate by more than this share cannot have been measured: it is invalid (a
# misread unit, a counter read twice), never a pass, never in a peer median.
LINE_RATE_MARGIN = 0.05


def _check_figures(res, names, index):
    """Number-or-None for each figure in `names` (set in res); (name, value) of the first that is not a
    finite number >= 0 (set to None, so that report.json stays JSON), else None. A bad duration_s is
    dropped without failing the result."""
    bad = None
    for name in names:
        value = res.get(name)
        if value is None:
            res[name] = None
            continue
        value = res[name] = _float_or_none(value, name, index)
        if not 0.0 <= value <= MAX_FIGURE:
            res[name] = None
            if name != "duration_s":
                bad = bad or (name, value)
    return bad


def _judge_missing_pass(res):
    """passed/failure/failure_kind for a result that carries no `passed` (gate.py decides)."""
    if res["failure"]:
        return False, res["failure"], res["failure_kind"]
    if res["kind"] == "latency":
        if res["t_typical_us"] is None:
            return False, "no latency measured", "failed"
        passed, kind, sentence, _limit = judge_latency(
            res["t_typical_us"], res["p99_us"], max_typical_us=res["threshold_us"]
        )
        return passed, sentence, kind
    if res["bw_avg_gbps"] is None:
        return False, "failed (no bandwidth measured)", "failed"
    passed, kind, sentence = judge_bandwidth(
        res["bw_avg_gbps"], {"threshold_gbps": res["threshold_gbps"], "basis": "its threshold"}
    )
    return passed, sentence, kind


def _contradiction(res):
    """Sentence when a result says passed but its own figures say otherwise, else None."""
    if res["kind"] == "latency":
        value, limit = res["t_typical_us"], res["threshold_us"]
        if value is None:
            return "the result says passed but no latency was measured"
        if limit is not None and value > limit:
            return "the result says passed but %s > %s: an inconsistent result" % (fmt_us(value), fmt_us(limit))
        return None
    value, limit = res["bw_avg_gbps"], res["threshold_gbps"]
    if value is None:
        return "the result says passed but no bandwidth was measured"
    if limit is not None and value < limit:
        return "the result says passed but %s < %s: an inconsistent result" % (fmt_gbps(value), fmt_gbps(limit))
    return None


def above_line_rate(res):
    """Sentence when a bandwidth figure is above the slower end's line rate (``line_rate_gbps``, the join's) by
    more than LINE_RATE_MARGIN, else None."""
    rate = res.get("line_rate_gbps")
    value = res.get("bw_avg_gbps")
    if res.get("kind") == "latency" or value is None or not isinstance(rate, (int, float)) or rate <= 0:
        return None
    if value <= rate * (1.0 + LINE_RATE_MARGIN):
        return None
    return "%s is above the %s line rate of the slower end (+%d%%): an invalid figure, not a pass" % (
        fmt_gbps(value),
        fmt_gbps(rate),
        round(100 * LINE_RATE_MARGIN),
    )


def _default_failure(res):
    if res["kind"] == "latency":
        value, limit = res["t_typical_us"], res["threshold_us"]
        if value is not None and limit is not None:
            return "%s > %s" % (fmt_us(value), fmt_us(limit))
        return "failed (%s)" % (fmt_us(value) if value is not None else "no latency measured")
    value, limit = res["bw_avg_gbps"], res["threshold_gbps"]
    if value is not None and limit is not None:
        return "%s < %s" % (fmt_gbps(value), fmt_gbps(limit))
    return "failed (%s)" % (fmt_gbps(value) if value is not None else "no bandwidth measured")


def _fetch(res):
    try:  # the hot path (millions of results at 1024 hosts x 8 rails): one C call for every key
        return _FETCH(res)
    except KeyError:
        for key in FETCHED:  # a missing key reads as None, as item.get() would
            if key not in res:
                res[key] = None
        return _FETCH(res)


def _host_names(server, client, index):
    if not server or not client or not isinstance(server, str) or not isinstance(client, str):
        raise ValueError(
            "results[%d] has no %s host name: every pair result needs server and client"
            % (index, "server" if not server or not isinstance(server, str) else "client")
        )


def _fill_identity(res, values, index):
    """Devices, ports, pass, round, kind, test, rail: only what is missing or of the wrong type is written.
    Returns the kind."""
    (_s, _c, server_device, client_device, server_port, client_port, pass_no, round_no, kind, test, rail) = values[:11]
    if not server_device and server_device is not None:
        res["server_device"] = None
    if not client_device and client_device is not None:
        res["client_device"] = None
    if not isinstance(server_port, int) and server_port is not None:
        res["server_port"] = int_or(server_port, None)
    if not isinstance(client_port, int) and client_port is not None:
        res["client_port"] = int_or(client_port, None)
    if not isinstance(pass_no, int):
        res["pass"] = int_or(pass_no, 1)
    if not isinstance(round_no, int):
        res["round"] = int_or(round_no, 0)
    if kind != "bandwidth":
        kind = res["kind"] = _kind(res, index)
    if not test or not isinstance(test, str):
        res["test"] = str(test or ("write_lat" if kind == "latency" else "write"))
    if rail is None or rail == "":
        res["rail"] = res["server_device"] or res["client_device"]
    return kind


def _clean_figure(value):
    return value is None or (isinstance(value, float) and 0.0 <= value <= MAX_FIGURE)  # NaN fails every comparison


def _fill_figures(res, values, kind, index):
    """(name, value) of the first figure that is not a finite number >= 0, else None (the fast path checks the
    bandwidth figures without a call per figure)."""
    bw, peak, threshold, duration = values[11:15]
    if (
        kind == "bandwidth"
        and _clean_figure(bw)
        and _clean_figure(peak)
        and _clean_figure(threshold)
        and (_clean_figure(duration))
    ):
        return None
    return _check_figures(res, BANDWIDTH_FIGURES + ("duration_s",) if kind == "bandwidth" else ALL_FIGURES, index)


def _passed_of(res, passed):
    if passed is None:
        passed, res["failure"], res["failure_kind"] = _judge_missing_pass(res)
    elif passed is not True and passed is not False:
        passed = passed.strip().lower() in ("true", "yes", "1") if isinstance(passed, str) else bool(passed)
    return passed


def _invalid_reason(res, bad, passed):
    """The sentence that makes the result invalid (a bad figure, one above the line rate, a claimed pass its own
    figures contradict), else None."""
    if bad:
        return "%s=%r is not a finite number >= 0: the measurement is invalid (check the perftest output)" % bad
    reason = above_line_rate(res)
    if reason or not passed:
        return reason
    if res["kind"] != "bandwidth":
        return _contradiction(res)
    value, limit = res["bw_avg_gbps"], res["threshold_gbps"]
    if value is None or (limit is not None and value < limit):
        return _contradiction(res)
    return None


def _fill_verdict(res, values, bad):
    passed, failure, failure_kind = values[15:18]
    if failure is not None and (not failure or not isinstance(failure, str)):
        res["failure"] = str(failure) if failure else None
    if failure_kind is not None and (not failure_kind or not isinstance(failure_kind, str)):
        res["failure_kind"] = str(failure_kind) if failure_kind else None
    passed = _passed_of(res, passed)
    invalid = _invalid_reason(res, bad, passed)
    if invalid:
        passed, res["failure_kind"], res["failure"] = False, "invalid", invalid
    if passed:
        if res["failure"] is not None or res["failure_kind"] is not None:
            res["failure"] = res["failure_kind"] = None
    else:
        res["failure"] = res["failure"] or _default_failure(res)
        res["failure_kind"] = res["failure_kind"] or infer_failure_kind(res["failure"])
    if res["passed"] is not passed:
        res["passed"] = passed


def link_end(host, device):
    """One end of a result's link: host/device, or the host alone (a device that is not text fails: a result's
    names are checked before)."""
    return host + "/" + device if device else host


def _link_of(res):
    a = link_end(res["server"], res["server_device"])
    b = link_end(res["client"], res["client_device"])
    return a + "<->" + b if a <= b else b + "<->" + a


def _figure_ok(value):
    return value is None or (value.__class__ is float and 0.0 <= value <= MAX_FIGURE)


def _clean(res, values):
    """Whether a result is already what normalising makes of it (a gated bandwidth result as the join writes it):
    the hot path, millions of results at 1024 hosts x 8 rails, costs one expression instead of a call per key."""
    (server, client, sdev, cdev, sport, cport, pass_no, round_no, kind, test, rail, bw, peak, threshold, duration,
     passed, failure, failure_kind) = values  # fmt: skip
    rate = res.get("line_rate_gbps")
    return (
        kind == "bandwidth" and server.__class__ is str and client.__class__ is str and server != "" and client != ""
        and (sdev is None or sdev != "") and (cdev is None or cdev != "")
        and (sport is None or sport.__class__ is int) and (cport is None or cport.__class__ is int)
        and pass_no.__class__ is int and round_no.__class__ is int and test.__class__ is str and test != ""
        and rail is not None and rail != ""
        and _figure_ok(bw) and _figure_ok(peak) and _figure_ok(threshold) and _figure_ok(duration)
        and (rate is None or (rate.__class__ is float and (bw is None or bw <= rate * (1.0 + LINE_RATE_MARGIN))))
        and (
            (passed is True and failure is None and failure_kind is None and bw is not None
             and (threshold is None or bw >= threshold))
            or (passed is False and failure.__class__ is str and failure != "" and failure_kind.__class__ is str
                and failure_kind != "")
        )
    )  # fmt: skip


def normalize_result(res, index):
    """Normalise one result dict in place (see normalize_results)."""
    values = _fetch(res)
    if _clean(res, values):
        res["link"] = _link_of(res)
        return res
    _host_names(values[0], values[1], index)
    kind = _fill_identity(res, values, index)
    bad = _fill_figures(res, values, kind, index)
    _fill_verdict(res, values, bad)
    res["link"] = _link_of(res)
    return res


def normalize_results(results, copy=True):
    """Validate pair results (shape and types) and fill their keys; returns the list of results.

    Raises ValueError naming the index for a result that is not a pair result at all (no host
    names, a figure that is not a number). A result whose figures are NaN, infinite or negative, above the slower
    end's line rate, or contradict a claimed pass, fails with failure_kind `invalid`. `copy=False` normalises the
    dicts in place (the module's own arguments: saves a copy of thousands of results).
    """
    if results is None:
        return []
    if isinstance(results, (str, bytes, dict)):
        raise ValueError("results must be a list of pair result dicts, got %s" % type(results).__name__)
    out = []
    for index, item in enumerate(results):
        if not isinstance(item, dict):
            raise ValueError("results[%d] must be a dict (a pair result), got %r" % (index, item))
        out.append(normalize_result(dict(item) if copy else item, index))
    return out


def producer(res):
    """The host whose side produced a result's figures: the join takes them from the client side."""
    return res.get("measured_by") or res["client"]


def value_of(res):
    """The figure a result is judged by: bw_avg_gbps (bandwidth) or t_typical_us (latency)."""
    return res.get("t_typical_us") if res.get("kind") == "latency" else res.get("bw_avg_gbps")


def threshold_of(res):
    return res.get("threshold_us") if res.get("kind") == "latency" else res.get("threshold_gbps")


def fmt_value(res, value):
    return fmt_us(value) if res.get("kind") == "latency" else fmt_gbps(value)


def pair_label(res):
    return "%s -> %s" % (endpoint(res["server"], res["server_device"]), endpoint(res["client"], res["client_device"]))


def figures_text(res):
    """'180.1 Gb/s < 360.0 Gb/s' (or '3.10 us > 2.50 us') when the figures break the threshold, else the
    failure sentence (slow against peers, regression, nothing measured)."""
    value, limit = value_of(res), threshold_of(res)
    if value is not None and limit is not None:
        if res.get("kind") == "latency" and value > limit:
            return "%s > %s" % (fmt_us(value), fmt_us(limit))
        if res.get("kind") != "latency" and value < limit:
            return "%s < %s" % (fmt_gbps(value), fmt_gbps(limit))
    return res.get("failure") or fmt_value(res, value)


def median_of(values):
    ordered = sorted(values)
    n = len(ordered)
    if not n:
        return None
    mid = n // 2
    return ordered[mid] if n % 2 else (ordered[mid - 1] + ordered[mid]) / 2.0


def normalize_violation(item, index):
    if not isinstance(item, dict):
        raise ValueError("counter_violations[%d] must be a dict, got %r" % (index, item))
    out = dict(item)
    out["host"] = str(item.get("host") or "unknown")
    out["device"] = str(item.get("device") or "")
    out["port"] = int_or(item.get("port"), 1)
    out["counter"] = str(item.get("counter") or "unknown")
    out["category"] = str(item.get("category") or "other")
    delta = int_or(item.get("delta"), None)
    before, after = int_or(item.get("before"), None), int_or(item.get("after"), None)
    if delta is None and before is not None and after is not None:
        delta = after - before
    out["delta"] = delta if delta is not None else 0
    return out
