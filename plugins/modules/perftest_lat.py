#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: perftest_lat
short_description: Run one side of a perftest latency test (ib_write_lat, ib_read_lat, ib_send_lat) and gate it
version_added: 0.2.0
description:
  - Runs the server or the client side of C(ib_write_lat), C(ib_read_lat) or C(ib_send_lat) from perftest
    with an argument list (never a shell string), parses the report and returns the latencies in
    microseconds as perftest printed them.
  - Every layout perftest prints is read; a column this perftest version does not print is returned as
    null. The 9-column table of perftest 3.x and later (C(t_min), C(t_max), C(t_typical), C(t_avg), C(t_stdev),
    99% and 99.9% percentiles); the old 3-value table (C(t_min), C(t_max), C(t_typical)); with O(duration) the
    C(-D) table (C(t_avg) and C(tps average)); and the single number of C(--output=latency) (the average).
  - The headline is the smallest message size of the table (the only one without O(size=all)); every size is
    in RV(rows).
  - The client retries the connection until O(connect_timeout), because perftest itself tries once. The
    server waits for one client up to O(timeout) and is then killed. perftest runs in its own session and
    process group, which is stopped on a timeout, on a signal to the module and on any error of the module;
    no perftest process outlives the module.
  - Known failures (no RDMA device, cannot connect, TCP port busy, QP cannot reach RTR, memory registration,
    completion with error, crash, timeout) fail the task with one sentence that says what to check.
  - Gate, only when O(max_typical_us) or O(max_p99_us) is given. The typical (median) latency must not exceed
    O(max_typical_us) (the average where perftest prints only it, O(duration)); the 99% percentile must not
    exceed O(max_p99_us). The server side of C(ib_read_lat) prints no result (only the client posts reads), so
    it passes when it served its client.
  - The task never reports C(changed), since a measurement does not change the host.
extends_documentation_fragment:
  - ibtune.fabric.perftest
  - ibtune.fabric.sysfs
  - ibtune.fabric.attributes
options:
  size:
    description:
      - Message size in bytes (perftest C(-s)), or C(all) for every size from 2 bytes to 8 MiB (perftest C(-a)).
    type: str
    default: "2"
  iterations:
    description:
      - Number of exchanges (perftest C(-n), at least 5); perftest's default is 1000. The 99.9% percentile needs
        1000 or more to differ from the maximum.
    type: int
  duration:
    description:
      - Run for this many seconds (perftest C(-D)) instead of an iteration count. perftest then prints only the
        average latency and the transactions per second, so O(max_p99_us) cannot be used.
    type: int
  use_cuda:
    description:
      - Use the memory of this CUDA GPU (perftest C(--use_cuda=<n>)). Needs a perftest built with CUDA.
    type: int
  test:
    description: Which perftest tool to run, C(ib_<verb>_lat).
    type: str
    default: write_lat
    choices: [write_lat, read_lat, send_lat]
  timeout:
    description:
      - Seconds one perftest run may take before it is killed. For the server this includes the wait for the
        client.
    type: float
    default: 120
  max_typical_us:
    description:
      - Fail when the typical (median) latency of the headline size is above this many microseconds (the
        average with O(duration), where perftest prints no median).
    type: float
  max_p99_us:
    description:
      - Fail when the 99% percentile latency of the headline size is above this many microseconds. perftest
        before 2016 prints no percentile; the check is then skipped and RV(warnings_seen) says so.
    type: float
  executable:
    description:
      - The perftest program to run, a path or a name looked up on C(PATH). Defaults to C(ib_<verb>_lat) on
        C(PATH).
    type: str
attributes:
  check_mode:
    support: full
    details: In check mode perftest is not run; RV(cmd) shows what would run.
  diff_mode:
    support: none
notes:
  - Start the server side first (for example with C(async) and C(poll=0)), then the client.
  - Do not pass C(-C) (report cycles) in O(extra_args); perftest then prints cycles under its C([usec]) header.
seealso:
  - module: ibtune.fabric.perftest_bw
  - module: ibtune.fabric.ib_facts
author:
  - ibtune.fabric contributors (@ibtune)
"""

EXAMPLES = r"""
- name: Start the latency server on node1
  ibtune.fabric.perftest_lat:
    role: server
    device: mlx5_0
    tcp_port: 18600
    timeout: 60
  async: 90
  poll: 0

- name: Measure RDMA write latency from node2 and require a typical latency of 3 us or less
  ibtune.fabric.perftest_lat:
    role: client
    server: node1
    device: mlx5_0
    tcp_port: 18600
    iterations: 10000
    max_typical_us: 3
    max_p99_us: 5
  register: lat

- name: RDMA read latency over RoCE, all sizes
  ibtune.fabric.perftest_lat:
    role: client
    test: read_lat
    server: 10.0.0.2
    device: mlx5_1
    gid_index: 3
    size: all
"""

RETURN = r"""
t_min_us:
  description: Minimum latency in microseconds at the headline size.
  returned: when perftest printed a result
  type: float
  sample: 1.91
t_max_us:
  description: Maximum latency in microseconds.
  returned: when perftest printed a result
  type: float
  sample: 13.87
t_typical_us:
  description: Typical (median) latency in microseconds; null with O(duration) or C(--output=latency).
  returned: when perftest printed a result
  type: float
  sample: 1.99
t_avg_us:
  description: Average latency in microseconds; null on perftest before 2016 (old 3-value table).
  returned: when perftest printed a result
  type: float
  sample: 2.01
t_stdev_us:
  description: Standard deviation in microseconds; null where not printed.
  returned: when perftest printed a result
  type: float
  sample: 0.32
p99_us:
  description: 99% percentile in microseconds; null where not printed (old table, O(duration)).
  returned: when perftest printed a result
  type: float
  sample: 2.13
p999_us:
  description: 99.9% percentile in microseconds; null where not printed.
  returned: when perftest printed a result
  type: float
  sample: 9.95
latency_us:
  description: The latency the gate checks, the typical latency or, where perftest prints only it, the average.
  returned: when perftest printed a result
  type: float
  sample: 1.99
latency_basis:
  description: Which value RV(latency_us) is, C(t_typical) or C(t_avg).
  returned: when perftest printed a result
  type: str
  sample: t_typical
tps_avg:
  description: Transactions per second (O(duration) only; null otherwise).
  returned: when perftest printed a result
  type: float
  sample: 168068.16
msg_size:
  description: Message size in bytes of the headline result (the smallest size with O(size=all)).
  returned: when perftest printed a result
  type: int
  sample: 2
iterations:
  description: Iterations perftest ran at that size.
  returned: when perftest printed a result
  type: int
  sample: 1000
format:
  description:
    - The table layout perftest printed, C(iterations), C(iterations_old), C(duration), C(duration_old),
      C(average_only); null when none.
  returned: always
  type: str
  sample: iterations
rows:
  description: Every row of the result table (one per message size), in microseconds.
  returned: always
  type: list
  elements: dict
  sample:
    - {msg_size: 2, iterations: 1000, t_min_us: 0.96, t_max_us: 1.25, t_typical_us: 0.98, t_avg_us: 0.98,
       t_stdev_us: 0.01, p99_us: 1.0, p999_us: 1.25, tps_avg: null, cpu_util_pct: null}
link_type:
  description: Link type perftest reported (C(IB) or C(Ethernet)).
  returned: when perftest printed its header
  type: str
  sample: IB
link_rate_gbps:
  description: Port rate in Gb/s read from sysfs (null when unreadable); for the report only.
  returned: always
  type: float
  sample: 400.0
threshold_us:
  description: The ceiling that failed the gate, else O(max_typical_us) (null without a gate).
  returned: always
  type: float
  sample: 3.0
passed:
  description: True when the run succeeded and met the ceilings (or there are none); null in check mode.
  returned: always
  type: bool
  sample: true
failure:
  description:
    - Null on success; else C(kind) (no_device, connect, port_busy, modify_qp_rtr, mr_alloc, completion_error,
      crash, timeout, interrupted, unknown, above_threshold, invalid), C(message) and C(hint).
  returned: always
  type: dict
  sample: {kind: above_threshold, message: "typical latency 9.10 us > 3 us (max_typical_us)", hint: "check"}
warnings_seen:
  description: Warning lines perftest printed (CPU frequency, device limitations) and gate checks skipped.
  returned: always
  type: list
  elements: str
  sample: ["Conflicting CPU frequency values detected: 2200.000000 != 1040.353000. CPU Frequency is not max."]
cmd:
  description: The argument vector that was (or in check mode would be) run.
  returned: always
  type: list
  elements: str
  sample: [ib_write_lat, -d, mlx5_0, -i, "1", -s, "2", -p, "18515", -F, node1]
stdout:
  description: perftest's standard output of the last attempt.
  returned: always
  type: str
  sample: " #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec] ..."
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
  sample: 0.41
msg:
  description: One-line summary.
  returned: always
  type: str
  sample: "ib_write_lat mlx5_0:1 -> node1: typical 0.98 us, p99 1.00 us at 2 B"
"""

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.ibtune.fabric.plugins.module_utils.common.module import respond
from ansible_collections.ibtune.fabric.plugins.module_utils.perftest import kinds, latency
from ansible_collections.ibtune.fabric.plugins.module_utils.perftest.module import MODULE_KWARGS, argument_spec, run

ARGUMENT_SPEC = argument_spec(
    size=dict(type="str", default=str(latency.DEFAULT_SIZE)),
    iterations=dict(type="int"),
    test=dict(type="str", default="write_lat", choices=list(kinds.LATENCY_TESTS)),
    max_typical_us=dict(type="float"),
    max_p99_us=dict(type="float"),
)


def main():
    module = AnsibleModule(argument_spec=ARGUMENT_SPEC, **MODULE_KWARGS)
    respond(module, run, module.params, module, module.check_mode)


if __name__ == "__main__":
    main()
