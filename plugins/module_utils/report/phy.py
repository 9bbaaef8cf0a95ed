# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The PHY findings in the report and its files (issue 22): an additive hook, one call from each of build_report,
to_junit, to_markdown and to_html, like topology_findings.

report.json: ``phy_findings`` (errors first; each {check, severity, cable, serials, end, peer, msg, ...},
phy/findings.py), ``phy`` {ports, unread, cleared, window_s} and totals ``phy_errors``/``phy_warnings``, only
when fabric_report got a ``phy`` verdict (the fabric_validate PHY stage). An error fails the report and its msg
is in the failure message; warnings (pre-failure signals: a lane's raw BER far above the fabric's, a module
heating, a cable getting worse against its own history) are listed. junit.xml: suite ``phy``, a testcase per
cable (a failure for an error, its warnings in system-out), one passing testcase when nothing was found.
summary.md: "## Physical layer". report.html: ``#phy-findings li`` (``data-severity``, ``data-cable``).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import xml.etree.ElementTree as ET

from ansible_collections.ibtune.fabric.plugins.module_utils.phy import findings as _findings

apply = _findings.apply
error_messages = _findings.error_messages


def headline_part(totals):
    """', 1 PHY error, 2 PHY warnings' for the headline ('' without a PHY stage)."""
    if "phy_errors" not in totals:
        return ""
    parts = []
    for key, word in (("phy_errors", "PHY error"), ("phy_warnings", "PHY warning")):
        n = totals[key]
        parts.append("%d %s%s" % (n, word, "" if n == 1 else "s"))
    return ", " + ", ".join(parts)


def _by_cable(found):
    cables = {}
    for f in found:
        cables.setdefault(f.get("cable") or f.get("end") or "?", []).append(f)
    return cables


def junit_suite(root, report):
    """Suite ``phy`` (only with a PHY stage). Returns (tests, failures)."""
    if "phy_findings" not in report:
        return 0, 0
    suite = ET.SubElement(root, "testsuite", name="phy", timestamp=report["timestamp"])
    failures = 0
    cables = _by_cable(report["phy_findings"])
    for cable, found in sorted(cables.items()):
        case = ET.SubElement(suite, "testcase", classname="ibtune.fabric.phy", name="cable %s" % cable, time="0")
        errors = [f for f in found if f.get("severity") == "error"]
        if errors:
            failures += 1
            node = ET.SubElement(case, "failure", message=errors[0]["msg"], type=errors[0].get("check") or "phy")
            node.text = "\n".join(f["msg"] for f in errors)
        warnings = [f for f in found if f.get("severity") != "error"]
        if warnings:
            ET.SubElement(case, "system-out").text = "\n".join("warning: %s" % f["msg"] for f in warnings)
    tests = len(cables)
    if not cables:
        summary = report.get("phy") or {}
        ET.SubElement(
            suite, "testcase", classname="ibtune.fabric.phy", name="%d ports" % summary.get("ports", 0), time="0"
        )
        tests = 1
    for key, value in (("tests", tests), ("failures", failures), ("errors", 0)):
        suite.set(key, str(value))
    suite.set("time", "0")
    return tests, failures


def markdown_lines(report, md):
    """summary.md's "## Physical layer" section ([] without a PHY stage); ``md`` escapes a table-safe text."""
    if "phy_findings" not in report:
        return []
    summary = report.get("phy") or {}
    window = summary.get("window_s")
    lines = ["", "## Physical layer", ""]
    lines.append(
        "%d ports read%s%s." % (
            summary.get("ports", 0),
            ", over %.0f s" % window if window is not None else "",
            "; the counters were cleared before the passes (clear: true)" if summary.get("cleared") else "",
        )
    )  # fmt: skip
    if not report["phy_findings"]:
        lines += ["", "No pre-failure signal: BER, FEC histogram, module health and flaps all within their gates."]
    for f in report["phy_findings"]:
        lines.append("- %s: %s" % (md(f.get("severity")), md(f["msg"])))
    return lines


def html_section(report, escape):
    """report.html's "Physical layer" section ('' without a PHY stage); ``escape`` is the page's HTML escape."""
    if "phy_findings" not in report:
        return ""
    found = report["phy_findings"]
    if not found:
        return '<h2>Physical layer</h2><p class="muted" id="phy-findings">No pre-failure signal on %d ports.</p>' % (
            (report.get("phy") or {}).get("ports", 0)
        )
    out = ['<h2>Physical layer</h2><ul id="phy-findings">']
    for f in found:
        out.append(
            '<li data-severity="%s" data-cable="%s"><b>%s</b> %s</li>'
            % (escape(f.get("severity")), escape(f.get("cable")), escape(f.get("severity")), escape(f["msg"]))
        )
    out.append("</ul>")
    return "".join(out)
