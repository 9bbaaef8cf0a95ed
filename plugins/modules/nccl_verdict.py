#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: nccl_verdict
short_description: Judge multi-node NCCL runs against reference curves and per-NIC floors, and bisect failed groups
version_added: 0.2.0
description:
  - Controller side of the multi-node NCCL check (role C(nccl_check)); the logic is C(module_utils/nccl/verdict.py).
  - "Every run of the plan is judged: the run itself (exit, rows), the transport (I(results)' C(transport_problems):
    the network, NICs or GPUDirect NCCL logged against the plan), the area under the busbw curve over the sizes
    >= I(curve_min_size) against the reference curve kept in I(baseline_path) per (GPU, NIC, fabric, NCCL version)
    and test (pass at >= I(min_curve_ratio)), and the large-message busbw against the per-NIC floor derived from
    I(rate_gbps) (I(nic_fraction) x 48 GB/s per 400 Gb/s, times the NICs each node drives)."
  - The first run of a test records its curve in I(baseline_path) (changed) when it passes; later runs compare.
  - A failed run whose failure names no host is bisected - I(pending) holds the runs of the next round; call the
    module again with their results and the returned I(bisections) until I(done). The verdict names a node, a
    pair or a group (C(checks), C(culprits)), ready for M(ibtune.fabric.fabric_report)'s C(checks)."
options:
  runs:
    description: The runs judged this round (the plan's, then I(pending) of the last round), each with C(id).
    type: list
    elements: dict
    required: true
  results:
    description: M(ibtune.fabric.nccl_test)'s result for each run, with the run's C(id) added.
    type: list
    elements: dict
    required: true
  bisections:
    description: The bisections the last round returned; omit on the first round (it starts them).
    type: list
    elements: dict
  findings:
    description: The plan's findings (a host missing a rail or GPUs), first round only.
    type: list
    elements: dict
    default: []
  identity:
    description: What the reference curves are kept per - C(gpu), C(nic), C(fabric), C(nccl_version) (default from
      the results).
    type: dict
    default: {}
  baseline_path:
    description: The reference-curve file on the controller (JSON); empty keeps nothing.
    type: path
  record:
    description: Record the curve of a passing first run.
    type: bool
    default: true
  min_curve_ratio:
    description: The curve gate - measured area over reference area, at least this.
    type: float
    default: 0.95
  curve_min_size:
    description: Smallest size the curve gate covers (K, M, G are powers of 1024); smaller sizes are reported only.
    type: str
    default: 1G
  rate_gbps:
    description: The declared port rate (Gb/s) the per-NIC floor is derived from; empty, no floor.
    type: float
  nic_fraction:
    description: The share of 48 GB/s per 400 Gb/s each NIC must carry.
    type: float
    default: 0.9
  nic_gate_collectives:
    description: Collectives the per-NIC floor applies to (alltoall's busbw over the NICs is lower).
    type: list
    elements: str
    default: [all_reduce, all_gather, reduce_scatter]
  bisect:
    description: Bisect failed groups.
    type: bool
    default: true
extends_documentation_fragment:
  - ibtune.fabric.attributes
attributes:
  check_mode:
    support: full
    details: In check mode the verdict is computed but no reference curve is written.
  diff_mode:
    support: none
author:
  - ibtune.fabric contributors (@ibtune)
"""

EXAMPLES = r"""
- name: Judge the first round
  ibtune.fabric.nccl_verdict:
    runs: "{{ plan.runs }}"
    results: "{{ run_results }}"
    findings: "{{ plan.findings }}"
    baseline_path: /srv/ibtune/nccl-curves.json
    rate_gbps: 400
  register: verdict
  delegate_to: localhost
  run_once: true
"""

RETURN = r"""
checks:
  description:
    - One C({suite, name, kind, passed, message, hosts, figures, culprits}) per check, for
      M(ibtune.fabric.fabric_report)'s C(checks).
  returned: always
  type: list
  elements: dict
culprits:
  description: C({host, reason, failure_kind}) named by a check (C(nccl_transport), C(nccl_node), C(nccl_pair), ...).
  returned: always
  type: list
  elements: dict
pending:
  description: The runs of the next bisection round (empty when I(done)).
  returned: always
  type: list
  elements: dict
bisections:
  description: The bisections still open, for the next call.
  returned: always
  type: list
  elements: dict
done:
  description: True when no bisection run is pending.
  returned: always
  type: bool
passed:
  description: True when every check passed.
  returned: always
  type: bool
recorded:
  description: Reference keys whose curve this round recorded.
  returned: always
  type: list
  elements: str
"""

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.ibtune.fabric.plugins.module_utils.nccl import verdict as nccl_verdict
from ansible_collections.ibtune.fabric.plugins.module_utils.nccl.nccl_tests import parse_size

ARGUMENT_SPEC = dict(
    runs=dict(type="list", elements="dict", required=True),
    results=dict(type="list", elements="dict", required=True),
    bisections=dict(type="list", elements="dict"),
    findings=dict(type="list", elements="dict", default=[]),
    identity=dict(type="dict", default={}),
    baseline_path=dict(type="path"),
    record=dict(type="bool", default=True),
    min_curve_ratio=dict(type="float", default=0.95),
    curve_min_size=dict(type="str", default="1G"),
    rate_gbps=dict(type="float"),
    nic_fraction=dict(type="float", default=0.9),
    nic_gate_collectives=dict(type="list", elements="str", default=["all_reduce", "all_gather", "reduce_scatter"]),
    bisect=dict(type="bool", default=True),
)


def main():
    module = AnsibleModule(argument_spec=ARGUMENT_SPEC, supports_check_mode=True)
    try:
        params = dict(module.params, curve_min_size=parse_size(module.params["curve_min_size"]))
        result, changed = nccl_verdict.run(params, check_mode=module.check_mode)
    except ValueError as exc:
        module.fail_json(msg="nccl_verdict: %s" % exc)
    module.exit_json(changed=changed, **result)


if __name__ == "__main__":
    main()
