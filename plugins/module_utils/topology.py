# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The fabric as the subnet manager sees it: ibnetdiscover/iblinkinfo/ibroute parsers, a topology
model (switches, CAs, links, tiers), the mapping of inventory rails to leaf ports, and fabric checks.

Pure functions over the text infiniband-diags prints; no maintained parser for these formats exists
on PyPI (checked 2026-12-01), so the grammar of infiniband-diags 44 (ibnetdiscover.c, iblinkinfo.c,
dump_fts.c) is followed here. Every finding is a dict whose ``msg`` is one sentence naming switch,
port and peer.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re
from collections import defaultdict

HEX = r"[0-9a-fA-F]+"
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

_NODE_RE = re.compile(r'^(Switch|Ca|Rt)\s+(\d+)\s+"([SHR])-(' + HEX + r')"\s*(?:#\s*"(.*?)"(.*))?$')
_PORT_RE = re.compile(
    r"^\[(\d+)\](?:\[ext \d+\])?(?:\((" + HEX + r")\))?\s*"
    r'"([SHR])-(' + HEX + r')"\[(\d+)\](?:\[ext \d+\])?(?:\((' + HEX + r")\))?\s*(?:#\s*(.*))?$"
)
_LID_RE = re.compile(r"\blid (\d+)")
_LINK_RE = re.compile(r"\b(\d+)x([A-Z][A-Z0-9]*)\s*$")
_QUOTED_RE = re.compile(r'"(.*?)"')
_GUIDLINE_RE = re.compile(r"^(switchguid|caguid|rtguid)=0x(" + HEX + r")")
_DEVICE_RE = re.compile(r"^(mlx\d+_\d+|HCA-\d+|[a-z][a-z0-9]*_\d+|ibp\S+)$")
# Descriptions a node has until someone sets its node description: chip/vendor strings.
_FACTORY_RE = re.compile(
    r"^(MT\d+\b|ISR\d+\b|SW-\S+\s+Voltaire|.*\bMellanox Technologies$|.*\bNVIDIA\b.*Technologies$)"
)
_DEFAULT_HOSTNAMES = ("localhost", "ubuntu", "debian", "rhel", "rocky", "centos", "(none)")
_AGGREGATION_RE = re.compile(r"Aggregation Node", re.IGNORECASE)


def normalize_guid(value):
    """GUID in any spelling ("0c42:a103:0065:3e1c", "0x2c5e...", "H-e09d...", int) -> "0x%016x"."""
    if value is None:
        return None
    if isinstance(value, int):
        return "0x%016x" % value
    text = str(value).strip()
    if len(text) > 2 and text[1] == "-" and text[0] in "SHR":
        text = text[2:]
    text = text.replace(":", "")
    if text.lower().startswith("0x"):
        text = text[2:]
    try:
        return "0x%016x" % int(text, 16)
    except ValueError:
        return None


def short_name(description):
    """Switch/CA name for sentences: "MF0;A09-P1-IBLEAF-04-04:MQM9701/U1" -> "A09-P1-IBLEAF-04-04"."""
    text = (description or "").strip()
    if text.startswith("MF0;"):
        text = text[4:]
        if ":" in text:
            text = text.rsplit(":", 1)[0]
    return text


def split_description(description):
    """(host, device) when a CA's node description names them ("node12 mlx5_3"), else (None, None)."""
    words = (description or "").split()
    if len(words) == 2 and _DEVICE_RE.match(words[1]) and not is_factory_description(description):
        return words[0], words[1]
    return None, None


def is_aggregation_node(description):
    return bool(_AGGREGATION_RE.search(description or ""))


def is_factory_description(description):
    """True for a description nobody set: the chip/vendor string, or a distribution's default hostname."""
    text = (description or "").strip()
    if not text or is_aggregation_node(text):
        return False
    if _FACTORY_RE.match(text):
        return True
    words = text.split()
    return len(words) == 2 and words[0].lower() in _DEFAULT_HOSTNAMES


def speed_rank(speed):
    try:
        return SPEED_ORDER.index(speed)
    except ValueError:
        return -1


def _link_attrs(comment):
    match = _LINK_RE.search(comment or "")
    if not match:
        return None, None
    return int(match.group(1)), match.group(2)


def _port_lid(comment, ca_side):
    """LID of the local port (CA port lines start "lid N lmc M") or of the peer (switch lines)."""
    lids = _LID_RE.findall(comment or "")
    if not lids:
        return None
    if ca_side:
        return int(lids[0])
    return int(lids[-1])


def parse_ibnetdiscover(text):
    """ibnetdiscover output -> topology dict.

    Returns {"switches": [...], "cas": [...], "links": [...], "tiers": {...}, "initiated_from": str|None,
    "warnings": [lines that were not part of the format, e.g. ibwarn lines before the header]}.
    Switch: guid, lid, description, name, num_ports, ports (port, peer_guid, peer_port, peer_type, width, speed).
    CA: guid, description, name, host, device, aggregation_node, factory, ports (port, port_guid, lid, peer_*).
    Link: a (guid, port, type), b (guid, port, type), width, speed, kind ("isl", "host", "aggregation").
    """
    nodes = {}
    order = []
    current = None
    warnings = []
    initiated = None
    for raw in (text or "").splitlines():
        line = raw.strip()
        if not line:
            continue
        if line.startswith("#"):
            match = re.search(r"Initiated from node (" + HEX + r")", line)
            if match:
                initiated = normalize_guid(match.group(1))
            continue
        node = _NODE_RE.match(line)
        if node:
            kind = {"Switch": "switch", "Ca": "ca", "Rt": "router"}[node.group(1)]
            guid = normalize_guid(node.group(4))
            trailer = node.group(6) or ""
            lid = None
            if kind == "switch":
                lid_match = re.search(r"\blid (\d+)", trailer)
                lid = int(lid_match.group(1)) if lid_match else None
            current = {
                "type": kind,
                "guid": guid,
                "num_ports": int(node.group(2)),
                "description": node.group(5) or "",
                "lid": lid,
                "enhanced_port0": "enhanced port 0" in trailer,
                "ports": {},
            }
            if guid not in nodes:
                order.append(guid)
            nodes[guid] = current
            continue
        port = _PORT_RE.match(line)
        if port and current is not None:
            comment = port.group(7) or ""
            width, speed = _link_attrs(comment)
            quoted = _QUOTED_RE.findall(comment)
            ca_side = current["type"] != "switch"
            entry = {
                "port": int(port.group(1)),
                "port_guid": normalize_guid(port.group(2)) if port.group(2) else None,
                "peer_type": {"S": "switch", "H": "ca", "R": "router"}[port.group(3)],
                "peer_guid": normalize_guid(port.group(4)),
                "peer_port": int(port.group(5)),
                "peer_description": quoted[-1] if quoted else "",
                "width": width,
                "speed": speed,
            }
            if ca_side:
                entry["lid"] = _port_lid(comment, True)
            else:
                entry["peer_lid"] = _port_lid(comment, False)
            current["ports"][entry["port"]] = entry
            continue
        if _GUIDLINE_RE.match(line) or re.match(r"^(vendid|devid|sysimgguid)=", line):
            continue
        if line.startswith("Chassis") or line == "Non-Chassis Nodes" or line.startswith("Non-Chassis"):
            continue
        warnings.append(line)
    return _build(nodes, order, initiated, warnings)


def _build(nodes, order, initiated, warnings):
    # A peer seen only from the other side (e.g. a partial dump) still gets its end from that side.
    links = {}
    for guid in order:
        node = nodes[guid]
        for port, entry in node["ports"].items():
            a = (guid, port)
            b = (entry["peer_guid"], entry["peer_port"])
            key = tuple(sorted([a, b]))
            found = links.get(key)
            width, speed = entry["width"], entry["speed"]
            if found is None:
                links[key] = {"ends": key, "width": width, "speed": speed}
            else:
                # Both ends report: keep the worse view (a hand-edited or half-trained link differs).
                if width is not None and (found["width"] is None or width < found["width"]):
                    found["width"] = width
                if speed is not None and (found["speed"] is None or speed_rank(speed) < speed_rank(found["speed"])):
                    found["speed"] = speed
    types = dict((g, n["type"]) for g, n in nodes.items())
    switches = []
    cas = []
    for guid in order:
        node = nodes[guid]
        ports = [node["ports"][p] for p in sorted(node["ports"])]
        if node["type"] == "switch":
            switches.append(
                {
                    "guid": guid,
                    "lid": node["lid"],
                    "description": node["description"],
                    "name": short_name(node["description"]),
                    "num_ports": node["num_ports"],
                    "factory": is_factory_description(node["description"]),
                    "ports": ports,
                }
            )
        else:
            host, device = split_description(node["description"])
            cas.append(
                {
                    "guid": guid,
                    "type": node["type"],
                    "description": node["description"],
                    "name": node["description"] or guid,
                    "host": host,
                    "device": device,
                    "aggregation_node": is_aggregation_node(node["description"]),
                    "factory": is_factory_description(node["description"]),
                    "lid": ports[0].get("lid") if ports else None,
                    "ports": ports,
                }
            )
    # CAs that appear only as peers of a switch (a dump cut short) still count as endpoints.
    known = set(nodes)
    for sw in switches:
        for entry in sw["ports"]:
            if entry["peer_type"] != "switch" and entry["peer_guid"] not in known:
                known.add(entry["peer_guid"])
                desc = entry["peer_description"]
                host, device = split_description(desc)
                types[entry["peer_guid"]] = entry["peer_type"]
                cas.append(
                    {
                        "guid": entry["peer_guid"],
                        "type": entry["peer_type"],
                        "description": desc,
                        "name": desc or entry["peer_guid"],
                        "host": host,
                        "device": device,
                        "aggregation_node": is_aggregation_node(desc),
                        "factory": is_factory_description(desc),
                        "lid": None,
                        "ports": [],
                    }
                )
    an = set(c["guid"] for c in cas if c["aggregation_node"])
    link_list = []
    for key in sorted(links):
        (ga, pa), (gb, pb) = key
        ta, tb = types.get(ga, "ca"), types.get(gb, "ca")
        if ta == "switch" and tb == "switch":
            kind = "isl"
        elif ga in an or gb in an:
            kind = "aggregation"
        else:
            kind = "host"
        link_list.append(
            {
                "a": {"guid": ga, "port": pa, "type": ta},
                "b": {"guid": gb, "port": pb, "type": tb},
                "width": links[key]["width"],
                "speed": links[key]["speed"],
                "kind": kind,
            }
        )
    topo = {
        "switches": switches,
        "cas": cas,
        "links": link_list,
        "initiated_from": initiated,
        "warnings": warnings,
    }
    topo["tiers"] = derive_tiers(topo)
    for sw in switches:
        sw["tier"] = topo["tiers"]["by_guid"].get(sw["guid"])
    return topo


def derive_tiers(topo):
    """Leaf = switch with a link to a CA that is not a SHARP Aggregation Node; spine = switch one hop
    above the leaves with only switch links; core = anything further up. Returns names per tier."""
    an = set(c["guid"] for c in topo["cas"] if c["aggregation_node"])
    sw_guids = set(s["guid"] for s in topo["switches"])
    leaves = set()
    neighbours = defaultdict(set)
    for link in topo["links"]:
        a, b = link["a"]["guid"], link["b"]["guid"]
        if link["kind"] == "isl":
            neighbours[a].add(b)
            neighbours[b].add(a)
        elif link["kind"] == "host":
            for end in (a, b):
                if end in sw_guids:
                    leaves.add(end)
    by_guid = dict((g, "leaf") for g in leaves)
    frontier = set(leaves)
    level = 0
    names = ("spine", "core")
    while frontier:
        nxt = set()
        for guid in frontier:
            nxt.update(n for n in neighbours[guid] if n not in by_guid)
        if not nxt:
            break
        tier = names[min(level, len(names) - 1)]
        for guid in nxt:
            by_guid[guid] = tier
        frontier = nxt
        level += 1
    for guid in sw_guids:
        by_guid.setdefault(guid, "isolated")
    del an
    tiers = {"leaf": [], "spine": [], "core": [], "isolated": []}
    for sw in topo["switches"]:
        tiers[by_guid[sw["guid"]]].append(sw["guid"])
    tiers["by_guid"] = by_guid
    return tiers


class Index:
    """Lookups over a parsed topology (built once; the parse result itself stays JSON-safe)."""

    def __init__(self, topo):
        self.topo = topo
        self.nodes = {}
        for sw in topo["switches"]:
            self.nodes[sw["guid"]] = sw
        for ca in topo["cas"]:
            self.nodes[ca["guid"]] = ca
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
        self.lid_to_node = {}
        for sw in topo["switches"]:
            if sw["lid"] is not None:
                self.lid_to_node[sw["lid"]] = (sw["guid"], 0)
        for ca in topo["cas"]:
            for entry in ca["ports"]:
                if entry.get("lid") is not None:
                    self.lid_to_node[entry["lid"]] = (ca["guid"], entry["port"])

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

    def ca_attachment(self, guid):
        """(switch guid, switch port, CA port) of a CA's first connected port, or None."""
        node = self.nodes.get(guid)
        if node is None:
            return None
        ports = (
            sorted(p for (g, p) in self.peer if g == guid)
            if not node.get("ports")
            else [e["port"] for e in node["ports"]]
        )
        for port in ports:
            peer = self.peer.get((guid, port))
            if peer and self.is_switch(peer[0]):
                return peer[0], peer[1], port
        return None


# ---------------------------------------------------------------------------------------- iblinkinfo

_LI_HEADER_RE = re.compile(r"^(CA|Switch):\s*(?:(0x" + HEX + r")\s+)?(.*?):?\s*$")
_LI_PORT_RE = re.compile(
    r"^\s*(?:(0x" + HEX + r')\s+(?:"\s*(.*?)"\s+)?)?(\d+)\s+(\d+)\[[^\]]*\]\s+==\(\s*'
    r"(?:(\d+)X\s+([\d.]+)\s+Gbps\s+)?([A-Za-z]+)/\s*([A-Za-z]+)\s*\)==>\s*"
    r'(?:(\d+)\s+(\d+))?\s*\[[^\]]*\]\s+"(.*?)"\s*\((.*)\)\s*$'
)


def parse_iblinkinfo(text):
    """iblinkinfo output (default or -l) -> [{node_type, guid, description, lid, port, width, lane_gbps,
    speed, state, phys_state, peer_lid, peer_port, peer_description, note}], one per port line."""
    out = []
    node_type, node_guid, node_desc = None, None, ""
    for raw in (text or "").splitlines():
        header = _LI_HEADER_RE.match(raw.strip())
        if header and "==(" not in raw:
            node_type = "switch" if header.group(1) == "Switch" else "ca"
            node_guid = normalize_guid(header.group(2)) if header.group(2) else None
            node_desc = header.group(3)
            continue
        match = _LI_PORT_RE.match(raw)
        if not match:
            continue
        guid = normalize_guid(match.group(1)) if match.group(1) else node_guid
        desc = match.group(2) if match.group(2) is not None else node_desc
        lane = match.group(6)
        out.append(
            {
                "node_type": node_type if match.group(2) is None else "switch",
                "guid": guid,
                "description": desc,
                "lid": int(match.group(3)),
                "port": int(match.group(4)),
                "width": int(match.group(5)) if match.group(5) else None,
                "lane_gbps": float(lane) if lane else None,
                "speed": LANE_GBPS.get(lane) if lane else None,
                "state": match.group(7),
                "phys_state": match.group(8),
                "peer_lid": int(match.group(9)) if match.group(9) else None,
                "peer_port": int(match.group(10)) if match.group(10) else None,
                "peer_description": match.group(11),
                "note": match.group(12).strip(),
            }
        )
    return out


# ------------------------------------------------------------------------------------ ibroute/dump_lfts

_LFT_HEADER_RE = re.compile(r"^Unicast lids \[.*?\] of switch (.*?) guid (0x" + HEX + r") \((.*)\):\s*$")
_LFT_ENTRY_RE = re.compile(r"^(0x" + HEX + r")\s+(\d+)\s*:")


def parse_lfts(text):
    """ibroute / dump_lfts output -> {switch guid: {lid: out port}} (one block per switch)."""
    tables = {}
    current = None
    for raw in (text or "").splitlines():
        header = _LFT_HEADER_RE.match(raw.strip())
        if header:
            current = tables.setdefault(normalize_guid(header.group(2)), {})
            continue
        if current is None:
            continue
        entry = _LFT_ENTRY_RE.match(raw.strip())
        if entry:
            current[int(entry.group(1), 16)] = int(entry.group(2))
    return tables


# ------------------------------------------------------------------------------------------ rail map


def map_rails(topo, hosts, index=None):
    """Inventory rails -> leaf ports.

    hosts: {host: {device: node_guid}} (node GUIDs as ib_facts reports them, any spelling).
    Returns {"rails": {host: {device: {guid, found, ca, switch_guid, switch, port, description}}},
    "missing": [{host, device, guid}]}.
    """
    index = index or Index(topo)
    rails = {}
    missing = []
    for host in sorted(hosts or {}):
        rails[host] = {}
        for device in sorted(hosts[host] or {}):
            guid = normalize_guid(hosts[host][device])
            entry = {"guid": guid, "found": False, "switch_guid": None, "switch": None, "port": None}
            node = index.nodes.get(guid)
            if node is not None and not index.is_switch(guid):
                entry["found"] = True
                entry["description"] = node["description"]
                attach = index.ca_attachment(guid)
                if attach:
                    entry["switch_guid"], entry["port"], entry["ca_port"] = attach
                    entry["switch"] = index.name(attach[0])
                    entry["tier"] = index.tier.get(attach[0])
            else:
                missing.append({"host": host, "device": device, "guid": guid})
            rails[host][device] = entry
    return {"rails": rails, "missing": missing}


def host_order(rail_map):
    """Hosts ordered by the leaf switch and port of their first rail (hosts not found last)."""
    keys = []
    for host, devices in (rail_map.get("rails") or {}).items():
        found = [(d["switch"] or "", d["port"] or 0) for _, d in sorted(devices.items()) if d.get("found")]
        keys.append((0 if found else 1, found[0] if found else ("", 0), host))
    return [k[2] for k in sorted(keys)]
