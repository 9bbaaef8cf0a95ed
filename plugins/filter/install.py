# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters module_utils_closure and module_utils_dirs: the collection's module_utils a program needs and the
directories their copy needs (docs in the .yml files)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

from ansible.errors import AnsibleFilterError
from ansible_collections.ibtune.fabric.plugins.module_utils.common import imports as _imports

MODULE_UTILS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "module_utils")


def module_utils_closure(starts):
    if isinstance(starts, str):
        starts = [starts]
    try:
        return _imports.closure(MODULE_UTILS, list(starts))
    except ValueError as exc:
        raise AnsibleFilterError("module_utils_closure: %s" % exc)


def module_utils_dirs(modules, namespace):
    return _imports.package_dirs(modules, namespace)


class FilterModule(object):
    def filters(self):
        return {"module_utils_closure": module_utils_closure, "module_utils_dirs": module_utils_dirs}
