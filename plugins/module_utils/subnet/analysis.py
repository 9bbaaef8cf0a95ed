# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""One reading of the fabric judged: every check that has its inputs (CHECKS, run_checks), the fabric's
shape (fabric_view: oversubscription per switch, rail group and tier; dragonfly groups) and the result
ib_topology returns (analyse: the model, the rails, the shape, the findings and their summary)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.ibtune.fabric.plugins.module_utils.subnet import checks as C
from ansible_collections.ibtune.fabric.plugins.module_utils.subnet.balance import check_tier_balance
from ansible_collections.ibtune.fabric.plugins.module_utils.subnet.dragonfly import check_dragonfly, recognise
from ansible_collections.ibtune.fabric.plugins.module_utils.subnet.drift import check_drift, load_golden
from ansible_collections.ibtune.fabric.plugins.module_utils.subnet.findings import summarize
from ansible_collections.ibtune.fabric.plugins.module_utils.subnet.model import Index, topology_view
from ansible_collections.ibtune.fabric.plugins.module_utils.subnet.oversubscription import (
    DEFAULT_DESIGN,
    check_oversubscription,
    ratios,
)
from ansible_collections.ibtune.fabric.plugins.module_utils.subnet.parsers import parse_iblinkinfo, parse_ibnetdiscover
from ansible_collections.ibtune.fabric.plugins.module_utils.subnet.rails import host_order, map_rails, rail_groups_of
from ansible_collections.ibtune.fabric.plugins.module_utils.subnet.structure import Shape

CHECKS = (
    "rail_alignment",
    "missing_rail",
    "port_down",
    "link_below_norm",
    "unequal_trunk",
    "factory_description",
    "duplicate_description",
    "drift",
    "oversubscription",
    "tier_balance",
    "dragonfly_global",
)


def fabric_view(
    topo, rail_map=None, rail_groups=None, max_oversubscription=DEFAULT_DESIGN, min_global_gbps=0, index=None
):
    """{"shape": structure.Shape, "oversubscription": oversubscription.ratios(), "dragonfly":
    dragonfly.recognise() or None}; raises ValueError for a design that is not a positive ratio."""
    index = index or Index(topo)
    shape = Shape(topo, index)
    leaf_rail = {}
    for device, leaves in rail_groups_of(topo, rail_map, rail_groups, index).items():
        leaf_rail.update((leaf, device) for leaf in leaves)
    return {
        "shape": shape,
        "oversubscription": ratios(shape, max_oversubscription, leaf_rail),
        "dragonfly": recognise(shape, min_global_gbps),
    }


class _Inputs:
    """What the checks read, gathered once."""

    def __init__(self, topo, rail_map, linkinfo, golden, rail_groups, rail_alignment, view):
        self.topo = topo
        self.index = view["shape"].index
        self.rail_map = rail_map
        self.linkinfo = linkinfo
        self.golden = golden
        self.rail_groups = rail_groups
        self.rail_alignment = rail_alignment
        self.view = view


def _rail_alignment(i):
    return C.check_rail_alignment(i.topo, i.rail_map, i.rail_groups, i.index) if i.rail_alignment else []


def _port_down(i):
    return C.check_ports_down(i.linkinfo, i.topo, i.golden, i.index) if i.linkinfo is not None else []


def _drift(i):
    return check_drift(i.golden, i.topo) if i.golden is not None else []


# (check names, the function that finds them), in the order findings are listed
_RUNNERS = (
    (("rail_alignment",), _rail_alignment),
    (("missing_rail",), lambda i: C.check_missing(i.rail_map)),
    (("port_down",), _port_down),
    (("link_below_norm",), lambda i: C.check_link_norms(i.topo, i.index)),
    (("unequal_trunk",), lambda i: C.check_trunks(i.topo, i.index, i.view["shape"].group_of)),
    (("factory_description", "duplicate_description"), lambda i: C.check_descriptions(i.topo, i.index)),
    (("drift",), _drift),
    (("oversubscription",), lambda i: check_oversubscription(i.view["shape"], i.view["oversubscription"], i.golden)),
    (("tier_balance",), lambda i: check_tier_balance(i.view["shape"])),
    (("dragonfly_global",), lambda i: check_dragonfly(i.view["dragonfly"])),
)


def run_checks(
    topo,
    rail_map=None,
    linkinfo=None,
    golden=None,
    rail_groups=None,
    checks=None,
    rail_alignment=True,
    max_oversubscription=DEFAULT_DESIGN,
    min_global_gbps=0,
    view=None,
):
    """Every check that has its inputs; ``checks`` limits them to those names (see CHECKS). ``view``:
    fabric_view()'s value when the caller has it already."""
    view = view or fabric_view(topo, rail_map, rail_groups, max_oversubscription, min_global_gbps)
    inputs = _Inputs(topo, rail_map, linkinfo, golden, rail_groups, rail_alignment, view)
    wanted = set(checks or CHECKS)
    findings = []
    for names, runner in _RUNNERS:
        if wanted.intersection(names):
            findings += [f for f in runner(inputs) if f["check"] in wanted or f["check"].startswith("drift_")]
    return findings


def _summary(topo, findings, view):
    over = view["oversubscription"]
    leaves = over["tiers"].get("leaf") or {}
    return {
        "switches": len(topo["switches"]),
        "cas": len(topo["cas"]),
        "links": len(topo["links"]),
        "isls": len([lk for lk in topo["links"] if lk["kind"] == "isl"]),
        "leaves": len(topo["tiers"]["leaf"]),
        "spines": len(topo["tiers"]["spine"]),
        "errors": len([f for f in findings if f["severity"] == "error"]),
        "warnings": len([f for f in findings if f["severity"] == "warning"]),
        "oversubscribed": len([r for r in over["switches"] if r["oversubscribed"]]),
        "max_leaf_oversubscription": leaves.get("max_ratio"),
        "dragonfly_groups": len(view["dragonfly"]["groups"]) if view["dragonfly"] else 0,
    }


def analyse(
    ibnetdiscover_text,
    linkinfo_text=None,
    hosts=None,
    golden=None,
    rail_groups=None,
    checks=None,
    rail_alignment=True,
    max_oversubscription=DEFAULT_DESIGN,
    min_global_gbps=0,
):
    """Everything ib_topology returns but the switch counters and routes, from the tools' texts."""
    topo = parse_ibnetdiscover(ibnetdiscover_text)
    linkinfo = parse_iblinkinfo(linkinfo_text) if linkinfo_text is not None else None
    rail_map = map_rails(topo, hosts) if hosts else None
    view = fabric_view(topo, rail_map, rail_groups, max_oversubscription, min_global_gbps)
    findings = run_checks(topo, rail_map, linkinfo, load_golden(golden), rail_groups, checks, rail_alignment, view=view)
    result = topology_view(topo)
    result.update(
        {
            "rails": (rail_map or {}).get("rails", {}),
            "missing": (rail_map or {}).get("missing", []),
            "host_order": host_order(rail_map) if rail_map else [],
            "linkinfo": linkinfo or [],
            "findings": findings,
            "oversubscription": view["oversubscription"],
            "dragonfly": view["dragonfly"],
            "warnings_seen": topo["warnings"],
            "summary": _summary(topo, findings, view),
            "msg": summarize(findings),
        }
    )
    return result
