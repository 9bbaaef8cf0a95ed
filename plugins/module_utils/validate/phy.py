# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The PHY readings of a validation joined with the fabric (pure): which cable each read port is on.

ends(topology) names every end the topology knows the way subnet/topology.Index does (a host end "node2
mlx5_1", a switch end "lab-leaf4 p2") with its peer, so the PHY findings name a cable exactly as the
suspect-cable verdict and the topology findings do; switch_ports(topology, hosts) lists the switch end of
every host cable for ib_phy's in-band read on the subnet manager host; verdict() is phy.findings.evaluate
with those names. ``topology`` is the topology stage's compact value (validate/fabric.py) or an
ib_topology result; without one, ends are named by host and device only.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.ibtune.fabric.plugins.module_utils.phy import cables as _cables
from ansible_collections.ibtune.fabric.plugins.module_utils.phy import findings as _findings
from ansible_collections.ibtune.fabric.plugins.module_utils.subnet.model import Index
from ansible_collections.ibtune.fabric.plugins.module_utils.subnet.names import normalize_guid
from ansible_collections.ibtune.fabric.plugins.module_utils.validate import fabric as _fabric


def _index(topology):
    """(Index, {host: {device: guid}}) of a compact topology or of an ib_topology result (routes not needed)."""
    switches = topology.get("switches") if isinstance(topology, dict) else None
    if isinstance(switches, list) and (not switches or isinstance(switches[0], dict)) and "links" in topology:
        hosts = {}
        for ca in topology.get("cas") or []:
            if ca.get("host") and ca.get("device") and not ca.get("aggregation_node"):
                hosts.setdefault(ca["host"], {})[ca["device"]] = ca["guid"]
        return Index(topology), hosts
    topo, _lfts, hosts = _fabric.expand(topology)
    return Index(topo), hosts


def _host_of(hosts):
    """{ca guid: (host, device)} from the inventory rails {host: {device: guid}}."""
    out = {}
    for host, devices in (hosts or {}).items():
        for device, guid in (devices or {}).items():
            out[normalize_guid(guid)] = (host, device)
    return out


def _key(index, owners, guid, port):
    if index.is_switch(guid):
        return _cables.end_key({"kind": "switch", "guid": guid, "port": port})
    host, device = owners.get(guid, (None, None))
    if host is None:
        return None
    return _cables.end_key({"kind": "host", "host": host, "device": device, "port": port})


def ends(topology):
    """{end key: {"label", "peer", "peer_key"}} for both ends of every link of the topology."""
    if not topology:
        return {}
    index, hosts = _index(topology)
    owners = _host_of(hosts)
    out = {}
    for link in index.topo["links"]:
        a, b = (link["a"]["guid"], link["a"]["port"]), (link["b"]["guid"], link["b"]["port"])
        keys = [_key(index, owners, *a), _key(index, owners, *b)]
        labels = [index.port_label(*a), index.port_label(*b)]
        for mine, other in ((0, 1), (1, 0)):
            if keys[mine]:
                out[keys[mine]] = {"label": labels[mine], "peer": labels[other], "peer_key": keys[other]}
    return out


def reading(result):
    """An ib_phy result when its task ran, else None (a skipped or never registered read reads no port)."""
    if result is None or result.get("skipped"):
        return None
    return result


def switch_host(explicit, candidates):
    """The host that reads the switch ends: ``explicit`` (fabric_validate_phy_switch_host) when set, else the first
    of ``candidates`` (the subnet_managers group, or this host when there is none)."""
    if explicit:
        return explicit
    if not candidates:
        raise ValueError(
            "the subnet_managers group has no host to read the switch ends from: add one, or set"
            " fabric_validate_phy_switch_host"
        )
    return candidates[0]


def switch_ports(topology, hosts=None):
    """[{lid, port, switch, guid}]: the switch end of every host cable (of ``hosts`` only, when given)."""
    if not topology:
        return []
    index, rails = _index(topology)
    wanted = set(hosts) if hosts is not None else None
    out = []
    for host, devices in sorted((rails or {}).items()):
        if wanted is not None and host not in wanted:
            continue
        for _device, guid in sorted((devices or {}).items()):
            attached = index.ca_attachment(normalize_guid(guid))
            if not attached:
                continue
            switch, port, _ca_port = attached
            lid = (index.nodes.get(switch) or {}).get("lid")
            if lid:
                out.append({"lid": int(lid), "port": int(port), "switch": index.name(switch), "guid": switch})
    return out


def verdict(ports, topology=None, thresholds=None, history=None, now=None):
    """phy.findings.evaluate() with the topology's names for the ends."""
    return _findings.evaluate(ports, ends(topology), thresholds, history, now)


def annotate_links(result, phy):
    """The serials the PHY verdict ``phy`` read, on the links of an ib_topology ``result`` (in place): each link an
    end of which was read gets ``serials`` {end label: serial} and ``cable`` (the same text the PHY findings use).
    Returns the number of links annotated."""
    serials = {}
    for port in (phy or {}).get("ports") or []:
        if port.get("serial"):
            kind = port.get("kind") or ("switch" if port.get("switch") and not port.get("host") else "host")
            serials[_cables.end_key(dict(port, kind=kind))] = port["serial"]
    index, hosts = _index(result)
    owners = _host_of(hosts)
    count = 0
    for link in result.get("links") or []:
        a, b = (link["a"]["guid"], link["a"]["port"]), (link["b"]["guid"], link["b"]["port"])
        labels = [index.port_label(*a), index.port_label(*b)]
        found = dict((labels[i], serials.get(_key(index, owners, *end))) for i, end in enumerate((a, b)))
        if not any(found.values()):
            continue
        host_first = not index.is_switch(a[0]) or index.is_switch(b[0])
        first, second = labels if host_first else labels[::-1]
        link["serials"] = found
        link["cable"] = _cables.cable_text(first, second, found)
        count += 1
    return count
