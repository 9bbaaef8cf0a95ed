# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter validate_topology: an ib_topology result -> the compact topology fabric_plan and fabric_report take
(docs in validate_topology.yml; the logic is plugins/module_utils/validate/fabric.py)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError
from ansible_collections.ibtune.fabric.plugins.module_utils.validate import fabric as _vt


def validate_topology(result, hosts=None):
    try:
        return _vt.compact(result, hosts or None)
    except (ValueError, KeyError, TypeError) as exc:
        raise AnsibleFilterError("validate_topology: %s" % exc)


def topology_after_passes(topology, counters_after=None):
    return _vt.after_passes(topology, counters_after)


class FilterModule(object):
    def filters(self):
        return {"validate_topology": validate_topology, "topology_after_passes": topology_after_passes}
