#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: opensm_conf
short_description: Set some keys of opensm.conf and keep every other line of it
version_added: 0.1.0
description:
  - Sets the given keys in an existing C(opensm.conf) in place (the last uncommented line of each key), appends the
    keys the file lacks under one comment, and keeps every other line as it was - routing_engine, sm_priority,
    guid and the rest of the subnet manager's own settings are not touched.
  - Creates the file with only the keys when it does not exist.
  - Changes (and backs up) the file only when a key's value differs; C(changed_keys) names them, so a restart of
    OpenSM can follow only a real change.
  - Role-internal (fabric_qos); the merge is module_utils/subnet/opensm.py.
extends_documentation_fragment:
  - ibtune.fabric.attributes
attributes:
  check_mode:
    support: full
  diff_mode:
    support: full
options:
  path:
    description: The opensm.conf to edit.
    type: path
    required: true
  keys:
    description: Key to value (booleans are written TRUE/FALSE).
    type: dict
    required: true
  backup:
    description: Keep a timestamped copy of the file before changing it.
    type: bool
    default: true
author:
  - ibtune.fabric contributors (@ibtune)
"""

EXAMPLES = r"""
- name: Set the QoS keys, keep the rest
  ibtune.fabric.opensm_conf:
    path: /etc/opensm/opensm.conf
    keys:
      qos: true
      qos_sl2vl: "0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,7"
"""

RETURN = r"""
changed_keys:
  description: The keys whose value changed, sorted.
  returned: always
  type: list
  elements: str
  sample: [qos, qos_sl2vl]
backup_file:
  description: The copy made before the change.
  returned: when a backup was made
  type: str
  sample: /etc/opensm/opensm.conf.12345.2026-12-01@09:10:11~
"""

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.ibtune.fabric.plugins.module_utils.common.module import respond
from ansible_collections.ibtune.fabric.plugins.module_utils.subnet.module import run_opensm_conf

ARGUMENT_SPEC = dict(
    path=dict(type="path", required=True),
    keys=dict(type="dict", required=True, no_log=False),
    backup=dict(type="bool", default=True),
)


def main():
    module = AnsibleModule(argument_spec=ARGUMENT_SPEC, supports_check_mode=True)
    # the backup and the atomic move are Ansible's own (backup_local, atomic_move)
    respond(module, run_opensm_conf, module.params, module, module.check_mode, module._diff)


if __name__ == "__main__":
    main()
