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

import os

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.ibtune.fabric.plugins.module_utils.qos.mlnx import MlnxQosParseError
from ansible_collections.ibtune.fabric.plugins.module_utils.qos.model import QosModelError, normalize_model
from ansible_collections.ibtune.fabric.plugins.module_utils.qos.roce import (
    RoceQosError,
    apply_changes,
    boot_script,
    desired_state,
    diff,
    full_changes,
    plan,
    rdma_device_of,
    read_current,
    state_text,
    validate_interface,
)


def _jsonable(value):
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    return value


def _read_port(module, iface, executable, desired):
    rc, out, err = module.run_command([executable, "-i", iface["netdev"]])
    if rc != 0:
        module.fail_json(
            msg="%s -i %s failed (rc %d): %s; check that the interface is a ConnectX port and mlnx_qos works."
            % (executable, iface["netdev"], rc, (err or out).strip()[:300])
        )
    try:
        return read_current(iface, out, module.params["sysfs_root"], module.params["configfs_root"], desired)
    except MlnxQosParseError as exc:
        module.fail_json(msg="cannot read %s -i %s: %s" % (executable, iface["netdev"], exc))


def _run_actions(module, actions, applied):
    """Run the actions in order; each one that succeeded is appended to applied (for a failure's changed)."""
    for action in actions:
        if "argv" in action:
            rc, out, err = module.run_command(action["argv"])
            if rc != 0:
                module.fail_json(
                    msg="%s failed (rc %d): %s" % (" ".join(action["argv"]), rc, (err or out).strip()[:300]),
                    failed_action=action,
                )
        elif "mkdir" in action:
            if not os.path.isdir(action["mkdir"]):
                try:
                    os.mkdir(action["mkdir"])
                except OSError as exc:
                    module.fail_json(
                        msg="cannot create the configfs group %s: %s; is rdma_cm loaded and configfs mounted?"
                        % (action["mkdir"], exc)
                    )
        else:
            try:
                with open(action["write"], "w") as handle:
                    handle.write(action["value"] + "\n")
            except (IOError, OSError) as exc:
                module.fail_json(
                    msg="cannot write %s to %s: %s; run as root on a host whose driver exposes this knob."
                    % (action["value"], action["write"], exc)
                )
        applied.append(action)


def main():
    module = AnsibleModule(
        argument_spec=dict(
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
        ),
        supports_check_mode=True,
    )
    params = module.params
    # A failure after some actions ran must still report changed=true: the host was changed (a partial apply).
    applied = []
    fail_json = module.fail_json

    def fail_after_partial_apply(**kwargs):
        if applied:
            kwargs["changed"] = True
            kwargs["applied_actions"] = _jsonable(applied)
        fail_json(**kwargs)

    module.fail_json = fail_after_partial_apply
    try:
        model = normalize_model(params["qos"])
    except QosModelError as exc:
        module.fail_json(msg=str(exc))
    result = dict(changed=False, changes=[], actions=[], desired={}, current={}, missing=[], boot_script="")
    if model["mode"] != "roce_lossless":
        result["msg"] = "QoS mode is %s: nothing to do on RoCE host ports" % model["mode"]
        module.exit_json(**result)

    executable = params["executable"]
    if os.sep not in executable:
        found = module.get_bin_path(executable)
        if not found:
            module.fail_json(
                msg="%s is not installed on this host: install mlnx-tools (MLNX_OFED/DOCA) or set executable."
                % executable
            )
        executable = found
    elif not os.access(executable, os.X_OK):
        module.fail_json(msg="%s is not an executable file: install mlnx-tools or fix executable." % executable)

    sysfs_root, configfs_root = params["sysfs_root"], params["configfs_root"]
    desired = desired_state(model, params["traffic_class"], params["default_roce_tos"])
    before_text, after_text, boot = [], [], []
    ports = []
    for raw in params["interfaces"]:
        try:
            iface = validate_interface(raw)
        except RoceQosError as exc:
            module.fail_json(msg=str(exc))
        if not os.path.isdir(os.path.join(sysfs_root, "class", "net", iface["netdev"])):
            module.fail_json(
                msg="interface %s does not exist under %s/class/net: fix interfaces or sysfs_root."
                % (iface["netdev"], sysfs_root)
            )
        if iface["rdma_device"] is None:
            iface["rdma_device"] = rdma_device_of(sysfs_root, iface["netdev"])
        ports.append(iface)

    for iface in ports:
        current, missing, _qos = _read_port(module, iface, executable, desired)
        skip = {m["key"] for m in missing}
        for item in missing:
            result["missing"].append(dict(item, netdev=iface["netdev"]))
        if missing and params["fail_on_missing"]:
            module.fail_json(
                msg="%s lacks %s: this driver does not expose the knob; use MLNX_OFED/DOCA or set "
                "fail_on_missing=false." % (iface["netdev"], ", ".join(m["path"] for m in missing)),
                missing=result["missing"],
            )
        changes = diff(desired, current, skip)
        actions = plan(iface, changes, executable, sysfs_root, configfs_root)
        before_text.append(state_text(iface, current))
        boot.append((iface["netdev"], plan(iface, full_changes(desired, skip), executable, sysfs_root, configfs_root)))
        for change in changes:
            result["changes"].append(dict(change, netdev=iface["netdev"]))
        result["actions"].extend(actions)
        if actions and not module.check_mode:
            _run_actions(module, actions, applied)
            current, missing, _qos = _read_port(module, iface, executable, desired)
            left = diff(desired, current, skip)
            if left:
                module.fail_json(
                    msg="after applying, %s still differs: %s; the driver refused it, or firmware-controlled "
                    "DCBX let the switch override it (see dmesg; mlnx_qos --dcbx os, or fix the switch)."
                    % (
                        iface["netdev"],
                        "; ".join("%s is %s, wanted %s" % (c["key"], c["before"], c["after"]) for c in left),
                    ),
                    changes=result["changes"],
                )
            after_text.append(state_text(iface, current))
        else:
            expected = apply_changes(current, changes)
            after_text.append(state_text(iface, expected))
        result["desired"][iface["netdev"]] = _jsonable(desired)
        result["current"][iface["netdev"]] = _jsonable(current)

    result["changed"] = bool(result["changes"])
    result["boot_script"] = boot_script(boot)
    result["changes"] = _jsonable(result["changes"])
    result["missing"] = _jsonable(result["missing"])
    if module._diff:
        result["diff"] = {"before": "".join(before_text), "after": "".join(after_text)}
    result["msg"] = "%d port%s: %d knob%s %s%s" % (
        len(ports),
        "" if len(ports) == 1 else "s",
        len(result["changes"]),
        "" if len(result["changes"]) == 1 else "s",
        "would change" if module.check_mode else "changed",
        ", %d missing" % len(result["missing"]) if result["missing"] else "",
    )
    module.exit_json(**result)


if __name__ == "__main__":
    main()
