#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: slurm_remediate
short_description: Drain Slurm nodes the fabric verdict failed, resume the ones we drained that now pass
version_added: 0.2.0
description:
  - Reads the nodes with C(scontrol show node --oneliner), plans with the collection's C(slurm) module_utils and
    runs one C(scontrol update) per action, as an argv list.
  - "Drains every failed host of the verdict that is in service, with the reason
    C(ibtune: <reason of the verdict> <YYYY-MM-DD>) (the C(ibtune:) prefix is the collection's namespace)."
  - Never changes a node that is drained, down, failed or reserved for a reason that does not start with
    C(ibtune:), and never overwrites such a reason.
  - "Drains only the failed hosts the verdict blames (C(failed_hosts[].culprit), true in reports without it): a host
    behind a switch fault, or one that could not be shown healthy (C(untested), C(ungated)), is left in service."
  - "Resumes a node only when the fabric validation drained it (a reason C(ibtune:) that is not the node health
    check's C(ibtune: node-health:)), the verdict lists it as passed and O(resume=true): each source resumes only
    what it drained."
  - "Refuses the whole plan, failing with the list of nodes it would have drained, when the nodes already held with
    C(ibtune:) reasons (any source, earlier runs included) plus the new drains would be more than
    O(max_drain_fraction) of the partition or more than O(max_drain) nodes: five runs at 10% cannot drain half the
    cluster. A systemic verdict drains nothing and fails with its sentence."
  - Must run where C(scontrol) reaches slurmctld as root or SlurmUser (Slurm refuses node updates to others).
extends_documentation_fragment:
  - ibtune.fabric.attributes
attributes:
  check_mode:
    support: full
    details: Returns the plan and the diff without running C(scontrol update).
  diff_mode:
    support: full
    details: Before and after state and reason of every node the plan changes.
  idempotent:
    description: A second run with the same verdict changes nothing.
    support: full
    details: A node already drained with our reason is left as it is, so a second run plans nothing.
options:
  report:
    description:
      - Path of the fabric report (C(report.json) of M(ibtune.fabric.fabric_report)) on the host the module runs on.
      - Uses C(failed_hosts), C(passed_hosts) and C(systemic); a report without them fails its suspect nodes (or
        the hosts of its failed pairs) and resumes nothing.
      - Exactly one of O(report) and O(verdict) is required.
    type: path
  verdict:
    description:
      - The report itself as a dict (for example the C(report) a play already holds), instead of O(report).
    type: dict
  partition:
    description:
      - Only nodes of this partition are acted on, and the guard's fraction is of this partition's size.
      - Empty means every node of the cluster.
    type: str
    default: ""
  max_drain_fraction:
    description:
      - The most nodes that may be held with our reasons at once, as a fraction of the partition (rounded down;
        C(0.1) of 512 nodes is 51); the nodes already held count.
    type: float
    default: 0.1
  max_drain:
    description: The most nodes held with our reasons at once; C(-1) means no cap beyond O(max_drain_fraction).
    type: int
    default: -1
  resume:
    description: Resume nodes drained with our reason that the verdict now passes.
    type: bool
    default: false
  scontrol:
    description: The scontrol executable.
    type: path
    default: scontrol
author:
  - ibtune.fabric contributors (@ibtune)
"""

EXAMPLES = r"""
- name: Drain what the fabric validation failed (on the slurmctld host)
  ibtune.fabric.slurm_remediate:
    report: /var/lib/ibtune/reports/report.json
    partition: gpu
    max_drain_fraction: 0.1

- name: After a re-validation, resume the nodes we drained that now pass
  ibtune.fabric.slurm_remediate:
    report: /var/lib/ibtune/reports/report.json
    resume: true
"""

RETURN = r"""
held_by_us:
  description: Nodes already held with C(ibtune:) reasons (any source) when the plan was made; the guard counts them.
  returned: always
  type: list
  elements: str
actions:
  description: What was (or in check mode would be) done, one entry per node.
  returned: always
  type: list
  elements: dict
  sample:
    - node: gpu017
      action: drain
      reason: "ibtune: bad link mlx5_3 (183.0 Gb/s < 360.0 Gb/s) 2026-12-01"
      argv:
        - scontrol
        - update
        - NodeName=gpu017
        - State=DRAIN
        - "Reason=ibtune: bad link mlx5_3 (183.0 Gb/s < 360.0 Gb/s) 2026-12-01"
      before: {state: IDLE, reason: null}
      after: {state: IDLE+DRAIN, reason: "ibtune: bad link mlx5_3 (183.0 Gb/s < 360.0 Gb/s) 2026-12-01"}
untouched:
  description: Hosts of the verdict left alone, with why (foreign reason, already ours, not a Slurm node...).
  returned: always
  type: list
  elements: dict
  sample: [{host: gpu003, why: "left alone: IDLE+DRAIN for a reason that is not ours (admin: DIMM)"}]
resumable:
  description: Nodes drained with our reason that the verdict passes (resumed only with O(resume=true)).
  returned: always
  type: list
  elements: str
would_drain:
  description: Every node the verdict asks to drain in this run (also when the guard refused).
  returned: always
  type: list
  elements: str
partition_size:
  description: Nodes in O(partition) (or the cluster), what O(max_drain_fraction) is a fraction of.
  returned: always
  type: int
limit:
  description: The most nodes this run was allowed to drain.
  returned: always
  type: int
nodes:
  description: Every node as parsed before acting (name, state, flags, reason, partitions).
  returned: always
  type: list
  elements: dict
msg:
  description: One line per action and node left alone, or the sentence why the plan was refused.
  returned: always
  type: str
"""

import json
import time

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.ibtune.fabric.plugins.module_utils.slurm import remediate as slurm


def _load_verdict(module):
    if module.params["verdict"] is not None:
        return slurm.verdict_from_report(module.params["verdict"])
    path = module.params["report"]
    try:
        with open(path) as handle:
            return slurm.verdict_from_report(json.load(handle))
    except (IOError, OSError) as exc:
        module.fail_json(
            msg="Cannot read the fabric report %s (%s): run fabric_validate first or point report at "
            "its report.json." % (path, exc)
        )
    except ValueError as exc:
        module.fail_json(
            msg="The fabric report %s is not JSON (%s): give the report.json fabric_report wrote." % (path, exc)
        )


def _scontrol(module, argv):
    rc, out, err = module.run_command(argv)
    if rc != 0:
        module.fail_json(
            msg="%s failed (rc=%d: %s): run it on the slurmctld host as root or SlurmUser."
            % (" ".join(argv[:3]), rc, (err or out).strip())
        )
    return out


ARGUMENT_SPEC = dict(
    report=dict(type="path"),
    verdict=dict(type="dict"),
    partition=dict(type="str", default=""),
    max_drain_fraction=dict(type="float", default=0.1),
    max_drain=dict(type="int", default=-1),
    resume=dict(type="bool", default=False),
    scontrol=dict(type="path", default="scontrol"),
)


def _plan(module, verdict, nodes):
    params = module.params
    try:
        return slurm.plan(
            nodes,
            verdict,
            time.strftime("%Y-%m-%d", time.gmtime()),
            partition=params["partition"],
            max_drain_fraction=params["max_drain_fraction"],
            max_drain=params["max_drain"] if params["max_drain"] >= 0 else None,
            resume=params["resume"],
            scontrol=params["scontrol"],
        )
    except ValueError as exc:
        module.fail_json(msg="slurm_remediate: %s." % exc)


def main():
    module = AnsibleModule(
        argument_spec=ARGUMENT_SPEC,
        mutually_exclusive=[("report", "verdict")],
        required_one_of=[("report", "verdict")],
        supports_check_mode=True,
    )
    verdict = _load_verdict(module)
    nodes = slurm.parse_show_node(_scontrol(module, [module.params["scontrol"], "show", "node", "--oneliner"]))
    result = _plan(module, verdict, nodes)
    refused = result.pop("refused")
    result["nodes"] = [dict((k, n[k]) for k in ("name", "state", "flags", "reason", "partitions")) for n in nodes]
    if refused:
        module.fail_json(msg=refused, changed=False, **result)
    out = dict(changed=bool(result["actions"]), msg="\n".join(slurm.describe_plan(result)) or "nothing to do", **result)
    if module._diff:
        out["diff"] = slurm.diff_text(result, nodes)
    if not module.check_mode:
        for action in result["actions"]:
            _scontrol(module, action["argv"])
    module.exit_json(**out)


if __name__ == "__main__":
    main()
