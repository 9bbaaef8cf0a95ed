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
from collections import Counter, defaultdict

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
    r"(?:(0x" + HEX + r")\s+)?(?:(\d+)\s+(\d+))?\s*\[[^\]]*\]\s+\"(.*?)\"\s*\((.*)\)\s*$"
)


def parse_iblinkinfo(text):
    """iblinkinfo output (default or -l) -> [{node_type, guid, description, lid, port, width, lane_gbps,
    speed, state, phys_state, peer_guid, peer_lid, peer_port, peer_description, note}], one per port line.

    node_type is "switch"/"ca" from the default format's headers, None in -l format (no headers); guid
    is the switch GUID or, for a CA, its port GUID."""
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
                # iblinkinfo -l lines carry no CA/Switch header: the topology tells them apart
                "node_type": node_type if match.group(2) is None else None,
                "guid": guid,
                "description": desc,
                "lid": int(match.group(3)),
                "port": int(match.group(4)),
                "width": int(match.group(5)) if match.group(5) else None,
                "lane_gbps": float(lane) if lane else None,
                "speed": LANE_GBPS.get(lane) if lane else None,
                "state": match.group(7),
                "phys_state": match.group(8),
                "peer_guid": normalize_guid(match.group(9)) if match.group(9) else None,
                "peer_lid": int(match.group(10)) if match.group(10) else None,
                "peer_port": int(match.group(11)) if match.group(11) else None,
                "peer_description": match.group(12),
                "note": match.group(13).strip(),
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


def hosts_from_facts(facts):
    """{host: ibtune_rdma facts (ib_facts)} -> {host: {device: node_guid}}; hosts without devices are left out."""
    out = {}
    for host, fact in sorted((facts or {}).items()):
        devices = (fact or {}).get("devices") or {}
        rails = dict((dev, info.get("node_guid")) for dev, info in devices.items() if (info or {}).get("node_guid"))
        if rails:
            out[host] = rails
    return out


def host_order(rail_map):
    """Hosts ordered by the leaf switch and port of their first rail (hosts not found last)."""
    keys = []
    for host, devices in (rail_map.get("rails") or {}).items():
        found = [(d["switch"] or "", d["port"] or 0) for _dev, d in sorted(devices.items()) if d.get("found")]
        keys.append((0 if found else 1, found[0] if found else ("", 0), host))
    return [k[2] for k in sorted(keys)]


# ------------------------------------------------------------------------------------------- checks


def _finding(check, severity, msg, switch=None, port=None, peer=None, **extra):
    found = {"check": check, "severity": severity, "switch": switch, "port": port, "peer": peer, "msg": msg}
    found.update(extra)
    return found


def _switch_first(index, link):
    """(switch end, other end) of a link, the switch end being the one a person walks to."""
    a = (link["a"]["guid"], link["a"]["port"])
    b = (link["b"]["guid"], link["b"]["port"])
    if index.is_switch(b[0]) and not index.is_switch(a[0]):
        return b, a
    if index.is_switch(a[0]) and index.is_switch(b[0]):
        # ISL: the lower tier (leaf) first
        rank = {"leaf": 0, "spine": 1, "core": 2}
        if rank.get(index.tier.get(b[0]), 3) < rank.get(index.tier.get(a[0]), 3):
            return b, a
    return a, b


def _rails_of(topo, rail_map, index):
    """[(host, device, ca guid, switch guid, switch port)] from the inventory map, else from descriptions."""
    rows = []
    if rail_map:
        for host, devices in sorted(rail_map.get("rails", {}).items()):
            for device, entry in sorted(devices.items()):
                if entry.get("found") and entry.get("switch_guid"):
                    rows.append((host, device, entry["guid"], entry["switch_guid"], entry["port"]))
        return rows
    for ca in topo["cas"]:
        if ca["host"] and not ca["aggregation_node"]:
            attach = index.ca_attachment(ca["guid"])
            if attach:
                rows.append((ca["host"], ca["device"], ca["guid"], attach[0], attach[1]))
    return rows


def check_rail_alignment(topo, rail_map=None, rail_groups=None, index=None, majority=0.5):
    """Rail i of every host on a leaf of rail group i.

    rail_groups: {device: [leaf names or GUIDs]} when the design is written down; without it each leaf's
    rail is the device most of its hosts use there (more than ``majority`` of them), and a rail on a leaf
    of another rail is the finding (two hosts' rails swapped between leaves show up as two findings).
    """
    index = index or Index(topo)
    rows = _rails_of(topo, rail_map, index)
    findings = []
    # which rail a leaf carries: the inventory's rails, plus the CAs whose description names a device
    known = set(r[2] for r in rows)
    derive = rows + [r for r in _rails_of(topo, None, index) if r[2] not in known] if rail_map else rows
    if rail_groups:
        allowed = {}
        for device, leaves in rail_groups.items():
            names = set()
            for leaf in leaves or []:
                names.add(normalize_guid(leaf) if str(leaf).lower().startswith("0x") else leaf)
            allowed[device] = names
        for host, device, _guid, sw, port in rows:
            if device not in allowed:
                continue
            if sw in allowed[device] or index.name(sw) in allowed[device]:
                continue
            findings.append(
                _finding(
                    "rail_alignment",
                    "error",
                    "%s %s is cabled to %s port %s, which is not a leaf of rail group %s (%s): move the cable "
                    "to a leaf of that group."
                    % (host, device, index.name(sw), port, device, ", ".join(sorted(allowed[device]))),
                    switch=index.name(sw),
                    port=port,
                    peer="%s %s" % (host, device),
                    host=host,
                    device=device,
                )
            )
        return findings
    by_leaf = defaultdict(Counter)
    for _host, device, _guid, sw, _port in derive:
        by_leaf[sw][device] += 1
    rail_of_leaf = {}
    for sw, counts in by_leaf.items():
        device, count = counts.most_common(1)[0]
        total = sum(counts.values())
        if total >= 2 and count > majority * total:
            rail_of_leaf[sw] = (device, count, total)
    leaves_of_rail = defaultdict(list)
    for sw, (device, _count, _total) in rail_of_leaf.items():
        leaves_of_rail[device].append(index.name(sw))
    for host, device, _guid, sw, port in rows:
        if sw not in rail_of_leaf or device not in leaves_of_rail:
            continue
        leaf_rail, count, total = rail_of_leaf[sw]
        if leaf_rail == device:
            continue
        findings.append(
            _finding(
                "rail_alignment",
                "error",
                "%s %s is cabled to %s port %s, a leaf of rail %s (%d of its %d host ports); rail %s belongs on "
                "%s: swap the cable back."
                % (
                    host,
                    device,
                    index.name(sw),
                    port,
                    leaf_rail,
                    count,
                    total,
                    device,
                    ", ".join(sorted(leaves_of_rail[device])),
                ),
                switch=index.name(sw),
                port=port,
                peer="%s %s" % (host, device),
                host=host,
                device=device,
            )
        )
    return findings


def check_missing(rail_map):
    """Inventory rails whose node GUID is not in the fabric."""
    findings = []
    for miss in (rail_map or {}).get("missing", []):
        findings.append(
            _finding(
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


def check_ports_down(linkinfo, topo, golden=None, index=None):
    """Switch ports that are not Active where a cable is expected: a cable in the golden topology (or in
    ibnetdiscover's view), or a port whose physical link is up but which the SM has not activated."""
    index = index or Index(topo)
    expected = Index(golden) if golden else index
    findings = []
    for row in linkinfo or []:
        guid = row["guid"]
        is_switch = row["node_type"] == "switch" or (row["node_type"] is None and index.is_switch(guid))
        if not is_switch or row["state"] == "Active":
            continue
        peer = expected.peer.get((guid, row["port"]))
        state = "%s/%s" % (row["state"], row["phys_state"])
        name = expected.name(guid) if guid in expected.nodes else short_name(row["description"])
        if peer is not None:
            peer_label = expected.end_label(*peer)
            findings.append(
                _finding(
                    "port_down",
                    "error",
                    "%s port %s is %s where a cable to %s is expected: reseat or replace that cable."
                    % (name, row["port"], state, peer_label),
                    switch=name,
                    port=row["port"],
                    peer=peer_label,
                    state=state,
                )
            )
        elif row["phys_state"] == "LinkUp":
            findings.append(
                _finding(
                    "port_down",
                    "error",
                    "%s port %s is %s: the link trained but the subnet manager did not activate it; check "
                    "opensm's log for that port." % (name, row["port"], state),
                    switch=name,
                    port=row["port"],
                    peer=row["peer_description"] or None,
                    state=state,
                )
            )
    return findings


def _norm(values):
    counts = Counter(values)
    best = max(counts.values())
    return max(v for v, c in counts.items() if c == best)


def check_link_norms(topo, index=None):
    """ISLs and host links below the fabric's norm (most common width and speed of their kind)."""
    index = index or Index(topo)
    findings = []
    for kind, label in (("isl", "inter-switch link"), ("host", "host link")):
        links = [lk for lk in topo["links"] if lk["kind"] == kind and lk["width"] is not None]
        if len(links) < 2:
            continue
        norm_width = _norm([lk["width"] for lk in links])
        norm_speed = _norm([speed_rank(lk["speed"]) for lk in links])
        for link in links:
            low = []
            if link["width"] < norm_width:
                low.append("width %dx < %dx" % (link["width"], norm_width))
            if speed_rank(link["speed"]) < norm_speed:
                low.append("speed %s < %s" % (link["speed"], SPEED_ORDER[norm_speed]))
            if not low:
                continue
            mine, other = _switch_first(index, link)
            findings.append(
                _finding(
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
            )
    return findings


def check_trunks(topo, index=None):
    """Parallel trunks between two switches with fewer cables than the fabric's other trunks of the same
    tier pair, including a leaf with no cable at all to a spine every other leaf reaches."""
    index = index or Index(topo)
    trunks = defaultdict(list)
    for link in topo["links"]:
        if link["kind"] != "isl":
            continue
        mine, other = _switch_first(index, link)
        trunks[(mine[0], other[0])].append((mine[1], other[1]))
    by_tiers = defaultdict(list)
    for (lo, hi), ports in trunks.items():
        by_tiers[(index.tier.get(lo), index.tier.get(hi))].append(((lo, hi), ports))
    findings = []
    for (tlo, thi), groups in sorted(by_tiers.items(), key=lambda kv: str(kv[0])):
        norm = _norm([len(p) for _pair, p in groups])
        for (lo, hi), ports in sorted(groups):
            if len(ports) >= norm:
                continue
            cables = ", ".join("port %d <-> port %d" % p for p in sorted(ports))
            findings.append(
                _finding(
                    "unequal_trunk",
                    "error",
                    "%s <-> %s has %d cable(s) (%s) where the other %s-%s trunks have %d: a trunk member is "
                    "missing or down." % (index.name(lo), index.name(hi), len(ports), cables, tlo, thi, norm),
                    switch=index.name(lo),
                    port=sorted(ports)[0][0],
                    peer=index.name(hi),
                    cables=len(ports),
                    expected=norm,
                )
            )
        # a leaf that reaches no port of a spine that (nearly) every other leaf reaches
        if tlo == "leaf" and thi == "spine":
            lows = set(pair[0] for pair, _ports in groups)
            highs = Counter(pair[1] for pair, _ports in groups)
            for hi, count in highs.items():
                if count < len(lows) and count >= 0.5 * len(lows):
                    for lo in sorted(lows):
                        if (lo, hi) not in trunks:
                            findings.append(
                                _finding(
                                    "unequal_trunk",
                                    "error",
                                    "%s has no cable to %s, which %d of %d leaves reach: the whole trunk is "
                                    "missing or down." % (index.name(lo), index.name(hi), count, len(lows)),
                                    switch=index.name(lo),
                                    port=None,
                                    peer=index.name(hi),
                                    cables=0,
                                    expected=norm,
                                )
                            )
    return findings


def check_descriptions(topo, index=None):
    """Factory node descriptions (nobody set a hostname) and descriptions two nodes share."""
    index = index or Index(topo)
    findings = []
    seen = defaultdict(list)
    for node in topo["switches"] + topo["cas"]:
        if node.get("aggregation_node"):
            continue
        attach = None if "num_ports" in node else index.ca_attachment(node["guid"])
        where = " on %s port %s" % (index.name(attach[0]), attach[1]) if attach else ""
        if node["factory"]:
            kind = "switch" if "num_ports" in node else "CA"
            findings.append(
                _finding(
                    "factory_description",
                    "warning",
                    '%s %s%s has the factory node description "%s": set it to "<hostname> <device>" '
                    "(rdma-core's rdma-ndd does it) so failures can name the host."
                    % (kind, node["guid"], where, node["description"]),
                    switch=index.name(attach[0]) if attach else (node["name"] if kind == "switch" else None),
                    port=attach[1] if attach else None,
                    peer=node["guid"],
                    guid=node["guid"],
                )
            )
        elif node["description"]:
            seen[node["description"]].append(node["guid"])
    for description, guids in sorted(seen.items()):
        if len(guids) < 2:
            continue
        places = []
        for guid in guids:
            attach = index.ca_attachment(guid)
            places.append("%s%s" % (guid, " (%s port %s)" % (index.name(attach[0]), attach[1]) if attach else ""))
        first = index.ca_attachment(guids[0])
        findings.append(
            _finding(
                "duplicate_description",
                "warning",
                '%d nodes share the node description "%s": %s; give each its own hostname.'
                % (len(guids), description, ", ".join(places)),
                switch=index.name(first[0]) if first else None,
                port=first[1] if first else None,
                peer=description,
                guids=guids,
            )
        )
    return findings


def _link_key(link):
    return tuple(sorted([(link["a"]["guid"], link["a"]["port"]), (link["b"]["guid"], link["b"]["port"])]))


def check_drift(golden, current):
    """Cables missing, extra or moved against a saved golden topology (both parsed topologies)."""
    gidx, cidx = Index(golden), Index(current)
    gold = dict((_link_key(lk), lk) for lk in golden["links"] if lk["kind"] != "aggregation")
    now = dict((_link_key(lk), lk) for lk in current["links"] if lk["kind"] != "aggregation")
    missing = [k for k in sorted(gold) if k not in now]
    extra = [k for k in sorted(now) if k not in gold]
    findings = []
    used_extra = set()
    moved_missing = set()
    for key in missing:
        # the same CA port cabled elsewhere now: one "moved" finding, not a missing and an extra one;
        # an ISL moved at one end is matched on either end
        host_ends = [e for e in key if not gidx.is_switch(e[0])]
        for end in host_ends or list(key):
            for other in extra:
                if other in used_extra or end not in other:
                    continue
                was = [e for e in key if e != end][0]
                now_end = [e for e in other if e != end][0]
                findings.append(
                    _finding(
                        "drift_moved",
                        "error",
                        "cable of %s moved: it was on %s, now on %s (golden topology): put it back or update "
                        "the golden file." % (gidx.end_label(*end), gidx.end_label(*was), cidx.end_label(*now_end)),
                        switch=cidx.name(now_end[0]),
                        port=now_end[1],
                        peer=gidx.end_label(*end),
                        was=gidx.end_label(*was),
                    )
                )
                used_extra.add(other)
                moved_missing.add(key)
                break
            if key in moved_missing:
                break
    for key in missing:
        if key in moved_missing:
            continue
        mine, other = _switch_first(gidx, gold[key])
        findings.append(
            _finding(
                "drift_missing",
                "error",
                "cable %s <-> %s from the golden topology is missing: check both ports' link state and reseat it."
                % (gidx.end_label(*mine), gidx.end_label(*other)),
                switch=gidx.name(mine[0]),
                port=mine[1],
                peer=gidx.end_label(*other),
            )
        )
    for key in extra:
        if key in used_extra:
            continue
        mine, other = _switch_first(cidx, now[key])
        findings.append(
            _finding(
                "drift_extra",
                "warning",
                "cable %s <-> %s is not in the golden topology: a new or re-cabled link; update the golden file "
                "if it is meant." % (cidx.end_label(*mine), cidx.end_label(*other)),
                switch=cidx.name(mine[0]),
                port=mine[1],
                peer=cidx.end_label(*other),
            )
        )
    return findings


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
        findings += check_rail_alignment(topo, rail_map, rail_groups, index)
    if "missing_rail" in wanted:
        findings += check_missing(rail_map)
    if linkinfo is not None and "port_down" in wanted:
        findings += check_ports_down(linkinfo, topo, golden, index)
    if "link_below_norm" in wanted:
        findings += check_link_norms(topo, index)
    if "unequal_trunk" in wanted:
        findings += check_trunks(topo, index)
    desc = check_descriptions(topo, index)
    findings += [f for f in desc if f["check"] in wanted]
    if golden is not None and "drift" in wanted:
        findings += check_drift(golden, topo)
    return findings


def summarize(findings):
    errors = [f for f in findings if f["severity"] == "error"]
    if not findings:
        return "fabric checks passed: no finding"
    head = "%d fabric finding(s), %d error(s)" % (len(findings), len(errors))
    return head + ": " + " ".join(f["msg"] for f in (errors or findings)[:10])


def topology_view(topo):
    """The JSON-safe parts a caller keeps (and may pass back as a golden topology)."""
    tiers = dict((k, v) for k, v in topo["tiers"].items() if k != "by_guid")
    tiers["by_guid"] = topo["tiers"]["by_guid"]
    return {"switches": topo["switches"], "cas": topo["cas"], "links": topo["links"], "tiers": tiers}


def load_golden(value):
    """A golden topology given as ibnetdiscover text or as an earlier result (dict with switches/cas/links)."""
    if value is None:
        return None
    if isinstance(value, dict):
        missing = [k for k in ("switches", "cas", "links") if k not in value]
        if missing:
            raise ValueError(
                "golden topology lacks %s: pass an earlier ib_topology result or an ibnetdiscover output"
                % ", ".join(missing)
            )
        golden = dict(value)
        golden.setdefault("tiers", derive_tiers(golden))
        return golden
    return parse_ibnetdiscover(value)


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
            "summary": {
                "switches": len(topo["switches"]),
                "cas": len(topo["cas"]),
                "links": len(topo["links"]),
                "isls": len([lk for lk in topo["links"] if lk["kind"] == "isl"]),
                "leaves": len(topo["tiers"]["leaf"]),
                "spines": len(topo["tiers"]["spine"]),
                "errors": len([f for f in findings if f["severity"] == "error"]),
                "warnings": len([f for f in findings if f["severity"] == "warning"]),
            },
            "msg": summarize(findings),
        }
    )
    return result
