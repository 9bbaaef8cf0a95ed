# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the ib_facts module does, as one function over its parameters (the module is glue): the RDMA devices and
ports under sysfs_root (sysfs.discover) as the fact ``ibtune_rdma``, with one sentence that says what was found."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

from ansible_collections.ibtune.fabric.plugins.module_utils.common.module import ModuleError
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
