#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: slurm_job
short_description: The submit host's side of a validation pass run as one Slurm job (internal; use slurm_pass)
version_added: 0.2.0
description:
  - Internal module of M(ibtune.fabric.slurm_pass), which calls it on the Slurm submit host; do not use it
    directly.
  - O(op=submit) makes the pass directory on the shared filesystem fresh, unpacks the controller's bundle
    into it (settings, node names, the hosts' slices), writes the batch script (one C(srun) step, one task per
    node, each running the standalone schedule runner C(ibtune-schedule)) and submits it with
    C(sbatch --parsable).
  - O(op=status) returns Slurm's record of the job (C(squeue), then C(scontrol show job), then C(sacct)) and
    the runners' progress and end files; O(op=collect) packs the results and the job's output into one file;
    O(op=cancel) cancels the job; O(op=cleanup) removes the pass directory (only one of ours).
extends_documentation_fragment:
  - ibtune.fabric.attributes
options:
  op:
    description: What to do.
    type: str
    required: true
    choices: [submit, status, collect, cancel, cleanup]
  pass_dir:
    description: The pass directory on the shared filesystem (the same path on the submit host and every node).
    type: path
    required: true
  bundle:
    description: The controller's pack of the pass directory (O(op=submit)).
    type: path
  dest:
    description: Where O(op=collect) writes its pack.
    type: path
  job_id:
    description: The job (O(op=status), O(op=cancel)).
    type: str
  spec:
    description:
      - The submission (O(op=submit)) - C(nodes) (Slurm node names), C(runner), C(job_name), C(budget_s) or
        C(time_limit), and optionally C(partition), C(qos), C(account), C(reservation), C(exclusive), C(nice),
        C(extra_args) (sbatch), C(srun_args).
    type: dict
    default: {}
  commands:
    description: Paths of C(sbatch), C(srun), C(squeue), C(scontrol), C(sacct), C(scancel) when not on PATH.
    type: dict
    default: {}
attributes:
  check_mode:
    support: none
    details: M(ibtune.fabric.slurm_pass) does not run in check mode.
  diff_mode:
    support: none
author:
  - ibtune.fabric contributors (@ibtune)
"""

EXAMPLES = r"""
# Internal: M(ibtune.fabric.slurm_pass) calls it. By hand, to see a job's state:
- name: Where is the pass's job
  ibtune.fabric.slurm_job:
    op: status
    job_id: "42"
    pass_dir: /shared/ibtune/run1/pass1
"""

RETURN = r"""
job_id:
  description: The submitted job (O(op=submit)).
  returned: op=submit
  type: str
argv:
  description: The sbatch call (O(op=submit)).
  returned: op=submit
  type: list
  elements: str
job:
  description: Slurm's record of the job (job_id, state, reason, elapsed, time_limit, nodes, source).
  returned: op=status
  type: dict
states:
  description: Each host's progress file.
  returned: op=status
  type: dict
done:
  description: Each host's end file (finished, or stopped by a signal).
  returned: op=status
  type: dict
members:
  description: What O(op=collect) packed.
  returned: op=collect
  type: list
  elements: str
"""

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.ibtune.fabric.plugins.module_utils.slurm import launcher
from ansible_collections.ibtune.fabric.plugins.module_utils.validate import sidefiles


def run_op(module):
    p = module.params
    commands = p["commands"] or {}

    def run(argv):
        return module.run_command(argv)

    if p["op"] == "submit":
        spec = dict(
            p["spec"], pass_dir=p["pass_dir"], **dict((k, v) for k, v in commands.items() if k in ("sbatch", "srun"))
        )
        return dict(changed=True, **launcher.stage_and_submit(spec, run, bundle=p["bundle"]))
    if p["op"] == "status":
        return dict(changed=False, **launcher.status(run, p["job_id"], p["pass_dir"], commands))
    if p["op"] == "collect":
        members = sidefiles.pack(p["pass_dir"], p["dest"], sidefiles.result_members(p["pass_dir"]))
        return dict(changed=False, members=members, dest=p["dest"])
    if p["op"] == "cancel":
        launcher.cancel(run, p["job_id"], commands)
        return dict(changed=True)
    return dict(changed=sidefiles.remove_pass_dir(p["pass_dir"]))


def main():
    module = AnsibleModule(
        argument_spec=dict(
            op=dict(type="str", required=True, choices=["submit", "status", "collect", "cancel", "cleanup"]),
            pass_dir=dict(type="path", required=True),
            bundle=dict(type="path"),
            dest=dict(type="path"),
            job_id=dict(type="str"),
            spec=dict(type="dict", default={}),
            commands=dict(type="dict", default={}),
        ),
        required_if=[
            ("op", "submit", ("bundle",)),
            ("op", "status", ("job_id",)),
            ("op", "cancel", ("job_id",)),
            ("op", "collect", ("dest",)),
        ],
        supports_check_mode=False,
    )
    try:
        module.exit_json(**run_op(module))
    except launcher.SlurmError as exc:
        module.fail_json(msg="slurm_job: %s" % exc)
    except (ValueError, KeyError, IOError, OSError) as exc:
        module.fail_json(msg="slurm_job: %s" % (exc,))


if __name__ == "__main__":
    main()
