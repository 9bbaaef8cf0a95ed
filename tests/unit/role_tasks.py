"""Run one entry point of one of the collection's roles on localhost with a real ansible-playbook (check mode,
the local connection, this interpreter), through playbook_process's guard: the preflight tests of the roles."""

import os
import sys
from pathlib import Path

from tests.unit.playbook_process import run_playbook

ROOT = Path(__file__).resolve().parents[2]


def run_role_tasks(tmp_path, role, tasks_from, extra_vars=(), timeout=120):
    """(rc, stdout + stderr) of ``include_role: {name: ibtune.fabric.<role>, tasks_from: <tasks_from>}``;
    ``extra_vars``: the -e arguments, each a key=value string or a JSON document."""
    play = tmp_path / "pb.yml"
    play.write_text(
        "- hosts: localhost\n  gather_facts: false\n  tasks:\n"
        "    - ansible.builtin.include_role: {name: ibtune.fabric.%s, tasks_from: %s}\n" % (role, tasks_from)
    )
    env = dict(
        os.environ, ANSIBLE_CONFIG=str(ROOT / "ansible.cfg"), ANSIBLE_COLLECTIONS_PATH=str(ROOT / ".collections")
    )
    argv = [str(Path(sys.executable).with_name("ansible-playbook")), "-i", "localhost,", "-c", "local", str(play)]
    argv += ["-e", "ansible_python_interpreter=%s" % sys.executable, "--check"]
    for item in extra_vars:
        argv += ["-e", item]
    proc = run_playbook(argv, timeout=timeout, env=env)
    return proc.returncode, proc.stdout + proc.stderr
