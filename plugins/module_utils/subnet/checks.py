# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Cabling checks on one reading of the fabric: rails on the leaves of their rail group, inventory rails
missing, switch ports down where a cable is expected, links below the fabric's norm, unequal trunks, and
node descriptions nobody set or two nodes share. Each returns findings (findings.finding)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from collections import Counter, defaultdict

from ansible_collections.ibtune.fabric.plugins.module_utils.subnet.findings import finding, norm
from ansible_collections.ibtune.fabric.plugins.module_utils.subnet.model import SPEED_ORDER, Index, speed_rank
from ansible_collections.ibtune.fabric.plugins.module_utils.subnet.names import short_name
from ansible_collections.ibtune.fabric.plugins.module_utils.subnet.rails import (
    declared_groups,
    judged_and_known,
    leaf_rails,
)

# ------------------------------------------------------------------------------------- rail alignment


def _misplaced(host, device, index, sw, port, msg):
    return finding(
        "rail_alignment",
        "error",
        msg,
        switch=index.name(sw),
        port=port,
        peer="%s %s" % (host, device),
        host=host,
        device=device,
    )


def _against_design(rows, rail_groups, index):
    allowed = declared_groups(rail_groups)
    findings = []
    for host, device, _guid, sw, port in rows:
        if device not in allowed or sw in allowed[device] or index.name(sw) in allowed[device]:
            continue
        msg = (
            "%s %s is cabled to %s port %s, which is not a leaf of rail group %s (%s): move the cable "
            "to a leaf of that group."
            % (host, device, index.name(sw), port, device, ", ".join(sorted(allowed[device])))
        )
        findings.append(_misplaced(host, device, index, sw, port, msg))
    return findings


def _against_majority(rows, known_rows, index, majority):
    rail_of_leaf = leaf_rails(known_rows, majority)
    leaves_of_rail = defaultdict(list)
    for sw, (device, _count, _total) in rail_of_leaf.items():
        leaves_of_rail[device].append(index.name(sw))
    findings = []
    for host, device, _guid, sw, port in rows:
        if sw not in rail_of_leaf or device not in leaves_of_rail or rail_of_leaf[sw][0] == device:
            continue
        leaf_rail, count, total = rail_of_leaf[sw]
        msg = (
            "%s %s is cabled to %s port %s, a leaf of rail %s (%d of its %d host ports); rail %s belongs on %s: "
            "swap the cable back."
        ) % (
            host,
            device,
            index.name(sw),
            port,
            leaf_rail,
            count,
            total,
            device,
            ", ".join(sorted(leaves_of_rail[device])),
        )
        findings.append(_misplaced(host, device, index, sw, port, msg))
    return findings


def check_rail_alignment(topo, rail_map=None, rail_groups=None, index=None, majority=0.5):
    """Rail i of every host on a leaf of rail group i.

    rail_groups: {device: [leaf names or GUIDs]} when the design is written down; without it each leaf's
    rail is the device most of its hosts use there (more than ``majority`` of them), and a rail on a leaf
    of another rail is the finding (two hosts' rails swapped between leaves show up as two findings).
    """
    index = index or Index(topo)
    rows, known_rows = judged_and_known(topo, rail_map, index)
    if rail_groups:
        return _against_design(rows, rail_groups, index)
    return _against_majority(rows, known_rows, index, majority)


def check_missing(rail_map):
    """Inventory rails whose node GUID is not in the fabric."""
    findings = []
    for miss in (rail_map or {}).get("missing", []):
        findings.append(
            finding(
                "missing_rail",
                "error",
                "%s %s (node GUID %s) is not in the fabric seen by ibnetdiscover: check its cable, its leaf "
                "port and that the port is Active (ibstat on the host)." % (miss["host"], miss["device"], miss["guid"]),
                peer="%s %s" % (miss["host"], miss["device"]),
                host=miss["host"],
                device=miss["device"],
            )
        )
    return findings


# ---------------------------------------------------------------------------------------- port state


def _port_down(row, index, expected):
    """The finding for one switch port line of iblinkinfo that is not Active, or None."""
    guid = row["guid"]
    peer = expected.peer.get((guid, row["port"]))
    state = "%s/%s" % (row["state"], row["phys_state"])
    name = expected.name(guid) if guid in expected.nodes else short_name(row["description"])
    if peer is not None:
        peer_label = expected.end_label(*peer)
        return finding(
            "port_down",
            "error",
            "%s port %s is %s where a cable to %s is expected: reseat or replace that cable."
            % (name, row["port"], state, peer_label),
            switch=name,
            port=row["port"],
            peer=peer_label,
            state=state,
        )
    if row["phys_state"] == "LinkUp":
        return finding(
            "port_down",
            "error",
            "%s port %s is %s: the link trained but the subnet manager did not activate it; check "
            "opensm's log for that port." % (name, row["port"], state),
            switch=name,
            port=row["port"],
            peer=row["peer_description"] or None,
            state=state,
        )
    return None


def check_ports_down(linkinfo, topo, golden=None, index=None):
    """Switch ports that are not Active where a cable is expected: a cable in the golden topology (or in
    ibnetdiscover's view), or a port whose physical link is up but which the SM has not activated."""
    index = index or Index(topo)
    expected = Index(golden) if golden else index
    findings = []
    for row in linkinfo or []:
        is_switch = row["node_type"] == "switch" or (row["node_type"] is None and index.is_switch(row["guid"]))
        if not is_switch or row["state"] == "Active":
            continue
        found = _port_down(row, index, expected)
        if found is not None:
            findings.append(found)
    return findings


# ------------------------------------------------------------------------------------ links and trunks


def _below_norm(link, norm_width, norm_speed):
    low = []
    if link["width"] < norm_width:
        low.append("width %dx < %dx" % (link["width"], norm_width))
    if speed_rank(link["speed"]) < norm_speed:
        low.append("speed %s < %s" % (link["speed"], SPEED_ORDER[norm_speed]))
    return low


def _link_below_norm(index, link, kind, label, low):
    mine, other = index.switch_first(link)
    return finding(
        "link_below_norm",
        "error",
        "%s %s <-> %s runs at %dx%s (%s, the norm of this fabric's %ss): reseat or replace the cable."
        % (
            label,
            index.end_label(*mine),
            index.end_label(*other),
            link["width"],
            link["speed"],
            ", ".join(low),
            label,
        ),
        switch=index.name(mine[0]),
        port=mine[1],
        peer=index.end_label(*other),
        kind=kind,
        width=link["width"],
        speed=link["speed"],
    )


def check_link_norms(topo, index=None):
    """ISLs and host links below the fabric's norm (most common width and speed of their kind)."""
    index = index or Index(topo)
    findings = []
    for kind, label in (("isl", "inter-switch link"), ("host", "host link")):
        links = [lk for lk in topo["links"] if lk["kind"] == kind and lk["width"] is not None]
        if len(links) < 2:
            continue
        norm_width = norm([lk["width"] for lk in links])
        norm_speed = norm([speed_rank(lk["speed"]) for lk in links])
        for link in links:
            low = _below_norm(link, norm_width, norm_speed)
            if low:
                findings.append(_link_below_norm(index, link, kind, label, low))
    return findings


def trunks_of(topo, index):
    """{(lower switch, upper switch): [(lower port, upper port), ...]}: the cables between two switches."""
    trunks = defaultdict(list)
    for link in topo["links"]:
        if link["kind"] != "isl":
            continue
        mine, other = index.switch_first(link)
        trunks[(mine[0], other[0])].append((mine[1], other[1]))
    return trunks


def _short_trunks(index, tiers, groups, norm_size):
    tlo, thi = tiers
    findings = []
    for (lo, hi), ports in sorted(groups):
        if len(ports) >= norm_size:
            continue
        cables = ", ".join("port %d <-> port %d" % p for p in sorted(ports))
        findings.append(
            finding(
                "unequal_trunk",
                "error",
                "%s <-> %s has %d cable(s) (%s) where the other %s-%s trunks have %d: a trunk member is "
                "missing or down." % (index.name(lo), index.name(hi), len(ports), cables, tlo, thi, norm_size),
                switch=index.name(lo),
                port=sorted(ports)[0][0],
                peer=index.name(hi),
                cables=len(ports),
                expected=norm_size,
            )
        )
    return findings


def _absent_trunks(index, trunks, groups, norm_size):
    """A leaf that reaches no port of a spine that (nearly) every other leaf reaches."""
    lows = set(pair[0] for pair, _ports in groups)
    highs = Counter(pair[1] for pair, _ports in groups)
    findings = []
    for hi, count in highs.items():
        if not len(lows) > count >= 0.5 * len(lows):
            continue
        for lo in sorted(lo for lo in lows if (lo, hi) not in trunks):
            findings.append(
                finding(
                    "unequal_trunk",
                    "error",
                    "%s has no cable to %s, which %d of %d leaves reach: the whole trunk is "
                    "missing or down." % (index.name(lo), index.name(hi), count, len(lows)),
                    switch=index.name(lo),
                    port=None,
                    peer=index.name(hi),
                    cables=0,
                    expected=norm_size,
                )
            )
    return findings


def _per_group(groups, group_of):
    """The leaf-spine trunks split by the group of their leaf (structure.Shape: a dragonfly's groups, a
    fat tree's planes), in group order."""
    split = defaultdict(list)
    for pair, ports in groups:
        split[(group_of or {}).get(pair[0], 0)].append((pair, ports))
    return [split[g] for g in sorted(split)]


def check_trunks(topo, index=None, group_of=None):
    """Parallel trunks between two switches with fewer cables than the fabric's other trunks of the same
    tier pair, including a leaf with no cable at all to a spine every other leaf of its group reaches
    (``group_of``: {switch guid: group}, structure.Shape's; without it the fabric is one group)."""
    index = index or Index(topo)
    trunks = trunks_of(topo, index)
    by_tiers = defaultdict(list)
    for (lo, hi), ports in trunks.items():
        by_tiers[(index.tier.get(lo), index.tier.get(hi))].append(((lo, hi), ports))
    findings = []
    for tiers, groups in sorted(by_tiers.items(), key=lambda kv: str(kv[0])):
        norm_size = norm([len(p) for _pair, p in groups])
        findings += _short_trunks(index, tiers, groups, norm_size)
        if tiers == ("leaf", "spine"):
            for mine in _per_group(groups, group_of):
                findings += _absent_trunks(index, trunks, mine, norm_size)
    return findings


# ---------------------------------------------------------------------------------------- descriptions


def _factory(index, node):
    attach = None if "num_ports" in node else index.ca_attachment(node["guid"])
    where = " on %s port %s" % (index.name(attach[0]), attach[1]) if attach else ""
    kind = "switch" if "num_ports" in node else "CA"
    if attach:
        switch = index.name(attach[0])
    else:
        switch = node["name"] if kind == "switch" else None
    return finding(
        "factory_description",
        "warning",
        '%s %s%s has the factory node description "%s": set it to "<hostname> <device>" '
        "(rdma-core's rdma-ndd does it) so failures can name the host."
        % (kind, node["guid"], where, node["description"]),
        switch=switch,
        port=attach[1] if attach else None,
        peer=node["guid"],
        guid=node["guid"],
    )


def _duplicate(index, description, guids):
    places = []
    for guid in guids:
        attach = index.ca_attachment(guid)
        places.append("%s%s" % (guid, " (%s port %s)" % (index.name(attach[0]), attach[1]) if attach else ""))
    first = index.ca_attachment(guids[0])
    return finding(
        "duplicate_description",
        "warning",
        '%d nodes share the node description "%s": %s; give each its own hostname.'
        % (len(guids), description, ", ".join(places)),
        switch=index.name(first[0]) if first else None,
        port=first[1] if first else None,
        peer=description,
        guids=guids,
    )


def check_descriptions(topo, index=None):
    """Factory node descriptions (nobody set a hostname) and descriptions two nodes share."""
    index = index or Index(topo)
    findings = []
    seen = defaultdict(list)
    for node in topo["switches"] + topo["cas"]:
        if node.get("aggregation_node"):
            continue
        if node["factory"]:
            findings.append(_factory(index, node))
        elif node["description"]:
            seen[node["description"]].append(node["guid"])
    for description, guids in sorted(seen.items()):
        if len(guids) >= 2:
            findings.append(_duplicate(index, description, guids))
    return findings
