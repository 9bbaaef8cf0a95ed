# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError
from ansible_collections.ibtune.fabric.plugins.module_utils.nccl import plan as nccl_plan
from ansible_collections.ibtune.fabric.plugins.module_utils.nccl import result as nccl_result

_PLAN_KEYS = (
    "hosts",
    "nodes",
    "host_ports",
    "host_gpus",
    "plans",
    "collectives",
    "ranks_per_node",
    "domains",
    "transport",
    "gdr",
)


def nccl_check_result(inputs):
    if not isinstance(inputs, dict):
        raise AnsibleFilterError("nccl_check_result: the input must be a dict, got %s." % type(inputs).__name__)
    return nccl_result.check_document(inputs)


def nccl_busbw(test):
    return nccl_result.busbw(test if isinstance(test, dict) else {})


def nccl_plan_runs(spec):
    if not isinstance(spec, dict):
        raise AnsibleFilterError("nccl_plan: the input must be a dict, got %s." % type(spec).__name__)
    unknown = sorted(set(spec) - set(_PLAN_KEYS))
    if unknown:
        raise AnsibleFilterError("nccl_plan: unknown key(s) %s: use %s." % (", ".join(unknown), ", ".join(_PLAN_KEYS)))
    args = dict(spec)
    nodes = args.pop("nodes", None)
    if nodes is not None:
        args.update(_from_nodes(nodes))
    args["domains"] = args.get("domains") or None
    args["ranks_per_node"] = args.get("ranks_per_node") or None
    args["transport"] = args.get("transport") or None
    try:
        return nccl_plan.build_runs(**args)
    except (nccl_plan.PlanError, TypeError) as exc:
        raise AnsibleFilterError("nccl_check: %s" % exc)


def _from_nodes(nodes):
    """[{host, ports, gpus, domain}] (one per host, what the role gathered) as build_runs' inputs."""
    if not isinstance(nodes, list) or not all(isinstance(n, dict) and n.get("host") for n in nodes):
        raise AnsibleFilterError("nccl_plan: nodes must be a list of {host, ports, gpus, domain}, got %r" % (nodes,))
    domains = dict((n["host"], n["domain"]) for n in nodes if n.get("domain"))
    return {
        "hosts": [n["host"] for n in nodes],
        "host_ports": dict((n["host"], list(n.get("ports") or [])) for n in nodes),
        "host_gpus": dict((n["host"], int(n.get("gpus") or 0)) for n in nodes),
        "domains": domains or None,
    }


class FilterModule(object):
    def filters(self):
        return {"nccl_check_result": nccl_check_result, "nccl_busbw": nccl_busbw, "nccl_plan": nccl_plan_runs}
