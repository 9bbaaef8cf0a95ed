# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError
from ansible_collections.ibtune.fabric.plugins.module_utils.qos.model import (
    QosModelError,
    nccl_qos_env,
    normalize_model,
)
from ansible_collections.ibtune.fabric.plugins.module_utils.qos.model import nccl_tc as _nccl_tc
from ansible_collections.ibtune.fabric.plugins.module_utils.qos.module import roce_interfaces, valid_interfaces


def nccl_tc(dscp, ecn="ect0"):
    try:
        return _nccl_tc(dscp, ecn)
    except QosModelError as exc:
        raise AnsibleFilterError("nccl_tc: %s" % exc)


def qos_model(model, fabric=None):
    try:
        return normalize_model(model, fabric)
    except QosModelError as exc:
        raise AnsibleFilterError(str(exc))


def qos_nccl_env(model, fabric=None):
    try:
        return nccl_qos_env(model, fabric)
    except QosModelError as exc:
        raise AnsibleFilterError(str(exc))


def qos_roce_interfaces(explicit, facts=None):
    return roce_interfaces(explicit, facts)


def qos_interfaces_valid(value):
    return valid_interfaces(value)


class FilterModule(object):
    def filters(self):
        return {
            "nccl_tc": nccl_tc,
            "qos_model": qos_model,
            "qos_nccl_env": qos_nccl_env,
            "qos_roce_interfaces": qos_roce_interfaces,
            "qos_interfaces_valid": qos_interfaces_valid,
        }
