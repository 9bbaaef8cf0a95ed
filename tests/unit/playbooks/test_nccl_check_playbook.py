"""playbooks/nccl_check.yml and the nccl_check role: run for real over the local connection against NCCL logs and the
nccl.conf captured on the lent GPU machine (tests/fixtures/nccl/), with the benchmark stage off (it needs GPUs; the
GPU proof runs it)."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import FIXTURES

ROOT = Path(__file__).resolve().parents[3]
PLAYBOOK = ROOT / "playbooks" / "nccl_check.yml"
RENDERED_LOG = FIXTURES / "nccl" / "h200x2-torch-rendered-ib-profile-nccl2.28.9.log"
RENDERED_CONF = FIXTURES / "nccl" / "h200x2-rendered-nccl.conf"


def _env():
    env = dict(os.environ)
    env.update(
        ANSIBLE_CONFIG=str(ROOT / "ansible.cfg"),
        ANSIBLE_COLLECTIONS_PATH=str(ROOT / ".collections"),
        ANSIBLE_FORCE_COLOR="False",
        ANSIBLE_NOCOLOR="True",
        PATH=str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", ""),
    )
    return env


def _playbook(*args):
    return subprocess.run(
        [str(Path(sys.executable).with_name("ansible-playbook")), str(PLAYBOOK), *args],
        env=_env(),
        capture_output=True,
        text=True,
        check=False,
    )


def test_the_play_targets_the_gpu_nodes_only():
    """Not hosts: all - the example's switches and subnet manager have no GPU and no NCCL."""
    out = _playbook("-i", str(ROOT / "inventories" / "example"), "--list-hosts")
    assert out.returncode == 0, out.stderr
    hosts = sorted(line.strip() for line in out.stdout.splitlines() if line.startswith("      "))
    assert hosts == ["gpu-a01", "gpu-a02", "gpu-a03", "gpu-a04", "gpu-b01", "gpu-b02", "gpu-b03", "gpu-b04"]


@pytest.fixture
def node(tmp_path):
    inventory = tmp_path / "hosts.ini"
    inventory.write_text("[gpu_nodes]\nh200 ansible_connection=local ansible_python_interpreter=%s\n" % sys.executable)
    logdir = tmp_path / "log"
    logdir.mkdir()
    shutil.copy(RENDERED_LOG, logdir / "rendered.log")
    common = [
        "-i",
        str(inventory),
        "-e",
        json.dumps(
            {
                "nccl_check_render": False,
                "nccl_check_test": False,
                "nccl_check_log_dir": str(logdir),
                "nccl_check_tag": "rendered",
                "nccl_check_conf_path": str(RENDERED_CONF),
                "nccl_check_textfile_dir": str(tmp_path),
            }
        ),
    ]
    return logdir, common, tmp_path


def test_role_lints_the_real_conf_and_reads_the_real_log(node):
    logdir, common, tmp_path = node
    out = _playbook(*common, "-e", "nccl_check_expect_transport=Socket")
    assert out.returncode == 0, out.stdout[-3000:]
    result = json.loads((logdir / "rendered.json").read_text())
    assert result["passed"] is True
    assert result["lint"]["env"] == {"NCCL_DEBUG": "INFO", "NCCL_IB_TIMEOUT": "22"}
    assert result["lint"]["errors"] == []
    assert result["log"]["nccl_versions"] == ["2.28.9+cuda13.0"]
    assert 'ibtune_nccl_transport_info{host="h200",transport="Socket"} 1' in (tmp_path / "ibtune_nccl.prom").read_text()


def test_role_fails_naming_the_node_when_nccl_fell_back(node):
    """Also with booleans given as key=value strings on the command line, as scripts/gpu_proof.sh does."""
    logdir, common, _tmp_path = node
    out = _playbook(
        *common, "-e", "nccl_check_render=false nccl_check_test=false", "-e", "nccl_check_expect_transport=IB"
    )
    assert out.returncode == 2
    assert "h200: " in out.stdout and "Socket" in out.stdout
    assert json.loads((logdir / "rendered.json").read_text())["passed"] is False


def test_argspec_refuses_an_unknown_transport(node):
    _logdir, common, _tmp_path = node
    out = _playbook(*common, "-e", "nccl_check_expect_transport=ib")
    assert out.returncode == 2
    assert "nccl_check_expect_transport" in out.stdout
