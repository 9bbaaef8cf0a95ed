# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Layer 1, one host as the kernel shows it: the RDMA sysfs ABI (devices, ports, rates, PCIe), port counters
(snapshots, deltas, saturation, violations), processes that cannot outlive their module, GPUDirect RDMA.
Imports only common/.
"""
