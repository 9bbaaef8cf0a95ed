# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""One reading of the fabric judged: every check that has its inputs (CHECKS, run_checks) and the result
ib_topology returns (analyse: the model, the rails, the findings and their summary)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.ibtune.fabric.plugins.module_utils.subnet import checks as C
from ansible_collections.ibtune.fabric.plugins.module_utils.subnet.drift import check_drift, load_golden
from ansible_collections.ibtune.fabric.plugins.module_utils.subnet.findings import summarize
from ansible_collections.ibtune.fabric.plugins.module_utils.subnet.model import Index, topology_view
from ansible_collections.ibtune.fabric.plugins.module_utils.subnet.parsers import parse_ibnetdiscover, parse_iblinkinfo
from ansible_collections.ibtune.fabric.plugins.module_utils.subnet.rails import host_order, map_rails

CHECKS = (
    "rail_alignment",
    "missing_rail",
    "port_down",
    "link_below_norm",
    "unequal_trunk",
    "factory_description",
    "duplicate_description",
    "drift",
)


def run_checks(topo, rail_map=None, linkinfo=None, golden=None, rail_groups=None, checks=None, rail_alignment=True):
    """Every check that has its inputs; ``checks`` limits them to those names (see CHECKS)."""
    index = Index(topo)
    wanted = set(checks or CHECKS)
    findings = []
    if rail_alignment and "rail_alignment" in wanted:
        findings += C.check_rail_alignment(topo, rail_map, rail_groups, index)
    if "missing_rail" in wanted:
        findings += C.check_missing(rail_map)
    if linkinfo is not None and "port_down" in wanted:
        findings += C.check_ports_down(linkinfo, topo, golden, index)
    if "link_below_norm" in wanted:
        findings += C.check_link_norms(topo, index)
    if "unequal_trunk" in wanted:
        findings += C.check_trunks(topo, index)
    findings += [f for f in C.check_descriptions(topo, index) if f["check"] in wanted]
    if golden is not None and "drift" in wanted:
        findings += check_drift(golden, topo)
    return findings


def _summary(topo, findings):
    return {
        "switches": len(topo["switches"]),
        "cas": len(topo["cas"]),
        "links": len(topo["links"]),
        "isls": len([lk for lk in topo["links"] if lk["kind"] == "isl"]),
        "leaves": len(topo["tiers"]["leaf"]),
        "spines": len(topo["tiers"]["spine"]),
        "errors": len([f for f in findings if f["severity"] == "error"]),
        "warnings": len([f for f in findings if f["severity"] == "warning"]),
    }


def analyse(
    ibnetdiscover_text, linkinfo_text=None, hosts=None, golden=None, rail_groups=None, checks=None, rail_alignment=True
):
    """Everything ib_topology returns but the switch counters and routes, from the tools' texts."""
    topo = parse_ibnetdiscover(ibnetdiscover_text)
    linkinfo = parse_iblinkinfo(linkinfo_text) if linkinfo_text is not None else None
    rail_map = map_rails(topo, hosts) if hosts else None
    findings = run_checks(topo, rail_map, linkinfo, load_golden(golden), rail_groups, checks, rail_alignment)
    result = topology_view(topo)
    result.update(
        {
            "rails": (rail_map or {}).get("rails", {}),
            "missing": (rail_map or {}).get("missing", []),
            "host_order": host_order(rail_map) if rail_map else [],
            "linkinfo": linkinfo or [],
            "findings": findings,
            "warnings_seen": topo["warnings"],
            "summary": _summary(topo, findings),
            "msg": summarize(findings),
        }
    )
    return result
