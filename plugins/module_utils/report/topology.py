# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The report's view of the fabric (pure): the suspect cable(s) of the failing pairs and the switch-port
counter violations, from the fabric_validate topology (validate_topology.compact()).

A failing pair result's path is its client's route to its server's LID in the forwarding tables OpenSM
programmed (a latency result: both ways); a cable on failing paths and on no passing path is a suspect
(routes.name_cables). Results that failed before measuring a link (missing rail, invalid) are left out, and
so are the failing results of a suspect node that failed on more than one of its devices: a node-wide
fault is the node (named as such), not one cable per rail.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.ibtune.fabric.plugins.module_utils.subnet import switch_counters as _swc
from ansible_collections.ibtune.fabric.plugins.module_utils.subnet import routes as _routes
from ansible_collections.ibtune.fabric.plugins.module_utils.validate import fabric as _vt
from ansible_collections.ibtune.fabric.plugins.module_utils.report.text import (
    cable_text,
    switch_fault_text,
    switch_violation_text,
)

# failed results that say nothing about a cable
NOT_A_PATH = frozenset(("missing_rail", "invalid", "no_device"))


def node_wide(suspect_nodes):
    """Hosts of the report's suspect nodes that failed on two or more of their devices."""
    return set(n["host"] for n in suspect_nodes or [] if len(n.get("devices") or []) > 1)


def suspect_cables(results, topology, expanded=None, exclude_hosts=()):
    """[{a, b, reason, failing, failing_total, passing_total, ambiguous, text, verdict}] for the report's
    (normalised) results; [] when no failing result has a route. ``expanded``: validate_topology.expand()'s
    value, when the caller has it already; failing results of ``exclude_hosts`` are left out."""
    topo, lfts, hosts = expanded or _vt.expand(topology)
    exclude = set(exclude_hosts or ())
    usable = (  # read once, as they come: a ResultTable makes each dict as it is read
        r
        for r in results
        if r.get("passed")
        or (
            r.get("failure_kind") not in NOT_A_PATH
            and r.get("server") not in exclude
            and r.get("client") not in exclude
        )
    )
    failing, passing = _routes.paths_for_results(usable, lfts, topo, hosts)
    if not failing:
        return []
    out = []
    found = _routes.name_cables(failing, passing)
    for cable in found:
        ties = [c for c in found if c["reason"].split(";")[0] == cable["reason"].split(";")[0]]
        entry = dict(cable)
        entry.update(
            failing_total=len(failing),
            passing_total=len(passing),
            ambiguous=len(ties) if len(ties) > 1 else 0,
            verdict="suspect",
        )
        entry["text"] = cable_text(entry)
        out.append(entry)
    return out


def _cable_switches(cable):
    """The switch names at the two ends of a cable ("lab-leaf1 p7" -> "lab-leaf1")."""
    return set(end.rsplit(" p", 1)[0] for end in (cable.get("a"), cable.get("b")) if end)


def _refine_switch_faults(report, cables):
    """With the cables known, a switch fault the cables explain is named by them: a leaf, a pair of leaves or the
    path above a host whose switch is an end of a suspect cable gives way to the cable (it names the exact
    port); a spine fault whose suspect cables all meet one switch names that switch."""
    if not cables or not report.get("switch_faults"):
        return
    ends = set()
    for cable in cables:
        ends |= _cable_switches(cable)
    common = set.intersection(*[_cable_switches(c) for c in cables])
    kept = []
    for fault in report["switch_faults"]:
        if fault["scope"] in ("leaf", "between", "path") and fault["switches"] and set(fault["switches"]) <= ends:
            continue
        if fault["scope"] in ("spine", "spine_layer", "fabric") and len(cables) > 1 and len(common) == 1:
            fault["switches"] = sorted(common)
        kept.append(fault)
    report["switch_faults"] = kept
    report["totals"]["switch_faults"] = len(kept)
    for fault in kept:
        fault["text"] = switch_fault_text(fault)


def apply(report, topology):
    """Adds suspect_cables, host_order, switch_counter_violations and topology_findings (and their totals) to
    ``report``, and isl_traffic when the topology carries it; switch counter violations and findings of
    severity error fail it. Returns the report."""
    expanded = _vt.expand(topology)  # a bad topology fails before anything is added
    value = topology if isinstance(topology, dict) else {}
    switch_side = [dict(v) for v in value.get("switch_counter_violations") or [] if isinstance(v, dict)]
    for v in switch_side:
        v.setdefault("msg", switch_violation_text(v))
    cables = (
        []
        if report.get("systemic")
        else suspect_cables(report["results"], topology, expanded, node_wide(report.get("suspect_nodes")))
    )
    report["suspect_cables"] = cables
    _refine_switch_faults(report, cables)
    report["host_order"] = list(value.get("host_order") or [])
    report["switch_counter_violations"] = switch_side
    # the fabric checks of the topology stage (a miscabled rail, a cable down, ...): errors fail the run like a
    # failing pair, in the same files; warnings are listed
    findings = [dict(f) for f in value.get("findings") or [] if isinstance(f, dict) and f.get("msg")]
    report["topology_findings"] = findings
    report["totals"]["topology_errors"] = len([f for f in findings if f.get("severity") == "error"])
    if report["totals"]["topology_errors"]:
        report["passed"] = False
    report["totals"]["suspect_cables"] = len(cables)
    report["totals"]["switch_counter_violations"] = len(switch_side)
    traffic = value.get("isl_traffic")
    if isinstance(traffic, dict):
        # the switches' own count of what the rounds moved: the coverage claim, measured (not a verdict: under
        # adaptive routing or with rounds that were not route-aware an ISL may rightly carry nothing)
        report["isl_traffic"] = dict(traffic, text=_swc.describe_isl_traffic(traffic))
    if switch_side:
        report["passed"] = False
    return report
