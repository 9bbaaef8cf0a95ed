#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: report_run
short_description: Make this run's report folder on the controller, keep a latest link and old runs up to a limit
version_added: 0.2.0
description:
  - Runs on the controller (an action plugin). Creates O(base) if needed and refuses, in one sentence naming
    O(variable) and the fix, a base that is a file, cannot be created or is not writable - before anything else
    of the run happens.
  - Every run gets its own folder C(<base>/<run id>) (a second run with the same id gets C(-2), C(-3)...);
    C(<base>/latest) is a symbolic link to the newest. Only folders this module made (they carry a
    C(.ibtune-run) marker) are ever removed by retention.
  - The collection's playbooks run it in their preflight; fabric_validate then writes into RV(run_dir).
extends_documentation_fragment:
  - ibtune.fabric.attributes
attributes:
  action:
    description: Indicates this has a corresponding action plugin so some parts of the options can be executed
      on the controller.
    support: full
  check_mode:
    support: full
    details: Checks the base and returns where the run would write; creates nothing.
  diff_mode:
    support: none
  idempotent:
    description: When run twice in a row with the same arguments, the second run reports no change.
    support: none
    details: Every run makes a new folder, by design.
options:
  base:
    description: The report directory (the collection's default is C(ibtune-reports) under the current directory).
    type: path
    required: true
  run_id:
    description: The run's folder name; empty means the UTC time (C(20261202T003512Z)).
    type: str
    default: ''
  keep:
    description: How many runs to keep, this one included (C(0) keeps every run).
    type: int
    default: 20
  variable:
    description: The variable O(base) came from, named in errors.
    type: str
    default: ibtune_report_dir
author:
  - ibtune.fabric contributors (@ibtune)
"""

EXAMPLES = r"""
- name: This run's report folder
  ibtune.fabric.report_run:
    base: "{{ ibtune_report_dir | default(lookup('ansible.builtin.env', 'PWD') ~ '/ibtune-reports') }}"
    keep: "{{ ibtune_report_keep | default(20) }}"
  register: ibtune_run
"""

RETURN = r"""
base:
  description: The report directory, absolute.
  returned: always
  type: str
run_id:
  description: This run's folder name.
  returned: always
  type: str
  sample: 20261202T003512Z
run_dir:
  description: This run's folder.
  returned: always
  type: str
latest:
  description: The link to the newest run.
  returned: always
  type: str
removed:
  description: The old runs retention removed.
  returned: always
  type: list
  elements: str
"""
