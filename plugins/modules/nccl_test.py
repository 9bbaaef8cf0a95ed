#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: nccl_test
short_description: Measure NCCL collective bandwidth with nccl-tests or a built-in torch.distributed benchmark
version_added: 0.1.0
description:
  - C(backend=nccl_tests) runs nccl-tests binaries (C(all_reduce_perf)...) and parses their table (old and new
    layouts, stray NCCL lines) or their C(-J) JSON.
  - "Several nodes: I(launch) builds the launcher's argv (C(module_utils/nccl/launch.py)): C(srun --mpi=pmix|pmi2)
    over I(hosts), C(mpirun) with a hostfile written from I(hosts), or C(torchrun) (one agent per node; under srun
    with I(torchrun_under_srun)). Ranks per node are I(ranks_per_node), else the NVIDIA GPUs found under
    I(sysfs_root)C(/bus/pci/devices) on the launch host."
  - C(backend=torch) runs a built-in torch.distributed benchmark with the node's Python that has PyTorch, one process
    per GPU (or one rank of a C(torchrun) launch), for C(all_reduce), C(all_gather), C(reduce_scatter) and
    C(alltoall), timed with CUDA events; busbw follows nccl-tests' formulas (all_reduce x 2(n-1)/n, the others
    x (n-1)/n).
    torch's all_reduce works in place, so that figure is an in-place one.
  - NCCL's log (C(NCCL_DEBUG=INFO) unless I(nccl_debug) says otherwise) is parsed for the network NCCL used
    (C(transport)), GPUDirect RDMA and the NCCL version; I(log_file) keeps it for M(ibtune.fabric.nccl_log_check).
  - I(expect) is the plan's word on what NCCL must use (transport, NICs, GPUDirect RDMA, per host); any host whose
    ranks logged otherwise fails the run (C(transport_problems)).
  - Fails with one sentence when the benchmark fails, a result is wrong, NCCL did not do what I(expect) says, or
    the bus bandwidth at the largest size is below I(min_busbw).
options:
  backend:
    description: What runs the collectives.
    type: str
    choices: [nccl_tests, torch]
    default: nccl_tests
  collectives:
    description:
      - Collectives to run, in order; the first one is the one C(rows), C(max_size_busbw) and I(min_busbw) refer to.
      - C(backend=torch) supports C(all_reduce), C(all_gather), C(reduce_scatter) and C(alltoall).
    type: list
    elements: str
    default: [all_reduce]
  executable:
    description:
      - nccl-tests binary to run (name on C(PATH) or a path). Only with one collective.
      - Default is C(<collective>_perf) in I(tests_dir) or on C(PATH).
    type: str
  tests_dir:
    description: Directory holding the nccl-tests binaries (e.g. C(/opt/nccl-tests/build)).
    type: path
  min_bytes:
    description: Smallest message size (nccl-tests C(-b); K, M, G suffixes are powers of 1024).
    type: str
    default: 8M
  max_bytes:
    description: Largest message size (nccl-tests C(-e)).
    type: str
    default: 1G
  step_factor:
    description: Multiply the size by this between steps (nccl-tests C(-f)).
    type: int
    default: 2
  gpus:
    description:
      - GPUs per process for nccl-tests (C(-g)); number of processes (one per GPU) for the torch backend.
      - Default is 1 for nccl-tests and every visible GPU for torch.
    type: int
  iters:
    description: Timed iterations per size (nccl-tests C(-n)).
    type: int
    default: 20
  warmup_iters:
    description: Untimed iterations per size (nccl-tests C(-w)).
    type: int
    default: 5
  launcher:
    description:
      - With I(launch=none), argv put in front of the command, e.g. a wrapper. For a launcher use I(launch).
    type: list
    elements: str
    default: []
  launch:
    description:
      - The launcher that starts every rank of the group from this host; C(none) runs the command here only.
    type: str
    choices: [none, srun, mpirun, torchrun]
    default: none
    version_added: 0.2.0
  hosts:
    description: The group's nodes, in rank order (inventory names the launcher can reach).
    type: list
    elements: str
    default: []
    version_added: 0.2.0
  ranks_per_node:
    description: Ranks (one per GPU) on each node; default every NVIDIA GPU found on this host.
    type: int
    version_added: 0.2.0
  srun_mpi:
    description: The PMI srun hands nccl-tests' MPI build (C(--mpi=)).
    type: str
    choices: [pmix, pmi2]
    default: pmix
    version_added: 0.2.0
  launch_executable:
    description: The launcher binary (default C(srun), C(mpirun) or C(torchrun) on C(PATH)).
    type: str
    version_added: 0.2.0
  launch_args:
    description: More launcher arguments (after the ones the module builds, before the program).
    type: list
    elements: str
    default: []
    version_added: 0.2.0
  hostfile:
    description: Where the mpirun hostfile (C(host slots=N) lines from I(hosts)) is written; default a temporary file.
    type: path
    version_added: 0.2.0
  partition:
    description: srun C(--partition); a name Slurm cannot parse (letters, digits, C(_ . + -)) fails the task.
    type: str
    version_added: 0.2.0
  qos:
    description: srun C(--qos); checked like I(partition).
    type: str
    version_added: 0.3.0
  account:
    description: srun C(--account); checked like I(partition).
    type: str
    version_added: 0.2.0
  reservation:
    description: srun C(--reservation); checked like I(partition).
    type: str
    version_added: 0.3.0
  nice:
    description:
      - srun C(--nice) for the job the step starts; a positive number lowers its priority, so a check run between
        jobs yields to the cluster's work. C(0) or unset means none. A negative number needs Slurm's operator rights.
    type: int
    version_added: 0.3.0
  time_limit_min:
    description: srun C(--time) in whole minutes (written C([D-]HH:MM:00)).
    type: int
    version_added: 0.2.0
  rdzv_port:
    description: torchrun's c10d rendezvous port on the first host.
    type: int
    default: 29400
    version_added: 0.2.0
  rdzv_id:
    description: torchrun's rendezvous id (one per run).
    type: str
    default: ibtune-nccl
    version_added: 0.2.0
  node_rank:
    description: torchrun C(--node-rank) for this node's agent (without it c10d numbers the nodes).
    type: int
    version_added: 0.2.0
  torchrun_under_srun:
    description: Start one torchrun agent per node with srun (C(srun --ntasks-per-node=1 torchrun ...)).
    type: bool
    default: false
    version_added: 0.2.0
  torch_script:
    description:
      - Where the torch benchmark is written (default a temporary file); with several nodes it must be a path every
        node has (write it there first with I(install_only)).
    type: path
    version_added: 0.2.0
  install_only:
    description:
      - Only count the GPUs (C(gpus_found)) and, with I(torch_script), write the torch benchmark there (changed when
        its content changed), then return.
    type: bool
    default: false
    version_added: 0.2.0
  sysfs_root:
    description: Root of sysfs, where the NVIDIA GPUs are counted (C(bus/pci/devices)).
    type: path
    default: /sys
    version_added: 0.2.0
  expect:
    description:
      - What NCCL's log must show, from the plan - C(transport) (C(IB), C(Socket)), C(hcas) (the exact NIC list, e.g.
        C([mlx5_0])), C(gdr) (true/false), C(channels) (C(P2P), C(SHM) or C(NET), every channel that way), C(hosts)
        (default I(hosts)). Empty checks nothing.
    type: dict
    default: {}
    version_added: 0.2.0
  nccl_debug_subsys:
    description: C(NCCL_DEBUG_SUBSYS) with I(nccl_debug) (INIT for the network and channels, ENV, NET); empty leaves it.
    type: str
    default: INIT,ENV,NET
    version_added: 0.2.0
  extra_args:
    description: More nccl-tests arguments, as a list.
    type: list
    elements: str
    default: []
  env:
    description:
      - Environment for the benchmark, added to the module's own. NCCL reads its config files too, but never overrides
        what is set here.
    type: dict
    default: {}
  nccl_debug:
    description:
      - C(NCCL_DEBUG) for the run, so the log says which network NCCL used. Empty string leaves it alone
        (then C(/etc/nccl.conf) or I(env) decide).
    type: str
    default: INFO
  json_output:
    description: Ask nccl-tests for C(-J) JSON (nccl-tests 2.18.5 and later) and parse that instead of the table.
    type: bool
    default: false
  python_executable:
    description: Python with torch for C(backend=torch). Default is the Python running this module.
    type: path
  timeout:
    description: Seconds before the benchmark is killed.
    type: int
    default: 900
  log_file:
    description: Write the benchmark's whole output (NCCL's log included) here.
    type: path
  average:
    description:
      - How the ranks' times combine into the reported time, algbw and busbw, as nccl-tests' C(-a) option
        (C(rank0), C(avg), C(min), C(max)). C(avg), the mean over ranks, is nccl-tests' default, so both backends
        report what a plain nccl-tests run prints; C(max) is the slowest rank (a conservative figure).
      - For C(backend=nccl_tests), anything but C(avg) adds C(-a <n>) to the command.
    type: str
    choices: [avg, rank0, min, max]
    default: avg
    version_added: 0.2.0
  min_busbw:
    description: Fail when the first collective's bus bandwidth at the largest size (GB/s, 10^9 B/s) is below this.
    type: float
extends_documentation_fragment:
  - ibtune.fabric.attributes
attributes:
  check_mode:
    support: full
    details: In check mode nothing is run; the module says what it would run.
  diff_mode:
    support: none
author:
  - ibtune.fabric contributors (@ibtune)
"""

EXAMPLES = r"""
- name: all_reduce on every GPU of the node with the torch backend, gated
  ibtune.fabric.nccl_test:
    backend: torch
    collectives: [all_reduce, all_gather, reduce_scatter]
    min_bytes: 64M
    max_bytes: 4G
    min_busbw: 339.7
    log_file: /var/log/ibtune/nccl_torch.log

- name: Two nodes with nccl-tests under mpirun (hostfile from the inventory, 8 ranks per node from the GPUs found)
  ibtune.fabric.nccl_test:
    tests_dir: /opt/nccl-tests/build
    collectives: [all_reduce]
    launch: mpirun
    hosts: [node1, node2]
    min_bytes: 1G
    max_bytes: 16G
    min_busbw: 400
    expect: {transport: IB, hcas: [mlx5_0, mlx5_1, mlx5_2, mlx5_3, mlx5_4, mlx5_5, mlx5_6, mlx5_7]}

- name: One rail of a pair under Slurm, NCCL pinned to the rail, Ring/Simple
  ibtune.fabric.nccl_test:
    tests_dir: /opt/nccl-tests/build
    launch: srun
    srun_mpi: pmix
    hosts: [node1, node2]
    ranks_per_node: 1
    partition: gpu
    qos: validation
    reservation: fabric_maint
    time_limit_min: 15
    env: {NCCL_IB_HCA: "=mlx5_0:1", NCCL_ALGO: Ring, NCCL_PROTO: Simple}
    expect: {transport: IB, hcas: [mlx5_0]}
"""

RETURN = r"""
rows:
  description:
    - One row per size of the first collective, as nccl-tests prints them. C(size) in bytes, C(time_us), C(algbw) and
      C(busbw) in GB/s (10^9 B/s) are the out-of-place figures (for torch's all_reduce, its in-place figure),
      C(in_place_*) the in-place ones (null when not measured), C(wrong) the wrong elements (null when not checked).
  returned: success or benchmark failure with output
  type: list
  elements: dict
  sample:
    - {size: 4294967296, count: 1073741824, type: float, redop: sum, root: -1, time_us: 12395.1, algbw: 346.5,
       busbw: 346.5, wrong: 0, in_place_time_us: null, in_place_algbw: null, in_place_busbw: null,
       in_place_wrong: null}
max_size_bytes:
  description: The largest size measured.
  returned: when rows were parsed
  type: int
  sample: 4294967296
max_size_busbw:
  description: The first collective's bus bandwidth (GB/s) at the largest size; what I(min_busbw) gates.
  returned: when rows were parsed
  type: float
  sample: 343.6
avg_busbw:
  description: nccl-tests' C(# Avg bus bandwidth) (average of every row; small sizes drag it down). Null for torch.
  returned: always
  type: float
collectives:
  description: Per collective, C(rows), C(max_size_bytes), C(max_size_busbw), C(avg_busbw), C(rc), C(cmd).
  returned: always
  type: dict
transport:
  description: The network NCCL said it used (C(IB), C(Socket), a plugin's name...), null when the log does not say.
  returned: always
  type: str
  sample: Socket
transports:
  description: Every network family seen in the log.
  returned: always
  type: list
  elements: str
fallback:
  description: True when NET/IB found no device and NCCL went on with sockets.
  returned: always
  type: bool
gdr:
  description: True when NCCL logged GPUDirect RDMA (C(GDRDMA)) on a channel.
  returned: always
  type: bool
nccl_version:
  description: NCCL's version, from the log, nccl-tests' header or torch.
  returned: always
  type: str
  sample: 2.28.9
nranks:
  description: Ranks in the communicator.
  returned: when known
  type: int
nccl_warnings:
  description:
    - NCCL WARN lines (C(file:line message)) and other things worth a look (out-of-bounds values).
    - Not called C(warnings) because Ansible reserves that result key for its own warning messages.
  returned: always
  type: list
  elements: str
passed:
  description: False when I(min_busbw) was not met or a result was wrong.
  returned: always
  type: bool
cmd:
  description: Argv of the last command run.
  returned: always
  type: list
  elements: str
log_file:
  description: Where the output was written.
  returned: when I(log_file) was given
  type: str
transport_problems:
  description: Where NCCL's log differs from I(expect), one C({host, kind, message}) per host and kind.
  returned: always
  type: list
  elements: dict
  sample: [{host: node3, kind: transport, message: "node3 used Socket (NET/IB : No device found), the plan wants IB"}]
per_host:
  description: What each host's ranks logged (transports, ib_devices, gdr, net_channels, gdr_channels, ...).
  returned: success or benchmark failure with output
  type: dict
ranks_per_node:
  description: Ranks started on each node (I(ranks_per_node) or the GPUs found).
  returned: when I(launch) is not C(none)
  type: int
gpus_found:
  description: NVIDIA GPUs found under I(sysfs_root) on this host.
  returned: success or benchmark failure with output
  type: int
"""

import sys

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.ibtune.fabric.plugins.module_utils.nccl import run as nccl_run

ARGUMENT_SPEC = dict(
    backend=dict(type="str", choices=["nccl_tests", "torch"], default="nccl_tests"),
    collectives=dict(type="list", elements="str", default=["all_reduce"]),
    executable=dict(type="str"),
    tests_dir=dict(type="path"),
    min_bytes=dict(type="str", default="8M"),
    max_bytes=dict(type="str", default="1G"),
    step_factor=dict(type="int", default=2),
    gpus=dict(type="int"),
    iters=dict(type="int", default=20),
    warmup_iters=dict(type="int", default=5),
    launcher=dict(type="list", elements="str", default=[]),
    launch=dict(type="str", choices=["none", "srun", "mpirun", "torchrun"], default="none"),
    hosts=dict(type="list", elements="str", default=[]),
    ranks_per_node=dict(type="int"),
    srun_mpi=dict(type="str", choices=["pmix", "pmi2"], default="pmix"),
    launch_executable=dict(type="str"),
    launch_args=dict(type="list", elements="str", default=[]),
    hostfile=dict(type="path"),
    partition=dict(type="str"),
    qos=dict(type="str"),
    account=dict(type="str"),
    reservation=dict(type="str"),
    nice=dict(type="int"),
    time_limit_min=dict(type="int"),
    rdzv_port=dict(type="int", default=29400),
    rdzv_id=dict(type="str", default="ibtune-nccl"),
    node_rank=dict(type="int"),
    torchrun_under_srun=dict(type="bool", default=False),
    torch_script=dict(type="path"),
    install_only=dict(type="bool", default=False),
    sysfs_root=dict(type="path", default="/sys"),
    expect=dict(type="dict", default={}),
    extra_args=dict(type="list", elements="str", default=[]),
    env=dict(type="dict", default={}),
    nccl_debug=dict(type="str", default="INFO"),
    nccl_debug_subsys=dict(type="str", default="INIT,ENV,NET"),
    json_output=dict(type="bool", default=False),
    python_executable=dict(type="path"),
    timeout=dict(type="int", default=900),
    log_file=dict(type="path"),
    min_busbw=dict(type="float"),
    average=dict(type="str", choices=["avg", "rank0", "min", "max"], default="avg"),
)


def main():
    module = AnsibleModule(argument_spec=ARGUMENT_SPEC, supports_check_mode=True)
    result, failure = nccl_run.run(module.params, nccl_run.ModuleRunner(module, sys.executable), module.check_mode)
    if failure:
        module.fail_json(msg=failure, **result)
    module.exit_json(**result)


if __name__ == "__main__":
    main()
