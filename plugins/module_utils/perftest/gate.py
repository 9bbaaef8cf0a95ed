# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one place that decides whether a measured pair passes its absolute gate.

Bandwidth: threshold = max(min_gbps, min_link_fraction x expected rate (x2 bidirectional)), where the
expected rate is the inventory's (``expect_rate_gbps``) or else the HIGHER of the two ends' port rates,
so a port that trained down fails from either side. Latency: max_typical_us / max_p99_us ceilings.
One side (a perftest_bw or perftest_lat run) is judged with side_bandwidth and latency_verdict, a joined pair
with bandwidth_threshold/judge_bandwidth and judge_latency. The peer-relative gate and the baseline regression
need every result and live in the report.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import math


def _finite(value):
    try:
        value = float(value)
    except (TypeError, ValueError):
        return None
    return value if math.isfinite(value) else None


def _fmt(value):
    value = float(value)
    return ("%d" % value) if value.is_integer() else ("%g" % value)


def check_thresholds(min_gbps=None, min_link_fraction=None, line_rate_gbps=None, bidirectional=False):
    """Problems (sentences) with the bandwidth gate settings, checked before anything runs."""
    problems = []
    if min_gbps is not None:
        value = _finite(min_gbps)
        if value is None or value < 0:
            problems.append("min_gbps=%r must be a finite number >= 0" % (min_gbps,))
        elif line_rate_gbps and value > float(line_rate_gbps) * (2 if bidirectional else 1):
            problems.append(
                "min_gbps %s is above the %s Gb/s line rate%s: no link can pass"
                % (_fmt(value), _fmt(line_rate_gbps), " (x2 bidirectional)" if bidirectional else "")
            )
    if min_link_fraction is not None:
        value = _finite(min_link_fraction)
        if value is None or not 0 <= value <= 1:
            problems.append("min_link_fraction=%r must be a number from 0 to 1" % (min_link_fraction,))
    return problems


def expected_rate(expect_rate_gbps=None, server_rate_gbps=None, client_rate_gbps=None):
    """(rate, basis word): the inventory's expectation, else the higher of the two ends' port rates."""
    if _finite(expect_rate_gbps):
        return float(expect_rate_gbps), "expected"
    rates = [r for r in (_finite(server_rate_gbps), _finite(client_rate_gbps)) if r]
    if not rates:
        return None, None
    return max(rates), "port"


def bandwidth_threshold(
    min_gbps=None,
    min_link_fraction=None,
    expect_rate_gbps=None,
    server_rate_gbps=None,
    client_rate_gbps=None,
    bidirectional=False,
):
    """{threshold_gbps, basis, error}: threshold None when no gate applies."""
    candidates = []
    error = None
    if _finite(min_gbps) is not None:
        candidates.append((float(min_gbps), "min_gbps"))
    if _finite(min_link_fraction) is not None:
        rate, word = expected_rate(expect_rate_gbps, server_rate_gbps, client_rate_gbps)
        if rate:
            factor = 2 if bidirectional else 1
            basis = "%s x %s Gb/s %s rate" % (_fmt(min_link_fraction), _fmt(rate), word)
            if bidirectional:
                basis += " x 2 bidirectional"
            candidates.append((float(min_link_fraction) * rate * factor, basis))
        else:
            error = "min_link_fraction needs a port rate, and neither end's rate is known"
    if not candidates:
        return {"threshold_gbps": None, "basis": None, "error": error}
    value, basis = max(candidates, key=lambda c: c[0])
    return {"threshold_gbps": round(value, 6), "basis": basis, "error": error}


def judge_bandwidth(bw_avg_gbps, threshold):
    """(passed, failure_kind, sentence) for one measurement against bandwidth_threshold()'s result."""
    value = _finite(bw_avg_gbps)
    if value is None or value < 0:
        return False, "invalid", "the measured bandwidth %r is not a finite number >= 0" % (bw_avg_gbps,)
    limit = threshold.get("threshold_gbps")
    if limit is None:
        return True, None, None
    if value < limit:
        return (
            False,
            "below_threshold",
            "%.1f Gb/s < %.1f Gb/s (%s)" % (value, limit, threshold.get("basis")),
        )
    return True, None, None


def judge_latency(t_typical_us, p99_us=None, max_typical_us=None, max_p99_us=None):
    """(passed, failure_kind, sentence, threshold_us) for one latency measurement."""
    typical = _finite(t_typical_us)
    if typical is None or typical < 0:
        return False, "invalid", "the measured latency %r is not a finite number >= 0" % (t_typical_us,), None
    if _finite(max_typical_us) is not None and typical > float(max_typical_us):
        return (
            False,
            "above_threshold",
            "typical latency %.2f us > %s us (max_typical_us)" % (typical, _fmt(max_typical_us)),
            float(max_typical_us),
        )
    p99 = _finite(p99_us)
    if _finite(max_p99_us) is not None and p99 is not None and p99 > float(max_p99_us):
        return (
            False,
            "above_threshold",
            "p99 latency %.2f us > %s us (max_p99_us)" % (p99, _fmt(max_p99_us)),
            float(max_p99_us),
        )
    limit = _finite(max_typical_us)
    return True, None, None, limit


def side_bandwidth(bw_avg_gbps, min_gbps=None, min_link_fraction=None, link_rate_gbps=None, bidirectional=False):
    """One side's view of its pair (perftest_bw): its own port rate is the only rate it knows.

    Returns {threshold_gbps, passed, basis, error}: threshold None and passed True when no gate is given;
    ``error`` says why min_link_fraction could not be applied (unknown port rate). passed is None when there is
    no measurement or the gate cannot be applied.
    """
    threshold = bandwidth_threshold(
        min_gbps=min_gbps,
        min_link_fraction=min_link_fraction,
        server_rate_gbps=link_rate_gbps,
        bidirectional=bidirectional,
    )
    limit = threshold["threshold_gbps"]
    if limit is None:
        passed = None if (threshold["error"] or bw_avg_gbps is None) else True
    else:
        passed = None if bw_avg_gbps is None else float(bw_avg_gbps) >= limit
    return {"threshold_gbps": limit, "passed": passed, "basis": threshold["basis"], "error": threshold["error"]}


def check_latency_options(max_typical_us=None, max_p99_us=None, duration=None):
    """Problems (sentences) with the latency gate settings, checked before anything runs."""
    problems = []
    for name, value in (("max_typical_us", max_typical_us), ("max_p99_us", max_p99_us)):
        if value is not None and (_finite(value) is None or float(value) <= 0):
            problems.append("%s=%r must be a finite number of microseconds above 0" % (name, value))
    if max_p99_us is not None and duration:
        problems.append(
            "max_p99_us cannot be checked with duration (-D): perftest prints only the average then; "
            "use iterations instead"
        )
    return problems


def latency_verdict(measured, max_typical_us=None, max_p99_us=None):
    """Judge a latency measurement (kinds.measurement's keys) against the ceilings.

    Returns {passed, failure_kind, failure, threshold_us, unchecked}: ``unchecked`` names a ceiling that could not
    be applied because this perftest printed no such column (the old layout has no percentiles); judge_latency
    decides the rest (the typical latency, or the average where only it is printed, against max_typical_us; p99
    against max_p99_us).
    """
    unchecked = []
    if max_p99_us is not None and measured.get("p99_us") is None:
        unchecked.append("max_p99_us (this perftest printed no 99% percentile)")
    passed, kind, sentence, threshold = judge_latency(
        measured.get("latency_us"), measured.get("p99_us"), max_typical_us, max_p99_us
    )
    if sentence and measured.get("latency_basis") == "t_avg":
        sentence = sentence.replace("typical latency", "average latency (no typical printed)")
    return {
        "passed": passed,
        "failure_kind": kind,
        "failure": sentence,
        "threshold_us": threshold,
        "unchecked": unchecked,
    }
