#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: fabric_plan
short_description: Plan a validation pass once and slice it per host (controller side)
version_added: 0.2.0
description:
  - Plans one pass of pair tests for O(hosts) with a pair strategy (see the C(pair_rounds) filter), or the
    second pass from the first pass's results (suspects against known-good partners), and writes each
    host's sides to C(<dest>/pass<N>/<host>.json) for M(ibtune.fabric.perftest_schedule), and the expected
    pairs to C(<dest>/pass<N>.json) for M(ibtune.fabric.fabric_join).
  - Rails are paired by name (C(rail) of each entry of O(rails)), never by position. A rail most hosts
    have (or that O(expect_rails) lists) and a host lacks is returned as a C(host_failures) entry
    (C(missing_rail)); so is a host the plan leaves untested (C(unpaired)).
  - Every round and rail gets its own TCP port from O(base_tcp_port).
  - Run it once, on the controller (C(run_once), C(delegate_to) localhost).
extends_documentation_fragment:
  - ibtune.fabric.attributes
options:
  hosts:
    description: The hosts to validate in this pass, in order (those that passed preflight).
    type: list
    elements: str
    required: true
  rails:
    description:
      - Per host, its rails as returned by the C(validate_rails) filter, each with C(rail), C(device),
        C(port), C(rate_gbps) and optionally C(gid_index).
    type: dict
    required: true
  addresses:
    description: Per host, the address clients use to reach its servers.
    type: dict
    required: true
  strategy:
    description: Pair strategy of the first pass.
    type: str
    default: all_pairs
    choices: [all_pairs, ring, random, halves, cross_group, explicit, cover_links]
  topology:
    description:
      - The fabric as the C(fabric_validate) topology stage hands it over (the C(validate_topology) filter
        of an M(ibtune.fabric.ib_topology) result read with routes, or that result itself), for the
        C(cover_links) strategy. See docs/dev/CONTRACTS.md.
      - C(cover_links) pairs hosts (rail r meets rail r) so that every directed inter-switch link carries
        test traffic in at most 8 rounds along the routes OpenSM programmed, then pairs every host those
        rounds leave out into a round where it is free.
    type: dict
  random_rounds:
    description: Rounds of the C(random) strategy.
    type: int
  seed:
    description: Seed of the C(random) strategy.
    type: str
  groups:
    description:
      - Per host, its group (e.g. leaf switch), for C(cross_group); a group may also be a dict of rail name (or
        device) to leaf switch. Without O(topology) the retest picks partners on the same switch from it.
    type: dict
  pairs:
    description: The C(explicit) strategy's pairs, as [server, client] lists.
    type: list
    elements: raw
  pass_number:
    description: Pass number; pass 1 names missing rails and unpaired hosts.
    type: int
    default: 1
  retest_from:
    description:
      - Path of a joined first-pass results file (M(ibtune.fabric.fabric_join)). When set, the pass
        retests suspect nodes and both ends of suspect links against known-good partners, on the rails they
        failed on only, with a partner on the same switch first (O(topology), else O(groups)), never the partner
        a pair failed with when another exists. Pass 1 is judged as M(ibtune.fabric.fabric_report) judges it (the
        peer gate O(min_peer_fraction) applied, hosts behind a switch fault are no subjects).
    type: path
  min_peer_fraction:
    description: The report's peer gate, applied to pass 1 before choosing what to retest (C(0) turns it off).
    type: float
    default: 0.9
  exclude:
    description: Hosts that must not serve as known-good partners (counter violations, failed preflight).
    type: list
    elements: str
    default: []
  expect_rails:
    description: Rail names every host must have (default the rails a strict majority of hosts has).
    type: list
    elements: str
    default: []
  base_tcp_port:
    description: First TCP port; round r, rail i use C(base + r x rails + i) (wrapping within 65535).
    type: int
    default: 18515
  gid_index:
    description: Null (perftest picks), C(auto) (each rail's RoCE v2 IPv4 GID from ib_facts) or a number.
    type: raw
  dest:
    description: Controller directory for the plan files.
    type: path
    required: true
  run_s:
    description: Seconds one test takes (the duration), for the estimate and the time budget.
    type: float
    default: 10
  connect_timeout:
    description: The schedule's connect window, for the time budget.
    type: float
    default: 30
  slack:
    description: The schedule's slack per side, for the time budget.
    type: float
    default: 20
attributes:
  check_mode:
    support: full
    details: Planning only writes plan files on the controller; in check mode nothing is written.
  diff_mode:
    support: none
author:
  - ibtune.fabric contributors (@ibtune)
"""

EXAMPLES = r"""
- name: Plan pass 1
  ibtune.fabric.fabric_plan:
    hosts: "{{ ansible_play_hosts }}"
    rails: "{{ dict(ansible_play_hosts | zip(ansible_play_hosts | map('extract', hostvars, 'my_rails'))) }}"
    addresses: "{{ dict(ansible_play_hosts | zip(ansible_play_hosts | map('extract', hostvars, 'ansible_host'))) }}"
    strategy: all_pairs
    dest: /tmp/plan
  run_once: true
  delegate_to: localhost
  register: plan
"""

RETURN = r"""
rounds:
  description: Rounds in this pass.
  returned: always
  type: int
pairs:
  description: Host pairs in this pass (each runs on every common rail).
  returned: always
  type: int
sides:
  description: Sides in this pass, over all hosts.
  returned: always
  type: int
host_failures:
  description: Hosts with a missing rail or left untested by the plan, each {host, failure_kind, reason}.
  returned: always
  type: list
  elements: dict
untested:
  description: Hosts the plan pairs with nobody.
  returned: always
  type: list
  elements: str
participants:
  description: Hosts that have at least one side in this pass.
  returned: always
  type: list
  elements: str
plan_file:
  description: The pass's plan file (pairs and rails) for fabric_join.
  returned: always
  type: str
slice_dir:
  description:
    - Directory of the per-host slice files, C(<host>.json) each. A slice lists each round and pair of the host
      once, with the rails it runs on (format 2); the filter P(ibtune.fabric.slice_sides#filter) and the runner
      C(ibtune-schedule) make its sides.
  returned: always
  type: str
estimate_s:
  description: Expected seconds for the pass on a healthy fabric.
  returned: always
  type: float
budget_s:
  description: The most seconds the pass may take on a host (the async budget).
  returned: always
  type: int
ideal_s:
  description: Rounds x O(run_s), the pass's time if every test ran back to back with no overhead.
  returned: always
  type: float
eta_msg:
  description: How long the pass should take, one line for the play's output.
  returned: always
  type: str
  sample: about 0.2 min (3 x 2 s tests, every rail in parallel)
uncovered_isls:
  description: Directed inter-switch links the C(cover_links) rounds do not cross, each with from, to, text
    and reason (no candidate pair's route crosses it, or the round budget ran out).
  returned: when O(strategy=cover_links)
  type: list
  elements: dict
  sample: [{from: "A09-P1-IBLEAF-04-04 p38", to: "A10-P1-IBSPINE-03 p32", text: "A09-P1-IBLEAF-04-04 p38 ->
            A10-P1-IBSPINE-03 p32", reason: "no candidate pair's route crosses it"}]
isl_coverage:
  description: Directed inter-switch links in the fabric (isls), crossed by some candidate pair (coverable_isls)
    and by the planned rounds (covered_isls).
  returned: when O(strategy=cover_links)
  type: dict
  sample: {isls: 1064, coverable_isls: 1064, covered_isls: 1064}
"""

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.ibtune.fabric.plugins.module_utils.common.module import respond
from ansible_collections.ibtune.fabric.plugins.module_utils.validate import pairs as pairs_utils
from ansible_collections.ibtune.fabric.plugins.module_utils.validate.module import run_fabric_plan

ARGUMENT_SPEC = dict(
    hosts=dict(type="list", elements="str", required=True),
    rails=dict(type="dict", required=True),
    addresses=dict(type="dict", required=True),
    strategy=dict(type="str", default="all_pairs", choices=list(pairs_utils.STRATEGIES) + ["cover_links"]),
    topology=dict(type="dict"),
    random_rounds=dict(type="int"),
    seed=dict(type="str"),
    groups=dict(type="dict"),
    pairs=dict(type="list", elements="raw"),
    pass_number=dict(type="int", default=1, no_log=False),
    retest_from=dict(type="path"),
    exclude=dict(type="list", elements="str", default=[]),
    min_peer_fraction=dict(type="float", default=0.9),
    expect_rails=dict(type="list", elements="str", default=[]),
    base_tcp_port=dict(type="int", default=18515),
    gid_index=dict(type="raw"),
    dest=dict(type="path", required=True),
    run_s=dict(type="float", default=10),
    connect_timeout=dict(type="float", default=30),
    slack=dict(type="float", default=20),
)


def main():
    module = AnsibleModule(argument_spec=ARGUMENT_SPEC, supports_check_mode=True)
    respond(module, run_fabric_plan, module.params, module.check_mode)


if __name__ == "__main__":
    main()
