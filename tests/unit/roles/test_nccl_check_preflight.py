"""nccl_check's preflight, run by a real ansible-playbook on localhost: a Slurm name srun cannot take fails the play
before any group runs (a failed run would be bisected and a node blamed for it)."""

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]


def _preflight(tmp_path, extra):
    play = tmp_path / "pb.yml"
    play.write_text(
        "- hosts: localhost\n  gather_facts: false\n  tasks:\n"
        "    - ansible.builtin.include_role: {name: ibtune.fabric.nccl_check, tasks_from: preflight}\n"
    )
    env = dict(
        os.environ, ANSIBLE_CONFIG=str(ROOT / "ansible.cfg"), ANSIBLE_COLLECTIONS_PATH=str(ROOT / ".collections")
    )
    argv = [str(Path(sys.executable).with_name("ansible-playbook")), "-i", "localhost,", "-c", "local", str(play)]
    argv += ["-e", "ansible_python_interpreter=%s" % sys.executable, "--check"]
    variables = {"nccl_check_plans": ["per_rail"], "nccl_check_launch": "srun"}
    variables.update(extra)
    argv += ["-e", json.dumps(variables)]
    proc = subprocess.run(argv, check=False, env=env, capture_output=True, text=True, timeout=120)
    return proc.returncode, proc.stdout + proc.stderr


def test_slurm_names_pass_and_a_bad_one_fails_naming_it(tmp_path):
    good = {
        "nccl_check_slurm_partition": "gpu",
        "nccl_check_slurm_qos": "validation",
        "nccl_check_slurm_reservation": "m.1",
    }
    rc, out = _preflight(tmp_path, good)
    assert rc == 0, out[-3000:]
    rc, out = _preflight(tmp_path, dict(good, nccl_check_slurm_qos="high,low"))
    assert rc != 0
    assert "nccl_check_slurm_qos='high,low' is not a Slurm name (letters, digits, _ . + -)" in out, out[-3000:]
    assert "nccl_check_slurm_partition" not in out, out[-3000:]
    rc, out = _preflight(tmp_path, dict(good, nccl_check_slurm_partition="gpu\n"))
    assert rc != 0 and "nccl_check_slurm_partition='gpu\\n' is not a Slurm name" in out, out[-3000:]
