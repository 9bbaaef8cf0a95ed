# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the ib_facts and ib_counters modules do, each as one function over its parameters (the modules are glue).
ib_facts: the RDMA devices and ports under sysfs_root (sysfs.discover) as the fact ``ibtune_rdma``, with one
sentence that says what was found; ib_counters: the port counters (counters.snapshot), their deltas since
``previous``, the violations of the thresholds and the saturated counters."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

from ansible_collections.ibtune.fabric.plugins.module_utils.common.module import ModuleError
from ansible_collections.ibtune.fabric.plugins.module_utils.host import counters
from ansible_collections.ibtune.fabric.plugins.module_utils.host.sysfs import discover


def run_ib_facts(params):
    """The ib_facts result (read-only: check mode reads the same)."""
    sysfs_root = params["sysfs_root"]
    if not os.path.isdir(sysfs_root):
        raise ModuleError(
            "sysfs_root %s is not a directory: point sysfs_root at /sys or at a fixture tree." % sysfs_root
        )
    facts = discover(sysfs_root)
    facts["sysfs_root"] = sysfs_root
    if facts["devices"]:
        msg = "found %d RDMA devices, %d active ports" % (len(facts["devices"]), len(facts["active_ports"]))
    else:
        msg = (
            "no RDMA devices under %s/class/infiniband: no RDMA driver is loaded "
            "(or this container does not expose the devices)" % sysfs_root
        )
    return dict(changed=False, msg=msg, ansible_facts={"ibtune_rdma": facts})


def _int_thresholds(thresholds):
    out = {}
    for name, value in (thresholds or {}).items():
        try:
            out[name] = int(value)
        except (TypeError, ValueError):
            raise ModuleError(
                "thresholds.%s=%r is not an integer: give the allowed increase as a whole number "
                "(negative turns the gate off)." % (name, value)
            )
    return out


def run_ib_counters(params, check_mode=False):
    """The ib_counters result (read-only: check mode reads the same); ``failed`` on a violation or a gated
    saturated counter with fail_on_violation."""
    if not os.path.isdir(params["sysfs_root"]):
        raise ModuleError(
            "sysfs_root %s is not a directory: point it at /sys or a fixture tree." % params["sysfs_root"]
        )
    thresholds = _int_thresholds(params["thresholds"])
    current = counters.snapshot(params["sysfs_root"], params["include_hw_counters"], params["devices"])
    unknown = counters.unknown_thresholds(thresholds, current)
    if unknown:
        raise ModuleError(" ".join(unknown))
    previous = params["previous"]
    found = counters.violations(previous, current, thresholds) if previous else []
    result = dict(
        changed=False,
        counters=current,
        deltas=counters.deltas(previous, current) if previous else {},
        violations=found,
        saturated=counters.saturated(current, thresholds),
        thresholds=counters.effective_thresholds(thresholds),
    )
    stuck = [s for s in result["saturated"] if s["gated"]]
    if found or stuck:
        result["msg"] = " ".join(
            ([counters.describe_violations(found)] if found else [])
            + ([counters.describe_saturated(stuck)] if stuck else [])
        )
        if params["fail_on_violation"]:
            result["failed"] = True
    else:
        result["msg"] = "%d ports read, no counter above its threshold" % len(current)
    return result
