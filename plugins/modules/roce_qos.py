#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: roce_qos
short_description: Apply host RoCE QoS (trust, PFC, ECN, CNP, ToS) on ConnectX ports from the QoS model
version_added: 0.1.0
description:
  - Derives the host side of the collection's QoS model (C(ibtune_qos), mode C(roce_lossless)) for each RoCE
    port and makes the port match it, NVIDIA's RoCE lossless recipe.
  - C(mlnx_qos -i <netdev> --trust dscp), C(--pfc) with PFC on the lossless priority only, and
    C(--dscp2prio set,<dscp>,<prio>) where the DSCP map must move the lossless or CNP DSCP.
  - ECN enabled on the lossless priority at the notification and reaction points
    (C(<sysfs_root>/class/net/<netdev>/ecn/roce_np/enable/<prio>), C(ecn/roce_rp/enable/<prio>)), the CNP DSCP
    and 802.1p priority (C(ecn/roce_np/cnp_dscp), C(ecn/roce_np/cnp_802p_prio)).
  - The global traffic class C(<sysfs_root>/class/infiniband/<dev>/tc/<port>/traffic_class) (MLNX_OFED) and
    rdma_cm's C(<configfs_root>/rdma_cm/<dev>/ports/<port>/default_roce_tos), both the NCCL_IB_TC byte.
  - Reads every knob back first (mlnx_qos output and the files), changes only what differs, reads back again
    and fails if a knob did not take the value. Knobs the driver does not expose (the inbox mlx5 driver has no
    C(tc/) directory) are reported in C(missing) and skipped unless O(fail_on_missing=true).
  - Settings written to sysfs and configfs do not survive a reboot; the module returns C(boot_script), a
    POSIX sh script that reapplies everything, for a systemd unit (the C(ibtune.fabric.fabric_qos) role installs
    one).
  - With a model whose mode is not C(roce_lossless) the module changes nothing.
options:
  interfaces:
    description:
      - The RoCE ports to configure.
    type: list
    elements: dict
    required: true
    suboptions:
      netdev:
        description: The Ethernet interface of the port (C(mlnx_qos -i)).
        type: str
        required: true
      rdma_device:
        description:
          - The RDMA device of the port (C(mlx5_0)). Found from C(<sysfs_root>/class/net/<netdev>/device/infiniband)
            when left out.
        type: str
      port:
        description: The RDMA port number.
        type: int
        default: 1
  qos:
    description:
      - The QoS model (C(ibtune_qos)); missing keys take the collection defaults (DSCP 26 on priority 3, ECN ect0,
        CNPs on DSCP 48 / priority 6).
    type: dict
    default: {}
  executable:
    description: The C(mlnx_qos) command (name on PATH or absolute path).
    type: str
    default: mlnx_qos
  configfs_root:
    description: Where configfs is mounted (C(rdma_cm) lives under it).
    type: path
    default: /sys/kernel/config
  traffic_class:
    description: Manage the global traffic class in C(tc/<port>/traffic_class).
    type: bool
    default: true
  default_roce_tos:
    description: Manage rdma_cm's C(default_roce_tos).
    type: bool
    default: true
  fail_on_missing:
    description: Fail when a knob does not exist on this host instead of reporting it in C(missing).
    type: bool
    default: false
extends_documentation_fragment:
  - ibtune.fabric.sysfs
  - ibtune.fabric.attributes
attributes:
  check_mode:
    support: full
    details: Reads the current state and reports the changes it would make, running nothing that changes state.
  diff_mode:
    support: full
    details: "Before and after are one line per knob, e.g. C(eth0 pfc: 0,0,0,1,0,0,0,0)."
notes:
  - Needs root for the sysfs and configfs writes, and C(mlnx_qos) from mlnx-tools (MLNX_OFED/DOCA or the
    mlnx-tools package).
author:
  - ibtune.fabric contributors (@ibtune)
"""

EXAMPLES = r"""
- name: Make the RoCE ports lossless (DSCP 26 on priority 3, PFC, ECN, CNP on 48/6)
  ibtune.fabric.roce_qos:
    interfaces:
      - {netdev: ens1f0np0, rdma_device: mlx5_0}
      - {netdev: ens2f0np0, rdma_device: mlx5_1}
    qos: "{{ ibtune_qos | default({}) }}"
  register: __roce_qos

- name: Show what a check run would change
  ibtune.fabric.roce_qos:
    interfaces: [{netdev: ens1f0np0}]
    qos: {roce_priority: 3}
  check_mode: true
  diff: true

- name: Keep the boot-time script
  ansible.builtin.copy:
    content: "{{ __roce_qos.boot_script }}"
    dest: /usr/local/sbin/ibtune-roce-qos
    mode: "0755"
"""

RETURN = r"""
changes:
  description: What differed (and was changed, or would be in check mode), per knob.
  returned: always
  type: list
  elements: dict
  sample:
    - {netdev: ens1f0np0, key: trust, before: pcp, after: dscp}
    - {netdev: ens1f0np0, key: pfc, before: [0, 0, 0, 0, 0, 0, 0, 0], after: [0, 0, 0, 1, 0, 0, 0, 0]}
    - {netdev: ens1f0np0, key: ecn_np, prio: 3, before: 0, after: 1}
applied_actions:
  description:
    - On failure after some actions already ran, those actions; the result then reports C(changed=true), since the
      host was changed before the failure (a partial apply).
  returned: on failure after a partial apply
  type: list
  elements: dict
  sample:
    - {argv: [mlnx_qos, -i, ens1f0np0, --trust, dscp]}
actions:
  description: The commands (C(argv)) and writes (C(write), C(value); C(mkdir)) run, or that would run in check mode.
  returned: always
  type: list
  elements: dict
  sample:
    - {argv: [mlnx_qos, -i, ens1f0np0, --trust, dscp]}
    - {argv: [mlnx_qos, -i, ens1f0np0, --pfc, "0,0,0,1,0,0,0,0"]}
    - {write: /sys/class/net/ens1f0np0/ecn/roce_np/cnp_dscp, value: "48"}
desired:
  description: Per netdev, the state the model asks for (null when the mode is not roce_lossless).
  returned: always
  type: dict
  sample:
    ens1f0np0: {trust: dscp, pfc: [0, 0, 0, 1, 0, 0, 0, 0], dscp2prio: {"26": 3, "48": 6}, ecn_np: {"3": 1},
                ecn_rp: {"3": 1}, cnp_dscp: 48, cnp_802p_prio: 6, traffic_class: 106, default_roce_tos: 106}
current:
  description: Per netdev, the state read back at the end (after applying, unless in check mode).
  returned: always
  type: dict
  sample:
    ens1f0np0: {trust: dscp, pfc: [0, 0, 0, 1, 0, 0, 0, 0], cnp_dscp: 48, traffic_class: 106}
after:
  description:
    - Per netdev, the state this run leaves the host in, for a cross-layer check
      (O(ibtune.fabric.qos_check#module:host_state) of M(ibtune.fabric.qos_check)); RV(current) after applying;
      in check mode RV(desired), the state the run would set.
  returned: always
  type: dict
missing:
  description: Knobs this host does not expose, as C(netdev), C(key) and C(path); they were skipped.
  returned: always
  type: list
  elements: dict
  sample:
    - {netdev: ens1f0np0, key: traffic_class, path: /sys/class/infiniband/mlx5_0/tc/1/traffic_class}
boot_script:
  description: A POSIX sh script that reapplies every knob at boot (empty when the mode is not roce_lossless).
  returned: always
  type: str
  sample: "#!/bin/sh\nrc=0\n...\nstep mlnx_qos -i ens1f0np0 --trust dscp\n...\nexit $rc\n"
msg:
  description: One-line summary.
  returned: always
  type: str
  sample: "2 ports: 7 knobs changed"
"""

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.ibtune.fabric.plugins.module_utils.common.module import respond
from ansible_collections.ibtune.fabric.plugins.module_utils.qos.module import run_roce_qos

ARGUMENT_SPEC = dict(
    interfaces=dict(
        type="list",
        elements="dict",
        required=True,
        options=dict(
            netdev=dict(type="str", required=True),
            rdma_device=dict(type="str"),
            port=dict(type="int", default=1),
        ),
    ),
    qos=dict(type="dict", default={}),
    executable=dict(type="str", default="mlnx_qos"),
    sysfs_root=dict(type="path", default="/sys"),
    configfs_root=dict(type="path", default="/sys/kernel/config"),
    traffic_class=dict(type="bool", default=True),
    default_roce_tos=dict(type="bool", default=True),
    fail_on_missing=dict(type="bool", default=False),
)


def main():
    module = AnsibleModule(argument_spec=ARGUMENT_SPEC, supports_check_mode=True)
    # the module runs mlnx_qos and finds executables as Ansible does (run_command, get_bin_path)
    respond(module, run_roce_qos, module.params, module, module.check_mode, module._diff)


if __name__ == "__main__":
    main()
