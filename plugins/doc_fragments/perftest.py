# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type


class ModuleDocFragment(object):
    # The connection options every one-side perftest module shares (perftest_bw, perftest_lat); their argument spec
    # is module_utils/perftest/module.py's SHARED_SPEC.
    DOCUMENTATION = r"""
options:
  role:
    description:
      - C(server) waits for one client (start it first, e.g. with C(async)); C(client) connects to O(server).
    type: str
    required: true
    choices: [server, client]
  server:
    description: Address (name or IP) of the host running the server side. Required when O(role=client).
    type: str
  device:
    description: RDMA device to use (perftest C(-d)), e.g. C(mlx5_0).
    type: str
    required: true
  ib_port:
    description: Port of O(device) (perftest C(-i)).
    type: int
    default: 1
  gid_index:
    description:
      - GID index (perftest C(-x)), needed on RoCE when perftest's automatic choice is wrong. Use
        C(ib_facts)' C(roce_v2_ipv4_gid_index). Left out when unset.
    type: int
  tcp_port:
    description:
      - TCP port of perftest's out-of-band connection (perftest C(-p)); both sides must use the same one, and
        parallel tests on one host need distinct ports.
    type: int
    default: 18515
  connect_timeout:
    description:
      - Client only. Seconds during which a refused connection (server not yet listening) is retried, about
        every 0.5 s.
    type: float
    default: 30
  extra_args:
    description: More perftest arguments, appended as separate list items before the server address.
    type: list
    elements: str
    default: []
"""
