"""rdma_stack's derived repository URLs, rendered by a real ansible-playbook from roles/rdma_stack/vars/main.yml
with the facts of each distribution (no host is touched)."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]

PLAY = """
- hosts: localhost
  gather_facts: false
  tasks:
    - ansible.builtin.include_vars: {file: %(vars)s}
    - ansible.builtin.copy:
        content: "{{ {'mlnx_ofed': __rdma_stack_mlnx_ofed_repo, 'doca': __rdma_stack_doca_repo} | to_json }}"
        dest: %(out)s
        mode: "0644"
"""


def _repos(tmp_path, facts):
    play = tmp_path / "pb.yml"
    out = tmp_path / "out.json"
    play.write_text(PLAY % {"vars": ROOT / "roles" / "rdma_stack" / "vars" / "main.yml", "out": out})
    extra = {
        "ansible_facts": facts,
        "rdma_stack_source": "mlnx_ofed",
        "rdma_stack_mlnx_ofed_repo_url": "",
        "rdma_stack_mlnx_ofed_version": "24.10-1.1.4.0",
        "rdma_stack_doca_repo_url": "",
        "rdma_stack_doca_version": "3.2.1",
        "ansible_python_interpreter": sys.executable,
    }
    env = dict(
        os.environ, ANSIBLE_CONFIG=str(ROOT / "ansible.cfg"), ANSIBLE_COLLECTIONS_PATH=str(ROOT / ".collections")
    )
    argv = [str(Path(sys.executable).with_name("ansible-playbook")), "-i", "localhost,", "-c", "local", str(play)]
    proc = subprocess.run(
        argv + ["-e", json.dumps(extra)], check=False, env=env, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    return json.loads(out.read_text())


@pytest.mark.parametrize(
    "facts,mlnx,doca",
    [
        (
            {
                "distribution": "RedHat",
                "os_family": "RedHat",
                "distribution_version": "9.4",
                "distribution_major_version": "9",
                "architecture": "x86_64",
            },
            "https://linux.mellanox.com/public/repo/mlnx_ofed/24.10-1.1.4.0/rhel9.4/x86_64/",
            "https://linux.mellanox.com/public/repo/doca/3.2.1/rhel9/x86_64/",
        ),
        (
            {
                "distribution": "Ubuntu",
                "os_family": "Debian",
                "distribution_version": "22.04",
                "distribution_major_version": "22",
                "architecture": "x86_64",
            },
            "https://linux.mellanox.com/public/repo/mlnx_ofed/24.10-1.1.4.0/ubuntu22.04/x86_64/",
            "https://linux.mellanox.com/public/repo/doca/3.2.1/ubuntu22.04/x86_64/",
        ),
    ],
)
def test_mlnx_ofed_rhel_repo_path_has_the_minor_release(tmp_path, facts, mlnx, doca):
    repos = _repos(tmp_path, facts)
    assert repos == {"mlnx_ofed": mlnx, "doca": doca}
