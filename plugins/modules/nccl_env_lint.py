#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: nccl_env_lint
short_description: Check NCCL environment variables or an nccl.conf against NCCL's documented variables
version_added: 0.1.0
description:
  - Checks a dict of variables (I(env)) or a KEY=VALUE file such as C(/etc/nccl.conf) (I(path)) against the
    collection's schema of NCCL variables (every C(NCCL_*) name NCCL 2.30.7 reads, from NCCL's documentation and
    source; type, range or choices, default, since, deprecated, removed).
  - "Errors: C(NCCL_*) names one typo away from a known one (with a did-you-mean; other unknown names are
    warnings unless I(strict)), wrong types, values out of range or not among the
    choices (the message lists the allowed ones), removed variables, contradictions (e.g. C(NCCL_NET=IB) with
    C(NCCL_IB_DISABLE=1)), level names in the wrong case (NCCL compares them case-sensitively),
    an exact C(NCCL_IB_HCA) entry that is a bare family such as C(mlx5) (it matches no device), and in files
    what NCCL would read differently from what was meant (spaces around C(=), quotes, C(export), end-of-line
    comments)."
  - "Warnings: deprecated names, debugging variables left on (C(NCCL_DEBUG=INFO), C(NCCL_DEBUG_SUBSYS)...),
    forced C(NCCL_ALGO)/C(NCCL_PROTO), a full device name used as an C(NCCL_IB_HCA) prefix (C(mlx5_1) also
    selects mlx5_10..19; a bare family such as C(mlx5) is fine), C(NCCL_IB_GID_INDEX) on InfiniBand or on
    NCCL 2.21 and later, legacy integer levels (with the name NCCL reads them as: 2 is PXB), numbers with a
    leading 0 (octal), variables newer than I(nccl_version), names that are PyTorch's rather than NCCL's,
    unknown C(NCCL_*) names that are no typo of a known one."
  - Fails when there are errors (or warnings, with I(fail_on_warnings)).
  - Returns the warnings as C(lint_warnings) (Ansible reserves C(warnings)) and shows each as an Ansible warning.
options:
  env:
    description: Variables to check, name to value. Booleans become 1/0. Mutually exclusive with I(path).
    type: dict
  path:
    description: A KEY=VALUE file to check as NCCL reads it. Mutually exclusive with I(env).
    type: path
  nccl_version:
    description: The NCCL version that will read the variables (e.g. C(2.28.9)); enables since/removed checks.
    type: str
  link_layer:
    description: The fabric's link layer; C(InfiniBand) turns C(NCCL_IB_GID_INDEX) into a warning.
    type: str
    choices: [InfiniBand, Ethernet]
  fail_on_warnings:
    description: Fail on warnings too.
    type: bool
    default: false
  strict:
    description:
      - Make every unknown C(NCCL_*) name an error. By default only a name one typo away from a known one is an
        error, and other unknown names are warnings (a newer NCCL or a plugin may read them).
    type: bool
    default: false
    version_added: 0.2.0
extends_documentation_fragment:
  - ibtune.fabric.attributes
  - ibtune.fabric.attributes.READ_ONLY
author:
  - ibtune.fabric contributors (@ibtune)
"""

EXAMPLES = r"""
- name: Lint the variables before they are written
  ibtune.fabric.nccl_env_lint:
    env:
      NCCL_IB_HCA: "=mlx5_0:1,mlx5_1:1"
      NCCL_IB_QPS_PER_CONNECTION: 4
      NCCL_IB_TIMEOUT: 22
      NCCL_NET_GDR_LEVEL: PXB
      NCCL_IB_TC: 106
    link_layer: Ethernet

- name: Lint the file on the node
  ibtune.fabric.nccl_env_lint:
    path: /etc/nccl.conf
    nccl_version: 2.28.9
  register: lint
"""

RETURN = r"""
errors:
  description: Problems NCCL would trip over; C(line) is set for file problems.
  returned: always
  type: list
  elements: dict
  sample:
    - variable: NCCL_IB_TIMEOUT
      value: "40"
      message: "NCCL_IB_TIMEOUT=40 is out of range: use 0..31 (NCCL's default is 20)"
lint_warnings:
  description:
    - Things that work but are probably not what was meant; each is also shown as an Ansible warning.
    - Not called C(warnings) because Ansible reserves that result key for its own warning messages.
  returned: always
  type: list
  elements: dict
  sample:
    - variable: NCCL_IB_HCA
      value: mlx5_1
      message: "NCCL_IB_HCA=mlx5_1 uses the full device name mlx5_1 as a prefix, ..."
env:
  description: The variables as NCCL sees them (for I(path), the first occurrence of each name).
  returned: always
  type: dict
  sample: {NCCL_IB_TIMEOUT: "22"}
"""

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.ibtune.fabric.plugins.module_utils.common.module import respond
from ansible_collections.ibtune.fabric.plugins.module_utils.nccl.module import run_env_lint

ARGUMENT_SPEC = dict(
    env=dict(type="dict"),
    path=dict(type="path"),
    nccl_version=dict(type="str"),
    link_layer=dict(type="str", choices=["InfiniBand", "Ethernet"]),
    fail_on_warnings=dict(type="bool", default=False),
    strict=dict(type="bool", default=False),
)


def main():
    module = AnsibleModule(
        argument_spec=ARGUMENT_SPEC,
        mutually_exclusive=[("env", "path")],
        required_one_of=[("env", "path")],
        supports_check_mode=True,
    )
    respond(module, run_env_lint, module.params, module.check_mode)


if __name__ == "__main__":
    main()
