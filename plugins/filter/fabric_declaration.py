# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter wiring the playbooks' preflight to module_utils/validate/preflight.py (docs in the .yml file)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.ibtune.fabric.plugins.module_utils.report import runs
from ansible_collections.ibtune.fabric.plugins.module_utils.validate import preflight

# The host variables a declaration is made of (role variables that depart from ibtune_fabric included).
_DECLARATION_VARIABLES = ("ibtune_fabric",) + tuple(sorted(preflight.EXPECT_VARIABLES.values()))


def fabric_declaration_problems(hosts, hostvars):
    """Sentences for a fabric declared wrong, from each host's declaration and its ib_facts."""
    declarations, facts = {}, {}
    for host in hosts or []:
        host_vars = hostvars[host]
        declarations[host] = dict((name, host_vars.get(name)) for name in _DECLARATION_VARIABLES)
        facts[host] = (host_vars.get("ansible_facts") or {}).get("ibtune_rdma")
    return preflight.declaration_problems(declarations, facts)


def install_serial_check(hosts, hostvars):
    """{serial: [items] | None, group: name | None, problem: sentence | None} from the hosts' ibtune_install_serial."""
    items, problem = preflight.install_serial(dict((h, hostvars[h].get("ibtune_install_serial")) for h in hosts or []))
    return {"serial": items, "group": preflight.serial_group(items) if items else None, "problem": problem}


def install_serial(groups):
    """The install play's serial, from the group the preflight added (see module_utils/validate/preflight.py)."""
    return preflight.serial_from_groups(groups)


def fabric_verdict(hosts, hostvars, check_mode=False):
    """The run's verdict from fabric_validate's registered report, else from its preflight (report/runs.py)."""
    reports, problems = {}, {}
    for host in hosts or []:
        host_vars = hostvars[host]
        if "__fabric_validate_report" in host_vars:
            reports[host] = host_vars["__fabric_validate_report"]
        if "__fabric_validate_problems" in host_vars:
            problems[host] = host_vars["__fabric_validate_problems"]
    return runs.verdict(hosts, reports, problems, bool(check_mode))


class FilterModule(object):
    def filters(self):
        return {
            "fabric_declaration_problems": fabric_declaration_problems,
            "install_serial_check": install_serial_check,
            "install_serial": install_serial,
            "fabric_verdict": fabric_verdict,
        }
