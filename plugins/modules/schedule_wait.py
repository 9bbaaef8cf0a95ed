#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: schedule_wait
short_description: Wait for a host's perftest_schedule job and print the pass's progress with an ETA
version_added: 0.2.0
description:
  - Action plugin (runs on the controller). Polls the async job of M(ibtune.fabric.perftest_schedule)
    started with C(async) and C(poll=0), and returns its result (the sides) when it ends.
  - Every O(progress_interval) seconds it reads the schedule's state file on the host and keeps it in
    O(progress_dir) on the controller; the host with O(announce) prints one line for the whole pass, e.g.
    "pass 1 - round 12/63, 2 sides failing, ETA 9 min".
  - One task per host per pass, whatever the number of rounds.
extends_documentation_fragment:
  - ibtune.fabric.attributes
options:
  jid:
    description: The async job id (C(ansible_job_id)) of the perftest_schedule task.
    type: str
    required: true
  state_path:
    description: The schedule's state file on the host (its O(ibtune.fabric.perftest_schedule#module:state_path)).
    type: str
  progress_dir:
    description: Controller directory where every host's latest state is kept for the progress line.
    type: path
  label:
    description: What the progress line calls the pass.
    type: str
    default: pass
  timeout:
    description: Seconds to wait before the host's pass counts as failed (the pass budget).
    type: float
    required: true
  poll_interval:
    description: Seconds between two looks at the job.
    type: float
    default: 2
  progress_interval:
    description: Seconds between two reads of the state file.
    type: float
    default: 10
  announce:
    description: Print the pass's progress line (set on one host, e.g. the first of the play).
    type: bool
    default: false
  hosts:
    description:
      - How many hosts run the pass, counted in the progress line (C(4 hosts running, 2 reported so far)); without
        it the line counts only the hosts whose state arrived.
    type: int
    version_added: 0.2.0
  sides_dir:
    description:
      - Controller directory where the host's side results are written (C(<host>.sides.jsonl), the pass
        directory's format) instead of being returned; M(ibtune.fabric.fabric_join) reads them with its
        O(ibtune.fabric.fabric_join#module:sides_dir).
      - The sides then never travel as a task result, a host fact and the join's module arguments.
    type: path
    version_added: 0.2.0
attributes:
  check_mode:
    support: none
    details: There is no job to wait for in check mode.
  diff_mode:
    support: none
author:
  - ibtune.fabric contributors (@ibtune)
"""

EXAMPLES = r"""
- name: Wait for this host's pass
  ibtune.fabric.schedule_wait:
    jid: "{{ job.ansible_job_id }}"
    state_path: /tmp/ibtune-schedule-pass1.json
    progress_dir: /tmp/plan/progress1
    label: pass 1
    timeout: 3600
    announce: "{{ inventory_hostname == ansible_play_hosts[0] }}"
  register: pass1
"""

RETURN = r"""
sides:
  description: The schedule's side results (see M(ibtune.fabric.perftest_schedule)).
  returned: when the job finished and O(sides_dir) is not set
  type: list
  elements: dict
sides_written:
  description: How many side results were written to O(sides_dir).
  returned: when the job finished and O(sides_dir) is set
  type: int
"""
