# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# Apache License 2.0 (see LICENSE)

from __future__ import absolute_import, division, print_function

__metaclass__ = type


class ModuleDocFragment(object):
    DOCUMENTATION = r"""
options:
  sysfs_root:
    description:
      - Root of the sysfs tree to read C(class/infiniband), C(class/net) and C(bus/pci) from.
      - Point it at a fixture tree to test without RDMA hardware.
    type: path
    default: /sys
"""
