# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Per-cable BER history across validations (pure): a trend is seen before a threshold is crossed.

The history file (fabric_validate_phy_history_path, JSON) is {"version": 1, "cables": {cable id: {"cable":
text, "points": [[time, raw BER of the worst lane, effective BER, module temperature], ...]}}}, newest last,
at most ``keep`` points a cable. It is this package's own file, next to (not inside) the bandwidth baseline.
A cable whose worst lane now reads ``raw_ber_trend_factor`` x the median of its own earlier points (at
least ``trend_min_points`` of them, and at least raw_ber_floor) gets a warning: it is getting worse, even
while every gate still passes.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

VERSION = 1
TREND_FACTOR = 10.0
MIN_POINTS = 3
KEEP = 100


def empty():
    return {"version": VERSION, "cables": {}}


def check(history):
    """The history, or a new one when ``history`` is None/empty; ValueError for a file of another shape."""
    if not history:
        return empty()
    if (
        not isinstance(history, dict)
        or history.get("version") != VERSION
        or not isinstance(history.get("cables"), dict)
    ):
        raise ValueError(
            "the PHY history is not a version %d history file ({version, cables}): move it aside" % VERSION
        )
    return history


def update(history, phy, now, keep=KEEP):
    """A new history with the verdict's ports appended (the input is not changed)."""
    old = check(history)
    cables = dict(
        (k, {"cable": v.get("cable"), "points": list(v.get("points") or [])}) for k, v in old["cables"].items()
    )
    for port in (phy or {}).get("ports") or []:
        entry = cables.setdefault(port["cable_id"], {"cable": port.get("cable"), "points": []})
        entry["cable"] = port.get("cable") or entry["cable"]
        entry["points"].append(
            [float(now), port.get("raw_ber_max"), port.get("effective_ber"), port.get("temperature_c")]
        )
        del entry["points"][:-keep]
    return {"version": VERSION, "cables": cables}


def _median(values):
    ordered = sorted(values)
    n = len(ordered)
    return ordered[n // 2] if n % 2 else (ordered[n // 2 - 1] + ordered[n // 2]) / 2.0


def trend_findings(history, summaries, cfg):
    """[(port summary, [finding])] for cables whose worst lane rose against their own history."""
    if not history:
        return []
    cables = check(history)["cables"]
    out = []
    for summary in summaries:
        now = summary.get("raw_ber_max")
        past = [p[1] for p in (cables.get(summary.get("cable_id")) or {}).get("points") or [] if p[1] is not None]
        if now is None or len(past) < MIN_POINTS:
            continue
        median = _median(past)
        if now >= cfg["raw_ber_floor"] and now >= TREND_FACTOR * max(median, 1e-300):
            out.append(
                (
                    summary,
                    [
                        {
                            "check": "raw_ber_trend",
                            "severity": "warning",
                            "value": now,
                            "limit": TREND_FACTOR * median,
                            "lane": None,
                            "msg": "worst lane raw BER %.2g is %s its median %.2g over the last %d "
                            "validations: a trend, before any threshold"
                            % (now, "%.0fx" % (now / median) if median else "above", median, len(past)),
                        }
                    ],
                )
            )
    return out
