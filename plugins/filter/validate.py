# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters that wire fabric_validate's facts into module_utils (docs in the matching .yml files)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible.errors import AnsibleFilterError
from ansible_collections.ibtune.fabric.plugins.module_utils.validate import plan, preflight, sidefiles

_PORT_RE = re.compile(r"\s-p\s+(\d+)(\s|$)")


def validate_rails(facts, rails=None, link_layer=None):
    try:
        return preflight.host_rails(facts, rails, link_layer or None)
    except ValueError as exc:
        raise AnsibleFilterError("validate_rails: %s" % exc)


def preflight_problems(facts, rails=None, expect=None, sysfs_root="/sys"):
    try:
        return preflight.problems(facts, rails, expect, sysfs_root)
    except ValueError as exc:
        raise AnsibleFilterError("preflight_problems: %s" % exc)


def validate_settings(values):
    return preflight.check_settings(values or {})


def host_failures(expected, reached, problems=None, plan_failures=None):
    """Every host meant to be validated that cannot be: unreachable, failed preflight, or named by the plan."""
    problems = problems or {}
    out = []
    reached = set(reached or [])
    for host in expected or []:
        if host not in reached:
            out.append(
                {
                    "host": host,
                    "failure_kind": "unreachable",
                    "reason": "unreachable, or failed before the validation started: it was not measured",
                }
            )
            continue
        for item in problems.get(host) or []:
            out.append(
                {"host": host, "failure_kind": item.get("failure_kind") or "preflight", "reason": item["reason"]}
            )
    for item in plan_failures or []:
        out.append(dict(item))
    return out


def preflight_summary(host, rails=None, problems=None):
    return preflight.summary(host, rails, problems)


def own_leftovers(lines, ports):
    """pgrep -a lines of perftest processes whose -p port is one of ours (others are not ours).

    ``ports``: the ports, or the validation's base TCP port (its window: plan.own_ports)."""
    if isinstance(ports, (int, str)):
        ports = plan.own_ports(ports)
    ours = set(int(p) for p in ports or [])
    out = []
    for line in lines or []:
        match = _PORT_RE.search(" " + line)
        if match and int(match.group(1)) in ours:
            out.append(line)
    return out


def slice_sides(doc):
    """The sides of a fabric_plan slice file's content (validate/sidefiles.slice_sides)."""
    try:
        return sidefiles.slice_sides(doc)
    except (ValueError, KeyError, TypeError) as exc:
        raise AnsibleFilterError("slice_sides: %s" % (exc,))


class FilterModule(object):
    def filters(self):
        return {
            "validate_rails": validate_rails,
            "slice_sides": slice_sides,
            "preflight_problems": preflight_problems,
            "validate_settings": validate_settings,
            "host_failures": host_failures,
            "own_leftovers": own_leftovers,
            "preflight_summary": preflight_summary,
        }
