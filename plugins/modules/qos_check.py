#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: qos_check
short_description: Check that NCCL, the hosts and the switches agree with the fabric QoS model
version_added: 0.1.0
description:
  - Compares NCCL's QoS variables, and optionally a host's and a switch's QoS state, with the collection's QoS
    model (C(ibtune_qos)) and fails naming both sides when they disagree, for example
    C(NCCL_IB_TC=41 marks DSCP 10, but lossless traffic is DSCP 26 on priority 3).
  - RoCE (mode C(roce_lossless)) errors - NCCL_IB_TC's DSCP is not the lossless DSCP, or its ECN bits are not the
    model's; NCCL_IB_TC unset (NCCL marks DSCP 0) unless the host's global traffic class already marks the
    lossless DSCP; the lossless priority has no PFC; PFC on more priorities than the lossless one; the lossless
    DSCP maps to another priority; trust is not DSCP.
  - Numbers are read as NCCL reads them (C(strtoll(value, NULL, 0)) - C(0152) is octal 106, C(0x6a) is 106);
    C(-1), NCCL's default for C(NCCL_IB_TC) and C(NCCL_IB_SL), means unset.
  - InfiniBand (mode C(infiniband)) errors - NCCL_IB_SL (default 0) maps through C(ib_sl2vl) to a VL above
    C(ib_max_vls), or to a VL with weight 0 in both arbitration tables, or differs from the model's C(ib_sl).
  - The host state can be read here from C(mlnx_qos -i <netdev>) (O(netdev)), or passed in O(host_state),
    e.g. C(current.<netdev>) of M(ibtune.fabric.roce_qos).
options:
  qos:
    description: The QoS model (C(ibtune_qos)); missing keys take the collection defaults.
    type: dict
    default: {}
  nccl_env:
    description:
      - NCCL's environment as a dict (C(NCCL_IB_TC), C(NCCL_IB_SL)...), e.g. what the C(nccl_env) role writes to
        C(/etc/nccl.conf). Values may be strings or integers.
    type: dict
    default: {}
  nccl_conf:
    description:
      - An NCCL config file on the target (e.g. C(/etc/nccl.conf)) to read instead of O(nccl_env), parsed as NCCL
        reads it (C(KEY=VALUE) lines, C(#) comments in column 1, the first line for a name wins, nothing
        trimmed or unquoted). What NCCL would read differently from what was meant becomes a warning.
    type: path
    version_added: 0.2.0
  host_state:
    description:
      - A host NIC's QoS state - C(trust), C(pfc) (8 values or C(0,0,0,1,0,0,0,0)), C(dscp2prio) (DSCP to
        priority), C(traffic_class) (global traffic class, optional).
    type: dict
  netdev:
    description:
      - Read the host state from C(mlnx_qos -i <netdev>) on the target instead of O(host_state).
    type: str
  executable:
    description: The C(mlnx_qos) command used with O(netdev).
    type: str
    default: mlnx_qos
  switch_state:
    description:
      - A switch's QoS state in the same shape as O(host_state) (C(trust) may be C(l3) or C(both) as NVUE names
        it).
    type: dict
  fail_on_error:
    description: Fail the task when there are errors (they are returned either way).
    type: bool
    default: true
extends_documentation_fragment:
  - ibtune.fabric.attributes
  - ibtune.fabric.attributes.READ_ONLY
author:
  - ibtune.fabric contributors (@ibtune)
"""

EXAMPLES = r"""
- name: Check NCCL's QoS variables against the model
  ibtune.fabric.qos_check:
    qos: "{{ ibtune_qos | default({}) }}"
    nccl_env:
      NCCL_IB_TC: 106

- name: Check NCCL and the host NIC (read with mlnx_qos)
  ibtune.fabric.qos_check:
    qos: "{{ ibtune_qos | default({}) }}"
    nccl_env: "{{ nccl_env_vars }}"
    netdev: ens1f0np0

- name: Check the nccl.conf on the node
  ibtune.fabric.qos_check:
    qos: "{{ ibtune_qos | default({}) }}"
    nccl_conf: /etc/nccl.conf

- name: Report without failing
  ibtune.fabric.qos_check:
    qos: {mode: infiniband, ib_sl: 0}
    nccl_env: {NCCL_IB_SL: 3}
    fail_on_error: false
  register: __qos
"""

RETURN = r"""
errors:
  description: Disagreements that break lossless delivery; each names both sides and the fix.
  returned: always
  type: list
  elements: str
  sample: ["NCCL_IB_TC=41 marks DSCP 10, but lossless traffic is DSCP 26 on priority 3: set NCCL_IB_TC=106."]
qos_warnings:
  description:
    - Things worth a look that do not break QoS by themselves (also shown as task warnings; Ansible reserves the
      C(warnings) key for those).
  returned: always
  type: list
  elements: str
  sample: ["NCCL_IB_TC=106 is set on an InfiniBand fabric: QoS there follows NCCL_IB_SL."]
expected:
  description: The NCCL variables the model implies.
  returned: always
  type: dict
  sample: {NCCL_IB_TC: "106"}
nccl_env:
  description: The NCCL variables that were checked (read from O(nccl_conf) when given).
  returned: always
  type: dict
  sample: {NCCL_IB_TC: "106"}
mode:
  description: The model's mode.
  returned: always
  type: str
  sample: roce_lossless
host_state:
  description: The host state that was checked (read from mlnx_qos when O(netdev) is given).
  returned: when host state was given or read
  type: dict
  sample: {trust: dscp, pfc: [0, 0, 0, 1, 0, 0, 0, 0], dscp2prio: {"26": 3}}
msg:
  description: One-line summary (the first error when there is one).
  returned: always
  type: str
  sample: "QoS layers agree (roce_lossless)"
"""

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.ibtune.fabric.plugins.module_utils.common.module import respond
from ansible_collections.ibtune.fabric.plugins.module_utils.qos.module import run_qos_check

ARGUMENT_SPEC = dict(
    qos=dict(type="dict", default={}),
    nccl_env=dict(type="dict", default={}),
    nccl_conf=dict(type="path"),
    host_state=dict(type="dict"),
    netdev=dict(type="str"),
    executable=dict(type="str", default="mlnx_qos"),
    switch_state=dict(type="dict"),
    fail_on_error=dict(type="bool", default=True),
)


def main():
    module = AnsibleModule(
        argument_spec=ARGUMENT_SPEC, mutually_exclusive=[("host_state", "netdev")], supports_check_mode=True
    )
    # mlnx_qos is run and found as Ansible does (run_command, get_bin_path)
    respond(module, run_qos_check, module.params, module)


if __name__ == "__main__":
    main()
