#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: slurm_pass
short_description: Run one planned validation pass as ONE Slurm job and bring every side's result back
version_added: 0.2.0
description:
  - Action plugin (runs on the controller); delegate it to the Slurm submit host (a host with C(sbatch) that
    sees the shared filesystem), with C(run_once).
  - Sends the pass (the runner's settings, the Slurm node names and every participant's slice from
    M(ibtune.fabric.fabric_plan)) to O(pass_dir) as one file, and submits one batch job over the participants
    (C(sbatch --parsable), an argument list) whose single step runs the standalone schedule runner
    C(ibtune-schedule) once per node - the same timing logic as M(ibtune.fabric.perftest_schedule).
  - Waits with the same progress line and ETA (the runners' progress files, and Slurm's state while the job is
    pending), cancels a job still pending after O(start_timeout) seconds or running far past its time limit,
    then brings the hosts' side files back in one file.
  - A side that did not come back (the job was cancelled, preempted, timed out, lost a node, or never started)
    is returned as a C(no_result) side saying why, for exactly the sides that are missing; the task itself
    fails only when Slurm refuses the job.
  - The time limit is derived from the plan's budget (O(budget_s)) unless O(time_limit) is given.
extends_documentation_fragment:
  - ibtune.fabric.attributes
options:
  slice_dir:
    description: Controller directory of the pass's slice files (C(slice_dir) returned by fabric_plan).
    type: path
    required: true
  participants:
    description: Inventory hosts of the pass (C(participants) returned by fabric_plan).
    type: list
    elements: str
    required: true
  node_names:
    description: Slurm node name of an inventory host, where it differs from the inventory name.
    type: dict
    default: {}
  settings:
    description: The runner's settings, the options of M(ibtune.fabric.perftest_schedule) (test, size,
      duration, connect_timeout, slack, executable, ...), plus optional C(checks) ([{name, argv, timeout_s}])
      run on each node before its sides.
    type: dict
    required: true
  pass_dir:
    description: The pass directory on the shared filesystem, the same path on the submit host and every node
      (made fresh; one of ours is replaced, any other directory there is refused).
    type: str
    required: true
  label:
    description: What the progress line calls the pass.
    type: str
    default: pass
  budget_s:
    description: The most seconds the pass may take (C(budget_s) returned by fabric_plan); the job's time limit.
    type: float
    required: true
  start_timeout:
    description: Seconds the job may wait for its nodes (PENDING) before it is cancelled.
    type: float
    default: 600
  runner:
    description: Path of the schedule runner on the nodes (role ibtune.fabric.schedule_runner).
    type: str
    default: /usr/local/libexec/ibtune-schedule
  job_name:
    description: The job's name.
    type: str
    default: ibtune-pass
  partition:
    description: sbatch C(--partition).
    type: str
  qos:
    description: sbatch C(--qos).
    type: str
  account:
    description: sbatch C(--account).
    type: str
  reservation:
    description: sbatch C(--reservation).
    type: str
  exclusive:
    description: sbatch C(--exclusive) (nothing else on the nodes while they are measured).
    type: bool
    default: true
  nice:
    description: sbatch C(--nice) (a positive value lowers the job's priority).
    type: int
  time_limit:
    description: sbatch C(--time) as Slurm writes it; default derived from O(budget_s).
    type: str
  sbatch_args:
    description: More sbatch arguments, appended as they are (an argument list, never a shell string).
    type: list
    elements: str
    default: []
  srun_args:
    description: More arguments for the job's srun step.
    type: list
    elements: str
    default: []
  commands:
    description: Paths of C(sbatch), C(srun), C(squeue), C(scontrol), C(sacct), C(scancel) on the submit host.
    type: dict
    default: {}
  poll_interval:
    description: Seconds between two looks at the job.
    type: float
    default: 2
  progress_interval:
    description: Seconds between two progress lines.
    type: float
    default: 10
  dest:
    description: Controller directory where the pass's results come back (replaced).
    type: path
    required: true
  keep_pass_dir:
    description: Leave the pass directory on the shared filesystem (for debugging) instead of removing it.
    type: bool
    default: false
  sides_dir:
    description:
      - Controller directory where every host's sides (the missing ones as C(no_result)) are written
        (C(<host>.sides.jsonl)) for M(ibtune.fabric.fabric_join)'s O(ibtune.fabric.fabric_join#module:sides_dir),
        instead of being returned as RV(sides_by_host).
    type: path
attributes:
  check_mode:
    support: none
    details: No job is submitted in check mode (the task is skipped).
  diff_mode:
    support: none
author:
  - ibtune.fabric contributors (@ibtune)
"""

EXAMPLES = r"""
- name: Pass 1 as one Slurm job
  ibtune.fabric.slurm_pass:
    slice_dir: "{{ plan.slice_dir }}"
    participants: "{{ plan.participants }}"
    settings: {test: write, duration: 10, connect_timeout: 30, slack: 20}
    pass_dir: /shared/ibtune/run1/pass1
    budget_s: "{{ plan.budget_s }}"
    partition: gpu
    qos: validation
    dest: /tmp/plan/pass1-slurm
  delegate_to: login1
  run_once: true
  register: pass1
"""

RETURN = r"""
job_id:
  description: The pass's Slurm job.
  returned: always
  type: str
job:
  description: Slurm's last record of the job (job_id, state, reason, elapsed, time_limit, nodes, source).
  returned: always
  type: dict
sides_by_host:
  description: Every planned side's result, per host; the missing ones are C(no_result) with the reason.
  returned: when O(sides_dir) is not set
  type: dict
sides:
  description: Number of side results (back and missing).
  returned: always
  type: int
missing_sides:
  description: Sides that did not come back.
  returned: always
  type: int
results_dir:
  description: Controller directory of the hosts' side files.
  returned: always
  type: str
checks:
  description: Each host's quick checks, when the settings named some.
  returned: always
  type: dict
timing:
  description: Seconds spent - bundle sent and job submitted (submit_s), submission to RUNNING (pending_s),
    submission to the job's end (job_s), results brought back (collect_s), the whole task (total_s).
  returned: always
  type: dict
  sample: {submit_s: 1.8, pending_s: 1.1, job_s: 5.3, collect_s: 0.9, total_s: 8.6}
"""
