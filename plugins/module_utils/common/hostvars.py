# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Per-host values gathered on the controller: ``{host: value}`` maps and host selections.

A role that plans or judges once (run_once, on the controller) needs one variable of every host: the rails of
each host for the plan, the preflight problems of each host for the report. In Jinja that is
``dict(hosts | zip(hosts | map('extract', hostvars, name)))``, repeated per variable and silent about a host
that lacks it. These functions take any mapping of host -> variables (Ansible's ``hostvars`` or a plain dict in
a test) and a dotted variable path (``__fabric_validate_counters_mid.violations``); the filters
``hostvar_map``, ``hosts_with`` and ``hosts_without`` wire them.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

_MISSING = object()  # no default given: a missing variable is an error
_ABSENT = object()  # a default that tells "not set" from every real value


def lookup(hostvars, host, path, default=_MISSING):
    """The value at the dotted ``path`` in ``hostvars[host]``; ``default`` where a step is missing, or
    KeyError naming the host and the variable when no default is given."""
    value = hostvars[host]
    for step in path.split("."):
        try:
            value = value[step]
        except (KeyError, TypeError, IndexError):
            value = _MISSING
        if value is _MISSING or _is_undefined(value):
            if default is _MISSING:
                raise KeyError("host %s has no variable %s (set it for every host, or give a default)" % (host, path))
            return default
    return value


def _is_undefined(value):
    """Ansible's hostvars hand back an Undefined object, not a KeyError, for a variable a host lacks."""
    return type(value).__name__.endswith("Undefined")


def value_map(hosts, hostvars, path, default=_MISSING):
    """``{host: value at path}`` for every host, in the order given."""
    return dict((host, lookup(hostvars, host, path, default)) for host in hosts or [])


def hosts_with(hosts, hostvars, path):
    """The hosts (in order) whose value at path is set and not empty (a non-empty list, a true flag)."""
    return [host for host in hosts or [] if lookup(hostvars, host, path, None)]


def hosts_without(hosts, hostvars, path):
    """The hosts (in order) whose value at path is set and empty (``[]``, ``{}``, ``""``, 0 or false): e.g.
    the hosts whose preflight found no problem. A host that lacks the variable is in neither selection."""
    out = []
    for host in hosts or []:
        value = lookup(hostvars, host, path, _ABSENT)
        if value is not _ABSENT and value is not None and not value:
            out.append(host)
    return out
