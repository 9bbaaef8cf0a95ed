# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError
from ansible_collections.ibtune.fabric.plugins.module_utils.monitoring.inspector_build import BuildError, plan
from ansible_collections.ibtune.fabric.plugins.module_utils.monitoring.training_exporter import (
    ConfigError,
    normalise_config,
)
from ansible_collections.ibtune.fabric.plugins.module_utils.nccl.env import NcclEnvPlanError, inspector_settings


def nccl_inspector(raw, plugin_version=None):
    try:
        return inspector_settings(raw, plugin_version)
    except NcclEnvPlanError as exc:
        raise AnsibleFilterError(str(exc))


def inspector_build(tag, install_dir, url="", jobs=2):
    try:
        return plan(tag, install_dir, url=url, jobs=jobs)
    except BuildError as exc:
        raise AnsibleFilterError(str(exc))


def training_exporter_config(raw):
    try:
        return normalise_config(raw, "the training exporter's settings (fabric_monitoring_training_*)")
    except ConfigError as exc:
        raise AnsibleFilterError(str(exc))


class FilterModule(object):
    def filters(self):
        return {
            "nccl_inspector": nccl_inspector,
            "inspector_build": inspector_build,
            "training_exporter_config": training_exporter_config,
        }
