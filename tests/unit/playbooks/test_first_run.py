"""A real cluster's first run (issue 21), played by the collection's own playbooks on this machine: every host
runs over the local connection with a fixture sysfs tree shaped like the kernel's (tests/lab/sysfs_tree.py).

- the install stage batches with the size the inventory's group_vars give (a play's serial cannot see them);
- a wrong declared rate, link layer, an ibtune_fabric typo or an absurd rate fail FIRST (before any role runs)
  with one sentence naming the variable, what the hosts report and the fix;
- check mode with a failing preflight exits non-zero; a one-host run does the per-node checks and passes;
- the verdict fails on the controller and on the culprits, never on a healthy host; each run has its folder.
"""

import json
import os
import sys
from pathlib import Path

import pytest
import yaml

from tests.lab.sysfs_tree import build_tree
from tests.unit.playbook_process import run_playbook
from tests.unit.playbooks.test_example_inventory import EXAMPLE, ROOT, _env

# The example inventory's fixture, shared (pytest finds it by its name in this module).
from tests.unit.playbooks.test_example_inventory import example  # noqa: F401  # pylint: disable=unused-import

PLAYBOOKS = ROOT / "playbooks"
# Two of the example's GPU nodes (and the controller): what is proven needs no more, and each host costs seconds.
TWO_NODES = ("--limit", "gpu-a01,gpu-b01,localhost")
# rdma_stack's task groups: skipped where a test proves the install play's batching, not the role.
RDMA_STACK_TAGS = ",".join(
    "rdma_stack_" + t for t in ("preflight", "install", "perftest", "gdr", "memlock", "services", "verify")
)


class Run(object):
    """One ansible-playbook run, read through the json callback: rc, every task's per-host results, the recap."""

    def __init__(self, rc, output):
        self.rc, self.output = rc, output
        doc = json.JSONDecoder().raw_decode(output[output.index("{") :])[0] if "{" in output else {}
        self.tasks = [t for play in doc.get("plays", []) for t in play["tasks"]]
        self.recap = doc.get("stats", {})

    def failures(self):
        """[(host, msg)] of the tasks that failed, in order."""
        return [(h, r.get("msg")) for t in self.tasks for h, r in t["hosts"].items() if r.get("failed")]

    def messages(self, task_name):
        """[(host, msg)] of a debug task's results, in order (one per batch for a run_once task)."""
        return [
            (h, r.get("msg"))
            for t in self.tasks
            if t["task"]["name"] == task_name
            for h, r in t["hosts"].items()
            if not r.get("skipped")
        ]

    def names(self):
        return [t["task"]["name"] for t in self.tasks]


def _run(inventories, playbook, *args, cwd, check=False):
    argv = [str(Path(sys.executable).with_name("ansible-playbook"))]
    for inventory in inventories:
        argv += ["-i", str(inventory)]
    argv += [str(PLAYBOOKS / playbook), *(["--check"] if check else []), *args]  # an absolute path stays as it is
    env = dict(_env(), ANSIBLE_STDOUT_CALLBACK="ansible.posix.json")
    proc = run_playbook(argv, env=env, cwd=str(cwd))
    return Run(proc.returncode, proc.stdout + proc.stderr)


@pytest.fixture(scope="module")
def four_nodes(tmp_path_factory):
    """An inventory of 4 GPU nodes whose batch size is in group_vars (as a real inventory sets it)."""
    base = tmp_path_factory.mktemp("four")
    hosts = {}
    for i in range(1, 5):
        name = "node%d" % i
        root = base / "sys" / name
        build_tree(str(root), {"devices": {"mlx5_0": {"ports": {1: {}}}, "mlx5_1": {"ports": {1: {}}}}})
        hosts[name] = {
            "ansible_connection": "local",
            "ansible_python_interpreter": sys.executable,
            "ibtune_sysfs_root": str(root),
        }
    inventory = base / "inventory"
    (inventory / "group_vars").mkdir(parents=True)
    (inventory / "hosts.yml").write_text(yaml.safe_dump({"all": {"children": {"gpu_nodes": {"hosts": hosts}}}}))
    group_vars = {
        "ibtune_fabric": {"link_layer": "InfiniBand", "rate_gbps": 400, "rails": 2},
        "ibtune_install_serial": "25%",
        "ibtune_report_dir": str(base / "reports"),
    }
    (inventory / "group_vars" / "all.yml").write_text(yaml.safe_dump(group_vars))
    return {"inventory": inventory, "dir": base}


def test_the_install_stage_batches_with_the_inventorys_size(four_nodes):
    run = _run(
        [four_nodes["inventory"]],
        "tune_ib.yml",
        "--tags",
        "install",
        "--skip-tags",
        RDMA_STACK_TAGS,
        cwd=four_nodes["dir"],
    )
    assert run.rc == 0, run.output[-4000:]
    batches = [msg for _host, msg in run.messages("Say which nodes this batch installs")]
    assert batches == ["install batch: node%d" % i for i in range(1, 5)], run.output[-4000:]
    [(_host, said)] = run.messages("Say how the install stage batches the nodes")
    assert said.startswith("The install stage runs 25% of the 4 GPU node(s) at a time")


def test_a_batch_size_the_nodes_disagree_on_fails_loudly(four_nodes):
    host_vars = four_nodes["inventory"] / "host_vars"
    host_vars.mkdir(exist_ok=True)
    (host_vars / "node3.yml").write_text(yaml.safe_dump({"ibtune_install_serial": 1}))
    try:
        run = _run([four_nodes["inventory"]], "tune_ib.yml", "--tags", "install", cwd=four_nodes["dir"])
    finally:
        (host_vars / "node3.yml").unlink()
    assert run.rc == 2
    [(host, msg)] = run.failures()
    assert host == "localhost"
    assert msg.startswith("ibtune_install_serial differs between the GPU nodes (")
    assert "'25%' on node1, node2, node4" in msg and "1 on node3" in msg
    assert "Say which nodes this batch installs" not in run.names()


def _play_example(example, playbook, *args, check=True):  # noqa: F811 - the fixture's name
    return _run(
        [EXAMPLE, example["overlay"]],
        playbook,
        "-e",
        "ibtune_report_dir=%s" % (example["dir"] / "reports"),
        *args,
        cwd=example["dir"],
        check=check,
    )


@pytest.mark.parametrize(
    "fabric,sentence",
    [
        (
            {"link_layer": "InfiniBand", "rate_gbps": 200, "rails": 8},
            "ibtune_fabric.rate_gbps is 200 Gb/s, but 16 of 16 ACTIVE port(s) on 2 host(s) trained at 400 Gb/s "
            "(4X NDR), none of them a cable fault: set ibtune_fabric.rate_gbps: 400 (a port below it is then named by "
            "preflight)",
        ),
        (
            {"link_layer": "Ethernet", "rate_gbps": 400, "rails": 8},
            "ibtune_fabric.link_layer is Ethernet, but no RDMA port of any host has that link layer: they report "
            "InfiniBand on 16 port(s) of 2 host(s). Set ibtune_fabric.link_layer: InfiniBand",
        ),
        (
            {"link_layer": "InfiniBand", "rate_gpbs": 400, "rails": 8},
            "ibtune_fabric.rate_gpbs is not a key of ibtune_fabric (link_layer, rate_gbps, rails): "
            "did you mean rate_gbps?",
        ),
        (
            {"link_layer": "InfiniBand", "rate_gbps": 4000, "rails": 8},
            "ibtune_fabric.rate_gbps=4000 is not a number from 1 to 1600 Gb/s per port",
        ),
    ],
    ids=["rate", "link_layer", "typo", "absurd_rate"],
)
def test_a_wrong_declaration_fails_first_in_one_sentence(example, fabric, sentence):  # noqa: F811
    run = _play_example(example, "tune_ib.yml", "-e", json.dumps({"ibtune_fabric": fabric}), *TWO_NODES)
    assert run.rc == 2, run.output[-4000:]
    [(host, msg)] = run.failures()
    assert host == "localhost"
    assert msg == "The fabric is declared wrong, nothing was changed: " + sentence
    # Before anything runs: no role's task started (the last task is the declaration check), no "reseat".
    assert run.names()[-1] == "The fabric is declared as the hosts' ports are (ibtune_fabric)"
    assert "reseat" not in run.output


def test_check_mode_exits_non_zero_when_preflight_fails(example):  # noqa: F811
    run = _play_example(
        example, "validate_fabric.yml", "-e", '{"fabric_validate_expect_fw_versions": ["99.1"]}', *TWO_NODES
    )
    assert run.rc == 2, run.output[-4000:]
    failures = dict(run.failures())
    assert failures["localhost"].startswith(
        "FAILED (check mode: preflight and counters only, no pair measured): 2 of 2 host(s) failed preflight"
    )
    assert "expected firmware 99.1" in failures["gpu-a01"]
    # The same run with the example's values passes: the non-zero exit is the preflight's.
    run = _play_example(example, "validate_fabric.yml", *TWO_NODES)
    assert run.rc == 0, run.output[-4000:]
    [(_host, said)] = run.messages("The fabric passed")
    assert said == "PASSED (check mode: preflight and counters only, no pair measured): 2 host(s) passed preflight"


def test_a_one_host_run_does_the_per_node_checks_and_passes(example):  # noqa: F811
    run = _play_example(example, "validate_fabric.yml", "--limit", "gpu-a01,localhost", check=False)
    assert run.rc == 0, run.output[-4000:]
    [(_host, said)] = run.messages("Say what the validation will do with this many hosts")
    assert said.startswith("1 host(s) to validate: no pair to test, so validate runs only the per-node checks")
    [(_host, said)] = run.messages("The fabric passed")
    assert said == "PASSED (one host: per-node checks only, no pair to test): 1 host(s) passed preflight"
    assert run.recap["gpu-a01"]["failures"] == 0 and run.recap["localhost"]["failures"] == 0
    # Its own run folder, and latest points at it.
    reports = example["dir"] / "reports"
    latest = os.readlink(str(reports / "latest"))
    assert (reports / latest / ".ibtune-run").is_file()


def test_an_unwritable_report_dir_fails_before_preflight(example, tmp_path):  # noqa: F811
    blocker = tmp_path / "file"
    blocker.write_text("")
    run = _run(
        [EXAMPLE, example["overlay"]],
        "validate_fabric.yml",
        "-e",
        "ibtune_report_dir=%s" % (blocker / "reports"),
        cwd=example["dir"],
    )
    assert run.rc == 2, run.output[-4000:]
    [(host, msg)] = run.failures()
    assert host == "localhost"
    assert msg.startswith("ibtune_report_dir=%s cannot be created (Not a directory)" % (blocker / "reports"))
    assert run.names()[-1] == "Make this run's report folder (or say why it cannot be used)"


NCCL_ENV_PLAY = """
- name: nccl_env on a host whose ports are not of the declared link layer
  hosts: gpu-a01
  gather_facts: false
  tasks:
    - name: The facts nccl_env reads
      ansible.builtin.setup: {gather_subset: [min, network]}
    - name: nccl_env's derive step
      ansible.builtin.include_role: {name: ibtune.fabric.nccl_env, tasks_from: derive}
"""


def test_nccl_env_refuses_a_file_without_nccl_ib_hca_for_a_declared_rdma_fabric(example):  # noqa: F811
    play = example["dir"] / "nccl_env_derive.yml"
    play.write_text(NCCL_ENV_PLAY)
    # Ethernet declared, the ports are InfiniBand: no RoCE port is active, NCCL_IB_HCA cannot be derived.
    fabric = {"ibtune_fabric": {"link_layer": "Ethernet", "rate_gbps": 400, "rails": 8}, "ibtune_qos": {}}
    run = _play_example(example, play, "-e", json.dumps(fabric))
    assert run.rc == 2, run.output[-4000:]
    [(host, msg)] = run.failures()
    assert host == "gpu-a01"
    assert msg.startswith(
        "ibtune_fabric declares a Ethernet fabric, but gpu-a01 has no ACTIVE LinkUp Ethernet port (ib_facts: active "
    )
    assert "nccl_env writes no file" in msg
    # Naming the HCAs is the user's way out.
    fabric["nccl_env_vars"] = {"NCCL_IB_HCA": "=mlx5_0:1"}
    run = _play_example(example, play, "-e", json.dumps(fabric))
    assert "Refuse an nccl.conf without NCCL_IB_HCA for a declared RDMA fabric" not in [h for h, _m in run.failures()]
    assert not any("declares a Ethernet fabric" in (m or "") for _h, m in run.failures()), run.output[-3000:]
