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


NODE_WORDS = {"bad_node": "bad node", "intermittent": "intermittent node", "suspect": "suspect node"}


def node_text(node):
    text = "%s %s" % (NODE_WORDS.get(node["verdict"], "suspect node"), node["host"])
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


def saturated_text(s):
    """ "node4 mlx5_0 port 1 symbol_error saturated at 65535 (16 bits): ..." with the fix: a gated counter (one
    whose increase fails the port) at its maximum fails the port, an ungated one is a note."""
    where = " ".join(str(x) for x in (s.get("host"), s.get("device"), "port", s.get("port")) if x not in (None, ""))
    text = "%s %s saturated at %s (%s bits)" % (where, s.get("counter"), s.get("value"), s.get("width"))
    if s.get("gated"):
        return text + (
            ": it cannot show new errors, so the port cannot pass; reset it (perfquery -R) or read the extended"
            " counters (perfquery -x)"
        )
    return text + ": cannot show increases, clear it (perfquery -R) to watch it again"


def _group_names(fault):
    """The switches (or, inferred, the hosts) a fault names."""
    if fault.get("switches"):
        return " and ".join(fault["switches"])
    groups = fault.get("groups") or {}
    return " and ".join("hosts %s" % ", ".join(members[:6]) for members in groups.values()) or "these hosts"


def _fault_subject(fault):
    """What is faulty above the hosts, in words."""
    scope, names = fault.get("scope"), _group_names(fault)
    if scope == "leaf":
        return "the uplinks of %s" % names
    if scope == "between":
        return "the uplinks of %s, or a spine between them" % names
    if scope == "path":
        hosts = ", ".join(fault.get("hosts") or [])
        return "the path above %s%s" % (hosts, (": its switch %s's uplinks" % names) if fault.get("switches") else "")
    if fault.get("switches"):
        return "the switch %s or its cables (every suspect cable ends on it)" % names
    if scope == "spine_layer":
        return "the spine layer (every pair across leaves failed, which spine: the topology stage)"
    if scope == "spine":
        return "a spine or its cables (on the routes of several leaves, which one: the topology stage)"
    return "the fabric above these hosts (they reach line rate with others; give the switch grouping to place it)"


def switch_fault_text(fault):
    """One sentence: what is faulty above the hosts, and what separates it (the pairs that fail, those that pass)."""
    rail = " on rail %s" % fault["rail"] if fault.get("rail") is not None else ""
    figures = figures_text(fault) or "failed"
    if fault.get("scope") == "path":
        evidence = "it reaches line rate with %s, fails with %d partners: %s" % (
            ", ".join((fault.get("passed_with") or [])[:5]) or "others", fault.get("failing", 0), figures
        )  # fmt: skip
    else:
        evidence = "%d of %d pairs across switches failed, %s" % (
            fault.get("failing", 0),
            fault.get("tested", 0),
            figures,
        )
        if fault.get("inside_passing"):
            evidence += "; %d pairs inside a switch passed" % fault["inside_passing"]
    if fault.get("source") == "inferred":
        evidence += "; grouped from the results: they pass with each other and fail across"
    return "switch fault%s: %s (%s): not the hosts" % (rail, _fault_subject(fault), evidence)
