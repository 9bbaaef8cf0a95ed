# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which switch each host's rail hangs off: the grouping that lets localisation tell a fault above the hosts (a
leaf's uplinks, a spine) from a bad node.

Groups are ``{host: {key: switch}}``, the key a rail name (``mlx5_0:1``), an RDMA device (``mlx5_0``), a netdev, or
``"*"`` for every rail of the host. Sources, first available wins (``resolve``): the topology stage's fabric (the
leaf switch at the other end of each CA's cable), LLDP on Ethernet (each NIC's switch, lldpd's JSON via
host/lldp.py), an inventory variable (``fabric_validate_group_var``: a leaf name, or a dict per rail), else none:
then localize.py infers groups from the results themselves.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.ibtune.fabric.plugins.module_utils.host import lldp as _lldp
from ansible_collections.ibtune.fabric.plugins.module_utils.subnet.model import Index
from ansible_collections.ibtune.fabric.plugins.module_utils.validate import fabric as _vt

SOURCES = ("topology", "lldp", "inventory", "inferred")
ANY = "*"


def _name_or_error(host, key, value):
    if value is None or isinstance(value, (list, dict, bool)) or str(value) == "":
        raise ValueError(
            "switch_groups[%s]%s must be a switch name, got %r: give each host its leaf (e.g. leaf: lab-leaf1) or a "
            "dict of rail -> leaf" % (host, "" if key is None else "[%s]" % key, value)
        )
    return str(value)


def from_group_var(values):
    """{host: "leaf1" | {rail or device: "leaf1"}} (the inventory's) -> groups; ValueError names a bad value."""
    if values is None:
        return {}
    if not isinstance(values, dict):
        raise ValueError("switch_groups must be a dict of host -> switch name, got %s" % type(values).__name__)
    groups = {}
    for host, value in values.items():
        if value is None or value == "":
            continue  # a host without the variable: no group (inferred for it, or left ungrouped)
        if isinstance(value, dict):
            groups[str(host)] = dict((str(k), _name_or_error(host, k, v)) for k, v in value.items())
        else:
            groups[str(host)] = {ANY: _name_or_error(host, None, value)}
    return groups


def from_topology(topology):
    """groups {host: {device: leaf switch name}} from the topology stage's fabric (validate_topology.compact() or an
    ib_topology result): the switch at the other end of each rail's CA cable. {} when there is none."""
    if not topology:
        return {}
    topo, _lfts, hosts = _vt.expand(topology)
    index = Index(topo)
    groups = {}
    for host, devices in (hosts or {}).items():
        for device, guid in (devices or {}).items():
            attached = index.ca_attachment(guid)
            if attached is not None and index.is_switch(attached[0]):
                groups.setdefault(host, {})[device] = index.name(attached[0])
    return groups


def from_lldp(per_host, netdevs=None):
    """groups {host: {netdev (and its RDMA device when ``netdevs`` maps it): switch}} from each host's lldpd JSON
    (``lldpctl -f json`` / ``lldpcli -f json show neighbors``, text or decoded). ``netdevs``: {host: {device:
    [netdev]}}, or ib_facts' devices ({device: {netdevs: [...], ...}}). Raises ValueError (naming the host) for
    output that is not lldpd's; an empty output (no lldpd, no neighbour) groups nothing."""
    groups = {}
    for host, output in (per_host or {}).items():
        try:
            neighbors = _lldp.neighbors(output)
        except ValueError as exc:
            raise ValueError("lldp[%s]: %s" % (host, exc))
        device_of = {}
        for device, names in ((netdevs or {}).get(host) or {}).items():
            if isinstance(names, dict):  # ib_facts' device entry: its netdevs
                names = names.get("netdevs")
            for name in names or []:
                device_of[name] = device
        for ifname, peer in neighbors.items():
            if peer.get("switch"):
                entry = groups.setdefault(str(host), {})
                entry[ifname] = peer["switch"]
                if ifname in device_of:
                    entry[device_of[ifname]] = peer["switch"]
    return groups


def resolve(topology=None, lldp=None, group_var=None, netdevs=None):
    """(groups, source): the first source that names a switch for some host (SOURCES order), else ({}, None)."""
    candidates = (
        ("topology", lambda: from_topology(topology)),
        ("lldp", lambda: from_lldp(lldp, netdevs)),
        ("inventory", lambda: from_group_var(group_var)),
    )
    for source, build in candidates:
        groups = build()
        if groups:
            return groups, source
    return {}, None


def switch_of(groups, host, rail=None, device=None):
    """The switch ``host``'s ``rail`` (or ``device``) hangs off in ``groups``, else None."""
    entry = (groups or {}).get(host)
    if not entry:
        return None
    for key in (rail, device, ANY):
        if key is not None and key in entry:
            return entry[key]
    return None


def leaves(groups):
    """{switch: sorted hosts} over every key (a topology.conf-like leaf map)."""
    out = {}
    for host, entry in (groups or {}).items():
        for switch in entry.values():
            out.setdefault(switch, set()).add(host)
    return dict((switch, sorted(hosts)) for switch, hosts in out.items())
