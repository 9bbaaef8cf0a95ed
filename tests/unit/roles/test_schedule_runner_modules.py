"""roles/schedule_runner installs exactly the module_utils the runner imports (their closure), so the program on
the nodes can never miss a module a change adds to the runner's imports."""

import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "tests" / "unit" / "plugins" / "module_utils"))
from test_layers import GRAPH  # noqa: E402


def closure(start):
    seen, todo = set(), [start]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        todo.extend(GRAPH[name])
    return seen


def test_the_runners_install_list_is_its_import_closure():
    listed = yaml.safe_load((ROOT / "roles" / "schedule_runner" / "vars" / "main.yml").read_text())
    assert set(listed["__schedule_runner_modules"]) == closure("validate/runner")


def test_the_template_runs_the_runners_main():
    text = (ROOT / "roles" / "schedule_runner" / "templates" / "ibtune-schedule.j2").read_text()
    assert "module_utils.validate.runner import main" in text
