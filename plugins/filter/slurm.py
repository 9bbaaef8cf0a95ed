# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters slurm_topology_conf (Slurm's tree topology.conf from {leaf: [hosts]}), slurm_topology_leaves (that map
from the role's variables), slurm_verdict (what slurm_remediate would drain and resume from a report) and
slurm_name_problems (role variables that are no Slurm name), docs in the matching .yml files."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError
from ansible_collections.ibtune.fabric.plugins.module_utils.common import slurm_args as _slurm_args
from ansible_collections.ibtune.fabric.plugins.module_utils.slurm import remediate as _slurm


def slurm_topology_conf(leaves, spine="spine", header=None):
    try:
        return _slurm.render_topology(leaves, spine=spine, header=header)
    except ValueError as exc:
        raise AnsibleFilterError("slurm_topology_conf: %s" % exc)


def slurm_topology_leaves(explicit, leaf_groups=None, groups=None):
    try:
        return _slurm.topology_leaves(explicit, leaf_groups, groups or {})
    except ValueError as exc:
        raise AnsibleFilterError("slurm_topology_leaves: %s" % exc)


def slurm_verdict(report):
    if not isinstance(report, dict):
        raise AnsibleFilterError(
            "slurm_verdict: the report must be a dict (report.json), got %s" % type(report).__name__
        )
    return _slurm.verdict_from_report(report)


def slurm_name_problems(names):
    """One sentence per variable whose value Slurm cannot parse as a partition, QoS, account or reservation name
    (common/slurm_args.check_name, the check the launchers make), in the variables' order; empty values pass."""
    if not isinstance(names, dict):
        raise AnsibleFilterError("slurm_name_problems: give {variable: value}, got %s" % type(names).__name__)
    problems = []
    for variable, value in names.items():
        try:
            _slurm_args.check_name(variable, value)
        except ValueError as exc:
            problems.append(str(exc))
    return problems


class FilterModule(object):
    def filters(self):
        return {
            "slurm_topology_conf": slurm_topology_conf,
            "slurm_topology_leaves": slurm_topology_leaves,
            "slurm_verdict": slurm_verdict,
            "slurm_name_problems": slurm_name_problems,
        }
