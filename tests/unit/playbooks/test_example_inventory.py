"""The example inventory works as shipped: its playbooks run (check mode, preflight stages) against fixture sysfs
trees shaped like the kernel's (tests/lab/sysfs_tree.py), one tree per host.

Every host of inventories/example runs on this machine over the local connection (a second inventory source
overrides only the connection, the interpreter and ibtune_sysfs_root); nothing else in the example is changed,
so a broken default, an argspec the example's values fail, or a preflight the example cannot pass fails here.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.lab.sysfs_tree import build_tree

ROOT = Path(__file__).resolve().parents[3]
EXAMPLE = ROOT / "inventories" / "example"


def _example_hosts():
    out = subprocess.run(
        [str(Path(sys.executable).with_name("ansible-inventory")), "-i", str(EXAMPLE), "--list"],
        env=_env(),
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    inv = json.loads(out)
    return inv, sorted(inv["_meta"]["hostvars"])


def _env():
    env = dict(os.environ)
    env.update(
        ANSIBLE_CONFIG=str(ROOT / "ansible.cfg"),
        ANSIBLE_COLLECTIONS_PATH=str(ROOT / ".collections"),
        ANSIBLE_FORCE_COLOR="False",
        ANSIBLE_NOCOLOR="True",
        ANSIBLE_FORKS="4",
        PATH=str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", ""),
    )
    return env


def _gpu_node_spec(host, rails):
    """A GPU node as the example describes it: `rails` NDR InfiniBand HCAs, one ACTIVE 400 Gb/s port each."""
    return {
        "devices": {
            "mlx5_%d" % i: {"node_desc": "%s mlx5_%d" % (host, i), "ports": {1: {"lid": "0x%x" % (0x10 + i)}}}
            for i in range(rails)
        }
    }


@pytest.fixture(scope="module")
def example(tmp_path_factory):
    """An overlay inventory: the example's hosts, local connection, one fixture sysfs tree each."""
    base = tmp_path_factory.mktemp("example")
    inv, hosts = _example_hosts()
    gpu_nodes = set(inv["gpu_nodes"]["hosts"])
    rails = inv["_meta"]["hostvars"][sorted(gpu_nodes)[0]].get("fabric_validate_expect_ports", 8)
    overlay = {}
    for host in hosts:
        root = base / "sys" / host
        build_tree(str(root), _gpu_node_spec(host, rails) if host in gpu_nodes else {"devices": {}})
        overlay[host] = {
            "ansible_connection": "local",
            "ansible_python_interpreter": sys.executable,
            "ibtune_sysfs_root": str(root),
        }
    path = base / "local.yml"
    path.write_text(yaml.safe_dump({"all": {"hosts": overlay}}))
    return {"overlay": path, "hosts": hosts, "dir": base}


def _play(example, playbook, *args):
    argv = [
        str(Path(sys.executable).with_name("ansible-playbook")),
        "-i",
        str(EXAMPLE),
        "-i",
        str(example["overlay"]),
        str(ROOT / "playbooks" / playbook),
        "--check",
        "--diff",
        # Controller-side outputs of the example's defaults go to the test's directory, never the checkout.
        "-e",
        "ibtune_report_dir=%s" % (example["dir"] / "reports"),
        *args,
    ]
    proc = subprocess.run(
        argv, check=False, env=_env(), cwd=str(example["dir"]), capture_output=True, text=True, timeout=600
    )
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0, "%s %s failed (rc=%d):\n%s" % (
        playbook,
        " ".join(args),
        proc.returncode,
        output[-6000:],
    )
    return output


def _recap(output):
    """PLAY RECAP lines as {host: {ok: n, failed: n, ...}}."""
    recap = {}
    lines = output.split("PLAY RECAP")[-1].splitlines()[1:]
    for line in lines:
        if ":" not in line or "=" not in line:
            continue
        host, _sep, rest = line.partition(":")
        recap[host.strip()] = {k: int(v) for k, v in (kv.split("=") for kv in rest.split())}
    return recap


def test_tune_ib_preflight_passes_on_every_example_host(example):
    out = _play(example, "tune_ib.yml", "--tags", "preflight")
    recap = _recap(out)
    assert set(recap) >= {h for h in example["hosts"] if h.startswith("gpu-")} | {"localhost"}
    assert all(r["failed"] == 0 and r["unreachable"] == 0 for r in recap.values()), out[-4000:]
    # ib_facts saw each node's own tree: 8 active NDR ports.
    assert "gpu-a01: 8 RDMA devices, active ports mlx5_0:1, mlx5_1:1" in out


@pytest.mark.parametrize(
    "playbook,tags",
    [
        ("tune_ib.yml", "rdma_stack_preflight,nccl_env_preflight,fabric_qos_preflight"),
        ("validate_fabric.yml", "fabric_validate_preflight"),
    ],
)
def test_role_preflights_pass_with_the_example_values(example, playbook, tags):
    out = _play(example, playbook, "--tags", tags)
    recap = _recap(out)
    gpu = [h for h in example["hosts"] if h.startswith("gpu-")]
    assert set(gpu) <= set(recap), out[-4000:]
    assert all(recap[h]["failed"] == 0 for h in recap), out[-4000:]
    # The example sets no variable its roles do not declare (role_vars_check would warn naming it).
    assert "is not a variable of role" not in out and "is not a key of" not in out, out[-4000:]
