# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters phy_ports, phy_verdict, phy_switch_ports, phy_history, phy_reading, phy_switch_host: the PHY stage's
wiring (docs in the .yml files; the logic is plugins/module_utils/phy/ and plugins/module_utils/validate/phy.py)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError
from ansible_collections.ibtune.fabric.plugins.module_utils.phy import history as _history
from ansible_collections.ibtune.fabric.plugins.module_utils.phy import pairs as _pairs
from ansible_collections.ibtune.fabric.plugins.module_utils.validate import phy as _vphy


def _guard(name, func, *args):
    try:
        return func(*args)
    except (ValueError, KeyError, TypeError) as exc:
        raise AnsibleFilterError("%s: %s" % (name, exc))


def phy_ports(after, before=None, host=None):
    return _guard("phy_ports", _pairs.pair, after, before, host)


def phy_verdict(ports, topology=None, thresholds=None, history=None, now=None):
    return _guard("phy_verdict", _vphy.verdict, ports, topology or None, thresholds or None, history or None, now)


def phy_switch_ports(topology, hosts=None):
    return _guard("phy_switch_ports", _vphy.switch_ports, topology, hosts)


def phy_reading(result):
    return _vphy.reading(result)


def phy_switch_host(explicit, candidates):
    return _guard("phy_switch_host", _vphy.switch_host, explicit, candidates)


def phy_history(history, verdict, now):
    return _guard("phy_history", _history.update, history or None, verdict, float(now))


class FilterModule(object):
    def filters(self):
        return {
            "phy_ports": phy_ports,
            "phy_verdict": phy_verdict,
            "phy_switch_ports": phy_switch_ports,
            "phy_history": phy_history,
            "phy_reading": phy_reading,
            "phy_switch_host": phy_switch_host,
        }
