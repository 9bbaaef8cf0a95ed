# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The report files: report.json, junit.xml, summary.md, ibtune.prom and report.html (report_html), and
their atomic write.

The culprits' sentences are report/text.py's.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import tempfile
import xml.etree.ElementTree as ET

from ansible_collections.ibtune.fabric.plugins.module_utils.report.html import to_html
from ansible_collections.ibtune.fabric.plugins.module_utils.report import phy as _phy
from ansible_collections.ibtune.fabric.plugins.module_utils.report.text import link_text, node_text, violation_text
from ansible_collections.ibtune.fabric.plugins.module_utils.validate.results import (
    figures_text,
    median_of,
    pair_label,
    endpoint,
    fmt_gbps,
    fmt_us,
)

REPORT_FILES = ("report.json", "junit.xml", "summary.md", "ibtune.prom", "report.html")


def report_files():
    """The report file names, sorted (the order write_atomic returns their paths in)."""
    return sorted(REPORT_FILES)


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


def _junit_figures(res):
    if res.get("kind") == "latency":
        names = ("t_typical_us", "p99_us", "threshold_us", "peer_median")
    else:
        names = ("bw_avg_gbps", "threshold_gbps", "bw_peak_gbps", "baseline_gbps", "peer_median")
    return " ".join("%s=%s" % (name, _num(res.get(name)) or "null") for name in names)


def _hosts_suite(root, report):
    """Suite `hosts`: a testcase per host meant to be validated, a failure per failed host."""
    failed = dict((h["host"], h) for h in report.get("failed_hosts") or [])
    hosts = sorted(set(report.get("expected_hosts") or ()) | set(failed) | set(report.get("passed_hosts") or ()))
    suite = ET.SubElement(root, "testsuite", name="hosts", timestamp=report["timestamp"])
    for host in hosts:
        case = ET.SubElement(suite, "testcase", classname="ibtune.fabric.hosts", name="%s host" % host, time="0")
        if host in failed:
            entry = failed[host]
            node = ET.SubElement(case, "failure", message=entry["reason"], type=entry.get("failure_kind") or "failed")
            node.text = "%s: %s (%s)" % (host, entry["reason"], entry.get("failure_kind"))
    suite.set("tests", str(len(hosts)))
    suite.set("failures", str(len(failed)))
    suite.set("errors", "0")
    suite.set("time", "0")
    return len(hosts), len(failed)


def _fabric_suite(root, report):
    """Suite `fabric` (only with a topology): a failing testcase per suspect cable, per fabric check error and
    per switch port whose counters rose; one passing testcase when there is none. Returns (tests, failures)."""
    if "suspect_cables" not in report and "switch_counter_violations" not in report:
        return 0, 0
    suite = ET.SubElement(root, "testsuite", name="fabric", timestamp=report["timestamp"])
    failures = 0
    for cable in report.get("suspect_cables") or []:
        case = ET.SubElement(
            suite, "testcase", classname="ibtune.fabric.cables", name="cable %s <-> %s" % (cable["a"], cable["b"])
        )
        case.set("time", "0")
        ET.SubElement(case, "failure", message=cable["text"], type="suspect_cable").text = cable.get("reason")
        failures += 1
    for f in report.get("topology_findings") or []:
        if f.get("severity") != "error":
            continue
        case = ET.SubElement(
            suite,
            "testcase",
            classname="ibtune.fabric.topology",
            name="%s %s port %s" % (f.get("check"), f.get("switch"), f.get("port")),
        )
        case.set("time", "0")
        ET.SubElement(case, "failure", message=f["msg"], type=f.get("check") or "topology").text = f["msg"]
        failures += 1
    for v in report.get("switch_counter_violations") or []:
        case = ET.SubElement(
            suite,
            "testcase",
            classname="ibtune.fabric.switch_counters",
            name="%s port %s counters" % (v.get("switch"), v.get("port")),
        )
        case.set("time", "0")
        ET.SubElement(case, "failure", message=v.get("msg") or "", type="switch_counters").text = v.get("msg")
        failures += 1
    tests = failures
    if not failures:
        ET.SubElement(suite, "testcase", classname="ibtune.fabric.cables", name="no suspect cable", time="0")
        tests = 1
    for key, value in (("tests", tests), ("failures", failures), ("errors", 0)):
        suite.set(key, str(value))
    suite.set("time", "0")
    return tests, failures


def to_junit(report):
    """JUnit XML: suite `hosts` (a testcase per expected host), suite `pairs` (a testcase per pair
    result, the failure `type` its failure_kind), suite `counters` (one per node); a systemic verdict
    or a run that validated too few hosts is a failing testcase `verdict`."""
    root = ET.Element("testsuites", name="ibtune.fabric validation")
    host_tests, host_failures = _hosts_suite(root, report)
    verdict_items = ([report["systemic"]] if report.get("systemic") else []) + list(report.get("problems") or [])
    if verdict_items:
        suite = ET.SubElement(root, "testsuite", name="verdict", timestamp=report["timestamp"])
        for text in verdict_items:
            case = ET.SubElement(suite, "testcase", classname="ibtune.fabric.verdict", name="fabric verdict", time="0")
            kind = "systemic" if text == report.get("systemic") else "too_few_hosts"
            ET.SubElement(case, "failure", message=text, type=kind).text = text
        for key, value in (("tests", len(verdict_items)), ("failures", len(verdict_items)), ("errors", 0)):
            suite.set(key, str(value))
        suite.set("time", "0")
        host_tests += len(verdict_items)
        host_failures += len(verdict_items)
    fabric_tests, fabric_failures = _fabric_suite(root, report)
    host_tests += fabric_tests
    host_failures += fabric_failures
    phy_tests, phy_failures = _phy.junit_suite(root, report)
    host_tests += phy_tests
    host_failures += phy_failures
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
            name="%s %s" % (pair_label(res), res["test"]),
            time="%.3f" % duration,
        )
        figures = _junit_figures(res)
        if not res["passed"]:
            failures += 1
            node = ET.SubElement(case, "failure", message=figures_text(res), type=res.get("failure_kind") or "failed")
            node.text = "%s\n%s" % (res["failure"], figures)
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
            lines = [violation_text(v) for v in by_host[host]]
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
    root.set("tests", str(len(report["results"]) + len(hosts) + host_tests))
    root.set("failures", str(failures + cfail + host_failures))
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
    if report.get("systemic"):
        lines += ["", "## Systemic failure", "", _md(report["systemic"]), "",
                  "Most pairs failed the same way: no node or link is named, fix the common cause first."]  # fmt: skip
    for problem in report.get("problems") or []:
        lines += ["", "**%s**" % _md(problem)]
    lines += _markdown_hosts(report)
    if report.get("suspect_cables"):
        lines += ["", "## Suspect cables", ""]
        for cable in report["suspect_cables"]:
            lines.append("- %s: %s" % (_md(cable["text"]), _md(cable.get("reason"))))
    if report.get("topology_findings"):
        lines += ["", "## Fabric checks", ""]
        for f in report["topology_findings"]:
            lines.append("- %s: %s" % (_md(f.get("severity")), _md(f["msg"])))
    lines += _phy.markdown_lines(report, _md)
    if report.get("switch_counter_violations"):
        lines += ["", "## Switch counter violations", ""]
        for v in report["switch_counter_violations"]:
            lines.append("- %s" % _md(v.get("msg")))
    if report.get("isl_traffic"):
        lines += ["", "## Inter-switch links", "", _md(report["isl_traffic"]["text"])]
    if report["suspect_nodes"] or report["suspect_links"]:
        lines += ["", "## Suspects", ""]
        for node in report["suspect_nodes"]:
            devices = " on %s" % ", ".join(node["devices"]) if node["devices"] else ""
            lines.append("- %s%s" % (_md(node_text(node)), _md(devices)))
        for link in report["suspect_links"]:
            lines.append("- %s" % _md(link_text(link)))
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
            "| pass | round | server | client | test | measured | threshold | kind | failure |",
            "|---:|---:|---|---|---|---:|---:|---|---|",
        ]
        for res in report["failed_pairs"]:
            latency = res.get("kind") == "latency"
            value = res.get("t_typical_us") if latency else res["bw_avg_gbps"]
            limit = res.get("threshold_us") if latency else res["threshold_gbps"]
            unit = " us" if latency else ""
            lines.append(
                "| %d | %d | %s | %s | %s | %s | %s | %s | %s |"
                % (
                    res["pass"],
                    res["round"],
                    _md(endpoint(res["server"], res["server_device"])),
                    _md(endpoint(res["client"], res["client_device"])),
                    _md(res["test"]),
                    (_num(value) + unit) if value is not None else "-",
                    (_num(limit) + unit) if limit is not None else "-",
                    _md(res.get("failure_kind")),
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
            % (len(measured), fmt_gbps(min(measured)), fmt_gbps(median_of(measured)), fmt_gbps(max(measured))),
        ]
    typical = [r["t_typical_us"] for r in report["results"] if r.get("t_typical_us") is not None]
    if typical:
        lines += [
            "",
            "## Latency",
            "",
            "%d measurements (typical): min %s, median %s, max %s."
            % (len(typical), fmt_us(min(typical)), fmt_us(median_of(typical)), fmt_us(max(typical))),
        ]
    return "\n".join(lines) + "\n"


def _markdown_hosts(report):
    failed = report.get("failed_hosts") or []
    expected = report.get("expected_hosts")
    if expected is None and not failed:
        return []
    lines = [
        "",
        "## Hosts",
        "",
        "%d hosts meant to be validated: %d passed, %d failed."
        % (len(expected or ()), len(report.get("passed_hosts") or ()), len(failed)),
    ]
    if failed:
        lines += ["", "| host | result | kind | reason |", "|---|---|---|---|"]
        for item in failed:
            lines.append(
                "| %s | FAILED | %s | %s |" % (_md(item["host"]), _md(item.get("failure_kind")), _md(item["reason"]))
            )
    return lines


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
    (
        "ibtune_host_passed",
        "1 for a host meant to be validated that passed, 0 for one that failed or was not measured.",
    ),
    ("ibtune_link_latency_us", "Measured typical latency of a pair in microseconds (latency tests)."),
    ("ibtune_link_latency_threshold_us", "Latency ceiling the pair was held to, in microseconds."),
    ("ibtune_validation_systemic", "1 when most pairs failed the same way (a common cause, no culprit named)."),
)


def to_prometheus(report):
    """Textfile-collector exposition; names and labels as docs/dev/CONTRACTS.md (ibtune.prom)."""
    series = dict((name, {}) for name, _h in PROM_HELP)
    series["ibtune_validation_timestamp_seconds"][""] = _sample(report["timestamp_seconds"])
    series["ibtune_validation_passed"][""] = _sample(report["passed"])
    series["ibtune_validation_systemic"][""] = _sample(bool(report.get("systemic")))
    failed_hosts = set(h["host"] for h in report.get("failed_hosts") or [])
    for host in sorted(set(report.get("expected_hosts") or ()) | failed_hosts | set(report.get("passed_hosts") or ())):
        series["ibtune_host_passed"][_labels((("host", host),))] = _sample(host not in failed_hosts)
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
        series["ibtune_link_passed"][labels] = _sample(res["passed"])
        if res.get("kind") == "latency":
            if res.get("t_typical_us") is not None:
                series["ibtune_link_latency_us"][labels] = _sample(res["t_typical_us"])
            if res.get("threshold_us") is not None:
                series["ibtune_link_latency_threshold_us"][labels] = _sample(res["threshold_us"])
            continue
        bw = res["bw_avg_gbps"]
        series["ibtune_link_bandwidth_gbps"][labels] = _sample(bw if bw is not None else 0.0)
        if res["threshold_gbps"] is not None:
            series["ibtune_link_threshold_gbps"][labels] = _sample(res["threshold_gbps"])
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


def render_all(report, history=None):
    """{file name: content} for the report files (REPORT_FILES); `history` is the baseline dict that
    report.html draws the per-link trends from (None: no trends)."""
    return {
        "report.json": to_json(report),
        "junit.xml": to_junit(report),
        "summary.md": to_markdown(report),
        "ibtune.prom": to_prometheus(report),
        "report.html": to_html(report, history),
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
