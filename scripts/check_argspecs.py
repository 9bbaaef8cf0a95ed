#!/usr/bin/env python3
"""Fail when a role's defaults/main.yml and meta/argument_specs.yml disagree.

Like prometheus.prometheus' lint_arguments_spec.sh: every default must be declared in the
argument spec of the role's `main` entry point with the same default, and every option that
is declared with a default must exist in defaults. Variables starting with `__` are internal.
"""

import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent


def check_role(role_dir):
    problems = []
    defaults_file = role_dir / "defaults" / "main.yml"
    spec_file = role_dir / "meta" / "argument_specs.yml"
    if not spec_file.is_file():
        return ["%s: meta/argument_specs.yml is missing" % role_dir.name]
    defaults = {}
    if defaults_file.is_file():
        defaults = yaml.safe_load(defaults_file.read_text()) or {}
    spec = yaml.safe_load(spec_file.read_text()) or {}
    options = ((spec.get("argument_specs") or {}).get("main") or {}).get("options") or {}
    for name, value in defaults.items():
        if name.startswith("__"):
            continue
        if name not in options:
            problems.append("%s: default %s is not declared in meta/argument_specs.yml" % (role_dir.name, name))
            continue
        declared = options[name]
        if "default" in declared and declared["default"] != value:
            problems.append(
                "%s: %s defaults to %r in defaults/main.yml but %r in argument_specs"
                % (role_dir.name, name, value, declared["default"])
            )
        if "default" not in declared and not declared.get("required") and value is not None:
            problems.append(
                "%s: %s has a default (%r) that argument_specs does not state" % (role_dir.name, name, value)
            )
    for name, declared in options.items():
        if "default" in declared and name not in defaults:
            problems.append(
                "%s: %s has an argument_specs default but no entry in defaults/main.yml" % (role_dir.name, name)
            )
        if not declared.get("description"):
            problems.append("%s: %s has no description in argument_specs" % (role_dir.name, name))
    return problems


def main():
    problems = []
    roles = sorted(p for p in (ROOT / "roles").iterdir() if p.is_dir() and not p.name.startswith("_"))
    for role in roles:
        problems.extend(check_role(role))
    for problem in problems:
        print(problem)
    print("argument_specs: %d roles checked, %d problems" % (len(roles), len(problems)))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
