# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The per-link baseline: load, compare (regressions) and update."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json

from ansible_collections.ibtune.fabric.plugins.module_utils.validate.results import median_of

BASELINE_VERSION = 1
DEFAULT_BASELINE_KEEP = 10

# ---------------------------------------------------------------------------------------------
# Baseline


def empty_baseline():
    return {"version": BASELINE_VERSION, "updated": None, "links": {}}


def load_baseline(text):
    """Baseline file content -> dict; '' or None -> empty baseline. ValueError when malformed."""
    if text is None or not text.strip():
        return empty_baseline()
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise ValueError("the baseline is not valid JSON (%s): fix or delete it to start a new baseline" % exc)
    if not isinstance(data, dict) or not isinstance(data.get("links", {}), dict):
        raise ValueError("the baseline must be a JSON object with a 'links' object: fix or delete it")
    links = {}
    for key, entry in data.get("links", {}).items():
        history = entry.get("history") if isinstance(entry, dict) else None
        if not isinstance(history, list):
            raise ValueError("baseline link %s has no 'history' list: fix or delete the baseline" % key)
        clean = []
        for point in history:
            if isinstance(point, dict) and isinstance(point.get("gbps"), (int, float)):
                clean.append({"ts": point.get("ts"), "gbps": float(point["gbps"]), "test": point.get("test", "write")})
        links[key] = {"history": clean}
    return {"version": data.get("version", BASELINE_VERSION), "updated": data.get("updated"), "links": links}


def baseline_median(baseline, key, test):
    entry = (baseline or {}).get("links", {}).get(key)
    if not entry:
        return None
    return median_of([p["gbps"] for p in entry.get("history", []) if p.get("test", "write") == test])


def _measurements(results):
    """One measurement per (link, test): the first pass wins over a retest of the same link."""
    chosen = {}
    for res in results:
        if res["bw_avg_gbps"] is None:
            continue
        key = (res["link"], res["test"])
        current = chosen.get(key)
        if current is None or res["pass"] < current["pass"]:
            chosen[key] = res
    return chosen


def find_regressions(results, baseline, tolerance):
    """[{link, test, bw_avg_gbps, baseline_gbps, floor_gbps, drop_pct, ...}] where
    bw < (1 - tolerance) x median of the link's history; also the baseline median per (link, test)."""
    regressions = []
    medians = {}
    if not (baseline or {}).get("links"):
        return regressions, medians
    for (key, test), res in sorted(_measurements(results).items()):
        median = baseline_median(baseline, key, test)
        if median is None:
            continue
        medians[(key, test)] = median
        floor = (1.0 - tolerance) * median
        if res["bw_avg_gbps"] < floor:
            regressions.append(
                {
                    "link": key,
                    "test": test,
                    "server": res["server"],
                    "server_device": res["server_device"],
                    "client": res["client"],
                    "client_device": res["client_device"],
                    "bw_avg_gbps": res["bw_avg_gbps"],
                    "baseline_gbps": round(median, 3),
                    "floor_gbps": round(floor, 3),
                    "tolerance": tolerance,
                    "drop_pct": round(100.0 * (1.0 - res["bw_avg_gbps"] / median), 1) if median else None,
                }
            )
    return regressions, medians


def update_baseline(baseline, results, ts, keep=DEFAULT_BASELINE_KEEP):
    """New baseline with this run's passed measurements appended (last `keep` per link and test).

    Only results that passed every gate and did not regress are recorded: a broken link never
    becomes its own reference, and a regression that still met its threshold does not heal itself
    into the baseline on the next run (the median of `keep` runs absorbs one slow but passing run).
    """
    links = {}
    for key, entry in (baseline or {}).get("links", {}).items():
        links[key] = {"history": list(entry.get("history", []))}
    for (key, test), res in sorted(_measurements(results).items()):
        if not res["passed"] or res.get("regressed"):
            continue
        history = links.setdefault(key, {"history": []})["history"]
        history.append({"ts": ts, "gbps": round(res["bw_avg_gbps"], 3), "test": test})
    for entry in links.values():
        # history is in run order; keep the last `keep` entries of each test, order preserved
        counts = {}
        kept = []
        for point in reversed(entry["history"]):
            test = point.get("test", "write")
            counts[test] = counts.get(test, 0) + 1
            if counts[test] <= keep:
                kept.append(point)
        entry["history"] = kept[::-1]
    return {"version": BASELINE_VERSION, "updated": ts, "links": dict(sorted(links.items()))}
