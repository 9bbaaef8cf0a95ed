#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: ib_topology
short_description: Read the InfiniBand fabric as the subnet manager sees it, map rails to leaf ports, check cabling
version_added: 0.2.0
description:
  - Runs C(ibnetdiscover) (and C(iblinkinfo), C(dump_lfts), C(ibqueryerrors) when asked) on a host that
    sees the fabric, usually the subnet manager host, or reads their saved outputs.
  - Returns switches, channel adapters (CAs), links with both ends, width and speed, and tiers derived
    from the graph (leaf = switch with host CAs; spine = switch with only switch links).
  - Given O(hosts) (node GUIDs per RDMA device, as C(ib_facts) reports them), maps every rail to its leaf
    switch and port.
  - Checks rail alignment, rails missing from the fabric, switch ports down where a cable is expected,
    links below the fabric's norm in width or speed, unequal parallel trunks, factory or duplicate node
    descriptions, and drift against a golden topology. Each finding names switch, port and peer.
  - Says whether the fabric is non-blocking as it trained - the sum of a switch's links down against the sum
    of its links up, per switch, rail group and tier, against O(max_oversubscription) - whether the switches of
    a tier spread their links evenly over the tier below, and recognises a dragonfly (groups joined by global
    links), judging the bandwidth between every two groups.
  - Every tool runs as an argument list with a timeout, in its own process group.
  - Never changes the fabric; the tools only read (C(ibqueryerrors) runs without its clear options).
extends_documentation_fragment:
  - ibtune.fabric.attributes
  - ibtune.fabric.attributes.READ_ONLY
options:
  path:
    description:
      - A saved C(ibnetdiscover) output to read instead of running C(ibnetdiscover).
    type: path
  linkinfo:
    description: Run C(iblinkinfo) (port states) when O(linkinfo_path) is not given.
    type: bool
    default: true
  linkinfo_path:
    description: A saved C(iblinkinfo) (or C(iblinkinfo -l)) output.
    type: path
  routes:
    description: Run C(dump_lfts) and return the forwarding tables in RV(routes) (for route-aware rounds).
    type: bool
    default: false
  routes_path:
    description: A saved C(dump_lfts) or C(ibroute) output.
    type: path
  switch_counters:
    description: Run C(ibqueryerrors) and return switch-port error counters in RV(switch_counters).
    type: bool
    default: false
  errors_path:
    description: A saved C(ibqueryerrors) output.
    type: path
  switch_data_counters:
    description:
      - Also run C(ibqueryerrors --counters --switch) and return every switch port's data counters (PortXmitData,
        PortRcvData, packets; extended where the switch has them) in RV(switch_data_counters).
      - With O(data_counters_previous), RV(isl_traffic) says which ISL directions carried traffic since then, the
        proof that test rounds put traffic on every inter-switch link.
    type: bool
    default: false
  data_counters_path:
    description: A saved C(ibqueryerrors --counters) output.
    type: path
  data_counters_previous:
    description: An earlier RV(switch_data_counters) snapshot to compare with (see RV(isl_traffic)).
    type: dict
  traffic_min_bytes:
    description:
      - Octets an ISL direction must have transmitted since O(data_counters_previous) to count as carrying test
        traffic (the subnet's own management traffic moves kilobytes; a bandwidth test gigabytes).
    type: int
    default: 1048576
  counters_previous:
    description:
      - An earlier RV(switch_counters) snapshot; increases since then are judged with the host counters'
        rules (physical-layer counters allow no increase) into RV(switch_counter_violations).
    type: dict
  counter_thresholds:
    description: Allowed increase per counter (sysfs names, e.g. C(symbol_error)), merged over the defaults.
    type: dict
    default: {}
  hosts:
    description:
      - 'Inventory rails to map, C({host: {device: node_guid}}); GUIDs in any spelling
        (C(0c42:a103:0065:3e1c) as C(ib_facts) gives them, or C(0x...)).'
    type: dict
    default: {}
  facts:
    description:
      - "C({host: ansible_facts.ibtune_rdma}) as M(ibtune.fabric.ib_facts) sets it; every device's C(node_guid)
        is mapped like O(hosts) (O(hosts) wins for a host given in both)."
    type: dict
    default: {}
  golden:
    description:
      - A golden topology to compare with; an earlier result of this module (its C(switches), C(cas),
        C(links)) or an C(ibnetdiscover) output as text.
    type: raw
  golden_path:
    description: A file holding a golden C(ibnetdiscover) output.
    type: path
  rail_alignment:
    description: Check that rail i of every host is on a leaf of rail group i (rail-optimised fabrics).
    type: bool
    default: true
  rail_groups:
    description:
      - "Leaves of each rail, C({device: [leaf name or GUID, ...]}). Without it a leaf's rail is the device
        most of its hosts use there."
    type: dict
  checks:
    description: Only these checks (default all that have their inputs).
    type: list
    elements: str
    choices: [rail_alignment, missing_rail, port_down, link_below_norm, unequal_trunk, factory_description,
              duplicate_description, drift, oversubscription, tier_balance, dragonfly_global]
  max_oversubscription:
    description:
      - The design's ratio of a switch's trained down bandwidth (host ports, links to a lower tier) to its
        trained up bandwidth (links to a higher tier, lateral or global links); a switch above it is a finding
        (C(oversubscription)). C(1.0) is non-blocking, C(2.0) a 2:1 design.
    type: float
    default: 1.0
  min_global_gbps:
    description:
      - In a dragonfly, the Gb/s every two groups should have between them; C(0) takes the most common total of
        this fabric's group pairs. A group pair below it is a finding (C(dragonfly_global)).
    type: float
    default: 0
  ca:
    description: The local CA the tools use (C(-C)); default the first one.
    type: str
  ca_port:
    description: The local port the tools use (C(-P)).
    type: int
  bin_dir:
    description: Folder holding the infiniband-diags tools; default they are looked up in PATH.
    type: path
  timeout:
    description: Seconds each tool may run before it is killed.
    type: int
    default: 120
  fail_on_findings:
    description: Fail when there is a finding of severity C(error) or a switch counter violation.
    type: bool
    default: false
  return_outputs:
    description: Also return the tools' raw outputs in RV(outputs) (to save a golden topology).
    type: bool
    default: false
  phy:
    description:
      - A PHY verdict (the C(phy_verdict) filter over M(ibtune.fabric.ib_phy) readings) - every link one end of which
        was read gets C(serials) (end label to module serial) and C(cable), the name the PHY findings use, so a cable
        is named the same way in the topology, the PHY findings and the suspect-cable verdict.
    type: dict
notes:
  - The tools need the C(ib_umad) kernel module and read access to C(/dev/infiniband/umad*) (root, or the
    C(rdma) group on distributions that grant it); C(ibnetdiscover) takes about a second per few hundred nodes.
  - Environment variables for the tools (for instance C(LD_PRELOAD)) come from the task's C(environment).
author:
  - ibtune.fabric contributors (@ibtune)
"""

EXAMPLES = r"""
- name: Read the fabric from the subnet manager host and check it
  ibtune.fabric.ib_topology:
    hosts: "{{ rails_by_host }}"   # {host: {mlx5_0: '0c42:a103:0065:3e1c', ...}}
    routes: true
  register: fabric

- name: Compare with a saved golden topology, from saved outputs
  ibtune.fabric.ib_topology:
    path: /var/lib/ibtune/topology/ibnetdiscover.txt
    linkinfo_path: /var/lib/ibtune/topology/iblinkinfo.txt
    golden_path: /etc/ibtune/golden.ibnetdiscover
    fail_on_findings: true
"""

RETURN = r"""
switches:
  description: Switches; each with guid, lid, description, name, num_ports, tier, factory and ports
    (port, peer_guid, peer_port, peer_type, peer_description, width, speed).
  returned: always
  type: list
  elements: dict
cas:
  description: Channel adapters; each with guid, description, host and device (when the description names
    them), aggregation_node, factory, lid and ports.
  returned: always
  type: list
  elements: dict
links:
  description: Cables; each with a and b (guid, port, type), width, speed and kind (isl, host, aggregation); with
    O(phy) also C(serials) and C(cable) where an end was read.
  returned: always
  type: list
  elements: dict
  sample: [{a: {guid: "0x2c5eab0300b87b40", port: 17, type: switch}, b: {guid: "0xe09d7303007a5a68", port: 1,
            type: ca}, width: 4, speed: NDR, kind: host}]
tiers:
  description: Switch GUIDs per tier (leaf, spine, core, isolated) and by_guid.
  returned: always
  type: dict
rails:
  description: 'For every O(hosts) rail, its leaf; C({host: {device: {guid, found, switch, switch_guid, port}}}).'
  returned: always
  type: dict
  sample: {node12: {mlx5_3: {guid: "0x0c42a10300653e1c", found: true, switch: leaf-03, port: 17}}}
missing:
  description: O(hosts) rails whose node GUID is not in the fabric.
  returned: always
  type: list
  elements: dict
host_order:
  description: O(hosts) ordered by leaf switch and port of their first rail.
  returned: always
  type: list
  elements: str
findings:
  description: Check results; each with check, severity (error or warning), switch, port, peer and msg
    (one sentence).
  returned: always
  type: list
  elements: dict
  sample: [{check: port_down, severity: error, switch: A09-P1-IBLEAF-04-04, port: 17,
            peer: a08-p1-dgx-04-c17 mlx5_5, msg: "A09-P1-IBLEAF-04-04 port 17 is Down/Polling where a cable
            to a08-p1-dgx-04-c17 mlx5_5 is expected: reseat or replace that cable."}]
linkinfo:
  description: Port lines of C(iblinkinfo) (state, phys_state, width, speed, peer) when it was read.
  returned: always
  type: list
  elements: dict
routes:
  description: Forwarding tables, switch GUID to destination LID to out port, when O(routes) or O(routes_path).
  returned: when routes were read
  type: dict
switch_counters:
  description: Switch-port error counters, C("<switch guid>:<port>") to counter to value (counters the tool
    did not list are 0).
  returned: when switch counters were read
  type: dict
switch_data_counters:
  description:
    - Switch-port data counters, C("<switch guid>:<port>") to counter to value; C(port_xmit_data) and
      C(port_rcv_data) count 4-octet words as the switches do.
  returned: when O(switch_data_counters) or O(data_counters_path)
  type: dict
isl_traffic:
  description:
    - Inter-switch link directions and the octets each transmitted since O(data_counters_previous); C(total),
      C(carried) (at least O(traffic_min_bytes)), C(uncarried) (labels such as C(leaf-03 p33 -> spine-02 p5)),
      C(directions) ({from, to, octets}, heaviest first), C(min_octets), C(measured).
  returned: when O(data_counters_previous) is given
  type: dict
  sample: {total: 16, carried: 16, uncarried: [], min_octets: 1048576, measured: true,
           directions: [{from: lab-leaf1 p7, to: lab-spine1 p1, octets: 2952790016}]}
switch_counter_violations:
  description: Switch-port counters that rose by more than allowed since O(counters_previous); each with
    switch, port, peer, counter, counter_name, delta and msg.
  returned: when switch counters were read
  type: list
  elements: dict
  sample: [{switch: A09-P1-IBLEAF-04-04, port: 17, peer: a08-p1-dgx-04-c17 mlx5_5, counter: symbol_error,
            delta: 12, msg: "A09-P1-IBLEAF-04-04 port 17 <-> a08-p1-dgx-04-c17 mlx5_5: SymbolErrorCounter +12"}]
switch_saturated:
  description: Switch-port counters pinned at their maximum.
  returned: when switch counters were read
  type: list
  elements: dict
oversubscription:
  description:
    - The fabric's ratios as trained; C(design), C(switches) (switch, guid, tier, group, rail_group, down_ports,
      down_gbps, up_ports, up_gbps, ratio, judged, oversubscribed), C(tiers) and C(rail_groups) (switches,
      down_gbps, up_gbps, ratio, max_ratio, worst, above_design), C(load_first) ([switch guid, port] of the
      uplinks of the switches above the design) and C(text).
  returned: always
  type: dict
  sample: {design: 1.0, text: "oversubscription as trained: 31 leaves 0.89:1..1.20:1, 12 above the design 1.00:1",
           load_first: [["0x2c5eab0300b87b40", 33]]}
dragonfly:
  description:
    - When the subnet is a dragonfly, its C(groups) (group, name, switches, leaves, spines, host_ports, host_gbps,
      global_links, global_gbps, ratio), the group C(pairs) (groups, names, links, gbps, cables, weakest),
      C(design_gbps), C(design_declared), C(global_links) and C(text); null otherwise.
  returned: always
  type: dict
summary:
  description: Counts of switches, cas, links, isls, leaves, spines, errors, warnings, oversubscribed switches,
    dragonfly_groups, and max_leaf_oversubscription (the worst leaf's ratio, null without one).
  returned: always
  type: dict
warnings_seen:
  description: Lines of the ibnetdiscover output that are not part of its format (e.g. ibwarn lines).
  returned: always
  type: list
  elements: str
outputs:
  description: Raw tool outputs by tool name, with O(return_outputs).
  returned: when O(return_outputs)
  type: dict
messages:
  description: Every sentence of RV(findings) and RV(switch_counter_violations), findings first (the role prints them).
  returned: always
  type: list
  elements: str
msg:
  description: Summary; names the findings.
  returned: always
  type: str
"""

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.ibtune.fabric.plugins.module_utils.common.module import respond
from ansible_collections.ibtune.fabric.plugins.module_utils.subnet.analysis import CHECKS
from ansible_collections.ibtune.fabric.plugins.module_utils.subnet.module import run
from ansible_collections.ibtune.fabric.plugins.module_utils.common.module import ModuleError
from ansible_collections.ibtune.fabric.plugins.module_utils.validate.phy import annotate_links

ARGUMENT_SPEC = dict(
    path=dict(type="path"),
    linkinfo=dict(type="bool", default=True),
    linkinfo_path=dict(type="path"),
    routes=dict(type="bool", default=False),
    routes_path=dict(type="path"),
    switch_counters=dict(type="bool", default=False),
    errors_path=dict(type="path"),
    switch_data_counters=dict(type="bool", default=False),
    data_counters_path=dict(type="path"),
    data_counters_previous=dict(type="dict"),
    traffic_min_bytes=dict(type="int", default=1 << 20),
    counters_previous=dict(type="dict"),
    counter_thresholds=dict(type="dict", default={}),
    hosts=dict(type="dict", default={}),
    facts=dict(type="dict", default={}),
    golden=dict(type="raw"),
    golden_path=dict(type="path"),
    rail_alignment=dict(type="bool", default=True),
    rail_groups=dict(type="dict"),
    checks=dict(type="list", elements="str", choices=list(CHECKS)),
    max_oversubscription=dict(type="float", default=1.0),
    min_global_gbps=dict(type="float", default=0.0),
    ca=dict(type="str"),
    ca_port=dict(type="int"),
    bin_dir=dict(type="path"),
    timeout=dict(type="int", default=120),
    fail_on_findings=dict(type="bool", default=False),
    return_outputs=dict(type="bool", default=False),
    phy=dict(type="dict"),
)


def run_with_phy(params, check_mode=False):
    """subnet/module.run, then (issue 22) each link named by its cable as the PHY findings name it: the PHY
    verdict is validate/'s, a layer above subnet/, so the two meet here."""
    result = run(params, check_mode)
    if params["phy"]:
        try:
            result["cables_with_serials"] = annotate_links(result, params["phy"])
        except (ValueError, KeyError, TypeError) as exc:
            raise ModuleError("phy: %s (give the phy_verdict filter's result)" % exc)
    return result


def main():
    module = AnsibleModule(
        argument_spec=ARGUMENT_SPEC, mutually_exclusive=[("golden", "golden_path")], supports_check_mode=True
    )
    respond(module, run_with_phy, module.params, module.check_mode)


if __name__ == "__main__":
    main()
