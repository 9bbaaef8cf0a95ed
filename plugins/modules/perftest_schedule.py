#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: perftest_schedule
short_description: Run one host's sides of a whole validation pass (every round, every rail), self-timed
version_added: 0.2.0
description:
  - Runs the perftest sides this host has in one pass, as planned on the controller by M(ibtune.fabric.fabric_plan)
    (round, role, local device and port, peer, peer address, a TCP port unique per round and rail).
  - Rounds run in order with no Ansible round trip between them. Round k+1 starts on this host as soon as
    its round-k sides have ended. All rails of a round run at once, in this one process.
  - A server listens from the start of its round and is stopped when no client reached it within
    O(connect_timeout). A client retries until its server listens, within O(connect_timeout). Once
    connected, a side gets the test time plus O(slack). Every side is bounded.
  - Every perftest runs in its own process group and dies with this module. Only processes this module
    started are ever signalled, never processes found by name.
  - Progress (rounds done, failures so far) is written to O(state_path) after every round, for the
    controller's progress line. Meant to run with C(async) and C(poll=0), then
    M(ibtune.fabric.schedule_wait).
  - Test kinds (bandwidth C(write), C(read), C(send); latency C(write_lat), C(read_lat), C(send_lat)) come
    from one registry shared with M(ibtune.fabric.perftest_bw) and M(ibtune.fabric.perftest_lat).
extends_documentation_fragment:
  - ibtune.fabric.attributes
options:
  sides:
    description:
      - This host's sides, as sliced by M(ibtune.fabric.fabric_plan) (its slice file through the filter
        P(ibtune.fabric.slice_sides#filter)). Each has C(pass), C(round), C(role)
        (C(server) or C(client)), C(host), C(peer), C(rail), C(device), C(port), C(tcp_port), C(address)
        (client only) and optionally C(gid_index).
    type: list
    elements: dict
    required: true
  test:
    description: The perftest test kind.
    type: str
    default: write
    choices: [write, read, send, write_lat, read_lat, send_lat]
  size:
    description: Message size in bytes.
    type: str
    default: "65536"
  duration:
    description: Seconds per test (perftest C(-D)); null runs an iteration count.
    type: int
  iterations:
    description: Iterations (perftest C(-n)) when O(duration) is null.
    type: int
  run_estimate_s:
    description: How long one test takes when O(duration) is null (bounds the side).
    type: float
    default: 10
  qps:
    description: Queue pairs per connection (bandwidth tests).
    type: int
    default: 1
  bidirectional:
    description: Bidirectional bandwidth (perftest C(-b)).
    type: bool
    default: false
  use_cuda:
    description: GPU index for GPUDirect buffers (C(--use_cuda)).
    type: int
  gid_index:
    description: GID index for every side (RoCE); a side's own C(gid_index) wins.
    type: int
  executable:
    description: The perftest program (default the registry's, e.g. C(ib_write_bw)).
    type: path
  extra_args:
    description: Extra perftest arguments, appended as they are (an argument list, never a shell string).
    type: list
    elements: str
    default: []
  connect_timeout:
    description: Seconds a client retries until its server listens, and a server waits for its client.
    type: float
    default: 30
  slack:
    description: Seconds a connected side may run past the test time before it is stopped.
    type: float
    default: 20
  state_path:
    description: Progress file (JSON) written after every round; its directory must exist.
    type: path
attributes:
  check_mode:
    support: none
    details: It measures; check mode would have nothing to predict.
  diff_mode:
    support: none
notes:
  - Failures of a side are results (C(failure_kind), C(failure)), not task failures; the controller joins
    and judges them (M(ibtune.fabric.fabric_join)). The task fails only on bad options.
author:
  - ibtune.fabric contributors (@ibtune)
"""

EXAMPLES = r"""
- name: Run this host's sides of pass 1
  ibtune.fabric.perftest_schedule:
    sides: "{{ lookup('ansible.builtin.file', plan_dir ~ '/pass1/' ~ inventory_hostname ~ '.json') | from_json }}"
    test: write
    duration: 10
    connect_timeout: 30
    state_path: /tmp/ibtune-schedule-pass1.json
  async: 3600
  poll: 0
  register: job
"""

RETURN = r"""
sides:
  description: One result per side, in the order run.
  returned: always
  type: list
  elements: dict
  sample:
    - {pass: 1, round: 1, role: client, host: node2, peer: node1, rail: "mlx5_0:1", device: mlx5_0, port: 1,
       tcp_port: 18515, test: write, kind: bandwidth, rc: 0, attempts: 2, elapsed_s: 10.4,
       bw_avg_gbps: 392.1, bw_peak_gbps: null, msg_size: 65536, failure_kind: null, failure: null}
rounds:
  description: Rounds run.
  returned: always
  type: int
failures:
  description: Sides that failed.
  returned: always
  type: int
elapsed_s:
  description: Seconds for the whole schedule.
  returned: always
  type: float
round_seconds:
  description: Seconds each round took on this host.
  returned: always
  type: list
  elements: float
"""

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.ibtune.fabric.plugins.module_utils.common.module import respond
from ansible_collections.ibtune.fabric.plugins.module_utils.validate.module import run_perftest_schedule

ARGUMENT_SPEC = dict(
    sides=dict(type="list", elements="dict", required=True),
    test=dict(type="str", default="write", choices=["write", "read", "send", "write_lat", "read_lat", "send_lat"]),
    size=dict(type="str", default="65536"),
    duration=dict(type="int"),
    iterations=dict(type="int"),
    run_estimate_s=dict(type="float", default=10),
    qps=dict(type="int", default=1),
    bidirectional=dict(type="bool", default=False),
    use_cuda=dict(type="int"),
    gid_index=dict(type="int"),
    executable=dict(type="path"),
    extra_args=dict(type="list", elements="str", default=[]),
    connect_timeout=dict(type="float", default=30),
    slack=dict(type="float", default=20),
    state_path=dict(type="path"),
)


def main():
    module = AnsibleModule(argument_spec=ARGUMENT_SPEC, supports_check_mode=False)
    respond(module, run_perftest_schedule, module.params)


if __name__ == "__main__":
    main()
