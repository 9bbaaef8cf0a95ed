# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The per-link baseline: load, compare (regressions) and update, and a lock for concurrent writers.

Version 2: ``{"version": 2, "updated": ts, "links": {"hostA/devA<->hostB/devB": {"history": [{ts, gbps, test, size,
bidirectional, qps}, ...]}}}``. A measurement is compared only with the history points of the same parameters
(``params``: test, message size, direction, queue pairs): a bidirectional run never meets a unidirectional baseline.
Version 1 points carry only the test: their other parameters are unknown, so they are kept (never dropped) but
compared with no result that states its parameters. Fields this version does not know, at any level, are kept as
they are on rewrite. A newer version is refused (written by a newer collection).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import contextlib
import json

from ansible_collections.ibtune.fabric.plugins.module_utils.validate.results import median_of
from ansible_collections.ibtune.fabric.plugins.module_utils.validate.table import columns_of, row_reader

BASELINE_VERSION = 2
DEFAULT_BASELINE_KEEP = 10
PARAMS = ("test", "size", "bidirectional", "qps")  # what makes two measurements of a link comparable


def empty_baseline():
    return {"version": BASELINE_VERSION, "updated": None, "links": {}}


def _number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _clean_history(key, entry):
    history = entry.get("history") if isinstance(entry, dict) else None
    if not isinstance(history, list):
        raise ValueError("baseline link %s has no 'history' list: fix or delete the baseline" % key)
    clean = []
    for point in history:
        if isinstance(point, dict) and _number(point.get("gbps")):
            kept = dict(point)  # fields we do not know stay
            kept["gbps"] = float(point["gbps"])
            kept.setdefault("test", "write")
            clean.append(kept)
    out = dict(entry)
    out["history"] = clean
    return out


def load_baseline(text):
    """Baseline file content -> dict; '' or None -> empty baseline. ValueError when malformed or newer."""
    if text is None or not text.strip():
        return empty_baseline()
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise ValueError("the baseline is not valid JSON (%s): fix or delete it to start a new baseline" % exc)
    if not isinstance(data, dict) or not isinstance(data.get("links", {}), dict):
        raise ValueError("the baseline must be a JSON object with a 'links' object: fix or delete it")
    version = data.get("version", 1)
    if not isinstance(version, int) or version > BASELINE_VERSION:
        raise ValueError(
            "the baseline is version %r, newer than this collection's %d: upgrade ibtune.fabric to update it"
            % (version, BASELINE_VERSION)
        )
    out = dict(data)  # top-level fields we do not know stay
    out["links"] = dict((key, _clean_history(key, entry)) for key, entry in data.get("links", {}).items())
    out.setdefault("updated", None)
    out["version"] = version
    return out


def params_of(item):
    """The comparable parameters of a result or history point: (test, size, bidirectional, qps), None where not
    said (size as text: "65536" and 65536 are the same size)."""
    return params_tuple(*(item.get(k) for k in PARAMS))


def params_tuple(test, size, bidirectional, qps):
    """params_of for the values of PARAMS given in order."""
    return (
        test or "write",
        None if size in (None, "") else str(size),
        None if bidirectional is None else bool(bidirectional),
        None if qps in (None, "") else int(qps),
    )


def baseline_median(baseline, key, params):
    """Median Gb/s of the link's history points with exactly these params (a test name alone: a version 1
    caller's key), None when there is none."""
    entry = (baseline or {}).get("links", {}).get(key)
    if not entry:
        return None
    if isinstance(params, str):
        params = (params, None, None, None)
    return median_of([p["gbps"] for p in entry.get("history", []) if params_of(p) == params])


def _measurements(results):
    """{(link, params): index of its result}, one measurement per link and params: the first pass wins over a
    retest of the same link. Read a column at a time (a ResultTable's, or a list of dicts')."""
    links, kinds, passes, figures = columns_of(results, "link", "kind", "pass", "bw_avg_gbps")
    params = list(zip(*(columns_of(results, *PARAMS))))
    chosen = {}
    for index, (link, kind, pass_no, figure) in enumerate(zip(links, kinds, passes, figures)):
        if figure is None or kind == "latency":
            continue
        key = (link, params_tuple(*params[index]))
        current = chosen.get(key)
        if current is None or pass_no < passes[current]:
            chosen[key] = index
    return chosen


def _regression(key, params, res, median, tolerance):
    floor = (1.0 - tolerance) * median
    return {
        "link": key,
        "test": params[0],
        "params": dict(zip(PARAMS, params)),
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


def find_regressions(results, baseline, tolerance):
    """([{link, test, params, bw_avg_gbps, baseline_gbps, floor_gbps, drop_pct, ...}] where bw < (1 - tolerance)
    x median of the link's history with the same params, {(link, params): median} of the links compared)."""
    regressions = []
    medians = {}
    if not (baseline or {}).get("links"):
        return regressions, medians
    row = row_reader(results)
    (figures,) = columns_of(results, "bw_avg_gbps")
    for (key, params), index in sorted(_measurements(results).items(), key=lambda kv: (kv[0][0], str(kv[0][1]))):
        median = baseline_median(baseline, key, params)
        if median is None:
            continue
        medians[(key, params)] = median
        if figures[index] < (1.0 - tolerance) * median:
            regressions.append(_regression(key, params, row(index), median, tolerance))
    return regressions, medians


def _trim(history, keep):
    """The last ``keep`` points of each params, run order kept."""
    counts = {}
    kept = []
    for point in reversed(history):
        params = params_of(point)
        counts[params] = counts.get(params, 0) + 1
        if counts[params] <= keep:
            kept.append(point)
    return kept[::-1]


def update_baseline(baseline, results, ts, keep=DEFAULT_BASELINE_KEEP):
    """New baseline (version 2) with this run's passed measurements appended (last `keep` per link and params),
    every field it does not know kept.

    Only results that passed every gate and did not regress are recorded: a broken link never
    becomes its own reference, and a regression that still met its threshold does not heal itself
    into the baseline on the next run (the median of `keep` runs absorbs one slow but passing run).
    """
    base = dict(baseline or empty_baseline())
    links = dict(
        (key, dict(entry, history=list(entry.get("history", [])))) for key, entry in base.get("links", {}).items()
    )
    passed, regressed, figures = columns_of(results, "passed", "regressed", "bw_avg_gbps")
    for (key, params), index in sorted(_measurements(results).items(), key=lambda kv: (kv[0][0], str(kv[0][1]))):
        if not passed[index] or regressed[index]:
            continue
        point = dict(zip(PARAMS, params), ts=ts, gbps=round(figures[index], 3))
        links.setdefault(key, {"history": []})["history"].append(
            dict((k, v) for k, v in point.items() if v is not None)
        )
    for entry in links.values():
        entry["history"] = _trim(entry["history"], keep)
    base.update(version=BASELINE_VERSION, updated=ts, links=dict(sorted(links.items())))
    return base


@contextlib.contextmanager
def locked(path, timeout_s=60.0):
    """Hold an exclusive lock on ``<path>.lock`` (fcntl.flock) for a read-modify-write of the baseline: two reports
    written at once never lose one's update. Raises OSError naming the lock when it cannot be had in time. The
    lock file stays (removing it would race a waiter); closing it releases the lock."""
    import fcntl
    import time

    lock_path = path + ".lock"
    with open(lock_path, "a") as handle:
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except OSError:
                if time.monotonic() >= deadline:
                    raise OSError("the baseline lock %s is held by another report for %ds" % (lock_path, timeout_s))
                time.sleep(0.05)
        yield lock_path
