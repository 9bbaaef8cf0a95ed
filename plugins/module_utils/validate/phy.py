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
