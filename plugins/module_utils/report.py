# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The fabric validation report: verdict, fault localization, baseline and the report files.

Pure functions (no Ansible imports); the fabric_report module is the thin wrapper.

Pair result (one per measured pair and rail, as the fabric_validate role gathers them):
  {server, server_device, server_port, client, client_device, client_port, test, bw_avg_gbps,
   bw_peak_gbps, threshold_gbps, passed, failure, round, pass (1 first pass, 2 retest), duration_s}
Counter violation (ib_counters, plus the host):
  {host, device, port, counter, before, after, delta, allowed, category}
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import datetime
import json
import os
import tempfile
import time
import xml.etree.ElementTree as ET

from ansible_collections.ibtune.fabric.plugins.module_utils.pairs import first_pass_suspects

REPORT_FILES = ("report.json", "junit.xml", "summary.md", "ibtune.prom")
BASELINE_VERSION = 1
DEFAULT_BASELINE_KEEP = 10
MESSAGE_ITEMS = 10  # culprits named in the failure message before "and N more"


# ---------------------------------------------------------------------------------------------
# Input normalization


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


# ---------------------------------------------------------------------------------------------
# Fault localization


def localize(results):
    """Name the culprits from normalized results.

    First pass (pass 1): a node that failed with >= 2 different partners is a suspect node (partners
    already named suspect nodes do not count, see pairs.first_pass_suspects); a pair that failed
    alone is a suspect link; nodes all of whose pairs passed are known-good.
    Second pass (pass 2, each suspect and each end of a suspect link against known-good partners):
    a host that fails again with a known-good partner is a bad node; one that passes all its retests
    is cleared. Links are then re-derived: a failed first-pass pair neither of whose ends is a bad or
    (unretested) suspect node is a suspect link, a bad link once both its ends were cleared.

    Returns {suspect_nodes, suspect_links, known_good, cleared}.
    """
    first = [r for r in results if r["pass"] == 1]
    second = [r for r in results if r["pass"] != 1]
    nodes1, links1, good, failed = first_pass_suspects(first)
    good_set = set(good)
    subjects = set(nodes1)
    for a, b in links1:
        subjects.add(a)
        subjects.add(b)

    retests = dict((s, []) for s in subjects)
    for res in second:
        for host, other in ((res["server"], res["client"]), (res["client"], res["server"])):
            if host in retests and other in good_set:
                retests[host].append(res)
    bad = set()
    cleared = set()
    for host, runs in retests.items():
        if any(not r["passed"] for r in runs):
            bad.add(host)
        elif runs:
            cleared.add(host)
    named = bad | (set(nodes1) - cleared)

    failing_devices = {}
    for res in first:
        if not res["passed"]:
            failing_devices.setdefault(res["server"], set()).add(res["server_device"])
            failing_devices.setdefault(res["client"], set()).add(res["client_device"])

    suspect_nodes = []
    for host in sorted(named):
        runs = retests.get(host, [])
        entry = {
            "host": host,
            "verdict": "bad_node" if host in bad else "suspect",
            "failed_with": sorted(failed.get(host, ())),
            "devices": sorted(d for d in failing_devices.get(host, ()) if d),
            "first_pass_suspect": host in nodes1,
            "retest": [
                {
                    "partner": r["client"] if r["server"] == host else r["server"],
                    "server": r["server"],
                    "client": r["client"],
                    "passed": r["passed"],
                    "bw_avg_gbps": r["bw_avg_gbps"],
                    "threshold_gbps": r["threshold_gbps"],
                    "failure": r["failure"],
                }
                for r in runs
            ],
        }
        suspect_nodes.append(entry)

    worst = {}
    for res in first:
        if res["passed"] or res["server"] in named or res["client"] in named:
            continue
        key = res["link"]
        current = worst.get(key)
        bw = res["bw_avg_gbps"]
        if (
            current is None
            or (bw is None and current["bw_avg_gbps"] is not None)
            or (bw is not None and current["bw_avg_gbps"] is not None and bw < current["bw_avg_gbps"])
        ):
            worst[key] = res
    suspect_links = []
    for key in sorted(worst):
        res = worst[key]
        both_cleared = res["server"] in cleared and res["client"] in cleared
        suspect_links.append(
            {
                "link": key,
                "server": res["server"],
                "server_device": res["server_device"],
                "client": res["client"],
                "client_device": res["client_device"],
                "test": res["test"],
                "bw_avg_gbps": res["bw_avg_gbps"],
                "threshold_gbps": res["threshold_gbps"],
                "failure": res["failure"],
                "verdict": "bad_link" if both_cleared else "suspect",
            }
        )
    return {
        "suspect_nodes": suspect_nodes,
        "suspect_links": suspect_links,
        "known_good": good,
        "cleared": sorted(cleared - bad),
    }


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


def _median(values):
    ordered = sorted(values)
    n = len(ordered)
    if not n:
        return None
    mid = n // 2
    return ordered[mid] if n % 2 else (ordered[mid - 1] + ordered[mid]) / 2.0


def baseline_median(baseline, key, test):
    entry = (baseline or {}).get("links", {}).get(key)
    if not entry:
        return None
    return _median([p["gbps"] for p in entry.get("history", []) if p.get("test", "write") == test])


def _measurements(results):
    """One measurement per (link, test): the first pass wins over a retest of the same link."""
    chosen = {}
    for res in sorted(results, key=lambda r: r["pass"]):
        if res["bw_avg_gbps"] is None:
            continue
        chosen.setdefault((res["link"], res["test"]), res)
    return chosen


def find_regressions(results, baseline, tolerance):
    """[{link, test, bw_avg_gbps, baseline_gbps, floor_gbps, drop_pct, ...}] where
    bw < (1 - tolerance) x median of the link's history; also the baseline median per (link, test)."""
    regressions = []
    medians = {}
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

    Only results that passed their thresholds are recorded, so a broken link never becomes its own
    reference; a slower but passing link is recorded (the median of `keep` runs absorbs one outlier).
    """
    links = {}
    for key, entry in (baseline or {}).get("links", {}).items():
        links[key] = {"history": list(entry.get("history", []))}
    for (key, test), res in sorted(_measurements(results).items()):
        if not res["passed"]:
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


# ---------------------------------------------------------------------------------------------
# The report


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


def _violation_text(v):
    allowed = v.get("allowed")
    text = "%s %s port %s %s +%d" % (v["host"], v["device"], v["port"], v["counter"], v["delta"])
    if allowed not in (None, 0):
        text += " (allowed %s)" % allowed
    return text


def _node_text(node):
    text = "%s node %s" % ("bad" if node["verdict"] == "bad_node" else "suspect", node["host"])
    details = []
    if node["failed_with"]:
        names = node["failed_with"]
        listed = ", ".join(names[:5]) + (" and %d more" % (len(names) - 5) if len(names) > 5 else "")
        details.append("failed with %s" % listed)
    failed_retests = [r for r in node["retest"] if not r["passed"]]
    if failed_retests:
        r = failed_retests[0]
        figures = (
            "%s < %s" % (fmt_gbps(r["bw_avg_gbps"]), fmt_gbps(r["threshold_gbps"]))
            if r["bw_avg_gbps"] is not None and r["threshold_gbps"] is not None
            else (r["failure"] or "failed")
        )
        details.append("failed again with known-good %s: %s" % (r["partner"], figures))
    if details:
        text += " (%s)" % "; ".join(details)
    return text


def _link_text(link):
    figures = (
        "%s < %s" % (fmt_gbps(link["bw_avg_gbps"]), fmt_gbps(link["threshold_gbps"]))
        if link["bw_avg_gbps"] is not None and link["threshold_gbps"] is not None
        else (link["failure"] or "failed")
    )
    word = "bad link" if link["verdict"] == "bad_link" else "suspect link"
    return "%s %s (%s)" % (word, link["link"], figures)


def _regression_text(reg):
    return "regression %s %s (%s < %d%% of baseline %s)" % (
        reg["link"],
        reg["test"],
        fmt_gbps(reg["bw_avg_gbps"]),
        round(100 * (1 - reg["tolerance"])),
        fmt_gbps(reg["baseline_gbps"]),
    )


def failure_message(report):
    items = [_link_text(x) for x in report["suspect_links"]]
    items += [_node_text(x) for x in report["suspect_nodes"]]
    items += [_violation_text(x) for x in report["counter_violations"]]
    items += [_regression_text(x) for x in report["regressions"]]
    if not items and report["failed_pairs"]:
        items = ["%s %s: %s" % (_pair_label(r), r["test"], _figures(r)) for r in report["failed_pairs"]]
    more = len(items) - MESSAGE_ITEMS
    text = "; ".join(items[:MESSAGE_ITEMS])
    if more > 0:
        text += "; and %d more (see summary.md)" % more
    return "Fabric validation failed: %s" % text


def _iso(ts):
    return datetime.datetime.fromtimestamp(ts, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def build_report(
    results,
    counter_violations=None,
    saturated=None,
    baseline=None,
    regression_tolerance=0.1,
    min_gbps=None,
    run_id=None,
    now=None,
):
    """The whole verdict as one JSON-able dict (report.json); renderers turn it into the other files."""
    tolerance = float(regression_tolerance)
    if not 0.0 <= tolerance < 1.0:
        raise ValueError("regression_tolerance must be >= 0 and < 1 (0.1 = 10%% below baseline), got %r" % tolerance)
    if min_gbps is not None and float(min_gbps) < 0:
        raise ValueError("min_gbps must be >= 0, got %r" % min_gbps)
    now = time.time() if now is None else float(now)
    results = normalize_results(results, min_gbps)
    violations = [_violation(v, i) for i, v in enumerate(counter_violations or [])]
    violations.sort(key=lambda v: (v["host"], v["device"], v["port"], v["counter"]))
    stuck = []
    for item in saturated or []:
        if isinstance(item, dict):
            entry = dict(item)
            entry["host"] = str(item.get("host") or "unknown")
            stuck.append(entry)
    stuck.sort(key=lambda v: (v["host"], str(v.get("device")), _int_or(v.get("port"), 0), str(v.get("counter"))))

    loc = localize(results)
    regressions, medians = find_regressions(results, baseline, tolerance)
    for res in results:
        res["baseline_gbps"] = medians.get((res["link"], res["test"]))
    regressed = set((r["link"], r["test"]) for r in regressions)
    for res in results:
        res["regressed"] = (res["link"], res["test"]) in regressed and res["bw_avg_gbps"] is not None
    failed_pairs = [r for r in results if not r["passed"]]
    hosts = set()
    for res in results:
        hosts.add(res["server"])
        hosts.add(res["client"])
    passed = not failed_pairs and not violations and not regressions
    report = {
        "schema": 1,
        "run_id": run_id or datetime.datetime.fromtimestamp(now, datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ"),
        "timestamp": _iso(now),
        "timestamp_seconds": now,
        "passed": passed,
        "totals": {
            "results": len(results),
            "failed": len(failed_pairs),
            "hosts": len(hosts),
            "rounds": len(set((r["pass"], r["round"]) for r in results)),
            "retests": sum(1 for r in results if r["pass"] != 1),
            "suspect_nodes": len(loc["suspect_nodes"]),
            "suspect_links": len(loc["suspect_links"]),
            "counter_violations": len(violations),
            "regressions": len(regressions),
            "saturated": len(stuck),
        },
        "settings": {
            "min_gbps": None if min_gbps is None else float(min_gbps),
            "regression_tolerance": tolerance,
            "baseline": bool(baseline and baseline.get("links")),
        },
        "failed_pairs": failed_pairs,
        "suspect_nodes": loc["suspect_nodes"],
        "suspect_links": loc["suspect_links"],
        "known_good": loc["known_good"],
        "cleared": loc["cleared"],
        "regressions": regressions,
        "counter_violations": violations,
        "saturated": stuck,
        "results": results,
    }
    report["headline"] = headline(report)
    report["message"] = (
        "Fabric validation passed: %s" % report["headline"][len("PASSED: ") :] if passed else failure_message(report)
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
    return ("PASSED: " if report["passed"] else "FAILED: ") + text


# ---------------------------------------------------------------------------------------------
# Renderers


def _compact(value):
    return json.dumps(value, sort_keys=True, separators=(", ", ": "))


def to_json(data):
    """JSON with one line per top-level key and per item of a top-level list or dict (one line per
    pair result, per baseline link): readable and diff-friendly, and json's C encoder stays in use
    (indent= would switch to the pure-Python one, 4x slower on thousands of results)."""
    if not data:
        return "{}\n"
    lines = []
    keys = sorted(data)
    for index, key in enumerate(keys):
        value = data[key]
        comma = "," if index < len(keys) - 1 else ""
        if isinstance(value, list) and value:
            items = ",\n".join("    " + _compact(item) for item in value)
            lines.append("  %s: [\n%s\n  ]%s" % (_compact(key), items, comma))
        elif isinstance(value, dict) and value:
            items = ",\n".join("    %s: %s" % (_compact(k), _compact(value[k])) for k in sorted(value))
            lines.append("  %s: {\n%s\n  }%s" % (_compact(key), items, comma))
        else:
            lines.append("  %s: %s%s" % (_compact(key), _compact(value), comma))
    return "{\n%s\n}\n" % "\n".join(lines)


def _num(value):
    return "" if value is None else ("%.3f" % value).rstrip("0").rstrip(".")


def to_junit(report):
    """JUnit XML: suite `pairs` (a testcase per pair result), suite `counters` (one per node)."""
    root = ET.Element("testsuites", name="ibtune.fabric validation")
    pairs = ET.SubElement(root, "testsuite", name="pairs", timestamp=report["timestamp"])
    failures = 0
    total_time = 0.0
    for res in report["results"]:
        duration = res.get("duration_s") or 0.0
        total_time += duration
        case = ET.SubElement(
            pairs,
            "testcase",
            classname="ibtune.fabric.pairs.pass%d.round%d" % (res["pass"], res["round"]),
            name="%s %s" % (_pair_label(res), res["test"]),
            time="%.3f" % duration,
        )
        figures = "bw_avg_gbps=%s threshold_gbps=%s bw_peak_gbps=%s baseline_gbps=%s" % (
            _num(res["bw_avg_gbps"]) or "null",
            _num(res["threshold_gbps"]) or "null",
            _num(res["bw_peak_gbps"]) or "null",
            _num(res.get("baseline_gbps")) or "null",
        )
        if not res["passed"]:
            failures += 1
            node = ET.SubElement(case, "failure", message=_figures(res), type="bandwidth")
            node.text = "%s\n%s" % (res["failure"], figures)
        elif res.get("regressed"):
            failures += 1
            text = "%s < %d%% of baseline %s" % (
                fmt_gbps(res["bw_avg_gbps"]),
                round(100 * (1 - report["settings"]["regression_tolerance"])),
                fmt_gbps(res["baseline_gbps"]),
            )
            node = ET.SubElement(case, "failure", message=text, type="regression")
            node.text = figures
        ET.SubElement(case, "system-out").text = figures
    pairs.set("tests", str(len(report["results"])))
    pairs.set("failures", str(failures))
    pairs.set("errors", "0")
    pairs.set("time", "%.3f" % total_time)

    counters = ET.SubElement(root, "testsuite", name="counters", timestamp=report["timestamp"])
    by_host = {}
    for v in report["counter_violations"]:
        by_host.setdefault(v["host"], []).append(v)
    stuck_by_host = {}
    for s in report["saturated"]:
        stuck_by_host.setdefault(s["host"], []).append(s)
    hosts = set(by_host) | set(stuck_by_host)
    for res in report["results"]:
        hosts.add(res["server"])
        hosts.add(res["client"])
    cfail = 0
    cskip = 0
    for host in sorted(hosts):
        case = ET.SubElement(counters, "testcase", classname="ibtune.fabric.counters", name="%s counters" % host)
        case.set("time", "0")
        if host in by_host:
            cfail += 1
            lines = [_violation_text(v) for v in by_host[host]]
            node = ET.SubElement(case, "failure", message="; ".join(lines), type="counters")
            node.text = "\n".join(
                "%s %s port %s %s before=%s after=%s delta=%s allowed=%s category=%s"
                % (
                    v["host"],
                    v["device"],
                    v["port"],
                    v["counter"],
                    v.get("before"),
                    v.get("after"),
                    v["delta"],
                    v.get("allowed"),
                    v["category"],
                )
                for v in by_host[host]
            )
        elif host in stuck_by_host:
            cskip += 1
            ET.SubElement(
                case,
                "skipped",
                message="; ".join(
                    "%s port %s %s saturated at %s: cannot show increases, clear it (perfquery -R)"
                    % (s.get("device"), s.get("port"), s.get("counter"), s.get("value"))
                    for s in stuck_by_host[host]
                ),
            )
    counters.set("tests", str(len(hosts)))
    counters.set("failures", str(cfail))
    counters.set("errors", "0")
    counters.set("skipped", str(cskip))
    counters.set("time", "0")
    root.set("tests", str(len(report["results"]) + len(hosts)))
    root.set("failures", str(failures + cfail))
    root.set("errors", "0")
    root.set("time", "%.3f" % total_time)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def _md(value):
    text = "" if value is None else str(value)
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def to_markdown(report):
    lines = ["# Fabric validation: %s" % ("PASSED" if report["passed"] else "FAILED"), ""]
    lines.append("**%s**" % report["headline"])
    lines.append("")
    lines.append("Run `%s` at %s." % (report["run_id"], report["timestamp"]))
    if not report["passed"]:
        lines += ["", "> %s" % _md(report["message"])]
    if report["suspect_nodes"] or report["suspect_links"]:
        lines += ["", "## Suspects", ""]
        for node in report["suspect_nodes"]:
            devices = " on %s" % ", ".join(node["devices"]) if node["devices"] else ""
            lines.append("- %s%s" % (_md(_node_text(node)), _md(devices)))
        for link in report["suspect_links"]:
            lines.append("- %s" % _md(_link_text(link)))
        if report["known_good"]:
            lines.append("")
            lines.append(
                "Known-good hosts (every pair passed, apart from pairs with a suspect node): %d%s."
                % (
                    len(report["known_good"]),
                    "" if len(report["known_good"]) > 20 else " (%s)" % ", ".join(report["known_good"]),
                )
            )
    if report["failed_pairs"]:
        lines += [
            "",
            "## Failed pairs",
            "",
            "| pass | round | server | client | test | Gb/s | threshold | failure |",
            "|---:|---:|---|---|---|---:|---:|---|",
        ]
        for res in report["failed_pairs"]:
            lines.append(
                "| %d | %d | %s | %s | %s | %s | %s | %s |"
                % (
                    res["pass"],
                    res["round"],
                    _md(endpoint(res["server"], res["server_device"])),
                    _md(endpoint(res["client"], res["client_device"])),
                    _md(res["test"]),
                    _num(res["bw_avg_gbps"]) or "-",
                    _num(res["threshold_gbps"]) or "-",
                    _md(res["failure"]),
                )
            )
    if report["regressions"]:
        lines += [
            "",
            "## Regressions against the baseline",
            "",
            "| link | test | Gb/s | baseline (median) | floor | drop |",
            "|---|---|---:|---:|---:|---:|",
        ]
        for reg in report["regressions"]:
            lines.append(
                "| %s | %s | %s | %s | %s | %s%% |"
                % (
                    _md(reg["link"]),
                    _md(reg["test"]),
                    _num(reg["bw_avg_gbps"]),
                    _num(reg["baseline_gbps"]),
                    _num(reg["floor_gbps"]),
                    _num(reg["drop_pct"]),
                )
            )
    if report["counter_violations"]:
        lines += [
            "",
            "## Counter violations",
            "",
            "| host | device | port | counter | category | before | after | delta | allowed |",
            "|---|---|---:|---|---|---:|---:|---:|---:|",
        ]
        for v in report["counter_violations"]:
            lines.append(
                "| %s | %s | %s | %s | %s | %s | %s | %s | %s |"
                % tuple(
                    _md(x)
                    for x in (
                        v["host"],
                        v["device"],
                        v["port"],
                        v["counter"],
                        v["category"],
                        v.get("before"),
                        v.get("after"),
                        v["delta"],
                        v.get("allowed"),
                    )
                )
            )
    if report["saturated"]:
        lines += ["", "## Saturated counters (stuck at their maximum: they cannot show new errors)", ""]
        for s in report["saturated"]:
            lines.append(
                "- %s %s port %s %s = %s (%s-bit): clear it (perfquery -R) to watch it again"
                % tuple(_md(s.get(k)) for k in ("host", "device", "port", "counter", "value", "width"))
            )
    measured = [r["bw_avg_gbps"] for r in report["results"] if r["bw_avg_gbps"] is not None]
    if measured:
        lines += [
            "",
            "## Bandwidth",
            "",
            "%d measurements: min %s, median %s, max %s."
            % (len(measured), fmt_gbps(min(measured)), fmt_gbps(_median(measured)), fmt_gbps(max(measured))),
        ]
    return "\n".join(lines) + "\n"


def _label_value(value):
    return str("" if value is None else value).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _labels(pairs):
    return "{%s}" % ",".join('%s="%s"' % (k, _label_value(v)) for k, v in pairs)


def _sample(value):
    if isinstance(value, bool):
        return "1" if value else "0"
    return repr(float(value))


PROM_HELP = (
    ("ibtune_validation_timestamp_seconds", "Unix time when the fabric validation report was written."),
    ("ibtune_validation_passed", "1 when the whole fabric validation passed, else 0."),
    ("ibtune_link_bandwidth_gbps", "Measured average bandwidth of a pair in Gb/s (0 when nothing was measured)."),
    ("ibtune_link_threshold_gbps", "Bandwidth threshold the pair was held to, in Gb/s."),
    ("ibtune_link_passed", "1 when the pair met its threshold, else 0."),
    ("ibtune_link_baseline_gbps", "Median of the link's baseline history in Gb/s."),
    ("ibtune_link_regressed", "1 when the pair fell below (1 - tolerance) x its baseline."),
    ("ibtune_counter_violations", "Increase of an error counter during validation beyond what is allowed."),
    ("ibtune_suspect_node", "1 for a host the validation names as a suspect (or bad) node."),
    ("ibtune_suspect_link", "1 for a link the validation names as a suspect (or bad) link."),
)


def to_prometheus(report):
    """Textfile-collector exposition; names and labels as docs/dev/CONTRACTS.md (ibtune.prom)."""
    series = dict((name, {}) for name, _h in PROM_HELP)
    series["ibtune_validation_timestamp_seconds"][""] = _sample(report["timestamp_seconds"])
    series["ibtune_validation_passed"][""] = _sample(report["passed"])
    # one sample per label set: a later pass of the same link and test replaces an earlier one
    for res in sorted(report["results"], key=lambda r: (r["pass"], r["round"])):
        labels = _labels(
            (
                ("server", res["server"]),
                ("server_device", res["server_device"]),
                ("client", res["client"]),
                ("client_device", res["client_device"]),
                ("test", res["test"]),
            )
        )
        bw = res["bw_avg_gbps"]
        series["ibtune_link_bandwidth_gbps"][labels] = _sample(bw if bw is not None else 0.0)
        if res["threshold_gbps"] is not None:
            series["ibtune_link_threshold_gbps"][labels] = _sample(res["threshold_gbps"])
        series["ibtune_link_passed"][labels] = _sample(res["passed"])
        if res.get("baseline_gbps") is not None:
            series["ibtune_link_baseline_gbps"][labels] = _sample(res["baseline_gbps"])
            series["ibtune_link_regressed"][labels] = _sample(bool(res.get("regressed")))
    for v in report["counter_violations"]:
        labels = _labels(
            (
                ("host", v["host"]),
                ("device", v["device"]),
                ("port", v["port"]),
                ("counter", v["counter"]),
                ("category", v["category"]),
            )
        )
        series["ibtune_counter_violations"][labels] = _sample(v["delta"])
    for node in report["suspect_nodes"]:
        series["ibtune_suspect_node"][_labels((("host", node["host"]),))] = "1"
    for link in report["suspect_links"]:
        labels = _labels(
            (
                ("server", link["server"]),
                ("server_device", link["server_device"]),
                ("client", link["client"]),
                ("client_device", link["client_device"]),
            )
        )
        series["ibtune_suspect_link"][labels] = "1"
    out = []
    for name, help_text in PROM_HELP:
        samples = series[name]
        if not samples:
            continue
        out.append("# HELP %s %s" % (name, help_text))
        out.append("# TYPE %s gauge" % name)
        for labels, value in samples.items():
            out.append("%s%s %s" % (name, labels, value))
    return "\n".join(out) + "\n"


def render_all(report):
    """{file name: content} for the four report files."""
    return {
        "report.json": to_json(report),
        "junit.xml": to_junit(report),
        "summary.md": to_markdown(report),
        "ibtune.prom": to_prometheus(report),
    }


def write_atomic(dest_dir, files, mode=0o644):
    """Write {name: text} into dest_dir, each through a temp file in the same directory and
    os.replace, so a reader (node_exporter, CI) never sees a half-written file. Returns the paths."""
    if not os.path.isdir(dest_dir):
        os.makedirs(dest_dir)
    paths = []
    for name in sorted(files):
        if os.sep in name or name in ("", ".", ".."):
            raise ValueError("report file name %r must be a plain file name" % name)
        path = os.path.join(dest_dir, name)
        fd, tmp = tempfile.mkstemp(prefix=".%s." % name, suffix=".tmp", dir=dest_dir)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(files[name])
                handle.flush()
                os.fsync(handle.fileno())
            os.chmod(tmp, mode)
            os.replace(tmp, path)
        except BaseException:
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise
        paths.append(path)
    return paths
