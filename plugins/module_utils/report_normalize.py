# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Pair results and counter violations in, validated and normalised dicts out (the report's first step).

Also the small text helpers the other report modules share (endpoint, link key, figures).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type


def _float_or_none(value, what, index):
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        raise ValueError("results[%d].%s must be a number, got %r" % (index, what, value))
    try:
        return float(value)
    except (TypeError, ValueError):
        raise ValueError("results[%d].%s must be a number or null, got %r" % (index, what, value))


def _int_or(value, default):
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


def normalize_results(results, min_gbps=None):
    """Validate pair results, apply thresholds (own threshold and the min_gbps floor) and fill
    `failure` with one sentence for every failed result. Returns new dicts."""
    if results is None:
        return []
    if isinstance(results, (str, bytes, dict)):
        raise ValueError("results must be a list of pair result dicts, got %s" % type(results).__name__)
    if min_gbps is not None:
        min_gbps = float(min_gbps)
    out = []
    for index, item in enumerate(results):
        if not isinstance(item, dict):
            raise ValueError("results[%d] must be a dict (a pair result), got %r" % (index, item))
        for key in ("server", "client"):
            if not item.get(key) or not isinstance(item.get(key), str):
                raise ValueError(
                    "results[%d] has no %s host name: every pair result needs server and client" % (index, key)
                )
        res = dict(item)
        res["server_device"] = item.get("server_device") or None
        res["client_device"] = item.get("client_device") or None
        res["server_port"] = _int_or(item.get("server_port"), None)
        res["client_port"] = _int_or(item.get("client_port"), None)
        res["test"] = str(item.get("test") or "write")
        res["pass"] = _int_or(item.get("pass"), 1)
        res["round"] = _int_or(item.get("round"), 0)
        bw = res["bw_avg_gbps"] = _float_or_none(item.get("bw_avg_gbps"), "bw_avg_gbps", index)
        res["bw_peak_gbps"] = _float_or_none(item.get("bw_peak_gbps"), "bw_peak_gbps", index)
        threshold = _float_or_none(item.get("threshold_gbps"), "threshold_gbps", index)
        res["duration_s"] = _float_or_none(item.get("duration_s"), "duration_s", index)
        failure = item.get("failure") or None
        if "passed" in item and item["passed"] is not None:
            passed = bool(item["passed"])
        else:
            passed = failure is None and bw is not None
        if min_gbps is not None and (threshold is None or min_gbps > threshold):
            threshold = min_gbps
        res["threshold_gbps"] = threshold
        if passed and threshold is not None and bw is not None and bw < threshold:
            passed = False
            failure = "%s < %s" % (fmt_gbps(bw), fmt_gbps(threshold))
        if passed and bw is None and threshold is not None:
            passed = False
            failure = failure or "no bandwidth measured (threshold %s)" % fmt_gbps(threshold)
        if not passed and not failure:
            if bw is not None and threshold is not None:
                failure = "%s < %s" % (fmt_gbps(bw), fmt_gbps(threshold))
            else:
                failure = "failed (%s)" % (fmt_gbps(bw) if bw is not None else "no bandwidth measured")
        res["passed"] = passed
        res["failure"] = None if passed else str(failure)
        res["link"] = link_key(res["server"], res["server_device"], res["client"], res["client_device"])
        out.append(res)
    return out


def _pair_label(res):
    return "%s -> %s" % (endpoint(res["server"], res["server_device"]), endpoint(res["client"], res["client_device"]))


def _figures(res):
    """'180.1 Gb/s < 360.0 Gb/s' or the failure sentence when nothing was measured."""
    bw, threshold = res["bw_avg_gbps"], res["threshold_gbps"]
    if bw is not None and threshold is not None and bw < threshold:
        return "%s < %s" % (fmt_gbps(bw), fmt_gbps(threshold))
    return res.get("failure") or fmt_gbps(bw)


def _median(values):
    ordered = sorted(values)
    n = len(ordered)
    if not n:
        return None
    mid = n // 2
    return ordered[mid] if n % 2 else (ordered[mid - 1] + ordered[mid]) / 2.0


def _violation(item, index):
    if not isinstance(item, dict):
        raise ValueError("counter_violations[%d] must be a dict, got %r" % (index, item))
    out = dict(item)
    out["host"] = str(item.get("host") or "unknown")
    out["device"] = str(item.get("device") or "")
    out["port"] = _int_or(item.get("port"), 1)
    out["counter"] = str(item.get("counter") or "unknown")
    out["category"] = str(item.get("category") or "other")
    delta = _int_or(item.get("delta"), None)
    before, after = _int_or(item.get("before"), None), _int_or(item.get("after"), None)
    if delta is None and before is not None and after is not None:
        delta = after - before
    out["delta"] = delta if delta is not None else 0
    return out
