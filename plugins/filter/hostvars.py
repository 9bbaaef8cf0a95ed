# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters hostvar_map, hosts_with, hosts_without: one variable of many hosts, gathered on the controller
(docs in the matching .yml files; the logic is plugins/module_utils/common/hostvars.py)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError
from ansible_collections.ibtune.fabric.plugins.module_utils.common import hostvars as _hostvars

_NO_DEFAULT = object()


def hostvar_map(hosts, hostvars, name, default=_NO_DEFAULT):
    try:
        if default is _NO_DEFAULT:
            return _hostvars.value_map(hosts, hostvars, name)
        return _hostvars.value_map(hosts, hostvars, name, default)
    except KeyError as exc:
        raise AnsibleFilterError("hostvar_map: %s" % exc.args[0])


def hosts_with(hosts, hostvars, name):
    return _hostvars.hosts_with(hosts, hostvars, name)


def hosts_without(hosts, hostvars, name):
    return _hostvars.hosts_without(hosts, hostvars, name)


class FilterModule(object):
    def filters(self):
        return {"hostvar_map": hostvar_map, "hosts_with": hosts_with, "hosts_without": hosts_without}
