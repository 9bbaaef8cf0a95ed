# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError
from ansible_collections.ibtune.fabric.plugins.module_utils.nccl.env import NcclEnvPlanError, plan_env, profile_for

_KEYS = (
    "profile",
    "profile_vars",
    "overrides",
    "rdma",
    "default_interface",
    "socket_ifname",
    "qos_env",
    "derive_hca",
    "nccl_version",
    "fabric",
    "inspector",
)


def nccl_env_plan(spec):
    if not isinstance(spec, dict):
        raise AnsibleFilterError("nccl_env_plan: the input must be a dict, got %s." % type(spec).__name__)
    unknown = sorted(set(spec) - set(_KEYS))
    if unknown:
        raise AnsibleFilterError("nccl_env_plan: unknown key(s) %s: use %s." % (", ".join(unknown), ", ".join(_KEYS)))
    args = dict(spec)
    fabric = args.pop("fabric", None)
    try:
        args["profile"] = profile_for(args.get("profile"), fabric)
        plan = plan_env(**args)
    except (NcclEnvPlanError, TypeError) as exc:
        raise AnsibleFilterError("nccl_env: %s" % exc)
    plan["profile"] = args["profile"]
    return plan


class FilterModule(object):
    def filters(self):
        return {"nccl_env_plan": nccl_env_plan}
