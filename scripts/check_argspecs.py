#!/usr/bin/env python3
"""Fail when a role's defaults/main.yml and meta/argument_specs.yml disagree, or an entry point has no spec.

Like prometheus.prometheus' lint_arguments_spec.sh: every default must be declared in the
argument spec of the role's `main` entry point with the same default, and every option that
is declared with a default must exist in defaults. Variables starting with `__` are internal.

Entry points: every tasks file another play or role includes with `tasks_from` (found in the repository's
YAML, and in test code that writes plays) needs its own entry point in argument_specs, because Ansible
validates only the entry point a role is entered by (`tasks_from: preflight` validates `preflight`, nothing
else; `tasks_from: preflight.yml` looks for an entry point named `preflight.yml`, so it is refused here). An
entry point declares exactly the role's options its tasks read (the file, the files it includes or imports,
their templates, and the role's `__` variables they use), each the same as in `main` (write it as a YAML
alias of main's option: `name: *name`).
"""

import re
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
# where plays that include a role's tasks live (docs are prose: their examples are not checked)
CALLER_DIRS = ("roles", "playbooks", "molecule", "tests", "inventories")
PY_TASKS_FROM = re.compile(r"ibtune\.fabric\.(?P<role>\w+)\W{1,20}?tasks_from:\s*(?P<entry>[\w.]+)")
INCLUDE_KEYS = ("include_tasks", "import_tasks", "ansible.builtin.include_tasks", "ansible.builtin.import_tasks")
TEMPLATE_KEYS = ("template", "ansible.builtin.template")
ROLE_KEYS = ("include_role", "import_role", "ansible.builtin.include_role", "ansible.builtin.import_role")


def load_yaml(path):
    try:
        return yaml.safe_load(path.read_text()) or {}
    except (yaml.YAMLError, UnicodeDecodeError):
        return {}


def specs_of(role_dir):
    return (load_yaml(role_dir / "meta" / "argument_specs.yml").get("argument_specs")) or {}


def check_defaults(role_dir):
    problems = []
    defaults_file = role_dir / "defaults" / "main.yml"
    spec_file = role_dir / "meta" / "argument_specs.yml"
    if not spec_file.is_file():
        return ["%s: meta/argument_specs.yml is missing" % role_dir.name]
    defaults = load_yaml(defaults_file) if defaults_file.is_file() else {}
    options = (specs_of(role_dir).get("main") or {}).get("options") or {}
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


# --- entry points ---------------------------------------------------------------------------------------------


def _walk(node):
    """Every dict in a parsed YAML document."""
    if isinstance(node, dict):
        yield node
        for value in node.values():
            yield from _walk(value)
    elif isinstance(node, list):
        for value in node:
            yield from _walk(value)


def _role_includes(document):
    """(role, tasks_from) of every include_role/import_role of an ibtune.fabric role in a YAML document."""
    for node in _walk(document):
        for key in ROLE_KEYS:
            args = node.get(key)
            if (
                isinstance(args, dict)
                and args.get("tasks_from")
                and str(args.get("name", "")).startswith("ibtune.fabric.")
            ):
                yield args["name"].split(".")[-1], str(args["tasks_from"])


def entry_points_used(root=ROOT):
    """{(role, tasks_from): [where]} for every tasks_from of an ibtune.fabric role in the repository."""
    used = {}
    for top in CALLER_DIRS:
        for path in sorted((root / top).rglob("*")):
            if ".collections" in path.parts or not path.is_file():
                continue
            found = []
            if path.suffix in (".yml", ".yaml"):
                found = list(_role_includes(load_yaml(path)))
            elif path.suffix == ".py":
                found = [(m["role"], m["entry"]) for m in PY_TASKS_FROM.finditer(path.read_text())]
            for role, entry in found:
                where = used.setdefault((role, entry), [])
                if str(path.relative_to(root)) not in where:
                    where.append(str(path.relative_to(root)))
    return used


def _tasks_file(role_dir, name):
    name = name if name.endswith((".yml", ".yaml")) else name + ".yml"
    return role_dir / "tasks" / name


def _files_read(role_dir, first):
    """The tasks files an entry point runs (includes and imports of static names) and their templates."""
    seen, queue = [], [first]
    while queue:
        path = queue.pop()
        if path in seen or not path.is_file():
            continue
        seen.append(path)
        for node in _walk(load_yaml(path)):
            for key in INCLUDE_KEYS:
                target = node.get(key)
                target = target.get("file") if isinstance(target, dict) else target
                if isinstance(target, str) and "{{" not in target:
                    queue.append(role_dir / "tasks" / target)
            for key in TEMPLATE_KEYS:
                args = node.get(key)
                if isinstance(args, dict) and isinstance(args.get("src"), str) and "{{" not in args["src"]:
                    queue.append(role_dir / "templates" / args["src"])
            for role, entry in _role_includes([node]):
                if role == role_dir.name:
                    queue.append(_tasks_file(role_dir, entry))
    return seen


def options_read(role_dir, entry):
    """The role's public option names the entry point's files read, directly or through its `__` variables
    (defined in vars/main.yml or defaults/main.yml)."""
    role = role_dir.name
    name_re = re.compile(r"\b(_{0,2}%s_[a-z0-9_]+)\b" % re.escape(role))
    internal = {}
    for source in (role_dir / "vars" / "main.yml", role_dir / "defaults" / "main.yml"):
        for key, value in (load_yaml(source) if source.is_file() else {}).items():
            if str(key).startswith("__"):
                internal[key] = set(name_re.findall(yaml.safe_dump(value)))
    names = set()
    for path in _files_read(role_dir, _tasks_file(role_dir, entry)):
        names.update(name_re.findall(path.read_text()))
    pending = [n for n in names if n in internal]
    while pending:
        for name in internal[pending.pop()]:
            if name not in names:
                names.add(name)
                if name in internal:
                    pending.append(name)
    return set(n for n in names if not n.startswith("__"))


def check_entry_points(roles_dir, used):
    problems = []
    for (role, entry), where in sorted(used.items()):
        role_dir = roles_dir / role
        if not role_dir.is_dir():
            continue
        if entry.endswith((".yml", ".yaml")):
            problems.append(
                "%s: tasks_from: %s in %s: Ansible then validates no entry point (write tasks_from: %s)"
                % (role, entry, ", ".join(where), entry.rsplit(".", 1)[0])
            )
            continue
        specs = specs_of(role_dir)
        if entry not in specs:
            problems.append(
                "%s: tasks_from: %s (%s) has no entry point %s in meta/argument_specs.yml"
                % (role, entry, ", ".join(where), entry)
            )
            continue
        problems.extend(check_entry_point(role_dir, entry, specs))
    for role_dir in sorted(p for p in roles_dir.iterdir() if p.is_dir()):
        specs = specs_of(role_dir)
        for entry in sorted(set(specs) - {"main"} - set(e for r, e in used if r == role_dir.name)):
            problems.extend(check_entry_point(role_dir, entry, specs))  # declared, not used: kept honest too
    return problems


def check_entry_point(role_dir, entry, specs):
    """The entry point declares the options its tasks read, each as main declares it."""
    role = role_dir.name
    main = (specs.get("main") or {}).get("options") or {}
    declared = (specs[entry] or {}).get("options") or {}
    problems = []
    if not (specs[entry] or {}).get("short_description"):
        problems.append("%s: entry point %s has no short_description" % (role, entry))
    # an entry point's own inputs (a shared step called with vars, e.g. schedule_runner's module_utils) are options
    # of that entry point alone: main need not declare them, but the entry point must read them
    wanted = set(n for n in options_read(role_dir, entry) if n in main or n in declared)
    for name in sorted(wanted - set(declared)):
        problems.append(
            "%s: entry point %s reads %s but does not declare it (add %s: *%s)" % (role, entry, name, name, name)
        )
    for name in sorted(set(declared) - wanted):
        problems.append("%s: entry point %s declares %s, which its tasks do not read" % (role, entry, name))
    for name in sorted(set(declared) & set(main)):
        if declared[name] != main[name]:
            problems.append(
                "%s: entry point %s declares %s unlike main (write %s: *%s)" % (role, entry, name, name, name)
            )
    return problems


def main():
    problems = []
    roles = sorted(p for p in (ROOT / "roles").iterdir() if p.is_dir() and not p.name.startswith("_"))
    for role in roles:
        problems.extend(check_defaults(role))
    used = entry_points_used()
    problems.extend(check_entry_points(ROOT / "roles", used))
    for problem in problems:
        print(problem)
    entries = sum(len(specs_of(role)) for role in roles)
    print(
        "argument_specs: %d roles, %d entry points (%d used with tasks_from) checked, %d problems"
        % (len(roles), entries, len(used), len(problems))
    )
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
