#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: nccl_log_check
short_description: Read NCCL debug logs for the network NCCL used, IB-to-socket fallback and WARN lines
version_added: 0.1.0
description:
  - "Reads NCCL logs written with C(NCCL_DEBUG=INFO) (files, globs, or I(content)) and reports the networks NCCL said
    it used (C(Using network IB|Socket|<plugin>)), whether NCCL tried IB and fell back to sockets
    (C(NET/IB : No device found.)), every C(NCCL WARN) line with its file and line number, NCCL versions, and the
    variables NCCL picked up (C(<VAR> set by environment to <value>)), which shows that /etc/nccl.conf was read."
  - Fails when I(expect_transport) is not the network NCCL used (the message says which network NCCL used instead
    and why, e.g. no IB device or C(NCCL_IB_DISABLE=1)), or with I(fail_on_warn) when there are WARN lines.
  - With I(textfile_dir), writes C(ibtune_nccl.prom) there for node_exporter's textfile collector.
options:
  paths:
    description: Log files or globs. Mutually exclusive with I(content).
    type: list
    elements: path
  content:
    description: Log text. Mutually exclusive with I(paths).
    type: str
  expect_transport:
    description: The network NCCL must have used (C(IB) also matches plugin names such as C(IBext); C(Socket)).
    type: str
  fail_on_warn:
    description: Fail when the logs hold NCCL WARN lines.
    type: bool
    default: false
  textfile_dir:
    description: Directory of node_exporter's textfile collector; C(ibtune_nccl.prom) is written there.
    type: path
  host:
    description: The C(host) label of the metrics. Default is the node's hostname.
    type: str
  busbw:
    description: Collective name to bus bandwidth (GB/s) at the largest size, from M(ibtune.fabric.nccl_test).
    type: dict
    default: {}
extends_documentation_fragment:
  - ibtune.fabric.attributes
attributes:
  check_mode:
    support: full
    details: In check mode the logs are read but no metrics file is written.
  diff_mode:
    support: none
author:
  - ibtune.fabric contributors (@ibtune)
"""

EXAMPLES = r"""
- name: NCCL must have used InfiniBand
  ibtune.fabric.nccl_log_check:
    paths: [/var/log/ibtune/nccl_*.log]
    expect_transport: IB

- name: Export what NCCL did for Prometheus
  ibtune.fabric.nccl_log_check:
    paths: [/var/log/ibtune/nccl_torch.log]
    textfile_dir: /var/lib/prometheus/node-exporter
    busbw: {all_reduce: 343.6}
"""

RETURN = r"""
transports:
  description: Network families NCCL said it used (C(IB) for IB and its plugins, C(Socket), or a plugin's name).
  returned: always
  type: list
  elements: str
  sample: [Socket]
transport:
  description: The first of C(transports), null when the logs do not say.
  returned: always
  type: str
networks:
  description: Network names exactly as logged (C(IB), C(IBext), C(Socket), ...).
  returned: always
  type: list
  elements: str
fallback:
  description: True when NET/IB found no device and NCCL used sockets.
  returned: always
  type: bool
fallback_reason:
  description: Why NCCL is not on IB, with file and line; null when nothing says.
  returned: always
  type: str
nccl_warnings:
  description:
    - Each NCCL WARN line with its file, line number and host.
    - Not called C(warnings) because Ansible reserves that result key for its own warning messages.
  returned: always
  type: list
  elements: dict
  sample: [{path: /var/log/nccl.log, line: 17, host: gpu0301, message: "Failed to open libnvidia-ml.so.1"}]
nccl_versions:
  description: NCCL versions in the logs, oldest first.
  returned: always
  type: list
  elements: str
  sample: [2.28.9+cuda13.0]
env:
  description: Variables NCCL logged as C(set by environment) (process environment or a config file).
  returned: always
  type: dict
ib_devices:
  description: C(dev:port/IB|RoCE) NCCL's IB transport used.
  returned: always
  type: list
  elements: str
socket_interfaces:
  description: Interfaces NCCL's socket transport used.
  returned: always
  type: list
  elements: str
gdr:
  description: True when a channel used GPUDirect RDMA.
  returned: always
  type: bool
channel_paths:
  description: How often each channel path (C(P2P/CUMEM), C(SHM), C(NET/IB/0/GDRDMA)...) was logged.
  returned: always
  type: dict
files:
  description: The files read, with the number of NCCL lines in each.
  returned: always
  type: list
  elements: dict
prom_file:
  description: The metrics file written.
  returned: when I(textfile_dir) was given and not in check mode
  type: str
"""


from ansible.module_utils.basic import AnsibleModule
from ansible_collections.ibtune.fabric.plugins.module_utils.common.module import respond
from ansible_collections.ibtune.fabric.plugins.module_utils.nccl.module import run_log_check


ARGUMENT_SPEC = dict(
    paths=dict(type="list", elements="path"),
    content=dict(type="str"),
    expect_transport=dict(type="str"),
    fail_on_warn=dict(type="bool", default=False),
    textfile_dir=dict(type="path"),
    host=dict(type="str"),
    busbw=dict(type="dict", default={}),
)


def main():
    module = AnsibleModule(
        argument_spec=ARGUMENT_SPEC,
        mutually_exclusive=[("paths", "content")],
        required_one_of=[("paths", "content")],
        supports_check_mode=True,
    )
    respond(module, run_log_check, module.params, module.check_mode)


if __name__ == "__main__":
    main()
