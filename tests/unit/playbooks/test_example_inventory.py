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
from tests.unit.playbook_process import run_playbook

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
    # The fabric as the example declares it, once (group_vars/all.yml).
    rails = inv["_meta"]["hostvars"][sorted(gpu_nodes)[0]]["ibtune_fabric"]["rails"]
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


def _play(example, playbook, *args, env=None, expect_rc=0):
    argv = [
        str(Path(sys.executable).with_name("ansible-playbook")),
        "-i",
        str(EXAMPLE),
        "-i",
        str(example["overlay"]),
        str(ROOT / "playbooks" / playbook) if isinstance(playbook, str) else str(playbook),
        "--check",
        "--diff",
        # Controller-side outputs of the example's defaults go to the test's directory, never the checkout.
        "-e",
        "ibtune_report_dir=%s" % (example["dir"] / "reports"),
        *args,
    ]
    proc = run_playbook(argv, env=dict(_env(), **(env or {})), cwd=str(example["dir"]))
    output = proc.stdout + proc.stderr
    assert proc.returncode == expect_rc, "%s %s: rc=%d:\n%s" % (
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


# What each role resolves on one GPU node and the subnet manager, through the roles' own defaults and preflight
# tasks (include_role public), printed as one debug result per host.
RESOLVE_PLAY = """
- name: Resolve what the roles derive from ibtune_fabric
  hosts: gpu-a01:ufm-01
  gather_facts: false
  tasks:
    - name: The facts the preflights read
      ansible.builtin.setup: {gather_subset: [min]}
    - name: fabric_qos preflight (the QoS model, its mode from the fabric)
      ansible.builtin.include_role: {name: ibtune.fabric.fabric_qos, tasks_from: preflight, public: true}
    - name: fabric_monitoring defaults
      ansible.builtin.include_role: {name: ibtune.fabric.fabric_monitoring, tasks_from: preflight, public: true}
    - name: nccl_env's profile as its derive step chooses it
      ansible.builtin.include_role: {name: ibtune.fabric.nccl_env, tasks_from: derive, public: true}
      when: inventory_hostname in groups['gpu_nodes']
    - name: Print what was resolved
      ansible.builtin.debug:
        msg:
          qos_mode: "{{ __fabric_qos_model.mode }}"
          qos_ib_sl: "{{ __fabric_qos_model.ib_sl }}"
          monitoring_rate: "{{ fabric_monitoring_expected_rate_gbps | float }}"
          nccl_profile: "{{ __nccl_env_profile | default('') }}"
          nccl_qos: "{{ (__nccl_env_final | default({})).NCCL_IB_SL | default('') }}"
"""


def _resolved(example, extra_vars=None, limit="all", expect_rc=0):
    """{host: what it resolved}, or (expect_rc != 0) {host: failure message} of the tasks that failed."""
    play = example["dir"] / "resolve_fabric.yml"
    play.write_text(RESOLVE_PLAY)
    args = ["--limit", limit]
    for key, value in (extra_vars or {}).items():
        args += ["-e", json.dumps({key: value})]
    out = _play(example, play, *args, env={"ANSIBLE_STDOUT_CALLBACK": "ansible.posix.json"}, expect_rc=expect_rc)
    result = json.loads(out[out.index("{") :])
    tasks = [t for play in result["plays"] for t in play["tasks"]]
    if expect_rc:
        return {h: r["msg"] for t in tasks for h, r in t["hosts"].items() if r.get("failed")}
    task = [t for t in tasks if t["task"]["name"] == "Print what was resolved"]
    return {host: r["msg"] for host, r in task[0]["hosts"].items()}


def test_example_states_the_fabric_once_and_the_roles_derive_it(example):
    """The example declares ibtune_fabric once and none of the values derived from it."""
    inv, _hosts = _example_hosts()
    hostvars = inv["_meta"]["hostvars"]["gpu-a01"]
    assert hostvars["ibtune_fabric"] == {"link_layer": "InfiniBand", "rate_gbps": 400, "rails": 8}
    derived = [
        "nccl_env_profile",
        "fabric_validate_expect_ports",
        "fabric_validate_expect_rate_gbps",
        "fabric_validate_expect_link_layer",
        "fabric_monitoring_expected_rate_gbps",
    ]
    assert [v for v in derived if v in hostvars] == []
    assert "mode" not in hostvars["ibtune_qos"]

    resolved = _resolved(example)
    assert resolved["gpu-a01"]["qos_mode"] == "infiniband"
    assert resolved["ufm-01"]["qos_mode"] == "infiniband"
    assert float(resolved["gpu-a01"]["monitoring_rate"]) == 400.0
    assert resolved["gpu-a01"]["nccl_profile"] == "ib"
    # The SL NCCL is told is the QoS model's (an empty model alone would be RoCE: NCCL_IB_TC, no SL).
    assert str(resolved["gpu-a01"]["nccl_qos"]) == "0"


def test_an_ethernet_fabric_changes_the_derived_values(example):
    # ufm-01 only: the GPU nodes' fixture trees have InfiniBand ports, which nccl_env's roce profile refuses.
    resolved = _resolved(
        example, {"ibtune_fabric": {"link_layer": "Ethernet", "rate_gbps": 200, "rails": 8}}, limit="ufm-01"
    )
    assert resolved["ufm-01"]["qos_mode"] == "roce_lossless"
    assert float(resolved["ufm-01"]["monitoring_rate"]) == 200.0


def test_a_qos_mode_that_contradicts_the_fabric_fails_preflight_naming_both(example):
    failed = _resolved(example, {"ibtune_qos": {"mode": "roce_lossless"}}, limit="ufm-01", expect_rc=2)
    assert list(failed) == ["ufm-01"]
    assert "ibtune_qos.mode='roce_lossless' contradicts ibtune_fabric.link_layer='InfiniBand'" in failed["ufm-01"]
