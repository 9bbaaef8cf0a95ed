# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError
from ansible_collections.ibtune.fabric.plugins.module_utils.nccl.env import NcclEnvPlanError, plan_env, profile_for
from ansible_collections.ibtune.fabric.plugins.module_utils.qos.model import QosModelError, nccl_qos_env

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
    "qos_model",
    "use_qos",
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
    model = args.pop("qos_model", None)
    if _truthy(args.pop("use_qos", False)) and model:
        # the QoS model's NCCL variable (NCCL_IB_SL or NCCL_IB_TC), as the qos_nccl_env filter gives it
        try:
            args["qos_env"] = nccl_qos_env(model)
        except QosModelError as exc:
            raise AnsibleFilterError(str(exc))
    for key in ("derive_hca",):
        if key in args:
            args[key] = _truthy(args[key])
    try:
        args["profile"] = profile_for(args.get("profile"), fabric)
        plan = plan_env(**args)
    except (NcclEnvPlanError, TypeError) as exc:
        raise AnsibleFilterError("nccl_env: %s" % exc)
    plan["profile"] = args["profile"]
    return plan


def _truthy(value):
    """Task vars come as strings when templated one by one ('True'): read them as Ansible's bool filter does."""
    if isinstance(value, str):
        return value.strip().lower() in ("1", "true", "yes", "on", "y")
    return bool(value)


def nccl_env_profile(profile, fabric=None):
    """nccl_env's profile: the given one, or from fabric.link_layer (Ethernet -> roce, else ib)."""
    try:
        return profile_for(profile, fabric)
    except NcclEnvPlanError as exc:
        raise AnsibleFilterError("nccl_env: %s" % exc)


class FilterModule(object):
    def filters(self):
        return {"nccl_env_plan": nccl_env_plan, "nccl_env_profile": nccl_env_profile}
