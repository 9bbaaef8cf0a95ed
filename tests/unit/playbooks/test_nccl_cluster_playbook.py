"""playbooks/nccl_check.yml's cluster stage run for real over the local connection: four inventory hosts (names
that resolve here), the lab's mpirun and nccl-tests simulators, a fixture sysfs tree with two rails and two GPUs.
The Molecule lab scenario runs the same on four containers (molecule/lab/nccl.yml)."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.lab.sysfs_tree import build_tree

PLAYBOOK = ROOT / "playbooks" / "nccl_check.yml"
LAB = ROOT / "tests" / "lab"
HOSTS = ["localhost", "127.0.0.1", "127.0.0.2", "127.0.0.3"]


@pytest.fixture
def cluster(tmp_path):
    bindir = tmp_path / "bin"
    bindir.mkdir()
    for collective in ("all_reduce", "alltoall"):
        shutil.copy(LAB / "nccl_tests_sim.py", bindir / ("%s_perf" % collective))
    shutil.copy(LAB / "mpirun_sim.py", bindir / "mpirun")
    for path in bindir.iterdir():
        path.chmod(0o755)
    sysfs = tmp_path / "sys"
    build_tree(str(sysfs), str(LAB / "fabric" / "nodes" / "default.json"))
    inventory = tmp_path / "hosts.ini"
    inventory.write_text(
        "[gpu_nodes]\n"
        + "".join("%s ansible_connection=local ansible_python_interpreter=%s\n" % (h, sys.executable) for h in HOSTS)
    )
    fabric = tmp_path / "fabric.json"

    def play(case, plans, nccl=None):
        fabric.write_text(json.dumps({"nccl": nccl or {}}))
        args = {
            "ibtune_sysfs_root": str(sysfs),
            "nccl_check_render": False,
            "nccl_check_single_node": False,
            "nccl_check_conf_path": str(tmp_path / "no-nccl.conf"),
            "nccl_check_log_dir": str(tmp_path / "log"),
            "nccl_check_plans": plans,
            "nccl_check_launch_executable": str(bindir / "mpirun"),
            "nccl_check_tests_dir": str(bindir),
            "nccl_check_cluster_collectives": ["all_reduce", "alltoall"],
            "nccl_check_rate_gbps": 400,
            "nccl_check_env": {"IBTUNE_LAB_SYSFS": str(sysfs), "IBTUNE_LAB_FABRIC": str(fabric)},
            "nccl_check_reference_path": str(tmp_path / "curves.json"),
            "nccl_check_report_dir": str(tmp_path / case),
        }
        env = dict(
            os.environ,
            ANSIBLE_CONFIG=str(ROOT / "ansible.cfg"),
            ANSIBLE_COLLECTIONS_PATH=str(ROOT / ".collections"),
            ANSIBLE_NOCOLOR="True",
            PATH=str(Path(sys.executable).parent) + os.pathsep + os.environ.get("PATH", ""),
        )
        out = subprocess.run(
            [str(Path(sys.executable).with_name("ansible-playbook")), "-i", str(inventory), str(PLAYBOOK),
             "-e", json.dumps(args)],
            env=env, capture_output=True, text=True, check=False,
        )  # fmt: skip
        (tmp_path / (case + ".out")).write_text(out.stdout)
        report_path = tmp_path / case / "report.json"
        report = json.loads(report_path.read_text()) if report_path.exists() else None
        return out, report

    return play, tmp_path


def test_healthy_records_then_a_slow_node_is_bisected_and_named(cluster):
    play, tmp_path = cluster
    out, report = play("healthy", ["per_rail", "full_node", "allocation"])
    assert out.returncode == 0, out.stdout[-4000:]
    assert report["passed"] and sorted(report["passed_hosts"]) == sorted(HOSTS)
    assert len(json.loads((tmp_path / "curves.json").read_text())["curves"]) == 6
    full = [c for c in report["checks"] if c["name"] == "full_node:localhost+127.0.0.1 all_reduce nic"][0]
    assert full["message"] == "busbw 94.9 GB/s at 4 GiB meets the expected 86.4 GB/s (2 NICs per node x 43.2 GB/s)"

    out, report = play("slow", ["allocation"], {"slow_nodes": {"127.0.0.2": 0.5}})
    assert out.returncode == 2, out.stdout[-4000:]
    assert [h["host"] for h in report["failed_hosts"]] == ["127.0.0.2"]
    assert report["failed_hosts"][0]["failure_kind"] == "nccl_node"
    # the play's failure message (the YAML callback wraps long lines)
    assert "slow node 127.0.0.2: it fails with known-good 127.0.0.1" in " ".join(out.stdout.split())
    bisect = [c for c in report["checks"] if c["kind"] == "bisect"][0]
    assert "localhost+127.0.0.1 passed, 127.0.0.2+127.0.0.3 FAILED" in bisect["message"]
    assert (tmp_path / "slow" / "junit.xml").exists() and (tmp_path / "slow" / "report.html").exists()


def test_socket_fallback_fails_the_transport_check(cluster):
    play, _tmp_path = cluster
    out, report = play("fallback", ["per_rail"], {"socket_fallback": ["127.0.0.3"]})
    assert out.returncode == 2
    assert [h["host"] for h in report["failed_hosts"]] == ["127.0.0.3"]
    assert "127.0.0.3 used Socket (NET/IB : No device found), the plan wants IB" in report["failed_hosts"][0]["reason"]
