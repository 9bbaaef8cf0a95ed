# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Parsers for the text infiniband-diags prints: ibnetdiscover (-> the topology model), iblinkinfo (default
and -l: port states) and ibroute / dump_lfts (forwarding tables).

No maintained parser for these formats exists on PyPI (checked 2026-12-01), so the grammar of
infiniband-diags 44 (ibnetdiscover.c, iblinkinfo.c, dump_fts.c) is followed here.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.ibtune.fabric.plugins.module_utils.subnet.model import LANE_GBPS, build_topology
from ansible_collections.ibtune.fabric.plugins.module_utils.subnet.names import HEX, normalize_guid

_NODE_RE = re.compile(r'^(Switch|Ca|Rt)\s+(\d+)\s+"([SHR])-(' + HEX + r')"\s*(?:#\s*"(.*?)"(.*))?$')
_PORT_RE = re.compile(
    r"^\[(\d+)\](?:\[ext \d+\])?(?:\((" + HEX + r")\))?\s*"
    r'"([SHR])-(' + HEX + r')"\[(\d+)\](?:\[ext \d+\])?(?:\((' + HEX + r")\))?\s*(?:#\s*(.*))?$"
)
_LID_RE = re.compile(r"\blid (\d+)")
_LINK_RE = re.compile(r"\b(\d+)x([A-Z][A-Z0-9]*)\s*$")
_QUOTED_RE = re.compile(r'"(.*?)"')
_INITIATED_RE = re.compile(r"Initiated from node (" + HEX + r")")
_NODE_TYPES = {"Switch": "switch", "Ca": "ca", "Rt": "router"}
_PEER_TYPES = {"S": "switch", "H": "ca", "R": "router"}
# lines of the format that carry nothing the model keeps
_SKIPPED_RE = re.compile(r"^((switchguid|caguid|rtguid)=0x" + HEX + r"|(vendid|devid|sysimgguid)=|Chassis|Non-Chassis)")

# ------------------------------------------------------------------------------------ ibnetdiscover


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


def _node_record(match):
    kind = _NODE_TYPES[match.group(1)]
    trailer = match.group(6) or ""
    lid = None
    if kind == "switch":
        lid_match = _LID_RE.search(trailer)
        lid = int(lid_match.group(1)) if lid_match else None
    return {
        "type": kind,
        "guid": normalize_guid(match.group(4)),
        "num_ports": int(match.group(2)),
        "description": match.group(5) or "",
        "lid": lid,
        "enhanced_port0": "enhanced port 0" in trailer,
        "ports": {},
    }


def _port_record(match, ca_side):
    comment = match.group(7) or ""
    width, speed = _link_attrs(comment)
    quoted = _QUOTED_RE.findall(comment)
    entry = {
        "port": int(match.group(1)),
        "port_guid": normalize_guid(match.group(2)) if match.group(2) else None,
        "peer_type": _PEER_TYPES[match.group(3)],
        "peer_guid": normalize_guid(match.group(4)),
        "peer_port": int(match.group(5)),
        "peer_description": quoted[-1] if quoted else "",
        "width": width,
        "speed": speed,
    }
    if ca_side:
        entry["lid"] = _port_lid(comment, True)
    else:
        entry["peer_lid"] = _port_lid(comment, False)
    return entry


class _Reader:
    """State of one ibnetdiscover read: nodes in the order they came, the node being read, odd lines."""

    def __init__(self):
        self.nodes = {}
        self.order = []
        self.current = None
        self.warnings = []
        self.initiated = None

    def comment(self, line):
        match = _INITIATED_RE.search(line)
        if match:
            self.initiated = normalize_guid(match.group(1))

    def line(self, line):
        if line.startswith("#"):
            self.comment(line)
            return
        node = _NODE_RE.match(line)
        if node:
            self.current = _node_record(node)
            if self.current["guid"] not in self.nodes:
                self.order.append(self.current["guid"])
            self.nodes[self.current["guid"]] = self.current
            return
        port = _PORT_RE.match(line)
        if port and self.current is not None:
            entry = _port_record(port, self.current["type"] != "switch")
            self.current["ports"][entry["port"]] = entry
            return
        if not _SKIPPED_RE.match(line):
            self.warnings.append(line)


def parse_ibnetdiscover(text):
    """ibnetdiscover output -> topology dict.

    Returns {"switches": [...], "cas": [...], "links": [...], "tiers": {...}, "initiated_from": str|None,
    "warnings": [lines that were not part of the format, e.g. ibwarn lines before the header]}.
    Switch: guid, lid, description, name, num_ports, ports (port, peer_guid, peer_port, peer_type, width, speed).
    CA: guid, description, name, host, device, aggregation_node, factory, ports (port, port_guid, lid, peer_*).
    Link: a (guid, port, type), b (guid, port, type), width, speed, kind ("isl", "host", "aggregation").
    """
    reader = _Reader()
    for raw in (text or "").splitlines():
        line = raw.strip()
        if line:
            reader.line(line)
    return build_topology(reader.nodes, reader.order, reader.initiated, reader.warnings)


# ---------------------------------------------------------------------------------------- iblinkinfo

_LI_HEADER_RE = re.compile(r"^(CA|Switch):\s*(?:(0x" + HEX + r")\s+)?(.*?):?\s*$")
_LI_PORT_RE = re.compile(
    r"^\s*(?:(0x" + HEX + r')\s+(?:"\s*(.*?)"\s+)?)?(\d+)\s+(\d+)\[[^\]]*\]\s+==\(\s*'
    r"(?:(\d+)X\s+([\d.]+)\s+Gbps\s+)?([A-Za-z]+)/\s*([A-Za-z]+)\s*\)==>\s*"
    r"(?:(0x" + HEX + r")\s+)?(?:(\d+)\s+(\d+))?\s*\[[^\]]*\]\s+\"(.*?)\"\s*\((.*)\)\s*$"
)


def _int_or_none(text):
    return int(text) if text else None


def _linkinfo_row(match, node_type, node_guid, node_desc):
    lane = match.group(6)
    return {
        # iblinkinfo -l lines carry no CA/Switch header: the topology tells them apart
        "node_type": node_type if match.group(2) is None else None,
        "guid": normalize_guid(match.group(1)) if match.group(1) else node_guid,
        "description": match.group(2) if match.group(2) is not None else node_desc,
        "lid": int(match.group(3)),
        "port": int(match.group(4)),
        "width": _int_or_none(match.group(5)),
        "lane_gbps": float(lane) if lane else None,
        "speed": LANE_GBPS.get(lane) if lane else None,
        "state": match.group(7),
        "phys_state": match.group(8),
        "peer_guid": normalize_guid(match.group(9)) if match.group(9) else None,
        "peer_lid": _int_or_none(match.group(10)),
        "peer_port": _int_or_none(match.group(11)),
        "peer_description": match.group(12),
        "note": match.group(13).strip(),
    }


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
        if match:
            out.append(_linkinfo_row(match, node_type, node_guid, node_desc))
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
