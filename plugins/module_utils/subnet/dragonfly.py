# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Dragonfly recognised: groups joined by global links, and the bandwidth between every two groups.

InfiniBand builds dragonflies as Dragonfly+ (OpenSM's dfp routing engine): each group is a two-level fat
tree (leaves with the hosts, spines above them) and the spines of different groups are cabled to each
other. structure.Shape finds the groups (the switches the leaf-spine links hold together); a subnet is a
dragonfly when two or more groups each have leaves and spines and lateral links join them: those are the
global links. Every pair of groups should be joined (all-to-all); a pair whose global links sum to less
than the design (fabric_topology_min_global_gbps, else the most common pair total of this fabric) is a
finding naming both groups and their global cables.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from collections import defaultdict

from ansible_collections.ibtune.fabric.plugins.module_utils.subnet.findings import finding, norm
from ansible_collections.ibtune.fabric.plugins.module_utils.subnet.model import link_rate_gbps
from ansible_collections.ibtune.fabric.plugins.module_utils.subnet.oversubscription import EPSILON, gbps_text

_NAMED = 4


def check_min_global(value):
    """The declared bandwidth between two groups as a float (0: the fabric's own norm), or ValueError."""
    try:
        gbps = float(value or 0)
    except (TypeError, ValueError):
        gbps = -1.0
    if gbps < 0:
        raise ValueError(
            "min_global_gbps must be the Gb/s two dragonfly groups should have between them (0: this fabric's "
            "most common), got %r: set fabric_topology_min_global_gbps" % (value,)
        )
    return gbps


def _dragonfly_groups(shape):
    """Group numbers (structure.Shape's) that have both leaves and switches above them."""
    out = []
    for number, members in enumerate(shape.groups, 1):
        tiers = set(shape.tier(g) for g in members)
        if "leaf" in tiers and tiers & {"spine", "core"}:
            out.append(number)
    return out


def _group_entry(shape, number, members, global_links):
    leaves = [g for g in members if shape.tier(g) == "leaf"]
    upper = sorted((g for g in members if shape.tier(g) != "leaf"), key=shape.index.name)
    host_gbps = sum(v["gbps"] for g in leaves for v in shape.down.get(g, []) if v["kind"] == "host")
    global_gbps = sum(link_rate_gbps(lk) or 0.0 for lk in global_links)
    return {
        "group": number,
        "name": _group_name(shape, number, upper),
        "switches": sorted(shape.index.name(g) for g in members),
        "leaves": len(leaves),
        "spines": len(upper),
        "host_ports": sum(1 for g in leaves for v in shape.down.get(g, []) if v["kind"] == "host"),
        "host_gbps": host_gbps,
        "global_links": len(global_links),
        "global_gbps": global_gbps,
        "ratio": round(host_gbps / global_gbps, 4) if global_gbps > 0 else None,
    }


def _group_name(shape, number, upper):
    names = [shape.index.name(g) for g in upper]
    shown = ", ".join(names[:_NAMED]) + (", ..." if len(names) > _NAMED else "")
    return "group %d (%s)" % (number, shown)


def _weakest(shape, group, links):
    """The switch of ``group`` above its leaves with the fewest of these global links (ties: by name)."""
    upper = [g for g in shape.groups[group - 1] if shape.tier(g) != "leaf"]
    ends = [end["guid"] for lk in links for end in (lk["a"], lk["b"])]
    return min(shape.index.name(g) for g in upper if ends.count(g) == min(ends.count(u) for u in upper))


def _cable_label(shape, link):
    a = shape.index.port_label(link["a"]["guid"], link["a"]["port"])
    b = shape.index.port_label(link["b"]["guid"], link["b"]["port"])
    return "%s <-> %s" % tuple(sorted((a, b)))


def recognise(shape, min_global_gbps=0):
    """None for a fabric that is not a dragonfly, else {"groups": [...], "pairs": [{groups, names, links,
    gbps, cables}], "design_gbps", "design_declared", "global_links", "text"}."""
    numbers = _dragonfly_groups(shape)
    by_pair = defaultdict(list)
    per_group = defaultdict(list)
    for link in shape.lateral:
        ga, gb = shape.group_of.get(link["a"]["guid"]), shape.group_of.get(link["b"]["guid"])
        if ga != gb and ga in numbers and gb in numbers:
            by_pair[tuple(sorted((ga, gb)))].append(link)
            per_group[ga].append(link)
            per_group[gb].append(link)
    if len(numbers) < 2 or not by_pair:
        return None
    groups = [_group_entry(shape, n, shape.groups[n - 1], per_group[n]) for n in numbers]
    names = dict((g["group"], g["name"]) for g in groups)
    pairs = []
    for i, a in enumerate(numbers):
        for b in numbers[i + 1 :]:
            links = by_pair.get((a, b), [])
            pairs.append(
                {
                    "groups": [a, b],
                    "names": [names[a], names[b]],
                    "links": len(links),
                    "gbps": sum(link_rate_gbps(lk) or 0.0 for lk in links),
                    "cables": sorted(_cable_label(shape, lk) for lk in links),
                    "weakest": _weakest(shape, a, links),
                }
            )
    declared = check_min_global(min_global_gbps)
    design = declared or norm([p["gbps"] for p in pairs])
    return {
        "groups": groups,
        "pairs": pairs,
        "design_gbps": design,
        "design_declared": bool(declared),
        "global_links": sum(p["links"] for p in pairs),
        "text": "dragonfly: %d groups, %d global links; %s Gb/s between two groups is the %s"
        % (len(groups), sum(p["links"] for p in pairs), gbps_text(design), "design" if declared else "norm"),
    }


def _pair_message(pair, design, declared):
    what = "the design" if declared else "the norm of this fabric's group pairs"
    if pair["links"]:
        have = "%d global link(s) (%s Gb/s: %s)" % (pair["links"], gbps_text(pair["gbps"]), ", ".join(pair["cables"]))
    else:
        have = "no global link"
    return (
        "%s <-> %s has %s where %s is %s Gb/s: a global cable is missing or trained low, and traffic between "
        "these groups crowds onto the rest: reseat or replace it."
        % (pair["names"][0], pair["names"][1], have, what, gbps_text(design))
    )


def check_dragonfly(dragonfly):
    """A finding per group pair whose global links sum to less than the design."""
    if not dragonfly:
        return []
    findings = []
    for pair in dragonfly["pairs"]:
        if pair["gbps"] + EPSILON >= dragonfly["design_gbps"]:
            continue
        findings.append(
            finding(
                "dragonfly_global",
                "error",
                _pair_message(pair, dragonfly["design_gbps"], dragonfly["design_declared"]),
                switch=pair["weakest"],
                port=None,
                peer=pair["names"][1],
                groups=pair["groups"],
                links=pair["links"],
                gbps=pair["gbps"],
                design_gbps=dragonfly["design_gbps"],
            )
        )
    return findings
