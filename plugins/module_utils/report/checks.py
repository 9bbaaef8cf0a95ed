# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Checks of other suites in the fabric report: an additive hook (issue 24, the multi-node NCCL verdict).

A check is {suite, name, kind, passed, message, hosts, figures, culprits: [{host, reason, failure_kind}]}
(nccl/verdict.py makes them). attach(report, checks) folds them into a built report: report["checks"], the
totals, each culprit a failed host, each other host of a passing check a passed host, the verdict and its
sentences. extend_files(files, report) adds them to the rendered files: a JUnit testsuite per suite, a section
of summary.md and of report.html (``#checks tr[data-suite][data-passed]``), and ``ibtune_check_passed`` /
``ibtune_check_ratio`` series in ibtune.prom. Called from report/module.py run(); nothing else in report/
changes. No Ansible imports.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import html
import xml.etree.ElementTree as ET

MESSAGE_ITEMS = 5


def normalize(checks):
    """The checks as dicts with every key, in the order given; raises ValueError naming a bad one."""
    out = []
    for index, check in enumerate(checks or []):
        if not isinstance(check, dict) or not check.get("name") or "passed" not in check:
            raise ValueError("checks[%d] needs at least name and passed, got %r" % (index, check))
        out.append(
            {
                "suite": str(check.get("suite") or "checks"),
                "name": str(check["name"]),
                "kind": str(check.get("kind") or "check"),
                "passed": bool(check["passed"]),
                "message": str(check.get("message") or ""),
                "hosts": [str(h) for h in check.get("hosts") or []],
                "figures": dict(check.get("figures") or {}),
                "culprits": [dict(c) for c in check.get("culprits") or [] if isinstance(c, dict) and c.get("host")],
            }
        )
    return out


def attach(report, checks):
    """The report with the checks folded in (the same dict, changed in place and returned)."""
    checks = normalize(checks)
    if not checks:
        return report
    report["checks"] = checks
    failed = [c for c in checks if not c["passed"]]
    totals = report.setdefault("totals", {})
    totals["checks"] = len(checks)
    totals["failed_checks"] = len(failed)
    _hosts(report, checks)
    checks_only = not report.get("results") and any(c["hosts"] for c in checks)
    if checks_only:
        # measured by the checks, not by pairs: the "no pair result" sentence does not apply
        report["problems"] = []
        report["passed"] = not (report.get("systemic") or report.get("failed_hosts"))
        report["message"] = ""
    report["passed"] = bool(report.get("passed")) and not failed
    suffix = ", %d of %d %s failed" % (len(failed), len(checks), _suites(checks))
    head = report.get("headline") or ""
    report["headline"] = ("PASSED: " if report["passed"] else "FAILED: ") + head.split(": ", 1)[-1] + suffix
    if report["passed"]:
        report["message"] = "Fabric validation passed: %s" % report["headline"][len("PASSED: ") :]
        return report
    items = [c["message"] for c in failed][:MESSAGE_ITEMS]
    more = len(failed) - len(items)
    text = "; ".join(items) + ("; and %d more (see summary.md)" % more if more > 0 else "")
    base = report.get("message") or ""
    if base.startswith("Fabric validation failed"):
        report["message"] = base + ("; " + text if text else "")
    else:
        report["message"] = "Fabric validation failed: " + (text or report["headline"])
    return report


def _suites(checks):
    names = sorted(set(c["suite"] for c in checks))
    return "/".join(names) + " checks"


def _hosts(report, checks):
    failed = dict((h["host"], h) for h in report.get("failed_hosts") or [])
    for check in checks:
        for culprit in check["culprits"]:
            if culprit["host"] not in failed:
                failed[culprit["host"]] = {
                    "host": culprit["host"],
                    "failure_kind": str(culprit.get("failure_kind") or check["kind"]),
                    "reason": str(culprit.get("reason") or check["message"]),
                }
    # PASSED means measured and passing: a host whose only checks failed for its partner's fault is neither
    # passed nor failed (the culprit is named; draining its healthy partner would be wrong)
    measured = set(h for c in checks if c["passed"] for h in c["hosts"])
    failing_only = set(h for c in checks if not c["passed"] for h in c["hosts"]) - measured
    passed = (set(report.get("passed_hosts") or []) | measured) - failing_only
    report["failed_hosts"] = sorted(failed.values(), key=lambda h: h["host"])
    report["passed_hosts"] = sorted(passed - set(failed))
    report["expected_hosts"] = sorted(set(report.get("expected_hosts") or []) | measured | set(failed))
    totals = report.setdefault("totals", {})
    totals["failed_hosts"] = len(report["failed_hosts"])
    totals["passed_hosts"] = len(report["passed_hosts"])
    totals["expected_hosts"] = len(report["expected_hosts"])


def extend_files(files, report):
    """The rendered files with the report's checks added (files unchanged when there are none)."""
    checks = report.get("checks") or []
    if not checks:
        return files
    out = dict(files)
    if "junit.xml" in out:
        out["junit.xml"] = _junit(out["junit.xml"], checks, report.get("timestamp") or "")
    if "summary.md" in out:
        out["summary.md"] = out["summary.md"].rstrip("\n") + "\n\n" + markdown(checks) + "\n"
    if "ibtune.prom" in out:
        out["ibtune.prom"] = out["ibtune.prom"] + prometheus(checks)
    if "report.html" in out:
        out["report.html"] = _html(out["report.html"], checks)
    return out


def _junit(text, checks, timestamp):
    body = text.split("?>", 1)[1] if text.startswith("<?xml") else text
    root = ET.fromstring(body.strip())
    for suite_name in sorted(set(c["suite"] for c in checks)):
        mine = [c for c in checks if c["suite"] == suite_name]
        suite = ET.SubElement(root, "testsuite", name=suite_name, timestamp=timestamp)
        for check in mine:
            case = ET.SubElement(
                suite, "testcase", classname="ibtune.fabric.%s.%s" % (suite_name, check["kind"]), name=check["name"]
            )
            case.set("time", "0")
            if not check["passed"]:
                node = ET.SubElement(case, "failure", message=check["message"], type=check["kind"])
                node.text = check["message"]
            ET.SubElement(case, "system-out").text = check["message"]
        failures = sum(1 for c in mine if not c["passed"])
        for key, value in (("tests", len(mine)), ("failures", failures), ("errors", 0), ("time", 0)):
            suite.set(key, str(value))
        root.set("tests", str(int(root.get("tests") or 0) + len(mine)))
        root.set("failures", str(int(root.get("failures") or 0) + failures))
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def _md(value):
    return str(value).replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def markdown(checks):
    lines = []
    for suite in sorted(set(c["suite"] for c in checks)):
        mine = [c for c in checks if c["suite"] == suite]
        failed = sum(1 for c in mine if not c["passed"])
        lines += ["## %s checks: %d of %d failed" % (suite.upper(), failed, len(mine)), ""]
        lines += ["| check | result | hosts | what |", "| --- | --- | --- | --- |"]
        for check in sorted(mine, key=lambda c: (c["passed"], c["name"])):
            lines.append(
                "| %s | %s | %s | %s |"
                % (
                    _md(check["name"]),
                    "passed" if check["passed"] else "**FAILED**",
                    _md(", ".join(check["hosts"])),
                    _md(check["message"]),
                )
            )
        lines.append("")
    return "\n".join(lines).rstrip("\n")


def _label(value):
    return str(value).replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def prometheus(checks):
    """ibtune_check_passed{suite,name,kind} (1/0) and ibtune_check_ratio{suite,name} (a curve gate's ratio)."""
    out = [
        "# HELP ibtune_check_passed 1 for a check of another suite (e.g. NCCL across nodes) that passed, 0 if not.",
        "# TYPE ibtune_check_passed gauge",
    ]
    for check in checks:
        out.append(
            'ibtune_check_passed{suite="%s",name="%s",kind="%s"} %d'
            % (_label(check["suite"]), _label(check["name"]), _label(check["kind"]), 1 if check["passed"] else 0)
        )
    ratios = [c for c in checks if isinstance(c["figures"].get("ratio"), (int, float))]
    if ratios:
        out += [
            "# HELP ibtune_check_ratio A curve gate's measured area over its reference area.",
            "# TYPE ibtune_check_ratio gauge",
        ]
        for check in ratios:
            out.append(
                'ibtune_check_ratio{suite="%s",name="%s"} %s'
                % (_label(check["suite"]), _label(check["name"]), repr(float(check["figures"]["ratio"])))
            )
    return "\n".join(out) + "\n"


def _html(text, checks):
    rows = []
    for check in sorted(checks, key=lambda c: (c["passed"], c["suite"], c["name"])):
        rows.append(
            '<tr data-suite="%s" data-kind="%s" data-passed="%s"><td>%s</td><td>%s</td><td>%s</td><td>%s</td></tr>'
            % (
                html.escape(check["suite"]),
                html.escape(check["kind"]),
                "true" if check["passed"] else "false",
                html.escape(check["name"]),
                "passed" if check["passed"] else "<strong>FAILED</strong>",
                html.escape(", ".join(check["hosts"])),
                html.escape(check["message"]),
            )
        )
    section = (
        '<h2>Checks</h2><table id="checks"><thead><tr><th>check</th><th>result</th><th>hosts</th><th>what</th></tr>'
        "</thead><tbody>%s</tbody></table>" % "".join(rows)
    )
    marker = "<footer>"
    if marker in text:
        return text.replace(marker, section + marker, 1)
    return text + section
