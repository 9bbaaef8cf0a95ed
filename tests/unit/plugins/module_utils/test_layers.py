"""The module_utils packages are layered in the order data flows: imports only go down, never in a cycle.

A package may import its own modules and packages of a LOWER layer. Two packages of the same layer never
import each other (perftest and nccl are both tools a host runs; subnet and qos both read the fabric's own
configuration). The layers are written down in each package's __init__ docstring and in
docs/dev/ARCHITECTURE.md; this table is the one the test enforces.
"""

import ast
from pathlib import Path

import pytest

MODULE_UTILS = Path(__file__).resolve().parents[4] / "plugins" / "module_utils"
PREFIX = "ansible_collections.ibtune.fabric.plugins.module_utils"
LAYERS = {
    "common": 0,
    "host": 1,
    "perftest": 2,
    "nccl": 2,
    "subnet": 3,
    "qos": 3,
    "phy": 3,
    "validate": 4,
    "report": 5,
    "slurm": 6,
    "monitoring": 6,
}


def _modules():
    return sorted(p for p in MODULE_UTILS.rglob("*.py") if p.name != "__init__.py")


def _name(path):
    return "/".join(path.relative_to(MODULE_UTILS).with_suffix("").parts)


def collection_imports(path):
    """The <package>/<module> names a module_utils file imports (module-level or inside functions)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith(PREFIX):
            rest = node.module[len(PREFIX) :].lstrip(".").split(".")
            if len(rest) == 1 and rest[0]:  # from ...module_utils.<pkg> import <mod>[, <mod>]
                found.update("%s/%s" % (rest[0], alias.name) for alias in node.names)
            elif len(rest) >= 2:  # from ...module_utils.<pkg>.<mod> import <names>
                found.add("%s/%s" % (rest[0], rest[1]))
            else:
                found.add("?/" + ",".join(a.name for a in node.names))
        elif isinstance(node, ast.Import):
            found.update("?/" + a.name for a in node.names if a.name.startswith(PREFIX))
    return found


GRAPH = {_name(p): collection_imports(p) for p in _modules()}


def test_every_module_lives_in_a_layered_package():
    assert not [p for p in MODULE_UTILS.glob("*.py") if p.name != "__init__.py"], "no flat module_utils files"
    assert {name.split("/")[0] for name in GRAPH} == set(LAYERS)


@pytest.mark.parametrize("package", sorted(LAYERS))
def test_each_package_says_what_it_owns_and_runs_nothing(package):
    init = MODULE_UTILS / package / "__init__.py"
    tree = ast.parse(init.read_text())
    doc = ast.get_docstring(tree)
    assert doc and ("Layer %d" % LAYERS[package]) in doc, "%s/__init__.py: a docstring naming its layer" % package
    assert len(tree.body) == 1, (
        "%s/__init__.py holds only its docstring (AnsiballZ ships it with every module)" % package
    )


def test_imports_only_go_down():
    upward = []
    for name, imports in GRAPH.items():
        pkg = name.split("/")[0]
        for target in imports:
            tpkg = target.split("/")[0]
            if target not in GRAPH:
                upward.append("%s imports %s, which is not a module_utils module" % (name, target))
            elif tpkg != pkg and LAYERS[tpkg] >= LAYERS[pkg]:
                upward.append("%s (layer %d) imports %s (layer %d)" % (name, LAYERS[pkg], target, LAYERS[tpkg]))
    assert not upward, "\n".join(sorted(upward))


def test_no_import_cycle():
    state, cycles = {}, []

    def visit(node, stack):
        state[node] = "open"
        for nxt in sorted(GRAPH.get(node, ())):
            if state.get(nxt) == "open":
                cycles.append(" -> ".join(stack[stack.index(nxt) :] + [nxt]))
            elif nxt in GRAPH and nxt not in state:
                visit(nxt, stack + [nxt])
        state[node] = "done"

    for node in sorted(GRAPH):
        if node not in state:
            visit(node, [node])
    assert not cycles, cycles


def test_nothing_imports_another_modules_private_names():
    """A leading underscore is private to its module: no other module_utils file (nor plugin) imports it."""
    offenders = []
    roots = [MODULE_UTILS.parent, MODULE_UTILS.parents[1] / "tests", MODULE_UTILS.parents[1] / "bench"]
    for root in roots:
        for path in root.rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(), str(path))):
                if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith(PREFIX):
                    private = [a.name for a in node.names if a.name.startswith("_")]
                    if private:
                        offenders.append(
                            "%s: %s from %s" % (path.name, ", ".join(private), node.module[len(PREFIX) + 1 :])
                        )
    assert not offenders, "\n".join(sorted(offenders))


def test_the_checker_sees_an_upward_import(tmp_path):
    """The rule above can fail: a file importing the report from validate is caught."""
    bad = tmp_path / "x.py"
    bad.write_text("from %s.report import build\nfrom %s.validate.join import join_pass\n" % (PREFIX, PREFIX))
    assert collection_imports(bad) == {"report/build", "validate/join"}
