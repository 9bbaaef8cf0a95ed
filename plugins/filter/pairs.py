# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters pair_rounds and retest_rounds: plan perftest pairs (docs in pair_rounds.yml, retest_rounds.yml)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError
from ansible_collections.ibtune.fabric.plugins.module_utils.validate import pairs as _pairs


def pair_rounds(hosts, strategy="all_pairs", rounds=None, seed=None, groups=None, pairs=None):
    try:
        return _pairs.pair_rounds(hosts, strategy=strategy, rounds=rounds, seed=seed, groups=groups, pairs=pairs)
    except ValueError as exc:
        raise AnsibleFilterError("pair_rounds: %s" % exc)


def retest_rounds(results, hosts=None, partners=1):
    try:
        return _pairs.retest_rounds(results, hosts=hosts, partners=partners)
    except ValueError as exc:
        raise AnsibleFilterError("retest_rounds: %s" % exc)


class FilterModule(object):
    def filters(self):
        return {"pair_rounds": pair_rounds, "retest_rounds": retest_rounds}
