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
              duplicate_description, drift]
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
      - A PHY verdict (the C(phy_verdict) filter over M(ibtune.fabric.ib_phy) readings); every link one end of which
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
summary:
  description: Counts of switches, cas, links, isls, leaves, spines, errors and warnings.
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
msg:
  description: Summary; names the findings.
  returned: always
  type: str
"""

import os

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.ibtune.fabric.plugins.module_utils.subnet import switch_counters as swc
from ansible_collections.ibtune.fabric.plugins.module_utils.host.process import run_once
from ansible_collections.ibtune.fabric.plugins.module_utils.subnet.analysis import CHECKS, analyse
from ansible_collections.ibtune.fabric.plugins.module_utils.subnet.drift import load_golden
from ansible_collections.ibtune.fabric.plugins.module_utils.subnet.parsers import parse_lfts
from ansible_collections.ibtune.fabric.plugins.module_utils.subnet.rails import hosts_from_facts
from ansible_collections.ibtune.fabric.plugins.module_utils.validate.phy import annotate_links


def _read(module, path, what):
    try:
        with open(path) as handle:
            return handle.read()
    except (IOError, OSError) as exc:
        module.fail_json(msg="cannot read %s %s (%s): give a readable saved output." % (what, path, exc))


def _tool(module, name, extra=()):
    params = module.params
    if params["bin_dir"]:
        exe = os.path.join(params["bin_dir"], name)
    else:
        exe = module.get_bin_path(name)
    if not exe or not os.path.exists(exe):
        module.fail_json(
            msg="%s not found on %s: install infiniband-diags there, run on the subnet manager host, or give "
            "a saved output." % (name, params["bin_dir"] or "PATH")
        )
    argv = [exe] + list(extra)
    if params["ca"]:
        argv += ["-C", params["ca"]]
    if params["ca_port"] is not None:
        argv += ["-P", str(params["ca_port"])]
    res = run_once(argv, params["timeout"])
    if res["timed_out"]:
        module.fail_json(
            msg="%s did not finish in %ds and was killed: raise timeout or check the fabric (a hung port "
            "stalls the sweep)." % (name, params["timeout"])
        )
    if res["rc"] != 0 and not (
        name == "ibqueryerrors" and ("## Summary" in res["stdout"] or "Data Counters for" in res["stdout"])
    ):
        last = (res["stderr"].strip().splitlines() or ["no error output"])[-1]
        module.fail_json(
            msg="%s exited %s: %s; run it where the fabric is visible (ib_umad loaded, access to "
            "/dev/infiniband/umad*)." % (name, res["rc"], last)
        )
    return res["stdout"]


def main():
    module = AnsibleModule(
        argument_spec=dict(
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
            ca=dict(type="str"),
            ca_port=dict(type="int"),
            bin_dir=dict(type="path"),
            timeout=dict(type="int", default=120),
            fail_on_findings=dict(type="bool", default=False),
            return_outputs=dict(type="bool", default=False),
            phy=dict(type="dict"),
        ),
        mutually_exclusive=[("golden", "golden_path")],
        supports_check_mode=True,
    )
    p = module.params
    outputs = {}
    outputs["ibnetdiscover"] = (
        _read(module, p["path"], "ibnetdiscover output") if p["path"] else _tool(module, "ibnetdiscover")
    )
    if p["linkinfo_path"]:
        outputs["iblinkinfo"] = _read(module, p["linkinfo_path"], "iblinkinfo output")
    elif p["linkinfo"] and not p["path"]:
        outputs["iblinkinfo"] = _tool(module, "iblinkinfo")
    if p["routes_path"]:
        outputs["dump_lfts"] = _read(module, p["routes_path"], "dump_lfts output")
    elif p["routes"]:
        outputs["dump_lfts"] = _tool(module, "dump_lfts")
    if p["errors_path"]:
        outputs["ibqueryerrors"] = _read(module, p["errors_path"], "ibqueryerrors output")
    elif p["switch_counters"]:
        outputs["ibqueryerrors"] = _tool(module, "ibqueryerrors")
    if p["data_counters_path"]:
        outputs["ibqueryerrors_counters"] = _read(module, p["data_counters_path"], "ibqueryerrors --counters output")
    elif p["switch_data_counters"]:
        outputs["ibqueryerrors_counters"] = _tool(module, "ibqueryerrors", ["--counters", "--switch"])
    golden = _read(module, p["golden_path"], "golden topology") if p["golden_path"] else p["golden"]
    hosts = hosts_from_facts(p["facts"])
    hosts.update(p["hosts"] or {})
    try:
        golden = load_golden(golden)
        result = analyse(
            outputs["ibnetdiscover"],
            outputs.get("iblinkinfo"),
            hosts,
            golden,
            p["rail_groups"],
            p["checks"],
            p["rail_alignment"],
        )
    except ValueError as exc:
        module.fail_json(msg=str(exc))
    if not result["switches"] and not result["cas"]:
        module.fail_json(msg="ibnetdiscover output has no node: check that it is a complete ibnetdiscover output.")
    failing = [f for f in result["findings"] if f["severity"] == "error"]
    if "dump_lfts" in outputs:
        result["routes"] = parse_lfts(outputs["dump_lfts"])
    if "ibqueryerrors" in outputs:
        snap = swc.snapshot_from_ibqueryerrors(swc.parse_ibqueryerrors(outputs["ibqueryerrors"]), result)
        found = (
            swc.switch_violations(p["counters_previous"], snap, result, p["counter_thresholds"], golden=golden)
            if p["counters_previous"] is not None
            else []
        )
        result.update(
            switch_counters=snap, switch_counter_violations=found, switch_saturated=swc.switch_saturated(snap, result)
        )
        if found:
            counters_msg = swc.describe(found)
            result["msg"] = counters_msg if not result["findings"] else result["msg"] + " " + counters_msg
            failing += found
    if "ibqueryerrors_counters" in outputs:
        data = swc.snapshot_from_ibqueryerrors(swc.parse_ibqueryerrors(outputs["ibqueryerrors_counters"]), result)
        result["switch_data_counters"] = data
        if p["data_counters_previous"] is not None:
            result["isl_traffic"] = swc.isl_traffic(p["data_counters_previous"], data, result, p["traffic_min_bytes"])
    if p["phy"]:
        try:  # the cables' serials (issue 22): each link names its cable as the PHY findings do
            result["cables_with_serials"] = annotate_links(result, p["phy"])
        except (ValueError, KeyError, TypeError) as exc:
            module.fail_json(msg="phy: %s (give the phy_verdict filter's result)" % exc)
    if p["return_outputs"]:
        result["outputs"] = outputs
    result["changed"] = False
    if failing and p["fail_on_findings"]:
        module.fail_json(**result)
    module.exit_json(**result)


if __name__ == "__main__":
    main()
