# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.ibtune.fabric.plugins.module_utils.host.gdr import nvidia_flavor, plan


def gdr_plan(
    requested, source, kernel=None, rdma_core=None, proc_version=None, modinfo_license=None, peermem_found=False
):
    return plan(
        requested,
        source,
        kernel=kernel,
        rdma_core=rdma_core,
        flavor=nvidia_flavor(proc_version, modinfo_license),
        peermem_found=bool(peermem_found),
    )


class FilterModule(object):
    def filters(self):
        return {"gdr_plan": gdr_plan}
