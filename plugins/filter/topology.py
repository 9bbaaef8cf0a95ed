# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter topology_tools_host: the host the fabric_topology role reads the fabric on (docs in the .yml file;
the logic is plugins/module_utils/subnet/module.py)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.ibtune.fabric.plugins.module_utils.subnet.module import tools_host


def topology_tools_host(host, source, subnet_managers=None):
    return tools_host(host, source, subnet_managers)


class FilterModule(object):
    def filters(self):
        return {"topology_tools_host": topology_tools_host}
