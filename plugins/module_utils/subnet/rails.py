# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Inventory rails on the fabric: each host's RDMA device (by node GUID, as ib_facts reports it) mapped to
its leaf switch and port, the hosts in leaf order, and the rows the rail checks judge."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from collections import Counter, defaultdict

from ansible_collections.ibtune.fabric.plugins.module_utils.subnet.model import Index
from ansible_collections.ibtune.fabric.plugins.module_utils.subnet.names import normalize_guid


def _rail_entry(index, guid):
    entry = {"guid": guid, "found": False, "switch_guid": None, "switch": None, "port": None}
    node = index.nodes.get(guid)
    if node is None or index.is_switch(guid):
        return entry
    entry["found"] = True
    entry["description"] = node["description"]
    attach = index.ca_attachment(guid)
    if attach:
        entry["switch_guid"], entry["port"], entry["ca_port"] = attach
        entry["switch"] = index.name(attach[0])
        entry["tier"] = index.tier.get(attach[0])
    return entry


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
            entry = _rail_entry(index, normalize_guid(hosts[host][device]))
            if not entry["found"]:
                missing.append({"host": host, "device": device, "guid": entry["guid"]})
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


def rail_rows(topo, rail_map, index):
    """[(host, device, ca guid, switch guid, switch port)] from the inventory map, else from descriptions."""
    if rail_map:
        return [
            (host, device, entry["guid"], entry["switch_guid"], entry["port"])
            for host, devices in sorted(rail_map.get("rails", {}).items())
            for device, entry in sorted(devices.items())
            if entry.get("found") and entry.get("switch_guid")
        ]
    rows = []
    for ca in topo["cas"]:
        if not ca["host"] or ca["aggregation_node"]:
            continue
        attach = index.ca_attachment(ca["guid"])
        if attach:
            rows.append((ca["host"], ca["device"], ca["guid"], attach[0], attach[1]))
    return rows


def judged_and_known(topo, rail_map, index):
    """(rows to judge, rows that say which rail a leaf carries): the inventory's rails are judged; a leaf's
    rail is read from them plus the CAs whose description names a device."""
    rows = rail_rows(topo, rail_map, index)
    if not rail_map:
        return rows, rows
    known = set(r[2] for r in rows)
    return rows, rows + [r for r in rail_rows(topo, None, index) if r[2] not in known]


def leaf_rails(rows, majority=0.5):
    """{leaf guid: (device, its host ports, all host ports)} for the leaves where one device holds more than
    ``majority`` of at least two host ports: the rail that leaf carries."""
    by_leaf = defaultdict(Counter)
    for _host, device, _guid, sw, _port in rows:
        by_leaf[sw][device] += 1
    out = {}
    for sw, counts in by_leaf.items():
        device, count = counts.most_common(1)[0]
        total = sum(counts.values())
        if total >= 2 and count > majority * total:
            out[sw] = (device, count, total)
    return out


def declared_groups(rail_groups):
    """{device: set of leaf names and GUIDs} from a written-down design {device: [leaf name or GUID]}."""
    allowed = {}
    for device, leaves in (rail_groups or {}).items():
        allowed[device] = set(
            normalize_guid(leaf) if str(leaf).lower().startswith("0x") else leaf for leaf in leaves or []
        )
    return allowed


def rail_groups_of(topo, rail_map=None, rail_groups=None, index=None):
    """{device: [leaf guid, ...]}: the leaves of each rail group, as declared (``rail_groups``, names or
    GUIDs) or, without a declaration, as the hosts' cabling says (leaf_rails)."""
    index = index or Index(topo)
    if rail_groups:
        allowed = declared_groups(rail_groups)
        groups = {}
        for device, names in sorted(allowed.items()):
            groups[device] = [sw["guid"] for sw in topo["switches"] if sw["guid"] in names or sw["name"] in names]
        return groups
    groups = defaultdict(list)
    for sw, (device, _count, _total) in sorted(leaf_rails(judged_and_known(topo, rail_map, index)[1]).items()):
        groups[device].append(sw)
    return dict(groups)
