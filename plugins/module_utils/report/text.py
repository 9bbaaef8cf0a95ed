# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one-sentence texts of the report's culprits, written once: the verdict (per-host reasons), the failure
message and every renderer (summary.md, junit.xml, report.html) call these, so a culprit reads the same
everywhere."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.ibtune.fabric.plugins.module_utils.validate.results import figures_text, fmt_gbps


def violation_text(v):
    allowed = v.get("allowed")
    text = "%s %s port %s %s +%d" % (v["host"], v["device"], v["port"], v["counter"], v["delta"])
    if allowed not in (None, 0):
        text += " (allowed %s)" % allowed
    return text


def node_text(node):
    text = "%s node %s" % ("bad" if node["verdict"] == "bad_node" else "suspect", node["host"])
    details = []
    if node["failed_with"]:
        names = node["failed_with"]
        listed = ", ".join(names[:5]) + (" and %d more" % (len(names) - 5) if len(names) > 5 else "")
        details.append("failed with %s" % listed)
    failed_retests = [r for r in node["retest"] if not r["passed"]]
    if failed_retests:
        r = failed_retests[0]
        details.append("failed again with known-good %s: %s" % (r["partner"], figures_text(r) or "failed"))
    if details:
        text += " (%s)" % "; ".join(details)
    return text


def link_text(link):
    word = "bad link" if link["verdict"] == "bad_link" else "suspect link"
    return "%s %s (%s)" % (word, link["link"], figures_text(link) or "failed")


def regression_text(reg):
    return "regression %s %s (%s < %d%% of baseline %s)" % (
        reg["link"],
        reg["test"],
        fmt_gbps(reg["bw_avg_gbps"]),
        round(100 * (1 - reg["tolerance"])),
        fmt_gbps(reg["baseline_gbps"]),
    )


def cable_text(cable):
    """ "cable leaf-03 p33 <-> spine-02 p5 (shared by the 2 failing pairs, by no passing one)"."""
    n, total = cable["failing"], cable.get("failing_total", cable["failing"])
    if n == total:
        share = "shared by the %d failing pair%s" % (n, "" if n == 1 else "s") if n > 1 else "on the failing pair"
    else:
        share = "shared by %d of the %d failing pairs" % (n, total)
    text = "cable %s <-> %s (%s, by no passing one)" % (cable["a"], cable["b"], share)
    if cable.get("ambiguous"):
        text += " [one of %d cables on exactly these paths]" % cable["ambiguous"]
    return text


def switch_violation_text(v):
    return v.get("msg") or "%s port %s <-> %s: %s +%s" % (
        v.get("switch"), v.get("port"), v.get("peer"), v.get("counter_name") or v.get("counter"), v.get("delta"),
    )  # fmt: skip
