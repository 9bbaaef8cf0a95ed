# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Write the PHY figures of this host's RDMA ports as Prometheus textfile metrics (ibtune_phy.prom).

Runs the collection's own parser and reader (plugins/module_utils/phy/textfile.py, installed next to this file
under lib/ by the fabric_monitoring role: one source of truth), from a systemd timer. Read-only: it never clears
counters. Usage: ibtune-phy-textfile.py --out FILE [--executable mlxlink] [--sysfs-root /sys] [--devices mlx5_0:1]
"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))

from ansible_collections.ibtune.fabric.plugins.module_utils.phy import textfile  # noqa: E402

if __name__ == "__main__":
    sys.exit(textfile.main())
