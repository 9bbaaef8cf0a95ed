# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Switch-port error counters read through the subnet (perfquery / ibqueryerrors output).

Snapshots use the host counters' names (counters.COUNTER_WIDTHS, the sysfs spelling) and are keyed
"<switch guid>:<port>", so the host rules apply unchanged: counters.deltas / violations / saturated.
Findings name the switch, the port and the cable's peer from the topology.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.ibtune.fabric.plugins.module_utils.host import counters
from ansible_collections.ibtune.fabric.plugins.module_utils.subnet.model import Index
from ansible_collections.ibtune.fabric.plugins.module_utils.subnet.names import normalize_guid

# IBA attribute names (perfquery, ibqueryerrors) -> the kernel's sysfs names used by counters.py.
PMA_TO_SYSFS = {
    "SymbolErrorCounter": "symbol_error",
    "LinkErrorRecoveryCounter": "link_error_recovery",
    "LinkDownedCounter": "link_downed",
    "PortRcvErrors": "port_rcv_errors",
    "PortRcvRemotePhysicalErrors": "port_rcv_remote_physical_errors",
    "PortRcvSwitchRelayErrors": "port_rcv_switch_relay_errors",
    "PortXmitDiscards": "port_xmit_discards",
    "PortXmitConstraintErrors": "port_xmit_constraint_errors",
    "PortRcvConstraintErrors": "port_rcv_constraint_errors",
    "LocalLinkIntegrityErrors": "local_link_integrity_errors",
    "ExcessiveBufferOverrunErrors": "excessive_buffer_overrun_errors",
    "VL15Dropped": "VL15_dropped",
    "PortXmitWait": "port_xmit_wait",
    "PortXmitData": "port_xmit_data",
    "PortRcvData": "port_rcv_data",
    "PortXmitPkts": "port_xmit_packets",
    "PortRcvPkts": "port_rcv_packets",
    "PortUnicastXmitPkts": "unicast_xmit_packets",
    "PortUnicastRcvPkts": "unicast_rcv_packets",
    "PortMulticastXmitPkts": "multicast_xmit_packets",
    "PortMulticastRcvPkts": "multicast_rcv_packets",
    "QP1Dropped": "qp1_dropped",
}
SYSFS_TO_PMA = dict((v, k) for k, v in PMA_TO_SYSFS.items())

_PQ_HEADER_RE = re.compile(r"^# (Port (?:extended )?counters|\S+ counters): Lid (\d+) port (\d+)")
_PQ_VALUE_RE = re.compile(r"^(\w+):\.*(\S+)\s*$")
# "Errors for" (error counters above threshold) and "Data Counters for" (--counters: every port's data counters)
_QE_NODE_RE = re.compile(r'^(?:Errors|Data Counters) for (?:(0x[0-9a-fA-F]+) )?"(.*)"\s*$')
_QE_PORT_RE = re.compile(r"^GUID (0x[0-9a-fA-F]+) port (\w+):\s*(.*)$")
# "[SymbolErrorCounter == 12]"; data counters add a human-readable value: "[PortXmitData == 864 (3.375KB)]"
_QE_COUNTER_RE = re.compile(r"\[(\w+) == (\d+)(?: \([^)]*\))?\]")


def parse_perfquery(text):
    """perfquery output (plain, -x, -a, several ports) -> [{lid, port, kind, counters: {sysfs name: int}}].

    kind is "PortCounters", "PortCountersExtended" or the header's own name (e.g. PortRcvErrorDetails);
    port 255 is perfquery -a's sum over all ports."""
    blocks = []
    current = None
    for raw in (text or "").splitlines():
        line = raw.strip()
        header = _PQ_HEADER_RE.match(line)
        if header:
            name = header.group(1)
            kind = {"Port counters": "PortCounters", "Port extended counters": "PortCountersExtended"}.get(
                name, name.replace(" counters", "")
            )
            current = {"lid": int(header.group(2)), "port": int(header.group(3)), "kind": kind, "counters": {}}
            blocks.append(current)
            continue
        value = _PQ_VALUE_RE.match(line)
        if current is None or not value:
            continue
        name = value.group(1)
        if name in ("PortSelect", "CounterSelect", "CounterSelect2"):
            continue
        try:
            number = int(value.group(2), 0)
        except ValueError:
            continue
        current["counters"][PMA_TO_SYSFS.get(name, name)] = number
    return blocks


def parse_ibqueryerrors(text):
    """ibqueryerrors output -> {"nodes": [{guid, description, ports: {port: {sysfs name: int}}}],
    "summary": {nodes_checked, bad_nodes, ports_checked, ports_with_errors}}.

    ibqueryerrors lists only counters above its thresholds (0 unless an error_thresholds file says
    otherwise): a counter it does not print is read as 0. The "port ALL" aggregate is left out."""
    nodes = []
    current = None
    summary = {}
    for raw in (text or "").splitlines():
        line = raw.strip()
        node = _QE_NODE_RE.match(line)
        if node:
            current = {
                "guid": normalize_guid(node.group(1)) if node.group(1) else None,
                "description": node.group(2),
                "ports": {},
            }
            nodes.append(current)
            continue
        port = _QE_PORT_RE.match(line)
        if port and current is not None:
            if port.group(2) == "ALL":
                continue
            values = dict((PMA_TO_SYSFS.get(n, n), int(v)) for n, v in _QE_COUNTER_RE.findall(port.group(3)))
            if current["guid"] is None:
                current["guid"] = normalize_guid(port.group(1))
            current["ports"][int(port.group(2))] = values
            continue
        match = re.match(r"^## Summary: (\d+) nodes checked, (\d+) bad nodes found", line)
        if match:
            summary["nodes_checked"], summary["bad_nodes"] = int(match.group(1)), int(match.group(2))
        match = re.match(r"^##\s+(\d+) ports checked, (\d+) ports have errors", line)
        if match:
            summary["ports_checked"], summary["ports_with_errors"] = int(match.group(1)), int(match.group(2))
    return {"nodes": nodes, "summary": summary}


def snapshot_from_ibqueryerrors(parsed, topo=None):
    """{"<switch guid>:<port>": {counter: value}} for switch ports (every node when no topology is given)."""
    index = Index(topo) if topo else None
    snap = {}
    for node in parsed["nodes"]:
        if index is not None and not index.is_switch(node["guid"]):
            continue
        for port, values in node["ports"].items():
            snap["%s:%d" % (node["guid"], port)] = dict(values)
    return snap


def snapshot_from_perfquery(blocks, topo):
    """{"<switch guid>:<port>": {counter: value}} from perfquery blocks, LIDs resolved through the topology.
    Blocks of one port (plain and -x) are merged; perfquery -a's port 255 is left out."""
    index = Index(topo)
    snap = {}
    for block in blocks:
        node = index.lid_to_node.get(block["lid"])
        if node is None or block["port"] == 255:
            continue
        guid = node[0]
        snap.setdefault("%s:%d" % (guid, block["port"]), {}).update(block["counters"])
    return snap


def _complete(previous, current):
    """Counters ibqueryerrors did not print are 0: give both snapshots the same keys."""
    prev, cur = {}, {}
    for key in set(previous or {}) | set(current or {}):
        names = set((previous or {}).get(key, {})) | set((current or {}).get(key, {}))
        prev[key] = dict((n, (previous or {}).get(key, {}).get(n, 0)) for n in names)
        cur[key] = dict((n, (current or {}).get(key, {}).get(n, 0)) for n in names)
    return prev, cur


def _where(index, key, golden=None):
    guid, port = key.rsplit(":", 1)
    port = int(port)
    name = index.name(guid)
    peer = index.peer.get((guid, port))
    if peer is None and golden is not None and (guid, port) in golden.peer:
        # the cable is down now: name the peer the golden topology has there
        return name, port, golden.end_label(*golden.peer[(guid, port)])
    return name, port, (index.end_label(*peer) if peer else None)


def switch_violations(previous, current, topo, thresholds=None, complete=True, golden=None):
    """counters.violations over switch ports, each with switch, port, peer and one sentence:
    "A09-P1-IBLEAF-04-04 port 17 <-> a08-p1-dgx-04-c17 mlx5_5: SymbolErrorCounter +12".
    golden (a topology) names the peer of a port whose cable is down now."""
    index = Index(topo)
    gidx = Index(golden) if golden else None
    prev, cur = _complete(previous, current) if complete else (previous, current)
    found = counters.violations(prev, cur, thresholds)
    out = []
    for v in found:
        name, port, peer = _where(index, "%s:%s" % (v["device"], v["port"]), gidx)
        pma = SYSFS_TO_PMA.get(v["counter"], v["counter"])
        entry = dict(v)
        entry.update(
            {
                "switch": name,
                "switch_guid": v["device"],
                "peer": peer,
                "counter_name": pma,
                "msg": "%s port %d%s: %s +%d" % (name, port, (" <-> %s" % peer) if peer else "", pma, v["delta"]),
            }
        )
        del entry["device"]
        out.append(entry)
    return out


def switch_saturated(snap, topo):
    """Counters pinned at their maximum on switch ports (an increase on them is invisible); the widths
    are the host counters' (counters.COUNTER_WIDTHS: PortCounters, not the 64-bit extended ones)."""
    index = Index(topo)
    out = []
    pinned = counters.saturated(snap)
    for p in pinned:
        name, port, peer = _where(index, "%s:%s" % (p["device"], p["port"]))
        pma = SYSFS_TO_PMA.get(p["counter"], p["counter"])
        out.append(
            {
                "switch": name,
                "switch_guid": p["device"],
                "port": port,
                "peer": peer,
                "counter": p["counter"],
                "counter_name": pma,
                "value": p["value"],
                "width": p["width"],
                "msg": "%s port %d%s: %s is pinned at %d (%d bits): clear it (perfquery -R) before the run."
                % (name, port, (" <-> %s" % peer) if peer else "", pma, p["value"], p["width"]),
            }
        )
    return out


# PortXmitData/PortRcvData count 4-octet words (IBA 16.1.3.5), in PortCounters and PortCountersExtended alike.
DATA_WORD_OCTETS = 4


def isl_traffic(previous, current, topo, min_octets=1 << 20):
    """Which inter-switch links carried traffic between two data-counter snapshots, in each direction.

    ``previous``/``current``: {"<switch guid>:<port>": {"port_xmit_data": words, ...}} (ibqueryerrors --counters).
    A direction a -> b of an ISL is carried when a's port transmitted at least ``min_octets`` more octets: the
    subnet's own management traffic moves kilobytes, a bandwidth test gigabytes. Returns {"total", "carried",
    "min_octets", "uncarried": ["leaf-03 p33 -> spine-02 p5", ...], "directions": [{"from", "to", "octets"}]},
    heaviest first;
    {"total": 0, ...} when a snapshot is missing (the proof was not made, which is not a pass)."""
    index = Index(topo)
    out = {"total": 0, "carried": 0, "min_octets": min_octets, "uncarried": [], "directions": [], "measured": True}
    if not previous or not current:
        out["measured"] = False
        return out
    seen = set()
    for link in topo.get("links") or []:
        if link.get("kind") != "isl":
            continue
        for a, b in ((link["a"], link["b"]), (link["b"], link["a"])):
            key = (a["guid"], a["port"])
            if key in seen:
                continue
            seen.add(key)
            name = "%s:%d" % key
            before = (previous.get(name) or {}).get("port_xmit_data")
            after = (current.get(name) or {}).get("port_xmit_data")
            octets = None if before is None or after is None else max(0, after - before) * DATA_WORD_OCTETS
            # "lab-leaf1 p7", as the cable naming and cover_links' uncovered_isls spell a switch port
            label_from, label_to = index.port_label(a["guid"], a["port"]), index.port_label(b["guid"], b["port"])
            out["total"] += 1
            out["directions"].append({"from": label_from, "to": label_to, "octets": octets})
            if octets is not None and octets >= min_octets:
                out["carried"] += 1
            else:
                out["uncarried"].append("%s -> %s" % (label_from, label_to))
    out["directions"].sort(key=lambda d: (-(d["octets"] or 0), d["from"]))
    out["uncarried"].sort()
    return out


def describe_isl_traffic(traffic):
    """One sentence: "ISL traffic: 8 of 8 directions carried test traffic" (+ the ones that did not)."""
    if not traffic.get("measured", True):
        return "ISL traffic was not measured (no switch data counters before and after)"
    text = "ISL traffic: %d of %d directions carried test traffic (>= %d octets)" % (
        traffic["carried"],
        traffic["total"],
        traffic["min_octets"],
    )
    if traffic["uncarried"]:
        shown = traffic["uncarried"][:6]
        text += "; none on %s%s" % (", ".join(shown), ", ..." if len(traffic["uncarried"]) > 6 else "")
    return text


def describe(found):
    if not found:
        return "no switch-port counter above its threshold"
    return "Switch-port error counters increased: " + "; ".join(v["msg"] for v in found) + "."
