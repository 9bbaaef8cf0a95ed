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


# every record ibqueryerrors prints, found anywhere in the text (one pass, linear): a node header, a port's counters,
# the summary lines. Found by search, not per line, so an output whose line breaks were lost (joined into one line by
# a wrapper) parses the same. "Link info:" lines (-r) and the threshold footer carry nothing to read.
_QE_TOKEN_RE = re.compile(
    r'(?P<node>(?:Errors|Data Counters) for (?:(?P<node_guid>0x[0-9a-fA-F]+) )?"(?P<desc>[^"\n]*)")'
    r"|(?P<port>GUID (?P<port_guid>0x[0-9a-fA-F]+) port (?P<port_no>\w+):(?P<values>(?:\s*\[[^\]\n]*\])*))"
    r"|(?P<nodes>## Summary: (?P<checked>\d+) nodes checked, (?P<bad>\d+) bad nodes found)"
    r"|(?P<ports>(?P<pchecked>\d+) ports checked, (?P<pbad>\d+) ports have errors)"
)
# "[SymbolErrorCounter == 12]"; a value from PortCountersExtended (AdditionalPortCounters) and data counters carry a
# human-readable one: "[PortXmitData == 864 (3.375KB)]"
_QE_VALUE_RE = re.compile(r"\[(\w+) == (\d+)( \([^)]*\))?\]")


def _qe_port(current, match):
    """(port number, {sysfs name: int}, {sysfs name: source}) of a port record; None for "port ALL"."""
    if match.group("port_no") == "ALL":
        return None
    values, sources = {}, {}
    for name, number, suffix in _QE_VALUE_RE.findall(match.group("values")):
        key = PMA_TO_SYSFS.get(name, name)
        values[key] = int(number)
        sources[key] = "pma_ext" if suffix else "pma"
    if current["guid"] is None:
        current["guid"] = normalize_guid(match.group("port_guid"))
    return int(match.group("port_no")), values, sources


def parse_ibqueryerrors(text):
    """ibqueryerrors output -> {"nodes": [{guid, description, ports: {port: {sysfs name: int}}, sources: {port:
    {sysfs name: "pma" | "pma_ext"}}}], "summary": {nodes_checked, bad_nodes, ports_checked, ports_with_errors}}.

    ibqueryerrors lists only counters above its thresholds (0 unless an error_thresholds file says otherwise): a
    counter it does not print is read as 0. The "port ALL" aggregate is left out. A value with a human-readable
    suffix came from PortCountersExtended (64 bits). Raises ValueError for text that holds none of its records (an
    error message, another tool's output): never an empty reading."""
    nodes, summary, current = [], {}, None
    for match in _QE_TOKEN_RE.finditer(text or ""):
        if match.group("node"):
            guid = match.group("node_guid")
            current = {"guid": normalize_guid(guid) if guid else None, "description": match.group("desc"),
                       "ports": {}, "sources": {}}  # fmt: skip
            nodes.append(current)
        elif match.group("port") and current is not None:
            port = _qe_port(current, match)
            if port is not None:
                current["ports"][port[0]], current["sources"][port[0]] = port[1], port[2]
        elif match.group("nodes"):
            summary["nodes_checked"], summary["bad_nodes"] = int(match.group("checked")), int(match.group("bad"))
        elif match.group("ports"):
            summary["ports_checked"], summary["ports_with_errors"] = (
                int(match.group("pchecked")),
                int(match.group("pbad")),
            )
    if not nodes and not summary and (text or "").strip():
        raise ValueError(
            "the ibqueryerrors output holds no node, port or summary record (%r...): not ibqueryerrors output, or "
            "the tool failed" % (text.strip()[:80],)
        )
    return {"nodes": nodes, "summary": summary}


def ibqueryerrors_sources(parsed):
    """{"<guid>:<port>": {counter: source}} of a parse_ibqueryerrors() result (for counters.saturated)."""
    out = {}
    for node in parsed["nodes"]:
        for port, sources in (node.get("sources") or {}).items():
            out["%s:%d" % (node["guid"], port)] = dict(sources)
    return out


def perfquery_sources(blocks, topo):
    """{"<switch guid>:<port>": {counter: source}} of perfquery blocks: a PortCountersExtended block's counters
    are 64-bit (pma_ext), a plain block's PortCounters widths (pma)."""
    index = Index(topo)
    out = {}
    for block in blocks:
        node = index.lid_to_node.get(block["lid"])
        if node is None or block["port"] == 255:
            continue
        source = "pma_ext" if block["kind"] == "PortCountersExtended" else "pma"
        entry = out.setdefault("%s:%d" % (node[0], block["port"]), {})
        for name in block["counters"]:
            if entry.get(name) != "pma_ext":
                entry[name] = source
    return out


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


def switch_saturated(snap, topo, sources=None, thresholds=None):
    """Counters pinned at their maximum on switch ports (an increase on them is invisible). Widths per source
    (counters.width): ``sources`` {"<guid>:<port>": {counter: "pma" | "pma_ext"}} (ibqueryerrors_sources,
    perfquery_sources); a reading without one is PortCounters' (pma): a 64-bit PortXmitWait is never "saturated
    at 32 bits"."""
    index = Index(topo)
    out = []
    for p in counters.saturated(snap, thresholds, source="pma", sources=sources):
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
                "source": p["source"],
                "gated": p["gated"],
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
