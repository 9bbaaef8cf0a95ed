#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: role_vars_check
short_description: Warn on role variables that are misspelled (not in the role's argument_specs)
version_added: 0.1.0
description:
  - Runs on the controller (an action plugin). Every variable the host has that starts with the role's prefix
    (O(prefix), default C(<role>_)) but is not an option of the role's C(meta/argument_specs.yml) is reported with
    a did-you-mean (the closest declared name); Ansible would otherwise ignore it silently and keep the default.
  - For a dict option whose spec declares its C(options), unknown keys are reported the same way.
  - A finding is a warning, or an error that fails the task when the variable or its did-you-mean is named in
    O(strict), that is where a typo would silently change what the role does to the host or what it checks.
  - Internal variables (C(__<role>_...)) do not carry the prefix and are never reported.
  - Role-internal - the collection's roles run it first, through their dependency C(vars_check).
extends_documentation_fragment:
  - ibtune.fabric.attributes
  - ibtune.fabric.attributes.READ_ONLY
attributes:
  action:
    description: Indicates this has a corresponding action plugin so some parts of the options can be executed
      on the controller.
    support: full
options:
  role:
    description: The role's name (default the role the task belongs to).
    type: str
  prefix:
    description: The prefix of the role's variables (default C(<role>_)).
    type: str
  argument_specs:
    description: Path of the role's C(meta/argument_specs.yml) (default that of the role the task belongs to).
    type: path
  entry_point:
    description: The entry point of the argument specs.
    type: str
    default: main
  strict:
    description:
      - Variables whose misspelling fails the task instead of warning (a typo of one of them, or an unknown key
        inside one of them, is an error).
    type: list
    elements: str
    default: []
  ignore:
    description: Variables with the prefix that are not the role's and are known elsewhere (never reported).
    type: list
    elements: str
    default: []
  validate:
    description:
      - Also validate the values of the role's variables against the spec (types, choices, required) and fail
        with one sentence per bad variable, instead of the spec dump Ansible's own role validation prints.
      - The roles run it from their private dependency C(_vars_check), which runs before Ansible's validation.
    type: bool
    default: false
author:
  - ibtune.fabric contributors (@ibtune)
"""

EXAMPLES = r"""
- name: Misspelled rdma_stack variables
  ibtune.fabric.role_vars_check:
    strict: [rdma_stack_gdr, rdma_stack_allow_reboot]
"""

RETURN = r"""
unknown:
  description: One finding per unknown variable or key.
  returned: always
  type: list
  elements: dict
  sample:
    - name: rdma_stack_gdrr
      suggestion: rdma_stack_gdr
      severity: error
      msg: >-
        rdma_stack_gdrr is not a variable of role rdma_stack (meta/argument_specs.yml), so it has no effect
        (did you mean rdma_stack_gdr?): rename or remove it.
msg:
  description: The errors, or a summary of the warnings.
  returned: always
  type: str
"""
