"""roles/fabric_qos/tasks/check.yml run for real over the local connection: it reads nccl.conf with the collection's
parse_conf (through qos_check's nccl_conf), and works on an InfiniBand host too (no RoCE ports, no roce_qos result)."""

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
CHECK = ROOT / "roles" / "fabric_qos" / "tasks" / "check.yml"


def _run(tmp_path, conf_text, model):
    conf = tmp_path / "nccl.conf"
    conf.write_text(conf_text)
    play = tmp_path / "play.yml"
    play.write_text("- hosts: all\n  gather_facts: false\n  tasks:\n    - ansible.builtin.include_tasks: %s\n" % CHECK)
    env = dict(os.environ)
    env.update(
        ANSIBLE_CONFIG=str(ROOT / "ansible.cfg"),
        ANSIBLE_COLLECTIONS_PATH=str(ROOT / ".collections"),
        ANSIBLE_NOCOLOR="True",
        PATH=str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", ""),
    )
    extra = {"__fabric_qos_model": model, "fabric_qos_check_nccl_conf": str(conf)}
    return subprocess.run(
        [
            str(Path(sys.executable).with_name("ansible-playbook")),
            "-i",
            "ib01,",
            "-c",
            "local",
            "-e",
            "ansible_python_interpreter=%s" % sys.executable,
            "-e",
            json.dumps(extra),
            str(play),
        ],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )


def test_infiniband_host_sl_override_contradicting_the_model_fails(tmp_path):
    out = _run(tmp_path, "NCCL_IB_SL=5\n", {"mode": "infiniband", "ib_sl": 3})
    assert out.returncode == 2, out.stdout[-2000:]
    assert "NCCL_IB_SL=5, but the QoS model puts NCCL on SL 3: set NCCL_IB_SL=3." in out.stdout


def test_file_is_read_as_nccl_reads_it_first_line_wins(tmp_path):
    """A Jinja dict() of the lines would keep the last NCCL_IB_SL; NCCL keeps the first."""
    out = _run(tmp_path, "# QoS\nNCCL_IB_SL=3\nNCCL_IB_SL=5\n", {"mode": "infiniband", "ib_sl": 3})
    assert out.returncode == 0, out.stdout[-2000:]
    assert "NCCL keeps the first value (line 2)" in out.stdout + out.stderr
