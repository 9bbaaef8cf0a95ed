"""What the standalone programs' roles copy onto hosts: the closure of the program's imports (filter
module_utils_closure), checked against the import graph test_layers reads on its own."""

import sys
from pathlib import Path

import pytest
import yaml

from ansible_collections.ibtune.fabric.plugins.filter.install import module_utils_closure, module_utils_dirs
from ansible_collections.ibtune.fabric.plugins.module_utils.common import imports

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "tests" / "unit" / "plugins" / "module_utils"))
from test_layers import GRAPH  # noqa: E402

from tests.unit.jinja_harness import render, task  # noqa: E402


def graph_closure(start):
    seen, todo = set(), [start]
    while todo:
        name = todo.pop()
        if name not in seen:
            seen.add(name)
            todo.extend(GRAPH[name])
    return sorted(seen)


@pytest.mark.parametrize("program", ["validate/runner", "slurm/sweep_run"])
def test_the_closure_is_every_module_the_program_imports(program):
    assert module_utils_closure([program]) == graph_closure(program)


def test_the_runner_role_installs_the_runners_closure_and_runs_its_main():
    listed = yaml.safe_load((ROOT / "roles" / "schedule_runner" / "vars" / "main.yml").read_text())
    assert listed["__schedule_runner_modules"] == "{{ ['validate/runner'] | ibtune.fabric.module_utils_closure }}"
    text = (ROOT / "roles" / "schedule_runner" / "templates" / "ibtune-schedule.j2").read_text()
    assert "module_utils.validate.runner import main" in text


def test_module_imports_reads_both_import_forms_and_a_missing_module_is_named(tmp_path):
    source = (
        "from ansible_collections.ibtune.fabric.plugins.module_utils.host import process\n"
        "def f():\n"
        "    from ansible_collections.ibtune.fabric.plugins.module_utils.perftest.kinds import parse\n"
        "import json\n"
    )
    assert imports.module_imports(source) == {"host/process", "perftest/kinds"}
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "x.py").write_text("from ansible_collections.ibtune.fabric.plugins.module_utils.b import y\n")
    with pytest.raises(ValueError, match="module_utils b/y does not exist"):
        imports.closure(str(tmp_path), ["a/x"])


def test_the_package_directories_are_those_the_old_expression_made():
    old = (
        "{{ __schedule_runner_packages + schedule_runner_module_utils | map('dirname') | unique"
        " | map('regex_replace', '^', __schedule_runner_packages | last ~ '/') | list }}"
    )
    namespace = yaml.safe_load((ROOT / "roles" / "schedule_runner" / "vars" / "main.yml").read_text())
    namespace = namespace["__schedule_runner_packages"]
    cases = [[], module_utils_closure(["validate/runner"]), module_utils_closure(["slurm/sweep_run"])]
    cases.append(["validate/runner", "Host/x", "host/process", "validate/schedule", "common/files"])
    for modules in cases:
        variables = dict(__schedule_runner_packages=namespace, schedule_runner_module_utils=modules)
        assert module_utils_dirs(modules, namespace) == render(old, **variables), modules
    task_ = task("schedule_runner", "module_utils.yml", "Create the package directories")
    wired = task_["vars"]["__schedule_runner_package_dirs"]
    assert wired == "{{ schedule_runner_module_utils | ibtune.fabric.module_utils_dirs(__schedule_runner_packages) }}"
