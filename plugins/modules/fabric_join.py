#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: fabric_join
short_description: Join the server and client sides of a pass into pair results and gate them (controller side)
version_added: 0.2.0
description:
  - Reads the pass's plan file (M(ibtune.fabric.fabric_plan)) and the side results of every host
    (M(ibtune.fabric.perftest_schedule)), and writes one pair result per planned pair and rail to O(dest).
  - A pair whose side never came back is a failure (C(no_result)), never a gap. The failure kind names
    the root cause (the server's "no device" explains its client's "could not connect").
  - One gate for bandwidth C(max(min_gbps, min_link_fraction x expected rate (x2 bidirectional))), the
    expected rate being O(expect_rate_gbps) or else the higher of the two ends' port rates, so a port that
    trained down fails from either side. Latency is gated on O(max_typical_us) and O(max_p99_us).
  - Run it once, on the controller (C(run_once), C(delegate_to) localhost).
extends_documentation_fragment:
  - ibtune.fabric.attributes
options:
  plan:
    description: The pass's plan file (C(plan_file) returned by fabric_plan).
    type: path
    required: true
  sides:
    description:
      - Side results of every host of the pass (the C(sides) of each host's perftest_schedule result).
      - Prefer O(sides_dir) beyond a few hundred sides - module arguments are validated and echoed back by Ansible.
    type: list
    elements: dict
    default: []
  sides_dir:
    description:
      - A directory of the hosts' side files (C(<host>.sides.jsonl), JSON lines; a round's sides a line as the
        runner appends them, or a host's rounds in a few table items once it has finished), as
        M(ibtune.fabric.schedule_wait) O(ibtune.fabric.schedule_wait#module:sides_dir) and
        M(ibtune.fabric.slurm_pass) write them; joined together with O(sides).
    type: path
    version_added: 0.2.0
  test:
    description: The test of the pass.
    type: str
    default: write
  duration:
    description: Seconds per test, recorded in the results.
    type: int
  size:
    description: The message size tested, recorded in the results (the baseline compares like with like).
    type: str
  qps:
    description: The queue pairs per test, recorded in the results (the baseline compares like with like).
    type: int
  bidirectional:
    description: Bidirectional bandwidth (doubles the rate-based threshold).
    type: bool
    default: false
  min_gbps:
    description: Absolute bandwidth floor in Gb/s.
    type: float
  min_link_fraction:
    description: Fraction of the expected rate a pair must reach.
    type: float
  expect_rate_gbps:
    description: The rate every port should run at; null uses the higher of the two ends' port rates.
    type: float
  max_typical_us:
    description: Latency ceiling for the typical (median) latency, in microseconds.
    type: float
  max_p99_us:
    description: Latency ceiling for the 99th percentile, in microseconds.
    type: float
  dest:
    description:
      - Controller path of the joined results file, a JSON list of pair results.
      - Above 20000 results (1024 hosts x 8 rails all_pairs is 4.2 M) runs of results with the same keys are
        written as table items (objects with C(ibtune_table) 2, C(const), C(count) and C(columns)), what the
        results share once and the rest column by column, in order (docs/fabric_report.md gives the form and a
        jq program that prints one result a line).
      - Results files written by earlier releases (table items with C(ibtune_table) 1 and C(rows)) are still
        read.
      - M(ibtune.fabric.fabric_report) (its O(ibtune.fabric.fabric_report#module:results_paths)) and
        M(ibtune.fabric.fabric_plan) (its O(ibtune.fabric.fabric_plan#module:retest_from)) read both forms.
    type: path
    required: true
attributes:
  check_mode:
    support: full
    details: In check mode nothing is written.
  diff_mode:
    support: none
author:
  - ibtune.fabric contributors (@ibtune)
"""

EXAMPLES = r"""
- name: Join pass 1 from the hosts' side files (schedule_wait sides_dir, or slurm_pass)
  ibtune.fabric.fabric_join:
    plan: "{{ plan.plan_file }}"
    sides_dir: /tmp/plan/pass1-sides
    min_link_fraction: 0.9
    dest: /tmp/plan/pass1-results.json
  run_once: true
  delegate_to: localhost

- name: Join sides given as a list
  ibtune.fabric.fabric_join:
    plan: "{{ plan.plan_file }}"
    sides: "{{ ansible_play_hosts | map('extract', hostvars, 'my_sides') | flatten }}"
    dest: /tmp/plan/pass1-results.json
  run_once: true
  delegate_to: localhost
"""

RETURN = r"""
results_path:
  description: The joined results file.
  returned: always
  type: str
result_count:
  description: How many pair results (one per pair and rail) the pass has.
  returned: always
  type: int
failed_results:
  description: Failed pair results.
  returned: always
  type: int
failure_kinds:
  description: Failed results per failure kind.
  returned: always
  type: dict
refused:
  description:
    - One sentence per side result the plan holds no pair for (refused, never merged into a result); a side that
      came back twice fails its pair as C(refused).
  returned: always
  type: list
  elements: str
failures:
  description: The first 20 failed pairs, one sentence each.
  returned: always
  type: list
  elements: str
"""

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.ibtune.fabric.plugins.module_utils.common.module import respond
from ansible_collections.ibtune.fabric.plugins.module_utils.validate.module import run_fabric_join

ARGUMENT_SPEC = dict(
    plan=dict(type="path", required=True),
    sides=dict(type="list", elements="dict", default=[]),
    sides_dir=dict(type="path"),
    test=dict(type="str", default="write"),
    duration=dict(type="int"),
    size=dict(type="str"),
    qps=dict(type="int"),
    bidirectional=dict(type="bool", default=False),
    min_gbps=dict(type="float"),
    min_link_fraction=dict(type="float"),
    expect_rate_gbps=dict(type="float"),
    max_typical_us=dict(type="float"),
    max_p99_us=dict(type="float"),
    dest=dict(type="path", required=True),
)


def main():
    module = AnsibleModule(argument_spec=ARGUMENT_SPEC, supports_check_mode=True)
    respond(module, run_fabric_join, module.params, module.check_mode)


if __name__ == "__main__":
    main()
