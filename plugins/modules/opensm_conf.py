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

import os
import tempfile

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.ibtune.fabric.plugins.module_utils.subnet.opensm import merge


def main():
    module = AnsibleModule(
        argument_spec=dict(
            path=dict(type="path", required=True),
            keys=dict(type="dict", required=True, no_log=False),
            backup=dict(type="bool", default=True),
        ),
        supports_check_mode=True,
    )
    path = module.params["path"]
    exists = os.path.isfile(path)
    before = ""
    if exists:
        with open(path, encoding="utf-8") as handle:
            before = handle.read()
    after, changed = merge(before, module.params["keys"])
    result = dict(changed=bool(changed), changed_keys=changed)
    if module._diff:
        result["diff"] = dict(before=before, after=after, before_header=path, after_header=path)
    if changed and not module.check_mode:
        if exists and module.params["backup"]:
            result["backup_file"] = module.backup_local(path)
        fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path) or ".", prefix=".opensm_conf.")
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(after)
        if not exists:
            os.chmod(tmp, 0o644)
        module.atomic_move(tmp, path)
    module.exit_json(**result)


if __name__ == "__main__":
    main()
