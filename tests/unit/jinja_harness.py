"""Render Jinja as a task does (ansible-core's Templar: its builtin filters and tests), so a test can pin what an
expression moved out of a role's tasks returned and compare the filter that replaced it (issue 26 part 5).

``render`` templates one expression with the given variables (an undefined one stays undefined, as in a play);
``task_vars`` renders the ``vars`` of one task of a role's task file with them, as Ansible does before the task's
own expression reads them.
"""

import functools
from pathlib import Path

import yaml
from ansible.parsing.dataloader import DataLoader
from ansible.template import Templar, trust_as_template

ROOT = Path(__file__).resolve().parents[2]
# A variable left undefined in a case (``defined`` drops it), as a register of a task that never ran.
UNSET = object()


def defined(**variables):
    return {key: value for key, value in variables.items() if value is not UNSET}


def render(expression, **variables):
    return Templar(loader=DataLoader(), variables=variables).template(trust_as_template(expression))


def _trusted(node):
    if isinstance(node, str):
        return trust_as_template(node)
    if isinstance(node, list):
        return [_trusted(item) for item in node]
    if isinstance(node, dict):
        return {key: _trusted(value) for key, value in node.items()}
    return node


@functools.cache
def _tasks(path):
    return yaml.safe_load(path.read_text())


def task(role, tasks_file, name):
    """The task called ``name`` in roles/<role>/tasks/<tasks_file> (top level or inside a block)."""
    path = ROOT / "roles" / role / "tasks" / tasks_file
    stack = list(_tasks(path))
    while stack:
        item = stack.pop(0)
        if item.get("name") == name:
            return item
        stack.extend(item.get("block") or [])
    raise AssertionError("no task %r in %s" % (name, path))


def task_vars(role, tasks_file, name, only=None, **variables):
    """The task's ``vars`` (those named in ``only``, else all), rendered with ``variables``."""
    templar = Templar(loader=DataLoader(), variables=variables)
    wanted = task(role, tasks_file, name)["vars"].items()
    return {key: templar.template(_trusted(value)) for key, value in wanted if only is None or key in only}
