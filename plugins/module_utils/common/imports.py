# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which of the collection's module_utils a program needs: the closure of its imports (read from the source).

The standalone programs the roles install on hosts (the schedule runner, the sweep) run on copies of these
module_utils; the copy is the closure of the program's own module, computed here from the import statements,
so a new import can never leave a host without the module it needs (filter ``module_utils_closure``).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import ast
import os
import posixpath

PREFIX = "ansible_collections.ibtune.fabric.plugins.module_utils"


def module_imports(source):
    """The '<package>/<module>' names one module_utils source imports (module level or inside functions)."""
    found = set()
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.ImportFrom) or not (node.module or "").startswith(PREFIX):
            continue
        rest = [p for p in node.module[len(PREFIX) :].split(".") if p]
        if len(rest) == 1:  # from ...module_utils.<pkg> import <mod>[, <mod>]
            found.update("%s/%s" % (rest[0], alias.name) for alias in node.names)
        elif len(rest) >= 2:  # from ...module_utils.<pkg>.<mod> import <names>
            found.add("%s/%s" % (rest[0], rest[1]))
    return found


def closure(root, starts):
    """Every '<package>/<module>' that ``starts`` need, themselves included, sorted; ``root`` is the
    module_utils directory. ValueError names a module that does not exist."""
    seen = set()
    todo = list(starts)
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        path = os.path.join(root, name + ".py")
        if not os.path.isfile(path):
            raise ValueError("module_utils %s does not exist (no %s)" % (name, path))
        seen.add(name)
        with open(path) as handle:
            todo.extend(module_imports(handle.read()))
    return sorted(seen)


def package_dirs(modules, namespace):
    """The directories a copy of ``modules`` ('<package>/<module>') needs: the ``namespace`` packages
    (ansible_collections/..., the module_utils directory last), then each module's package directory under the
    last one, once, in the order first named (compared ignoring case, as Jinja's unique compared them)."""
    out, seen = list(namespace), set()
    for name in modules or []:
        package = posixpath.dirname(name)
        if package.lower() not in seen:
            seen.add(package.lower())
            out.append("%s/%s" % (namespace[-1], package))
    return out
