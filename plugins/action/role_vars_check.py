# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Controller side of ibtune.fabric.role_vars_check: the host's variables against a role's argument_specs."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

import yaml
from ansible.errors import AnsibleActionFail
from ansible.module_utils.common.arg_spec import ArgumentSpecValidator
from ansible.plugins.action import ActionBase
from ansible_collections.ibtune.fabric.plugins.module_utils.common.role_vars import (
    check,
    invalid_values,
    spec_options,
    summary,
)


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    _requires_connection = False

    ARGUMENT_SPEC = dict(
        role=dict(type="str"),
        prefix=dict(type="str"),
        argument_specs=dict(type="path"),
        entry_point=dict(type="str", default="main"),
        strict=dict(type="list", elements="str", default=[]),
        ignore=dict(type="list", elements="str", default=[]),
        validate=dict(type="bool", default=False),
    )

    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        task_vars = task_vars or {}
        args = self.validate_argument_spec(argument_spec=self.ARGUMENT_SPEC)[1]
        role = self._task._role
        name = args["role"] or (role.get_name(include_role_fqcn=False) if role else None)
        spec_path = args["argument_specs"] or (
            os.path.join(role._role_path, "meta", "argument_specs.yml") if role else None
        )
        if not name or not spec_path:
            raise AnsibleActionFail("role_vars_check runs outside a role here: give role and argument_specs.")
        try:
            with open(spec_path, encoding="utf-8") as handle:
                options = spec_options(yaml.safe_load(handle), args["entry_point"])
        except (OSError, yaml.YAMLError, ValueError) as exc:
            raise AnsibleActionFail("role_vars_check cannot read %s: %s" % (spec_path, exc))
        prefix = args["prefix"] or name + "_"
        # Only dict options that declare their keys are rendered; every other value stays untouched.
        names = [n for n in task_vars if n.startswith(prefix)]
        variables = {}
        for n in names:
            variables[n] = self._templar.template(task_vars[n]) if (options.get(n) or {}).get("options") else None
        findings = check(variables, options, prefix, name, args["strict"], args["ignore"])
        if args["validate"]:
            # The values against the spec (types, choices, required), as Ansible's own role validation does,
            # but reported in one sentence per bad variable instead of the whole spec.
            given = {}
            for n in options:
                if n in task_vars:
                    try:
                        given[n] = self._templar.template(task_vars[n])
                    except Exception as exc:  # noqa: BLE001 - an undefined or broken template is itself the finding
                        raise AnsibleActionFail("%s of role %s does not render: %s" % (n, name, exc))
            # Ansible templates a role's spec before validating it, so a templated default such as
            # "{{ x | default(none) }}" ends up None and a None value is then accepted; the effective values are
            # what is checked here, so the defaults are dropped to the same effect.
            errors = (
                ArgumentSpecValidator(_without_defaults(options))
                .validate(given, validate_role_argument_spec=True)
                .error_messages
            )
            findings += invalid_values(errors, name, "roles/%s/meta/argument_specs.yml" % name)
        warnings = [f["msg"] for f in findings if f["severity"] == "warning"]
        if warnings:
            result["warnings"] = warnings
        result.update(changed=False, unknown=findings, msg=summary(findings, name))
        if any(f["severity"] == "error" for f in findings):
            result["failed"] = True
        return result


def _without_defaults(options):
    """The spec with every ``default`` removed, nested ``options`` included."""
    out = {}
    for name, spec in options.items():
        spec = dict(spec)
        spec.pop("default", None)
        if isinstance(spec.get("options"), dict):
            spec["options"] = _without_defaults(spec["options"])
        out[name] = spec
    return out
