# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The fabric as fabric_validate hands it to fabric_plan and fabric_report: a compact dict (pure).

compact(result) turns an ib_topology result (the fabric_topology role's fact ``fabric_topology_result``,
read with routes) into the small shape below; expand(value) turns it back into what routes.py works on
(a topology dict, the LFTs, the inventory rails). expand() also takes an ib_topology result as it is.

Compact shape (version 1; GUIDs "0x%016x"):

    {"version": 1,
     "switches": [[guid, lid, name, num_ports, tier], ...],
     "cas": [[guid, name, aggregation_node, [[port, lid], ...]], ...],
     "links": [[a guid, a port, b guid, b port, kind], ...],       # kind: isl, host, aggregation
     "lfts": {switch guid: [first LID, "0a0b00..."]},  # out port of that LID and the next ones,
                                                       # two hex digits each (ports are 8-bit), 00: none
     "hosts": {host: {device: node guid}},                            # the inventory rails found
     "host_order": [host, ...],                                       # by leaf and port
     "switch_counter_violations": [{switch, port, peer, counter, counter_name, delta, msg, ...}],
     "findings": [{check, severity, switch, port, peer, msg}],      # the fabric checks' errors and warnings
     "load_first": [[switch guid, port], ...]}                        # uplinks of switches above their design
                                                                      # ratio: cover_links loads them first

On the 582-HCA, 40-switch fabric it is 189 kB of JSON where the ib_topology result is 1.2 MB; for 512 hosts x 8
rails 2.0 MB (12.4 MB), most of it the forwarding tables (bench/bench_validate_topology.py).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.ibtune.fabric.plugins.module_utils.subnet.names import normalize_guid

VERSION = 1


def _lft_list(table):
    """[first LID, hex string of the out ports from that LID on] ("00" where the table has no entry)."""
    table = dict((int(lid), int(port)) for lid, port in (table or {}).items() if int(lid) >= 0)
    if not table:
        return []
    low = min(table)
    ports = [0] * (max(table) - low + 1)
    for lid, port in table.items():
        if not 0 <= port <= 255:
            raise ValueError("forwarding table entry LID %d -> port %d is not an 8-bit port number" % (lid, port))
        ports[lid - low] = port
    return [low, "".join("%02x" % port for port in ports)]


def _hosts_of(result):
    """{host: {device: guid}} of the rails ib_topology found in the fabric (its ``rails``), else the
    hosts the CA descriptions name."""
    hosts = {}
    for host, devices in (result.get("rails") or {}).items():
        for device, entry in (devices or {}).items():
            if isinstance(entry, dict) and entry.get("found") and entry.get("guid"):
                hosts.setdefault(host, {})[device] = entry["guid"]
    if hosts:
        return hosts
    for ca in result.get("cas") or []:
        if ca.get("host") and ca.get("device") and not ca.get("aggregation_node"):
            hosts.setdefault(ca["host"], {})[ca["device"]] = ca["guid"]
    return hosts


def compact(result, hosts=None):
    """The compact dict from an ib_topology result (with ``routes``); ``hosts`` overrides the rails."""
    if not isinstance(result, dict) or not isinstance(result.get("switches"), list):
        raise ValueError(
            "the topology is not an ib_topology result (no switches list): pass fabric_topology_result "
            "of the fabric_topology role"
        )
    if not result.get("routes"):
        raise ValueError(
            "the topology has no forwarding tables (routes): read it with fabric_topology_routes=true "
            "(ib_topology routes: true)"
        )
    tier = (result.get("tiers") or {}).get("by_guid") or {}
    switches = [
        [
            sw["guid"],
            sw.get("lid"),
            sw.get("name") or sw["guid"],
            sw.get("num_ports") or 0,
            sw.get("tier") or tier.get(sw["guid"]),
        ]
        for sw in result["switches"]
    ]
    cas = [
        [
            ca["guid"],
            ca.get("name") or ca.get("description") or ca["guid"],
            bool(ca.get("aggregation_node")),
            [[p["port"], p.get("lid")] for p in ca.get("ports") or []],
        ]
        for ca in result.get("cas") or []
    ]
    links = [
        [link["a"]["guid"], link["a"]["port"], link["b"]["guid"], link["b"]["port"], link.get("kind")]
        for link in result.get("links") or []
    ]
    lfts = dict((normalize_guid(guid), _lft_list(table)) for guid, table in result["routes"].items())
    return {
        "version": VERSION,
        "switches": switches,
        "cas": cas,
        "links": links,
        "lfts": lfts,
        "hosts": hosts if hosts else _hosts_of(result),
        "host_order": list(result.get("host_order") or []),
        "switch_counter_violations": list(result.get("switch_counter_violations") or []),
        "findings": [
            dict((k, f.get(k)) for k in ("check", "severity", "switch", "port", "peer", "msg"))
            for f in result.get("findings") or []
            if isinstance(f, dict)
        ],
        "load_first": load_first(result),
    }


def load_first(value):
    """The switch ports cover_links loads first ([[guid, port], ...]): a compact topology's ``load_first``,
    or an ib_topology result's ``oversubscription.load_first`` (the uplinks of the switches above the design)."""
    if not isinstance(value, dict):
        return []
    found = value.get("load_first")
    if found is None:
        found = (value.get("oversubscription") or {}).get("load_first")
    return [[normalize_guid(guid), int(port)] for guid, port in found or []]


# what the switch-counter read after the passes (fabric_topology's counters_after) replaces in the topology
AFTER_PASSES_KEYS = ("switch_counter_violations", "isl_traffic")


def after_passes(value, counters_after=None):
    """The topology the report judges: ``value`` (compact or an ib_topology result) with the switch counter
    violations and the ISL traffic of the read after the passes (``fabric_topology_counters_after``) in place
    of the topology stage's, where that read has them."""
    out = dict(value)
    for key in AFTER_PASSES_KEYS:
        if key in (counters_after or {}):
            out[key] = counters_after[key]
    return out


def _node_type(guid, switch_guids):
    return "switch" if guid in switch_guids else "ca"


def expand(value):
    """(topology, lfts, hosts) from a compact dict or an ib_topology result; raises ValueError."""
    if not isinstance(value, dict):
        raise ValueError(
            "topology must be a dict (the fabric_validate topology stage's), got %s" % type(value).__name__
        )
    switches = value.get("switches")
    if isinstance(switches, list) and switches and isinstance(switches[0], dict):
        if not value.get("routes"):
            raise ValueError("the topology has no forwarding tables (routes): read it with fabric_topology_routes=true")
        return value, value["routes"], _hosts_of(value)
    if value.get("version") != VERSION or not isinstance(switches, list):
        raise ValueError(
            "topology is neither an ib_topology result nor a compact topology of version %d (got version %r): "
            "build it with the validate_topology filter" % (VERSION, value.get("version"))
        )
    switch_guids = set(sw[0] for sw in switches)
    by_guid = {}
    topo_switches = []
    for guid, lid, name, num_ports, tier in switches:
        topo_switches.append(
            {"guid": guid, "lid": lid, "name": name, "num_ports": num_ports, "tier": tier, "ports": []}
        )
        if tier:
            by_guid[guid] = tier
    topo_cas = []
    for guid, name, aggregation, ports in value.get("cas") or []:
        topo_cas.append(
            {
                "guid": guid,
                "name": name,
                "description": name,
                "aggregation_node": bool(aggregation),
                "ports": [{"port": port, "lid": lid} for port, lid in ports],
            }
        )
    links = []
    for a, ap, b, bp, kind in value.get("links") or []:
        links.append(
            {
                "a": {"guid": a, "port": ap, "type": _node_type(a, switch_guids)},
                "b": {"guid": b, "port": bp, "type": _node_type(b, switch_guids)},
                "kind": kind,
            }
        )
    tiers = {"by_guid": by_guid}
    for name in ("leaf", "spine", "core", "isolated"):
        tiers[name] = sorted(g for g, t in by_guid.items() if t == name)
    topology = {"switches": topo_switches, "cas": topo_cas, "links": links, "tiers": tiers}
    lfts = {}
    for guid, ports in (value.get("lfts") or {}).items():
        if not ports:
            lfts[guid] = {}
            continue
        low, text = int(ports[0]), ports[1]
        table = {}
        for i in range(0, len(text), 2):
            port = int(text[i : i + 2], 16)
            if port:
                table[low + i // 2] = port
        lfts[guid] = table
    return topology, lfts, dict(value.get("hosts") or {})


def rail_endpoints(hosts, rails, topo_hosts):
    """{host: {rail name: node guid}} for the plan's hosts: each rail's device looked up in the topology's
    inventory rails (a rail whose device the fabric does not show is left out)."""
    out = {}
    for host in hosts:
        devices = topo_hosts.get(host) or {}
        mine = {}
        for rail in rails.get(host) or []:
            guid = devices.get(rail.get("device"))
            if guid:
                mine[rail["rail"]] = normalize_guid(guid)
        if mine:
            out[host] = mine
    return out
