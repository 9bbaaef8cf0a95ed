#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: perftest_bw
short_description: Run one side of a perftest bandwidth test (ib_write_bw, ib_read_bw, ib_send_bw) and gate it
version_added: 0.1.0
description:
  - Runs the server or the client side of C(ib_write_bw), C(ib_read_bw) or C(ib_send_bw) from perftest
    with an argument list (never a shell string), parses the report and returns the bandwidth in Gb/s
    (10^9 bit/s; perftest's C(MB/sec) and C(MiB/sec) are 2^20 bytes per second and are converted).
  - The client retries the connection until O(connect_timeout), because perftest itself tries once and
    exits with C(Couldn't connect). The server waits for one client up to O(timeout) and is then killed.
  - perftest runs in its own session and process group. On a timeout, on a signal to the module and on any
    error of the module itself the whole group is stopped (SIGTERM, then SIGKILL after 2 s) and reaped; the
    child also gets C(PR_SET_PDEATHSIG) so that it dies with the module even when the module is SIGKILLed.
    No perftest process outlives the module.
  - Known failures (no RDMA device, cannot connect, TCP port busy, QP cannot reach RTR, memory registration,
    completion with error, crash, perftest's own BW limit, timeout) fail the task with one sentence that
    names the host-side facts and says what to check.
  - Gate, only when O(min_gbps) or O(min_link_fraction) is given. The threshold is
    C(max(min_gbps, min_link_fraction x port rate x (2 if bidirectional))), the port rate is read from
    C(<sysfs_root>/class/infiniband/<device>/ports/<ib_port>/rate). The BW average is gated, since perftest
    does not measure the peak with C(-D).
  - The task never reports C(changed), since a measurement does not change the host.
extends_documentation_fragment:
  - ibtune.fabric.perftest
  - ibtune.fabric.sysfs
  - ibtune.fabric.attributes
options:
  qps:
    description: Number of queue pairs (perftest C(-q)).
    type: int
    default: 1
  size:
    description:
      - Message size in bytes (perftest C(-s)), or C(all) for every size from 2 bytes to 8 MiB (perftest C(-a));
        the largest size is the headline result and every size is returned in RV(rows).
    type: str
    default: "65536"
  duration:
    description:
      - Run for this many seconds (perftest C(-D)) instead of a fixed iteration count. perftest does not
        measure the peak bandwidth then (it prints 0).
    type: int
  bidirectional:
    description: Measure both directions at once (perftest C(-b)); the link-rate gate doubles.
    type: bool
    default: false
  use_cuda:
    description:
      - Use the memory of this CUDA GPU (perftest C(--use_cuda=<n>)) to measure GPUDirect RDMA. Needs a
        perftest built with CUDA and nvidia-peermem or dma-buf.
    type: int
  test:
    description: Which perftest tool to run, C(ib_<test>_bw).
    type: str
    default: write
    choices: [write, read, send]
  timeout:
    description:
      - Seconds one perftest run may take before it is killed. For the server this includes the wait for the
        client, so make it cover the time until the client starts plus the test.
    type: float
    default: 120
  min_gbps:
    description: Fail when the average bandwidth is below this many Gb/s.
    type: float
  min_link_fraction:
    description:
      - Fail when the average bandwidth is below this fraction of the port rate read from sysfs (x2 when
        O(bidirectional)). For example C(0.9) on a 400 Gb/s NDR port requires 360 Gb/s.
      - The task fails before running when the port rate cannot be read and O(min_gbps) is not given.
    type: float
  executable:
    description:
      - The perftest program to run, a path or a name looked up on C(PATH). Defaults to C(ib_<test>_bw)
        on C(PATH); point it at another build (e.g. a CUDA-enabled perftest) when needed.
    type: str
  report_gbits:
    description:
      - Pass C(--report_gbits) so perftest prints Gb/s. Results are returned in Gb/s either way.
    type: bool
    default: true
  out_json:
    description:
      - Also pass C(--out_json --out_json_file=<temporary file>) (perftest 24.01+ writes valid JSON) and
        take the headline result from that file. With O(size=all) the file holds only the largest size;
        RV(rows) still come from the console table.
    type: bool
    default: false
attributes:
  check_mode:
    support: full
    details: In check mode perftest is not run; RV(cmd) shows what would run.
  diff_mode:
    support: none
notes:
  - Start the server side first (for example with C(async) and C(poll=0)), then the client; the client's
    retry makes the order of the two starts uncritical within O(connect_timeout).
  - Since perftest 26.01 both sides must agree on symmetric options (size, qps, duration, bidirectional...);
    pass the same values to both.
seealso:
  - module: ibtune.fabric.ib_facts
  - module: ibtune.fabric.ib_counters
author:
  - ibtune.fabric contributors (@ibtune)
"""

EXAMPLES = r"""
- name: Start the server side on node1 (returns when the client has finished)
  ibtune.fabric.perftest_bw:
    role: server
    device: mlx5_0
    tcp_port: 18515
    duration: 10
    timeout: 90
  async: 120
  poll: 0
  register: server_job

- name: Run the client on node2 and require 90% of the port rate
  ibtune.fabric.perftest_bw:
    role: client
    server: node1
    device: mlx5_0
    tcp_port: 18515
    duration: 10
    min_link_fraction: 0.9
  register: bw

- name: RoCE with an explicit GID index, all message sizes, JSON report
  ibtune.fabric.perftest_bw:
    role: client
    server: 10.0.0.2
    device: mlx5_1
    gid_index: 3
    size: all
    out_json: true
    min_gbps: 180

- name: GPUDirect RDMA from GPU 0, bidirectional
  ibtune.fabric.perftest_bw:
    role: client
    server: node1
    device: mlx5_0
    use_cuda: 0
    bidirectional: true
    min_link_fraction: 0.85
"""

RETURN = r"""
bw_avg_gbps:
  description: Average bandwidth in Gb/s (10^9 bit/s) at the largest message size; what the gate checks.
  returned: when perftest printed a result
  type: float
  sample: 371.419377
bw_peak_gbps:
  description: Peak bandwidth in Gb/s at the largest message size; 0 when perftest did not measure it (C(-D)).
  returned: when perftest printed a result
  type: float
  sample: 371.835451
msg_rate_mpps:
  description: Message rate in millions of messages per second (null on old perftest without MsgRate).
  returned: when perftest printed a result
  type: float
  sample: 0.708426
msg_size:
  description: Message size in bytes of the headline result (the largest size with O(size=all)).
  returned: when perftest printed a result
  type: int
  sample: 65536
iterations:
  description: Iterations perftest ran at that size.
  returned: when perftest printed a result
  type: int
  sample: 5000
rows:
  description: Every row of the result table (one per message size), bandwidths in Gb/s.
  returned: always
  type: list
  elements: dict
  sample:
    - {msg_size: 65536, iterations: 5000, bw_peak_gbps: 371.835451, bw_avg_gbps: 371.419377, msg_rate_mpps: 0.708426}
link_type:
  description: Link type perftest reported (C(IB) or C(Ethernet)).
  returned: when perftest printed its header
  type: str
  sample: Ethernet
link_rate_gbps:
  description: Port rate in Gb/s read from sysfs (null when unreadable).
  returned: always
  type: float
  sample: 400.0
threshold_gbps:
  description: The gate threshold in Gb/s; null when no gate was given.
  returned: always
  type: float
  sample: 360.0
threshold_basis:
  description: What the threshold is made of.
  returned: always
  type: str
  sample: 0.9 x 400 Gb/s port rate
passed:
  description: True when the run succeeded and met the threshold (or there is no threshold); null in check mode.
  returned: always
  type: bool
  sample: true
failure:
  description:
    - Null on success; else C(kind) (no_device, connect, port_busy, modify_qp_rtr, mr_alloc,
      completion_error, crash, bw_limit, timeout, json, unknown, below_threshold), C(message) and C(hint).
  returned: always
  type: dict
  sample: {kind: no_device, message: "perftest found no RDMA device (Did not detect devices)", hint: "check ibstat"}
warnings_seen:
  description: Warning lines perftest printed (CPU frequency, BW peak not measured, device limitations).
  returned: always
  type: list
  elements: str
  sample: ["WARNING: BW peak won't be measured in this run."]
cmd:
  description: The argument vector that was (or in check mode would be) run.
  returned: always
  type: list
  elements: str
  sample: [ib_write_bw, -d, mlx5_0, -i, "1", -q, "1", -s, "65536", -p, "18515", --report_gbits, -F, node1]
stdout:
  description: perftest's standard output of the last attempt.
  returned: always
  type: str
  sample: " #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]\n..."
stderr:
  description: perftest's standard error of the last attempt.
  returned: always
  type: str
  sample: ""
rc:
  description: Exit status of the last attempt (negative = killed by that signal); null in check mode.
  returned: always
  type: int
  sample: 0
attempts:
  description: How many times perftest was started (client retries while the connection is refused).
  returned: always
  type: int
  sample: 1
elapsed_s:
  description: Wall time of all attempts in seconds.
  returned: always
  type: float
  sample: 12.41
msg:
  description: One-line summary.
  returned: always
  type: str
  sample: "ib_write_bw mlx5_0:1 -> node1: 371.4 Gb/s average at 65536 B"
"""

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.ibtune.fabric.plugins.module_utils.common.module import respond
from ansible_collections.ibtune.fabric.plugins.module_utils.perftest import kinds
from ansible_collections.ibtune.fabric.plugins.module_utils.perftest.module import MODULE_KWARGS, argument_spec, run

ARGUMENT_SPEC = argument_spec(
    qps=dict(type="int", default=1),
    size=dict(type="str", default="65536"),
    bidirectional=dict(type="bool", default=False),
    test=dict(type="str", default="write", choices=list(kinds.BANDWIDTH_TESTS)),
    min_gbps=dict(type="float"),
    min_link_fraction=dict(type="float"),
    report_gbits=dict(type="bool", default=True),
    out_json=dict(type="bool", default=False),
)


def main():
    module = AnsibleModule(argument_spec=ARGUMENT_SPEC, **MODULE_KWARGS)
    respond(module, run, module.params, module, module.check_mode)


if __name__ == "__main__":
    main()
