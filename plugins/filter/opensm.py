# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.ibtune.fabric.plugins.module_utils.subnet.opensm import qos_keys, ufm_evidence, unknown_keys


def opensm_qos_keys(model, policy_file, options=None):
    return qos_keys(model, policy_file, options)


def opensm_ufm_evidence(existing_paths, unit_names=None):
    return ufm_evidence(existing_paths, unit_names or ())


def opensm_unknown_keys(defaults_text, keys, options=None):
    return unknown_keys(defaults_text, keys, options)


class FilterModule(object):
    def filters(self):
        return {
            "opensm_qos_keys": opensm_qos_keys,
            "opensm_ufm_evidence": opensm_ufm_evidence,
            "opensm_unknown_keys": opensm_unknown_keys,
        }
