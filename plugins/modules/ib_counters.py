#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: ib_counters
short_description: Snapshot RDMA port counters and fail when error counters increased
version_added: 0.1.0
description:
  - Reads C(counters/) (and C(hw_counters/) when O(include_hw_counters)) of every port under
    C(<sysfs_root>/class/infiniband).
  - Given an earlier snapshot in O(previous), computes per-counter increases and reports
    C(violations) where an increase exceeds the allowed one.
  - Physical-layer counters (symbol_error, link_error_recovery, link_downed, local_link_integrity_errors,
    port_rcv_remote_physical_errors, excessive_buffer_overrun_errors, port_rcv_errors) allow no
    increase by default. Congestion counters (port_xmit_wait...) are reported, not gated, unless given in
    O(thresholds).
  - Counters pinned at their bit-width maximum are listed in C(saturated). Such a counter can no longer
    show an increase, so "no increase" would be a lie; clear them (C(perfquery -R)) before a run. One of a gated
    class (C(gated), a threshold >= 0, the physical ones by default) fails the port like a violation (when
    O(fail_on_violation)), with the fix in the message.
  - Values like C(N/A (no PMA)) and drivers without C(counters/) are skipped, not errors.
extends_documentation_fragment:
  - ibtune.fabric.sysfs
  - ibtune.fabric.attributes
  - ibtune.fabric.attributes.READ_ONLY
options:
  previous:
    description:
      - An earlier snapshot, i.e. the C(counters) result of a previous run of this module.
      - Without it only a snapshot (and saturation) is returned.
    type: dict
  thresholds:
    description:
      - Allowed increase per counter name, merged over the defaults (physical-layer counters 0).
      - A negative value turns the gate for that counter off.
      - A name that is neither a counter of the kernel (C(counters/)) or of mlx5 (C(hw_counters/)) nor present on
        any port read fails the task with a did-you-mean, since a misspelled name would gate nothing.
    type: dict
    default: {}
  include_hw_counters:
    description: Also read C(hw_counters/) (mlx5 RoCE loss and congestion counters).
    type: bool
    default: false
  devices:
    description: Only these RDMA devices (default all).
    type: list
    elements: str
  fail_on_violation:
    description: Fail the task when there are violations.
    type: bool
    default: true
author:
  - ibtune.fabric contributors (@ibtune)
"""

EXAMPLES = r"""
- name: Counters before the run
  ibtune.fabric.ib_counters:
  register: before

- name: Counters after, failing on any physical-layer error increase
  ibtune.fabric.ib_counters:
    previous: "{{ before.counters }}"
    thresholds:
      port_xmit_wait: 1000000   # also gate congestion
"""

RETURN = r"""
counters:
  description: Snapshot, C(dev:port) to counter name to value.
  returned: always
  type: dict
  sample: {"mlx5_0:1": {"symbol_error": 0, "link_downed": 0, "port_xmit_wait": 1234}}
deltas:
  description: Increase of each counter since O(previous) (empty without it).
  returned: always
  type: dict
  sample: {"mlx5_0:1": {"symbol_error": 2, "port_xmit_wait": 500}}
violations:
  description: Counters that rose by more than allowed, largest increase first.
  returned: always
  type: list
  elements: dict
  sample:
    - {device: mlx5_0, port: 1, counter: symbol_error, before: 10, after: 12, delta: 2, allowed: 0, category: physical}
saturated:
  description:
    - Counters pinned at their maximum (stuck); increases on them are invisible. C(gated) when an increase of it
      fails the port, C(source) C(sysfs) (the widths of C(COUNTER_WIDTHS)).
  returned: always
  type: list
  elements: dict
  sample: [{device: mlx5_0, port: 1, counter: local_link_integrity_errors, value: 15, width: 4, source: sysfs,
            gated: true}]
thresholds:
  description: The allowed increases in force (defaults merged with O(thresholds)).
  returned: always
  type: dict
msg:
  description: Summary; names each violation when there are some.
  returned: always
  type: str
"""

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.ibtune.fabric.plugins.module_utils.common.module import respond
from ansible_collections.ibtune.fabric.plugins.module_utils.host.module import run_ib_counters

ARGUMENT_SPEC = dict(
    sysfs_root=dict(type="path", default="/sys"),
    previous=dict(type="dict"),
    thresholds=dict(type="dict", default={}),
    include_hw_counters=dict(type="bool", default=False),
    devices=dict(type="list", elements="str"),
    fail_on_violation=dict(type="bool", default=True),
)


def main():
    module = AnsibleModule(argument_spec=ARGUMENT_SPEC, supports_check_mode=True)
    respond(module, run_ib_counters, module.params, module.check_mode)


if __name__ == "__main__":
    main()
