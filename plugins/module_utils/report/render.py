# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The report files: report.json, junit.xml, summary.md, ibtune.prom and report.html (report_html), and
their atomic write.

The culprits' sentences are report/text.py's.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import itertools
import json
import operator
import os
import xml.etree.ElementTree as ET

from ansible_collections.ibtune.fabric.plugins.module_utils.common import files as _files
from ansible_collections.ibtune.fabric.plugins.module_utils.report import aggregate as _aggregate
from ansible_collections.ibtune.fabric.plugins.module_utils.report.html import to_html
from ansible_collections.ibtune.fabric.plugins.module_utils.report.text import (
    link_text,
    node_text,
    saturated_text,
    violation_text,
)
from ansible_collections.ibtune.fabric.plugins.module_utils.report import phy as _phy
from ansible_collections.ibtune.fabric.plugins.module_utils.validate import resultfile
from ansible_collections.ibtune.fabric.plugins.module_utils.validate.table import (
    ResultTable,
    columns_of,
    failed_rows,
    row_reader,
)
from ansible_collections.ibtune.fabric.plugins.module_utils.validate.results import (
    figures_text,
    median_of,
    pair_label,
    endpoint,
    fmt_gbps,
    fmt_us,
)

REPORT_FILES = ("report.json", "results.json", "junit.xml", "summary.md", "ibtune.prom", "report.html")
RESULTS_FILE = "results.json"  # every pair result (validate/resultfile.py's form), whatever report.json lists


def report_files():
    """The report file names, sorted (the order write_atomic returns their paths in)."""
    return sorted(REPORT_FILES)


# one encoder for every line: json.dumps(value, sort_keys=...) builds a new JSONEncoder per call, a cost paid once per
# pair result (millions at 1024 hosts x 8 rails); the text is the same
_compact = json.JSONEncoder(sort_keys=True, separators=(", ", ": ")).encode


def to_json(data):
    """JSON with one line per top-level key and per item of a top-level list or dict (one line per
    pair result, per baseline link): readable and diff-friendly, and json's C encoder stays in use
    (indent= would switch to the pure-Python one, 4x slower on thousands of results)."""
    return "".join(json_pieces(data))


JSON_BATCH = 2048  # items of a top-level list or dict per piece of json_pieces


def _batched(lines):
    """ ",\n"-joined ``lines`` (a generator) in pieces of JSON_BATCH lines."""
    for number, batch in enumerate(_files.batches(lines, JSON_BATCH)):
        yield ("" if number == 0 else ",\n") + ",\n".join(batch)


def json_pieces(data):
    """to_json's text in pieces, a top-level list or dict a few thousand lines at a time: the module writes
    report.json from them (common/files.write_chunks), so a report of millions of pair results never exists as
    one string (at 1024 hosts x 8 rails all_pairs, 2.4 GB of text and the list of its lines)."""
    if not data:
        yield "{}\n"
        return
    yield "{\n"
    keys = sorted(data)
    for index, key in enumerate(keys):
        value = data[key]
        if isinstance(value, ResultTable) and not value:
            value = []  # written as the empty list it reads as
        comma = "," if index < len(keys) - 1 else ""
        if index:
            yield "\n"
        if isinstance(value, (list, ResultTable)) and value:
            yield "  %s: [\n" % _compact(key)
            yield from _batched("    " + _compact(item) for item in value)
            yield "\n  ]%s" % comma
        elif isinstance(value, dict) and value:
            yield "  %s: {\n" % _compact(key)
            yield from _batched("    %s: %s" % (_compact(k), _compact(value[k])) for k in sorted(value))
            yield "\n  }%s" % comma
        else:
            yield "  %s: %s%s" % (_compact(key), _compact(value), comma)
    yield "\n}\n"


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


def _suite(root, name, report):
    return ET.SubElement(root, "testsuite", name=name, timestamp=report["timestamp"])


def _close_suite(suite, tests, failures, skipped=None, time_s="0"):
    suite.set("tests", str(tests))
    suite.set("failures", str(failures))
    suite.set("errors", "0")
    if skipped is not None:
        suite.set("skipped", str(skipped))
    suite.set("time", time_s)


def _failing_case(suite, classname, name, message, kind, text):
    case = ET.SubElement(suite, "testcase", classname=classname, name=name)
    case.set("time", "0")
    ET.SubElement(case, "failure", message=message, type=kind).text = text


def _fabric_cases(report):
    """(classname, name, message, type, text) of every failing fabric testcase: suspect cables, switch faults,
    fabric check errors, switch ports whose counters rose."""
    cases = []
    for cable in report.get("suspect_cables") or []:
        name = "cable %s <-> %s" % (cable["a"], cable["b"])
        cases.append(("ibtune.fabric.cables", name, cable["text"], "suspect_cable", cable.get("reason")))
    for fault in report.get("switch_faults") or []:
        cases.append(
            (
                "ibtune.fabric.switches",
                "switch fault %s" % switch_subject(fault),
                fault["text"],
                "switch_fault",
                "%s scope=%s rail=%s" % (fault["text"], fault["scope"], fault.get("rail")),
            )
        )
    for f in report.get("topology_findings") or []:
        if f.get("severity") == "error":
            name = "%s %s port %s" % (f.get("check"), f.get("switch"), f.get("port"))
            cases.append(("ibtune.fabric.topology", name, f["msg"], f.get("check") or "topology", f["msg"]))
    for v in report.get("switch_counter_violations") or []:
        name = "%s port %s counters" % (v.get("switch"), v.get("port"))
        cases.append(("ibtune.fabric.switch_counters", name, v.get("msg") or "", "switch_counters", v.get("msg")))
    return cases  # fmt: skip


def switch_subject(fault):
    """A switch fault's subject for names and labels: its switches, else the hosts it groups."""
    if fault.get("switches"):
        return "+".join(fault["switches"])
    return "above %s" % ",".join((fault.get("hosts") or [])[:8])


def _fabric_suite(root, report):
    """Suite `fabric` (with a topology or a switch fault): a failing testcase per suspect cable, per switch fault,
    per fabric check error and per switch port whose counters rose; one passing testcase when there is none.
    Returns (tests, failures)."""
    if "suspect_cables" not in report and "switch_counter_violations" not in report and not report.get("switch_faults"):
        return 0, 0
    suite = _suite(root, "fabric", report)
    cases = _fabric_cases(report)
    for case in cases:
        _failing_case(suite, *case)
    tests = len(cases)
    if not cases:
        ET.SubElement(suite, "testcase", classname="ibtune.fabric.cables", name="no suspect cable", time="0")
        tests = 1
    _close_suite(suite, tests, len(cases))
    return tests, len(cases)


def _verdict_suite(root, report):
    """Suite `verdict` (only when there is something to say): a systemic cause, too few hosts, refused results."""
    items = ([report["systemic"]] if report.get("systemic") else []) + list(report.get("problems") or [])
    if not items:
        return 0, 0
    suite = _suite(root, "verdict", report)
    for text in items:
        kind = "systemic" if text == report.get("systemic") else "too_few_hosts"
        if text.split(" ", 2)[1:2] in (["result"], ["results"]):
            kind = "refused"
        _failing_case(suite, "ibtune.fabric.verdict", "fabric verdict", text, kind, text)
    _close_suite(suite, len(items), len(items))
    return len(items), len(items)


def _host_rail_cases(pairs, report, host_rails=None):
    """Above aggregate.AGGREGATE_ABOVE pair results: one testcase per host, device and test, failing when one of
    its pairs failed (the first of them named; report.json lists every pair)."""
    failures = 0
    entries = _aggregate.by_host_rail(report["results"]) if host_rails is None else host_rails
    for entry in entries:
        name = "%s %s %s (%d pairs)" % (entry["host"], entry["device"], entry["test"], entry["pairs"])
        case = ET.SubElement(pairs, "testcase", classname="ibtune.fabric.pairs.%s" % entry["host"], name=name)
        if entry["failing"]:
            failures += 1
            named = entry["failing"][: _aggregate.FAILED_LISTED]
            text = "\n".join("%s: %s" % (pair_label(r), r.get("failure")) for r in named)
            more = entry["failed"] - len(named)
            node = ET.SubElement(case, "failure", message="%d of %d pairs failed" % (entry["failed"], entry["pairs"]),
                                 type=named[0].get("failure_kind") or "failed")  # fmt: skip
            node.text = text + ("\n... and %d more failing pairs in report.json" % more if more > 0 else "")
    return len(entries), failures


def _pairs_suite(root, report, host_rails=None):
    pairs = _suite(root, "pairs", report)
    if _aggregate.aggregated(report):
        tests, failures = _host_rail_cases(pairs, report, host_rails)
        total_time = sum(filter(None, columns_of(report["results"], "duration_s")[0]))
        _close_suite(pairs, tests, failures, time_s="%.3f" % total_time)
        return tests, failures, total_time
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
    _close_suite(pairs, len(report["results"]), failures, time_s="%.3f" % total_time)
    return len(report["results"]), failures, total_time


def _violation_line(v):
    return "%s %s port %s %s before=%s after=%s delta=%s allowed=%s category=%s" % (
        v["host"], v["device"], v["port"], v["counter"], v.get("before"), v.get("after"), v["delta"],
        v.get("allowed"), v["category"],
    )  # fmt: skip


def _by_host(items):
    out = {}
    for item in items:
        out.setdefault(item["host"], []).append(item)
    return out


def _counters_case(suite, host, violations, stuck):
    """One host's counters testcase: failed for a violation or a gated saturated counter, skipped for an ungated
    saturated one. Returns 'failure', 'skipped' or None."""
    case = ET.SubElement(suite, "testcase", classname="ibtune.fabric.counters", name="%s counters" % host)
    case.set("time", "0")
    gated = [s for s in stuck if s.get("gated")]
    if violations or gated:
        lines = [violation_text(v) for v in violations] + [saturated_text(s) for s in gated]
        node = ET.SubElement(case, "failure", message="; ".join(lines), type="counters" if violations else "saturated")
        node.text = "\n".join([_violation_line(v) for v in violations] + [saturated_text(s) for s in gated])
        return "failure"
    if stuck:
        ET.SubElement(case, "skipped", message="; ".join(saturated_text(s) for s in stuck))
        return "skipped"
    return None


def _counters_suite(root, report):
    suite = _suite(root, "counters", report)
    by_host = _by_host(report["counter_violations"])
    stuck_by_host = _by_host(report["saturated"])
    hosts = set(by_host) | set(stuck_by_host)
    servers, clients = columns_of(report["results"], "server", "client")
    hosts.update(servers)
    hosts.update(clients)
    outcomes = [_counters_case(suite, h, by_host.get(h, []), stuck_by_host.get(h, [])) for h in sorted(hosts)]
    failures = outcomes.count("failure")
    _close_suite(suite, len(hosts), failures, skipped=outcomes.count("skipped"))
    return len(hosts), failures


def to_junit(report, host_rails=None):
    """JUnit XML: suite `hosts` (a testcase per expected host), suite `verdict` (a systemic cause, too few hosts or
    refused results), suite `fabric` (cables, switch faults, fabric checks, switch counters), suite `pairs` (a
    testcase per pair result, the failure `type` its failure_kind), suite `counters` (one per node).
    host_rails: aggregate.by_host_rail of the report's results when the caller already has it."""
    root = ET.Element("testsuites", name="ibtune.fabric validation")
    tests, failures = 0, 0
    for suite in (_hosts_suite, _verdict_suite, _fabric_suite, _phy.junit_suite):
        t, f = suite(root, report)
        tests, failures = tests + t, failures + f
    pair_tests, pair_failures, total_time = _pairs_suite(root, report, host_rails)
    counter_tests, counter_failures = _counters_suite(root, report)
    root.set("tests", str(tests + pair_tests + counter_tests))
    root.set("failures", str(failures + pair_failures + counter_failures))
    root.set("errors", "0")
    root.set("time", "%.3f" % total_time)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def _md(value):
    text = "" if value is None else str(value)
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def _md_table(header, align, rows):
    lines = ["", header, align]
    lines += ["| %s |" % " | ".join(row) for row in rows]
    return lines


def _md_verdict(report):
    lines = ["# Fabric validation: %s" % ("PASSED" if report["passed"] else "FAILED"), ""]
    lines += ["**%s**" % report["headline"], "", "Run `%s` at %s." % (report["run_id"], report["timestamp"])]
    if not report["passed"]:
        lines += ["", "> %s" % _md(report["message"])]
    if report.get("systemic"):
        lines += ["", "## Systemic failure", "", _md(report["systemic"]), "",
                  "Most pairs failed the same way: no node or link is named, fix the common cause first."]  # fmt: skip
    for problem in report.get("problems") or []:
        lines += ["", "**%s**" % _md(problem)]
    return lines


def _md_list(title, items):
    return ["", "## %s" % title, ""] + ["- %s" % item for item in items] if items else []


def _md_fabric(report):
    lines = _md_list("Switch faults", [_md(f["text"]) for f in report.get("switch_faults") or []])
    lines += _md_list(
        "Suspect cables",
        ["%s: %s" % (_md(c["text"]), _md(c.get("reason"))) for c in report.get("suspect_cables") or []],
    )
    lines += _md_list(
        "Fabric checks",
        ["%s: %s" % (_md(f.get("severity")), _md(f["msg"])) for f in report.get("topology_findings") or []],
    )
    lines += _phy.markdown_lines(report, _md)
    lines += _md_list(
        "Switch counter violations", [_md(v.get("msg")) for v in report.get("switch_counter_violations") or []]
    )
    if report.get("isl_traffic"):
        lines += ["", "## Inter-switch links", "", _md(report["isl_traffic"]["text"])]
    return lines


def _md_suspects(report):
    if not (report["suspect_nodes"] or report["suspect_links"]):
        return []
    lines = ["", "## Suspects", ""]
    for node in report["suspect_nodes"]:
        devices = " on %s" % ", ".join(node["devices"]) if node["devices"] else ""
        lines.append("- %s%s" % (_md(node_text(node)), _md(devices)))
    lines += ["- %s" % _md(link_text(link)) for link in report["suspect_links"]]
    good = report["known_good"]
    if good:
        lines += ["", "Known-good hosts (every pair passed, apart from pairs with a suspect node): %d%s."
                  % (len(good), "" if len(good) > 20 else " (%s)" % ", ".join(good))]  # fmt: skip
    return lines


def _md_failed_row(res):
    latency = res.get("kind") == "latency"
    value = res.get("t_typical_us") if latency else res["bw_avg_gbps"]
    limit = res.get("threshold_us") if latency else res["threshold_gbps"]
    unit = " us" if latency else ""
    return [
        str(res["pass"]), str(res["round"]), _md(endpoint(res["server"], res["server_device"])),
        _md(endpoint(res["client"], res["client_device"])), _md(res["test"]),
        (_num(value) + unit) if value is not None else "-", (_num(limit) + unit) if limit is not None else "-",
        _md(res.get("failure_kind")), _md(res["failure"]),
    ]  # fmt: skip


def _md_tables(report):
    lines = []
    if report["failed_pairs"]:
        lines += ["", "## Failed pairs"] + _md_table(
            "| pass | round | server | client | test | measured | threshold | kind | failure |",
            "|---:|---:|---|---|---|---:|---:|---|---|",
            [_md_failed_row(r) for r in report["failed_pairs"]],
        )
    if report["regressions"]:
        lines += ["", "## Regressions against the baseline"] + _md_table(
            "| link | test | Gb/s | baseline (median) | floor | drop |",
            "|---|---|---:|---:|---:|---:|",
            [[_md(g["link"]), _md(g["test"]), _num(g["bw_avg_gbps"]), _num(g["baseline_gbps"]), _num(g["floor_gbps"]),
              _num(g["drop_pct"]) + "%"] for g in report["regressions"]],
        )  # fmt: skip
    if report["counter_violations"]:
        keys = ("host", "device", "port", "counter", "category", "before", "after", "delta", "allowed")
        lines += ["", "## Counter violations"] + _md_table(
            "| host | device | port | counter | category | before | after | delta | allowed |",
            "|---|---|---:|---|---|---:|---:|---:|---:|",
            [[_md(v.get(k)) for k in keys] for v in report["counter_violations"]],
        )
    if report["saturated"]:
        lines += ["", "## Saturated counters (stuck at their maximum: they cannot show new errors)", ""]
        lines += ["- %s" % _md(saturated_text(s)) for s in report["saturated"]]
    return lines


def _md_figures(report):
    lines = []
    bws, typicals, bases_of = columns_of(report["results"], "bw_avg_gbps", "t_typical_us", "latency_basis")
    measured = list(itertools.compress(bws, map(operator.is_not, bws, itertools.repeat(None))))  # in C
    if measured:
        text = "%d measurements: min %s, median %s, max %s." % (
            len(measured), fmt_gbps(min(measured)), fmt_gbps(median_of(measured)), fmt_gbps(max(measured))
        )  # fmt: skip
        lines += ["", "## Bandwidth", "", text]
    typical = [v for v in typicals if v is not None]
    if typical:
        bases = {}
        for value, basis in zip(typicals, bases_of):
            if value is not None:
                basis = basis or "t_typical"
                bases[basis] = bases.get(basis, 0) + 1
        gated = ", ".join("%s %d" % (LATENCY_BASIS_WORDS.get(b, b), n) for b, n in sorted(bases.items()))
        lines += ["", "## Latency", "", "%d measurements (gated on: %s): min %s, median %s, max %s." % (
            len(typical), gated, fmt_us(min(typical)), fmt_us(median_of(typical)), fmt_us(max(typical)))]  # fmt: skip
    return lines


LATENCY_BASIS_WORDS = {"t_typical": "typical", "t_avg": "average (no typical printed)", "latency_us": "latency"}


def to_markdown(report):
    """summary.md: the verdict, the hosts, the fabric's faults, the suspects, the tables and the figures."""
    lines = _md_verdict(report)
    lines += _markdown_hosts(report)
    lines += _md_fabric(report)
    lines += _md_suspects(report)
    lines += _md_tables(report)
    lines += _md_figures(report)
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
    ("ibtune_suspect_switch", "1 for a switch fault above the hosts (a leaf's uplinks, a spine, a layer)."),
    # above aggregate.AGGREGATE_ABOVE pair results: per host and rail, and the per-pair series of failures only
    ("ibtune_validation_pairs_aggregated", "1 when the pair series are per host and rail (only failures per pair)."),
    ("ibtune_host_rail_pairs", "Pair results of a host's device in the validation."),
    ("ibtune_host_rail_failed_pairs", "Failed pair results of a host's device."),
    ("ibtune_host_rail_bandwidth_min_gbps", "Lowest bandwidth a host's device measured with any partner, in Gb/s."),
    ("ibtune_host_rail_bandwidth_median_gbps", "Median bandwidth of a host's device over its partners, in Gb/s."),
    ("ibtune_host_rail_latency_max_us", "Highest typical latency of a host's device with any partner, in us."),
    ("ibtune_host_rail_latency_median_us", "Median typical latency of a host's device over its partners, in us."),
)


def _link_labels(res):
    return _labels(
        (
            ("server", res["server"]),
            ("server_device", res["server_device"]),
            ("client", res["client"]),
            ("client_device", res["client_device"]),
            ("test", res["test"]),
        )
    )


def _prom_result(series, res):
    labels = _link_labels(res)
    series["ibtune_link_passed"][labels] = _sample(res["passed"])
    if res.get("kind") == "latency":
        if res.get("t_typical_us") is not None:
            series["ibtune_link_latency_us"][labels] = _sample(res["t_typical_us"])
        if res.get("threshold_us") is not None:
            series["ibtune_link_latency_threshold_us"][labels] = _sample(res["threshold_us"])
        return
    bw = res["bw_avg_gbps"]
    series["ibtune_link_bandwidth_gbps"][labels] = _sample(bw if bw is not None else 0.0)
    if res["threshold_gbps"] is not None:
        series["ibtune_link_threshold_gbps"][labels] = _sample(res["threshold_gbps"])
    if res.get("baseline_gbps") is not None:
        series["ibtune_link_baseline_gbps"][labels] = _sample(res["baseline_gbps"])
        series["ibtune_link_regressed"][labels] = _sample(bool(res.get("regressed")))


def _prom_culprits(series, report):
    for v in report["counter_violations"]:
        labels = _labels(
            (("host", v["host"]), ("device", v["device"]), ("port", v["port"]), ("counter", v["counter"]),
             ("category", v["category"]))
        )  # fmt: skip
        series["ibtune_counter_violations"][labels] = _sample(v["delta"])
    for node in report["suspect_nodes"]:
        series["ibtune_suspect_node"][_labels((("host", node["host"]),))] = "1"
    for link in report["suspect_links"]:
        labels = _labels(
            (("server", link["server"]), ("server_device", link["server_device"]), ("client", link["client"]),
             ("client_device", link["client_device"]))
        )  # fmt: skip
        series["ibtune_suspect_link"][labels] = "1"
    for fault in report.get("switch_faults") or []:
        labels = _labels((("switch", switch_subject(fault)), ("scope", fault["scope"]), ("rail", fault.get("rail"))))
        series["ibtune_suspect_switch"][labels] = "1"


def _prom_host_rails(series, results, host_rails=None):
    series["ibtune_validation_pairs_aggregated"][""] = "1"
    for entry in _aggregate.by_host_rail(results) if host_rails is None else host_rails:
        labels = _labels((("host", entry["host"]), ("device", entry["device"]), ("test", entry["test"])))
        series["ibtune_host_rail_pairs"][labels] = _sample(entry["pairs"])
        series["ibtune_host_rail_failed_pairs"][labels] = _sample(entry["failed"])
        prefix = (
            "ibtune_host_rail_latency_%s_us" if entry["kind"] == "latency" else "ibtune_host_rail_bandwidth_%s_gbps"
        )
        if entry["worst"] is not None:
            series[prefix % ("max" if entry["kind"] == "latency" else "min")][labels] = _sample(entry["worst"])
            series[prefix % "median"][labels] = _sample(entry["median"])


def to_prometheus(report, host_rails=None):
    """Textfile-collector exposition; names and labels as docs/dev/CONTRACTS.md (ibtune.prom). host_rails: as
    to_junit's."""
    series = dict((name, {}) for name, _h in PROM_HELP)
    series["ibtune_validation_timestamp_seconds"][""] = _sample(report["timestamp_seconds"])
    series["ibtune_validation_passed"][""] = _sample(report["passed"])
    series["ibtune_validation_systemic"][""] = _sample(bool(report.get("systemic")))
    failed_hosts = set(h["host"] for h in report.get("failed_hosts") or [])
    for host in sorted(set(report.get("expected_hosts") or ()) | failed_hosts | set(report.get("passed_hosts") or ())):
        series["ibtune_host_passed"][_labels((("host", host),))] = _sample(host not in failed_hosts)
    # one sample per label set: a later pass of the same link and test replaces an earlier one
    results = report["results"]
    if _aggregate.aggregated(report):
        _prom_host_rails(series, results, host_rails)
        passed, regressed = columns_of(results, "passed", "regressed")
        listed = map(operator.or_, map(operator.not_, passed), map(operator.truth, regressed))  # in C: 4.2 M
        results = list(map(row_reader(results), itertools.compress(range(len(passed)), listed)))
    for res in sorted(results, key=lambda r: (r["pass"], r["round"])):
        _prom_result(series, res)
    _prom_culprits(series, report)
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
    files = render_files(report, history)
    for name in ("report.json", RESULTS_FILE):
        files[name] = "".join(files[name])
    return files


def report_document(report):
    """What report.json holds: the report, with every pair result up to aggregate.AGGREGATE_ABOVE and above only
    those that did not pass (a pass's 4.2 M results were 2.4 GB of report.json, a file slurm_remediate and a
    person must read whole). RESULTS_FILE always has them all; ``results_complete`` says which report.json has."""
    results = report["results"]
    complete = not _aggregate.aggregated(report)
    doc = dict(report, results_file=RESULTS_FILE, results_complete=complete)
    if not complete:
        doc["results"] = failed_rows(results)
    return doc


def render_files(report, history=None):
    """render_all's files, report.json and results.json as generators of their pieces (json_pieces,
    resultfile.results_chunks) that write_atomic writes as they come (made only when written: nothing in check
    mode)."""
    host_rails = _aggregate.by_host_rail(report["results"])  # once, for the three outputs that carry it
    return {
        "report.json": json_pieces(report_document(report)),
        RESULTS_FILE: resultfile.results_chunks(report["results"], compact=_aggregate.aggregated(report)),
        "junit.xml": to_junit(report, host_rails),
        "summary.md": to_markdown(report),
        "ibtune.prom": to_prometheus(report, host_rails),
        "report.html": to_html(report, history, host_rails),
    }


def write_atomic(dest_dir, files, mode=0o644):
    """Write {name: text or an iterable of its pieces} into dest_dir, each atomically and fsynced (common/files.py),
    so a reader (node_exporter, CI) never sees a half-written file. Returns the paths."""
    if not os.path.isdir(dest_dir):
        os.makedirs(dest_dir)
    paths = []
    for name in sorted(files):
        if os.sep in name or name in ("", ".", ".."):
            raise ValueError("report file name %r must be a plain file name" % name)
        text = files[name]
        pieces = (text,) if isinstance(text, str) else text
        paths.append(_files.write_chunks(os.path.join(dest_dir, name), pieces, mode, dir_mode=None, fsync=True))
    return paths
