# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Is the fabric non-blocking? Oversubscription per switch, from the links as they trained.

For every switch with something below it: the sum of the rates its links down trained to (a leaf's host
ports; a spine's links to the leaves) against the sum of the rates its links up trained to (links to a
higher tier, and lateral links: a dragonfly's global links, the cables between the two leaves of a flat
fabric). ratio = down / up; 1.0 is non-blocking, 2.0 is 2:1. A switch whose ratio exceeds the declared
design (fabric_topology_max_oversubscription) is a finding naming the switch, both sums, and the uplinks
that are missing (against the golden topology, else against the other switches of its tier and group) or
trained below the fabric's inter-switch links. Ratios are also summed per rail group and per tier.

Rates are the nominal Gb/s of the trained width and speed (model.link_rate_gbps: 4xNDR = 400), as
ibnetdiscover reports them after training, not as the ports are rated.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from collections import Counter

from ansible_collections.ibtune.fabric.plugins.module_utils.subnet.drift import missing_cables
from ansible_collections.ibtune.fabric.plugins.module_utils.subnet.findings import finding, norm
from ansible_collections.ibtune.fabric.plugins.module_utils.subnet.model import Index, link_rate_gbps

DEFAULT_DESIGN = 1.0
# ratios are sums of nominal rates: compare with a tolerance, not bit for bit
EPSILON = 1e-9
TIERS = ("leaf", "spine", "core")
PLURAL = {"leaf": "leaves", "spine": "spines", "core": "core switches", "isolated": "isolated switches"}
_LISTED = 6


def check_design(design):
    """The declared ratio as a float, or ValueError naming the variable."""
    try:
        value = float(design)
    except (TypeError, ValueError):
        value = 0.0
    if not value > 0:
        raise ValueError(
            "max_oversubscription must be a ratio above 0 (1.0 = non-blocking, 2.0 = 2:1 by design), got %r: "
            "set fabric_topology_max_oversubscription to the fabric's design" % (design,)
        )
    return value


def gbps_text(value):
    """400.0 -> "400", 12.5 -> "12.5"."""
    return "%g" % value


def ratio_text(value):
    return "%.2f:1" % value


# -------------------------------------------------------------------------------------- per switch


def _row(shape, guid, leaf_rail):
    down = shape.down.get(guid, [])
    up = shape.uplinks(guid)
    down_gbps = sum(v["gbps"] for v in down)
    up_gbps = sum(v["gbps"] for v in up)
    tier = shape.tier(guid)
    return {
        "switch": shape.index.name(guid),
        "guid": guid,
        "tier": tier,
        "group": shape.group_of.get(guid),
        "rail_group": leaf_rail.get(guid),
        "down_ports": len(down),
        "down_gbps": down_gbps,
        "up_ports": len(up),
        "up_gbps": up_gbps,
        "ratio": round(down_gbps / up_gbps, 4) if up_gbps > 0 else None,
        # a top switch has nothing above it; a single switch is non-blocking by construction; a leaf with no
        # way out in a fabric that has inter-switch links is judged (its hosts reach nothing beyond it)
        "judged": up_gbps > 0 or (tier == "leaf" and shape.has_isls()),
    }


def _over(row, design):
    return row["judged"] and (row["ratio"] is None or row["ratio"] > design + EPSILON)


def switch_rows(shape, design, leaf_rail=None):
    """One row per switch with links down: sums, ratio, and whether it exceeds the design."""
    rows = []
    for sw in sorted(shape.topo["switches"], key=lambda s: (shape.index.rank(s["guid"]), s["name"] or s["guid"])):
        if shape.down.get(sw["guid"]):
            row = _row(shape, sw["guid"], leaf_rail or {})
            row["oversubscribed"] = _over(row, design)
            rows.append(row)
    return rows


def _aggregate(rows, design):
    judged = [r for r in rows if r["judged"]]
    down = sum(r["down_gbps"] for r in judged)
    up = sum(r["up_gbps"] for r in judged)
    rated = [r for r in judged if r["ratio"] is not None]
    worst = max(rated, key=lambda r: r["ratio"]) if rated else None
    return {
        "switches": [r["switch"] for r in judged],
        "down_gbps": down,
        "up_gbps": up,
        "ratio": round(down / up, 4) if up > 0 else None,
        "max_ratio": worst["ratio"] if worst else None,
        "worst": worst["switch"] if worst else None,
        "above_design": len([r for r in judged if _over(r, design)]),
    }


def _by_tier(rows, design):
    out = {}
    for tier in TIERS:
        mine = [r for r in rows if r["tier"] == tier and r["judged"]]
        if mine:
            out[tier] = _aggregate(mine, design)
    return out


def _by_rail_group(rows, design):
    groups = {}
    for row in rows:
        if row["rail_group"] is not None and row["tier"] == "leaf":
            groups.setdefault(row["rail_group"], []).append(row)
    return dict((device, _aggregate(mine, design)) for device, mine in sorted(groups.items()))


def _text(rows, design, tiers):
    if not tiers:
        return "no switch has anything above it to oversubscribe (a single switch, or no inter-switch link)"
    parts = []
    for tier, agg in tiers.items():
        rated = [r["ratio"] for r in rows if r["tier"] == tier and r["judged"] and r["ratio"] is not None]
        span = "%s..%s" % (ratio_text(min(rated)), ratio_text(max(rated))) if rated else "no uplink"
        parts.append(
            "%d %s %s, %d above the design %s"
            % (len(agg["switches"]), PLURAL[tier], span, agg["above_design"], ratio_text(design))
        )
    return "oversubscription as trained: " + "; ".join(parts)


def ratios(shape, design=DEFAULT_DESIGN, leaf_rail=None):
    """{"design", "switches": [row], "tiers": {tier: aggregate}, "rail_groups": {device: aggregate},
    "load_first": [[switch guid, port], ...] (the uplinks of the switches above the design), "text"}."""
    design = check_design(design)
    rows = switch_rows(shape, design, leaf_rail)
    tiers = _by_tier(rows, design)
    load_first = [
        [row["guid"], view["port"]]
        for row in rows
        if row["oversubscribed"]
        for view in sorted(shape.uplinks(row["guid"]), key=lambda v: v["port"])
    ]
    return {
        "design": design,
        "switches": rows,
        "tiers": tiers,
        "rail_groups": _by_rail_group(rows, design),
        "load_first": load_first,
        "text": _text(rows, design, tiers),
    }


# -------------------------------------------------------------------------------- why it is over


def _peers(shape, guid):
    """The switches of its tier and group that have uplinks; a switch that lost every uplink is a group of its own,
    so then those of its tier in every group."""
    tier = shape.tier(guid)
    mine = [g for g in shape.members(shape.group_of.get(guid), tier) if g != guid and shape.uplinks(g, lateral=False)]
    if mine:
        return mine + [guid]
    return [
        s["guid"]
        for s in shape.topo["switches"]
        if shape.tier(s["guid"]) == tier and shape.uplinks(s["guid"], lateral=False)
    ]


def _peer_deficits(shape, guid):
    """Upper switches this switch has fewer cables to than its tier's norm, where at least half of the
    switches of its tier and group reach them: [(upper guid, cables, norm)]."""
    peers = _peers(shape, guid)
    sizes = dict((p, shape.trunk_sizes(p)) for p in peers)
    if len(peers) < 2:
        return []
    reach = Counter(upper for p in peers for upper in sizes[p])
    usual = norm([n for p in peers for n in sizes[p].values()])
    mine = sizes.get(guid, {})
    deficits = []
    for upper in sorted(reach, key=shape.index.name):
        if 2 * reach[upper] >= len(peers) and mine.get(upper, 0) < usual:
            deficits.append((upper, mine.get(upper, 0), usual))
    return deficits


def _lateral_deficit(shape, guid):
    """(lateral links, the norm of its tier and group) when it has fewer lateral links than that norm."""
    peers = shape.members(shape.group_of.get(guid), shape.tier(guid))
    counts = [len(shape.uplinks(p)) - len(shape.uplinks(p, lateral=False)) for p in peers]
    if not any(counts):
        return None
    mine = len(shape.uplinks(guid)) - len(shape.uplinks(guid, lateral=False))
    usual = norm(counts)
    return (mine, usual) if mine < usual else None


def _golden_missing(shape, guid, golden):
    """Cables up from this switch in the golden topology that are gone: [(port, "port 7 -> lab-spine1 port 1",
    peer switch name)]."""
    gidx = Index(golden)
    out = []
    for link in missing_cables(golden, shape.topo):
        for mine, other in ((link["a"], link["b"]), (link["b"], link["a"])):
            if mine["guid"] == guid and gidx.is_switch(other["guid"]) and gidx.rank(other["guid"]) >= gidx.rank(guid):
                label = "port %d -> %s" % (mine["port"], gidx.end_label(other["guid"], other["port"]))
                out.append((mine["port"], label, gidx.name(other["guid"])))
    return sorted(out)


def isl_norm_gbps(topo):
    """The most common trained rate of the fabric's inter-switch links (None without ISLs)."""
    rates = [link_rate_gbps(lk) for lk in topo["links"] if lk["kind"] == "isl" and link_rate_gbps(lk)]
    return norm(rates) if rates else None


def _slow_uplinks(shape, guid, usual):
    if usual is None:
        return []
    out = []
    for view in sorted(shape.uplinks(guid), key=lambda v: v["port"]):
        if view["gbps"] < usual - EPSILON:
            label = "port %d -> %s at %sx%s (%s Gb/s)" % (
                view["port"],
                shape.index.end_label(view["peer"], view["peer_port"]),
                view["width"],
                view["speed"],
                gbps_text(view["gbps"]),
            )
            out.append((view, label))
    return out


def _groups_with_leaves(shape):
    """Groups with leaves and switches above them (a leaf that lost every uplink is a group of its own: not one)."""
    return len([g for g in shape.groups if set(shape.tier(s) for s in g) >= {"leaf", "spine"}])


def _deficit_text(shape, deficits):
    parts = []
    for upper, have, usual in deficits[:_LISTED]:
        if have == 0:
            parts.append("no cable to %s (the norm %d)" % (shape.index.name(upper), usual))
        else:
            parts.append("%d of %d cables to %s" % (have, usual, shape.index.name(upper)))
    if len(deficits) > _LISTED:
        parts.append("and %d more" % (len(deficits) - _LISTED))
    return ", ".join(parts)


def _reasons(shape, row, golden, usual_gbps):
    """(sentence parts, first port, first peer) saying which uplinks are missing or slow."""
    reasons, port, peer = [], None, None
    gone = _golden_missing(shape, row["guid"], golden) if golden else []
    deficits = _peer_deficits(shape, row["guid"])
    lateral = _lateral_deficit(shape, row["guid"])
    slow = _slow_uplinks(shape, row["guid"], usual_gbps)
    peers = "the other %s%s" % (
        PLURAL.get(row["tier"], "switches"),
        " of its group" if _groups_with_leaves(shape) > 1 else "",
    )
    if gone:
        reasons.append("missing against the golden topology: " + ", ".join(g[1] for g in gone[:_LISTED]))
        port, peer = gone[0][0], gone[0][2]
    if deficits and not gone:
        reasons.append("missing against %s: %s" % (peers, _deficit_text(shape, deficits)))
        peer = shape.index.name(deficits[0][0])
    if lateral and not gone:
        reasons.append("%d lateral (global) link(s) where %s have %d" % (lateral[0], peers, lateral[1]))
    if slow:
        reasons.append(
            "trained below the fabric's inter-switch links (%s Gb/s): %s"
            % (gbps_text(usual_gbps), ", ".join(text for _v, text in slow[:_LISTED]))
        )
        port = port if port is not None else slow[0][0]["port"]
        peer = peer or shape.index.name(slow[0][0]["peer"])
    return reasons, port, peer


def _message(row, design, reasons):
    below = "host ports" if row["tier"] == "leaf" else "links down"
    where = "%s (%s%s)" % (
        row["switch"],
        row["tier"],
        ", rail group %s" % row["rail_group"] if row["rail_group"] is not None else "",
    )
    if row["ratio"] is None:
        head = "%s has %d %s (%s Gb/s) and no uplink: its hosts reach nothing beyond it" % (
            where,
            row["down_ports"],
            below,
            gbps_text(row["down_gbps"]),
        )
    else:
        head = (
            "%s is oversubscribed %s where the design allows %s: %d %s carry %s Gb/s, %d uplink(s) %s Gb/s, as trained"
            % (
                where,
                ratio_text(row["ratio"]),
                ratio_text(design),
                row["down_ports"],
                below,
                gbps_text(row["down_gbps"]),
                row["up_ports"],
                gbps_text(row["up_gbps"]),
            )
        )
    if reasons:
        return "%s; %s: re-cable or replace those uplinks." % (head, "; ".join(reasons))
    if row["ratio"] is None:
        return "%s: cable its uplinks." % head
    return (
        "%s; every uplink its peers have is there and trained like theirs: more ports down than up by design, "
        "so declare that ratio in fabric_topology_max_oversubscription if it is meant." % head
    )


def check_oversubscription(shape, report, golden=None):
    """A finding per switch above the design (ratios()'s ``report``), naming both sums and the uplinks
    that are missing or trained low."""
    usual = isl_norm_gbps(shape.topo)
    findings = []
    for row in report["switches"]:
        if not row["oversubscribed"]:
            continue
        reasons, port, peer = _reasons(shape, row, golden, usual)
        findings.append(
            finding(
                "oversubscription",
                "error",
                _message(row, report["design"], reasons),
                switch=row["switch"],
                port=port,
                peer=peer,
                tier=row["tier"],
                ratio=row["ratio"],
                design=report["design"],
                down_gbps=row["down_gbps"],
                up_gbps=row["up_gbps"],
                rail_group=row["rail_group"],
            )
        )
    return findings
