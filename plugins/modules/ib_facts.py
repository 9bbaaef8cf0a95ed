#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: ib_facts
short_description: Discover RDMA devices, ports, link rates and PCIe links from sysfs
version_added: 0.1.0
description:
  - Reads C(/sys/class/infiniband) as the kernel lays it out (class entries are symlinks into
    C(/sys/devices), files may lack a trailing newline) and returns C(ansible_facts.ibtune_rdma).
  - Works for InfiniBand and RoCE (Ethernet link layer) ports alike.
  - A host without RDMA devices gets empty C(devices) and a message saying so; the module does not fail.
extends_documentation_fragment:
  - ibtune.fabric.sysfs
  - ibtune.fabric.attributes
  - ibtune.fabric.attributes.READ_ONLY
  - ibtune.fabric.attributes.FACTS
author:
  - ibtune.fabric contributors (@ibtune)
"""

EXAMPLES = r"""
- name: Discover RDMA devices
  ibtune.fabric.ib_facts:

- name: Show the ports that are up
  ansible.builtin.debug:
    var: ansible_facts.ibtune_rdma.active_ports

- name: Read a fixture tree instead of /sys
  ibtune.fabric.ib_facts:
    sysfs_root: /srv/lab/node1/sys
"""

RETURN = r"""
ansible_facts:
  description: Facts under the C(ibtune_rdma) key.
  returned: always
  type: dict
  contains:
    ibtune_rdma:
      description: RDMA devices and the list of usable ports.
      returned: always
      type: dict
      contains:
        devices:
          description:
            - Per RDMA device (C(mlx5_0)...) C(fw_ver), C(board_id), C(hca_type), C(node_guid), C(node_desc),
              C(netdevs), C(pci_address), C(numa_node), C(pcie) and C(ports).
            - C(pcie) holds C(speed_gts), C(width), C(max_speed_gts), C(max_width) and C(degraded)
              (trained below its maximum speed or width).
            - C(ports.<n>) holds C(state) (C(ACTIVE)...), C(phys_state) (C(LinkUp)...), C(link_layer)
              (C(InfiniBand) or C(Ethernet)), C(rate_gbps), C(lanes), C(lane_speed) (C(NDR)...), C(lid),
              C(sm_lid) and C(roce_v2_ipv4_gid_index) (RoCE ports only, else null).
          returned: always
          type: dict
          sample:
            mlx5_0:
              fw_ver: 28.39.1002
              board_id: MT_0000000838
              hca_type: MT4129
              node_guid: "a088:c203:0035:6f3a"
              node_desc: node1 mlx5_0
              netdevs: [ibp24s0]
              pci_address: "0000:18:00.0"
              numa_node: 0
              pcie: {speed_gts: 32.0, width: 16, max_speed_gts: 32.0, max_width: 16, degraded: false}
              ports:
                "1":
                  state: ACTIVE
                  phys_state: LinkUp
                  link_layer: InfiniBand
                  rate_gbps: 400.0
                  lanes: 4
                  lane_speed: NDR
                  lid: 12
                  sm_lid: 1
                  roce_v2_ipv4_gid_index: null
        active_ports:
          description: C(dev:port) of every port that is C(ACTIVE) and C(LinkUp).
          returned: always
          type: list
          elements: str
          sample: ["mlx5_0:1", "mlx5_1:1"]
        sysfs_root:
          description: The tree that was read.
          returned: always
          type: str
          sample: /sys
msg:
  description: A one-line summary, e.g. how many devices and active ports were found.
  returned: always
  type: str
  sample: "found 8 RDMA devices, 8 active ports"
"""

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.ibtune.fabric.plugins.module_utils.common.module import respond
from ansible_collections.ibtune.fabric.plugins.module_utils.host.module import run_ib_facts


def main():
    module = AnsibleModule(argument_spec=dict(sysfs_root=dict(type="path", default="/sys")), supports_check_mode=True)
    respond(module, run_ib_facts, module.params)


if __name__ == "__main__":
    main()
