# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The topology model: switches, CAs, links (both ends, width, speed, kind) and tiers, built from the nodes
a parser read (parsers.parse_ibnetdiscover), and Index, the lookups every check and route walk uses.

A topology is a JSON-safe dict: {"switches": [...], "cas": [...], "links": [...], "tiers": {...},
"initiated_from": str|None, "warnings": [...]}. Link speeds are IBA names ("NDR"); rates are the nominal
Gb/s the kernel's sysfs ``rate`` file reports (4xNDR = 400).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from collections import defaultdict

from ansible_collections.ibtune.fabric.plugins.module_utils.host.sysfs import LANE_SPEEDS_GBPS
from ansible_collections.ibtune.fabric.plugins.module_utils.subnet.names import (
    is_aggregation_node,
    is_factory_description,
    short_name,
    split_description,
)

# Speed names in ibnetdiscover's "4xNDR" suffix, slowest first (IBA link speeds).
SPEED_ORDER = ("SDR", "DDR", "QDR", "FDR10", "FDR", "EDR", "HDR", "NDR", "XDR")
# Gb/s per lane, as iblinkinfo prints them, mapped back to the names above.
LANE_GBPS = {
    "2.5": "SDR",
    "5.0": "DDR",
    "10.0": "QDR",
    "10.3125": "FDR10",
    "14.0625": "FDR",
    "25.78125": "EDR",
    "53.125": "HDR",
    "106.25": "NDR",
    "212.5": "XDR",
}
# Nominal Gb/s per lane by the speed name iblinkinfo/ibnetdiscover print: the kernel's table (host/sysfs), one fact.
SPEED_GBPS = LANE_SPEEDS_GBPS
TIER_RANK = {"leaf": 0, "spine": 1, "core": 2}


def speed_rank(speed):
    """Position of a speed name in SPEED_ORDER (-1 for an unknown or missing one)."""
    try:
        return SPEED_ORDER.index(speed)
    except ValueError:
        return -1


def link_rate_gbps(link):
    """Nominal Gb/s a link trained to (width x lane rate), or None when the dump did not say."""
    lane = SPEED_GBPS.get(link.get("speed"))
    if lane is None or not link.get("width"):
        return None
    return link["width"] * lane


def link_key(link):
    """The two (guid, port) ends of a link, sorted: one key for the cable whichever end is read first."""
    return tuple(sorted([(link["a"]["guid"], link["a"]["port"]), (link["b"]["guid"], link["b"]["port"])]))


# ------------------------------------------------------------------------------------- building


def _merge_end(found, width, speed):
    """Both ends report: keep the worse view (a hand-edited or half-trained link differs)."""
    if width is not None and (found["width"] is None or width < found["width"]):
        found["width"] = width
    if speed is not None and (found["speed"] is None or speed_rank(speed) < speed_rank(found["speed"])):
        found["speed"] = speed


def _cables(nodes, order):
    """{sorted ends: {ends, width, speed}} from every port line; a peer seen only from the other side (e.g. a
    partial dump) still gets its end from that side."""
    links = {}
    for guid in order:
        for port, entry in nodes[guid]["ports"].items():
            key = tuple(sorted([(guid, port), (entry["peer_guid"], entry["peer_port"])]))
            if key in links:
                _merge_end(links[key], entry["width"], entry["speed"])
            else:
                links[key] = {"ends": key, "width": entry["width"], "speed": entry["speed"]}
    return links


def _switch_record(guid, node, ports):
    return {
        "guid": guid,
        "lid": node["lid"],
        "description": node["description"],
        "name": short_name(node["description"]),
        "num_ports": node["num_ports"],
        "factory": is_factory_description(node["description"]),
        "ports": ports,
    }


def _ca_record(guid, kind, description, ports, lid):
    host, device = split_description(description)
    return {
        "guid": guid,
        "type": kind,
        "description": description,
        "name": description or guid,
        "host": host,
        "device": device,
        "aggregation_node": is_aggregation_node(description),
        "factory": is_factory_description(description),
        "lid": lid,
        "ports": ports,
    }


def _peer_only_cas(switches, known, types):
    """CAs that appear only as peers of a switch (a dump cut short): they still count as endpoints."""
    cas = []
    for sw in switches:
        for entry in sw["ports"]:
            if entry["peer_type"] == "switch" or entry["peer_guid"] in known:
                continue
            known.add(entry["peer_guid"])
            types[entry["peer_guid"]] = entry["peer_type"]
            cas.append(_ca_record(entry["peer_guid"], entry["peer_type"], entry["peer_description"], [], None))
    return cas


def _link_kind(ta, tb, ga, gb, aggregation):
    if ta == "switch" and tb == "switch":
        return "isl"
    if ga in aggregation or gb in aggregation:
        return "aggregation"
    return "host"


def _link_list(links, types, aggregation):
    out = []
    for key in sorted(links):
        (ga, pa), (gb, pb) = key
        ta, tb = types.get(ga, "ca"), types.get(gb, "ca")
        out.append(
            {
                "a": {"guid": ga, "port": pa, "type": ta},
                "b": {"guid": gb, "port": pb, "type": tb},
                "width": links[key]["width"],
                "speed": links[key]["speed"],
                "kind": _link_kind(ta, tb, ga, gb, aggregation),
            }
        )
    return out


def build_topology(nodes, order, initiated=None, warnings=None):
    """The topology dict from parsed nodes ({guid: {type, guid, num_ports, description, lid, ports: {port:
    entry}}}) in the order they were read."""
    types = dict((g, n["type"]) for g, n in nodes.items())
    switches, cas = [], []
    for guid in order:
        node = nodes[guid]
        ports = [node["ports"][p] for p in sorted(node["ports"])]
        if node["type"] == "switch":
            switches.append(_switch_record(guid, node, ports))
        else:
            lid = ports[0].get("lid") if ports else None
            cas.append(_ca_record(guid, node["type"], node["description"], ports, lid))
    cas += _peer_only_cas(switches, set(nodes), types)
    aggregation = set(c["guid"] for c in cas if c["aggregation_node"])
    topo = {
        "switches": switches,
        "cas": cas,
        "links": _link_list(_cables(nodes, order), types, aggregation),
        "initiated_from": initiated,
        "warnings": list(warnings or []),
    }
    topo["tiers"] = derive_tiers(topo)
    for sw in switches:
        sw["tier"] = topo["tiers"]["by_guid"].get(sw["guid"])
    return topo


# ---------------------------------------------------------------------------------------- tiers


def _leaves_and_neighbours(topo):
    """(switches with a host link, {switch: switches it has an ISL to})."""
    sw_guids = set(s["guid"] for s in topo["switches"])
    leaves = set()
    neighbours = defaultdict(set)
    for link in topo["links"]:
        a, b = link["a"]["guid"], link["b"]["guid"]
        if link["kind"] == "isl":
            neighbours[a].add(b)
            neighbours[b].add(a)
        elif link["kind"] == "host":
            leaves.update(end for end in (a, b) if end in sw_guids)
    return leaves, neighbours


def _climb(leaves, neighbours):
    """{guid: tier}: the leaves, then each hop further up is spine, and everything above core."""
    by_guid = dict((g, "leaf") for g in leaves)
    frontier = set(leaves)
    names = ("spine", "core")
    level = 0
    while frontier:
        above = set()
        for guid in frontier:
            above.update(n for n in neighbours[guid] if n not in by_guid)
        tier = names[min(level, len(names) - 1)]
        for guid in above:
            by_guid[guid] = tier
        frontier = above
        level += 1
    return by_guid


def derive_tiers(topo):
    """Leaf = switch with a link to a CA that is not a SHARP Aggregation Node; spine = switch one hop
    above the leaves with only switch links; core = anything further up. Returns names per tier."""
    by_guid = _climb(*_leaves_and_neighbours(topo))
    for sw in topo["switches"]:
        by_guid.setdefault(sw["guid"], "isolated")
    tiers = {"leaf": [], "spine": [], "core": [], "isolated": []}
    for sw in topo["switches"]:
        tiers[by_guid[sw["guid"]]].append(sw["guid"])
    tiers["by_guid"] = by_guid
    return tiers


def topology_view(topo):
    """The JSON-safe parts a caller keeps (and may pass back as a golden topology)."""
    tiers = dict((k, v) for k, v in topo["tiers"].items() if k != "by_guid")
    tiers["by_guid"] = topo["tiers"]["by_guid"]
    return {"switches": topo["switches"], "cas": topo["cas"], "links": topo["links"], "tiers": tiers}


# ---------------------------------------------------------------------------------------- lookups


class Index:
    """Lookups over a parsed topology (built once; the parse result itself stays JSON-safe)."""

    def __init__(self, topo):
        self.topo = topo
        self.nodes = {}
        for node in topo["switches"] + topo["cas"]:
            self.nodes[node["guid"]] = node
        self.peer = {}
        self.link_at = {}
        for link in topo["links"]:
            a = (link["a"]["guid"], link["a"]["port"])
            b = (link["b"]["guid"], link["b"]["port"])
            self.peer[a] = b
            self.peer[b] = a
            self.link_at[a] = link
            self.link_at[b] = link
        self.tier = topo.get("tiers", {}).get("by_guid", {})
        self.lid_to_node = self._lids(topo)

    @staticmethod
    def _lids(topo):
        lids = {}
        for sw in topo["switches"]:
            if sw["lid"] is not None:
                lids[sw["lid"]] = (sw["guid"], 0)
        for ca in topo["cas"]:
            for entry in ca["ports"]:
                if entry.get("lid") is not None:
                    lids[entry["lid"]] = (ca["guid"], entry["port"])
        return lids

    def name(self, guid):
        node = self.nodes.get(guid)
        if node is None:
            return guid
        return node.get("name") or guid

    def is_switch(self, guid):
        node = self.nodes.get(guid)
        return node is not None and "num_ports" in node

    def end_label(self, guid, port):
        """ "A09-P1-IBLEAF-04-04 port 17" for a switch end, "node12 mlx5_3" (port N if not 1) for a CA."""
        if self.is_switch(guid):
            return "%s port %s" % (self.name(guid), port)
        label = self.name(guid)
        return label if port == 1 else "%s port %s" % (label, port)

    def port_label(self, guid, port):
        """ "A09-P1-IBLEAF-04-04 p17" for a switch port (as cables and routes name it), else end_label()."""
        if self.is_switch(guid):
            return "%s p%d" % (self.name(guid), port)
        return self.end_label(guid, port)

    def ca_attachment(self, guid):
        """(switch guid, switch port, CA port) of a CA's first connected port, or None."""
        node = self.nodes.get(guid)
        if node is None:
            return None
        if node.get("ports"):
            ports = [e["port"] for e in node["ports"]]
        else:
            ports = sorted(p for (g, p) in self.peer if g == guid)
        for port in ports:
            peer = self.peer.get((guid, port))
            if peer and self.is_switch(peer[0]):
                return peer[0], peer[1], port
        return None

    def rank(self, guid):
        """0 leaf, 1 spine, 2 core, 3 a switch of no known tier."""
        return TIER_RANK.get(self.tier.get(guid), 3)

    def switch_first(self, link):
        """(switch end, other end) of a link, the switch end being the one a person walks to; of an ISL the
        lower tier (leaf) first."""
        a = (link["a"]["guid"], link["a"]["port"])
        b = (link["b"]["guid"], link["b"]["port"])
        if self.is_switch(b[0]) and not self.is_switch(a[0]):
            return b, a
        if self.is_switch(a[0]) and self.is_switch(b[0]) and self.rank(b[0]) < self.rank(a[0]):
            return b, a
        return a, b
