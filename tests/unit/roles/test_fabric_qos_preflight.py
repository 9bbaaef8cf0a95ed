"""fabric_qos's preflight, run by a real ansible-playbook on localhost: a bad variable fails naming that one only."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]


def _preflight(tmp_path, extra):
    play = tmp_path / "pb.yml"
    play.write_text(
        "- hosts: localhost\n  gather_facts: false\n  tasks:\n"
        "    - ansible.builtin.include_role: {name: ibtune.fabric.fabric_qos, tasks_from: preflight}\n"
    )
    env = dict(
        os.environ, ANSIBLE_CONFIG=str(ROOT / "ansible.cfg"), ANSIBLE_COLLECTIONS_PATH=str(ROOT / ".collections")
    )
    argv = [str(Path(sys.executable).with_name("ansible-playbook")), "-i", "localhost,", "-c", "local", str(play)]
    argv += ["-e", "ansible_python_interpreter=%s" % sys.executable, "--check"]
    for item in extra:
        argv += ["-e", item]
    proc = subprocess.run(argv, check=False, env=env, capture_output=True, text=True, timeout=120)
    return proc.returncode, proc.stdout + proc.stderr


def test_defaults_pass(tmp_path):
    rc, out = _preflight(tmp_path, [])
    assert rc == 0, out[-3000:]


@pytest.mark.parametrize(
    "extra,name,want",
    [
        (
            '{"fabric_qos_switch_roce_bw_percent": 150}',
            "fabric_qos_switch_roce_bw_percent=150",
            "must be 1..99 (traffic class 0 gets the rest)",
        ),
        ("fabric_qos_opensm_conf=opensm.conf", 'fabric_qos_opensm_conf="opensm.conf"', "must be an absolute path"),
    ],
)
def test_a_bad_variable_is_named_alone(tmp_path, extra, name, want):
    rc, out = _preflight(tmp_path, [extra])
    assert rc != 0
    failed = [line for line in out.splitlines() if line.startswith("[ERROR]")]
    assert len(failed) == 1, out[-3000:]
    assert "fabric_qos: %s on localhost %s." % (name, want) in failed[0]
    # the message names no other variable of the role
    others = {w for w in failed[0].replace("=", " ").split() if w.startswith("fabric_qos_")} - {name.split("=")[0]}
    assert others == set(), failed[0]
