# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Misspelled role variables: names that carry a role's prefix but are not in its argument_specs.

Ansible ignores a variable no role reads, so ``rdma_stack_gdrr: dmabuf`` silently leaves the default in force.
``check()`` compares the variables a host has with a role's ``meta/argument_specs.yml`` entry point and returns
one finding per unknown name (and per unknown key of a dict option that declares its ``options``), each with a
did-you-mean. Pure functions; the action plugin ``ibtune.fabric.role_vars_check`` gathers the variables.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import difflib


def spec_options(argument_specs, entry_point="main"):
    """The ``options`` of one entry point of a parsed meta/argument_specs.yml (its top level or its
    ``argument_specs`` key); ValueError naming the entry point when it is missing."""
    specs = (argument_specs or {}).get("argument_specs", argument_specs) or {}
    if entry_point not in specs:
        raise ValueError(
            "argument_specs has no entry point %r (it has %s): give entry_point."
            % (entry_point, ", ".join(sorted(specs)) or "none")
        )
    return (specs[entry_point] or {}).get("options") or {}


def suggest(name, candidates):
    """The closest candidate to name (difflib), or None."""
    found = difflib.get_close_matches(name, sorted(candidates), n=1, cutoff=0.6)
    return found[0] if found else None


def _finding(path, where, suggestion, strict, role):
    top = path.split(".")[0]
    intended = suggestion.split(".")[0] if suggestion else None
    gate = top if top in strict else (intended if intended in strict else None)
    msg = "%s is not %s of role %s (meta/argument_specs.yml), so it has no effect%s: rename or remove it." % (
        path,
        where,
        role,
        " (did you mean %s?)" % suggestion if suggestion else "",
    )
    if gate:
        msg += " This fails the play because %s decides what the role changes or checks." % gate
    return {"name": path, "suggestion": suggestion, "severity": "error" if gate else "warning", "msg": msg}


def _check_dict(path, value, option, strict, role, out):
    suboptions = option.get("options")
    if not suboptions or not isinstance(value, dict):
        return
    for key in sorted(value, key=str):
        full = "%s.%s" % (path, key)
        if key in suboptions:
            _check_dict(full, value[key], suboptions[key] or {}, strict, role, out)
            continue
        guess = suggest(str(key), suboptions)
        out.append(_finding(full, "a key of %s" % path, "%s.%s" % (path, guess) if guess else None, strict, role))


def check(variables, options, prefix, role, strict=(), ignore=()):
    """Findings for the variables (a mapping of name -> value) that carry prefix but are unknown to options.

    - a name that starts with prefix and is not an option (nor in ignore): a finding, did-you-mean from options;
    - a known dict option whose spec declares ``options``: each unknown key (recursively) is a finding;
    - severity ``error`` when the name or its did-you-mean is in strict (a typo there silently changes safety),
      ``warning`` otherwise. Internal names (``__role_...``) never start with the prefix and are not checked.
    """
    strict, ignore = set(strict or ()), set(ignore or ())
    out = []
    for name in sorted(variables):
        if not name.startswith(prefix) or name in ignore:
            continue
        if name in options:
            _check_dict(name, variables[name], options[name] or {}, strict, role, out)
            continue
        out.append(_finding(name, "a variable", suggest(name, options), strict, role))
    return out


def invalid_values(error_messages, role, spec_path="meta/argument_specs.yml"):
    """Ansible's argument-spec error messages as findings (severity error), one sentence each, naming the role
    and where the allowed values are documented, instead of the spec dump Ansible prints with them."""
    out = []
    for message in error_messages:
        message = message.strip().rstrip(".")
        out.append(
            {
                "name": None,
                "suggestion": None,
                "severity": "error",
                "msg": "Role %s: %s; set an allowed value in the inventory (see %s)." % (role, message, spec_path),
            }
        )
    return out


def summary(findings, role):
    """One line for the task: the errors (which fail it) or the count of warnings."""
    errors = [f for f in findings if f["severity"] == "error"]
    if errors:
        return " ".join(f["msg"] for f in errors)
    if findings:
        return "%d unknown %s variable(s): %s" % (len(findings), role, ", ".join(f["name"] for f in findings))
    return "every %s variable is declared in its argument_specs" % role
