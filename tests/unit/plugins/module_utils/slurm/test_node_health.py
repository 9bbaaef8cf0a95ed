"""node_health: the check slurmd runs, on fixture sysfs trees built like a kernel's (tests/lab/sysfs_tree.py), the
corpus-shaped mixed node, and real scontrol output for the self-drain."""

import io
import json
import os

import pytest

from ansible_collections.ibtune.fabric.plugins.module_utils.slurm import node_health
from tests.conftest import FIXTURES, ROOT
from tests.lab.sysfs_tree import build_tree, load_spec

HEALTHY = {
    "devices": {
        "mlx5_0": {
            "pci": "0000:18:00.0",
            "ports": {"1": {"rate": "400 Gb/sec (4X NDR)"}},
            "pcie": {"speed": "32.0 GT/s PCIe", "width": 16, "max_speed": "32.0 GT/s PCIe", "max_width": 16},
        },
        "mlx5_1": {
            "pci": "0000:2a:00.0",
            "ports": {"1": {"rate": "400 Gb/sec (4X NDR)"}},
            "pcie": {"speed": "32.0 GT/s PCIe", "width": 16, "max_speed": "32.0 GT/s PCIe", "max_width": 16},
        },
    }
}
GOOD_NCCL = "NCCL_IB_HCA==mlx5_0:1,mlx5_1:1\nNCCL_IB_TIMEOUT=22\n"


@pytest.fixture
def node(tmp_path):
    """A healthy two-port NDR node: sysfs tree, nccl.conf, the GPUDirect module, and its config file."""
    root = build_tree(str(tmp_path / "sys"), HEALTHY)
    os.makedirs(os.path.join(root, "module", "nvidia_peermem"))
    (tmp_path / "nccl.conf").write_text(GOOD_NCCL)
    config = {
        "sysfs_root": root,
        "ports": [{"device": "mlx5_0", "port": 1}, {"device": "mlx5_1", "port": 1}],
        "rate_gbps": 400,
        "width": 4,
        "state_dir": str(tmp_path / "state"),
        "gpudirect_module": "nvidia_peermem",
        "nccl_conf": str(tmp_path / "nccl.conf"),
        "node_name": "ibt-slurm-n2",
    }
    path = tmp_path / "node-health.json"
    path.write_text(json.dumps(config))
    return {"root": root, "config": config, "path": str(path), "tmp": tmp_path}


def _attr(root, device, rel):
    return os.path.join(root, "class", "infiniband", device, rel)


def _set(path, value):
    with open(path, "w") as handle:
        handle.write(value)


def _main(args, run=None):
    out = io.StringIO()
    rc = node_health.main(args, run=run, stdout=out)
    return rc, out.getvalue()


def test_healthy_node_says_ok(node):
    assert _main(["--config", node["path"]]) == (0, "OK\n")


def test_port_down_is_the_first_reason(node):
    _set(_attr(node["root"], "mlx5_1", "ports/1/state"), "1: DOWN")
    _set(_attr(node["root"], "mlx5_1", "ports/1/phys_state"), "2: Polling")
    assert _main(["--config", node["path"]]) == (1, "mlx5_1 port 1 is DOWN/Polling, expected ACTIVE/LinkUp\n")


def test_rate_and_width_below_expected(node):
    _set(_attr(node["root"], "mlx5_0", "ports/1/rate"), "200 Gb/sec (2X NDR)")
    rc, out = _main(["--config", node["path"]])
    assert (rc, out) == (1, "mlx5_0 port 1 rate 200 Gb/s < 400\n")
    cfg = dict(node["config"], rate_gbps=0)
    assert node_health.check_ports(node["root"], node_health.normalise_config(cfg)["ports"]) == [
        "mlx5_0 port 1 width 2X < 4X"
    ]


def test_pcie_degraded_on_the_corpus_shaped_mixed_node(tmp_path):
    root = build_tree(str(tmp_path / "sys"), load_spec(str(FIXTURES / "sysfs" / "mixed-node.json")))
    assert node_health.check_pcie(root, ["mlx5_0", "mlx5_1"]) == [
        "mlx5_1 PCIe link degraded: 16 GT/s x8 of 16 GT/s x16"
    ]
    ports = node_health.normalise_config({"ports": [{"device": "mlx5_2"}, {"device": "mlx5_9"}]})["ports"]
    assert node_health.check_ports(root, ports) == [
        "mlx5_2 port 1 is DOWN/Polling, expected ACTIVE/LinkUp",
        "mlx5_9 port 1 is missing (no such RDMA port)",
    ]


def test_counters_compare_with_the_last_run(node):
    assert _main(["--config", node["path"]])[0] == 0  # first run: snapshot only
    state = json.loads((node["tmp"] / "state" / "counters.json").read_text())
    assert state["mlx5_0:1"]["symbol_error"] == 0
    _set(_attr(node["root"], "mlx5_0", "ports/1/counters/symbol_error"), "12")
    assert _main(["--config", node["path"]]) == (1, "mlx5_0 port 1 symbol_error rose by 12 (0 -> 12)\n")
    # the snapshot moved on: the same value is no new increase
    assert _main(["--config", node["path"]]) == (0, "OK\n")


def test_congestion_counters_are_not_gated(node):
    _main(["--config", node["path"]])
    _set(_attr(node["root"], "mlx5_0", "ports/1/counters/port_xmit_wait"), "999999")
    assert _main(["--config", node["path"]]) == (0, "OK\n")


def test_gpudirect_module_missing(node):
    os.rmdir(os.path.join(node["root"], "module", "nvidia_peermem"))
    assert _main(["--config", node["path"]]) == (1, "GPUDirect RDMA module nvidia_peermem is not loaded\n")


def test_nccl_conf_missing_or_failing_the_lint(node):
    conf = node["tmp"] / "nccl.conf"
    conf.write_text("NCCL_IB_HCA==mlx5_0:1\nexport NCCL_IB_TIMEOUT=22\n")
    rc, out = _main(["--config", node["path"]])
    assert rc == 1 and out.startswith("%s: line 2 starts with 'export'" % conf)
    conf.unlink()
    assert _main(["--config", node["path"]]) == (1, "%s is missing\n" % conf)


def test_more_problems_are_counted_and_listed_with_all(node):
    _set(_attr(node["root"], "mlx5_1", "ports/1/state"), "1: DOWN")
    os.rmdir(os.path.join(node["root"], "module", "nvidia_peermem"))
    rc, out = _main(["--config", node["path"], "--all"])
    assert rc == 1
    assert out.splitlines() == [
        "mlx5_1 port 1 is DOWN/LinkUp, expected ACTIVE/LinkUp (+1 more)",
        "GPUDirect RDMA module nvidia_peermem is not loaded",
    ]


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ({"ports": []}, "no ports to check"),
        ({"ports": [{"port": 1}]}, "needs a device"),
        ({"ports": [{"device": "mlx5_0", "port": "one"}]}, "must be numbers"),
        ({"ports": [{"device": "mlx5_0"}], "colour": "red"}, "unknown config keys colour"),
    ],
)
def test_bad_config_exits_2_naming_the_problem(tmp_path, config, message):
    path = tmp_path / "c.json"
    path.write_text(json.dumps(config))
    rc, out = _main(["--config", str(path)])
    assert rc == 2 and message in out


def test_ports_as_ib_facts_lists_them():
    ports = node_health.normalise_config({"ports": ["mlx5_0:1", "mlx5_bond_0:2"], "rate_gbps": 400})["ports"]
    assert ports == [
        {"device": "mlx5_0", "port": 1, "rate_gbps": 400.0, "width": 0},
        {"device": "mlx5_bond_0", "port": 2, "rate_gbps": 400.0, "width": 0},
    ]


def test_missing_config_and_bad_usage(tmp_path):
    rc, out = _main(["--config", str(tmp_path / "none.json")])
    assert rc == 2 and "cannot read" in out
    assert _main(["--bogus"])[0] == 2


class Scontrol(object):
    """Records argv; answers `show node` with a real oneliner captured from the scenario's slurmctld."""

    def __init__(self, show_text):
        self.calls = []
        self.show_text = show_text

    def __call__(self, argv):
        self.calls.append(argv)
        if argv[1] == "show":
            return 0, self.show_text
        return 0, ""


def _line(fixture, name):
    text = (FIXTURES / "slurm" / fixture).read_text()
    return "".join(line + "\n" for line in text.splitlines() if line.startswith("NodeName=%s " % name))


def test_drain_own_node_with_our_reason(node):
    _set(_attr(node["root"], "mlx5_1", "ports/1/state"), "1: DOWN")
    scontrol = Scontrol(_line("show-node-not-responding.txt", "ibt-slurm-n2"))  # IDLE, not held
    rc, out = _main(["--config", node["path"], "--drain"], run=scontrol)
    assert rc == 1 and out.endswith("; drained ibt-slurm-n2\n")
    update = scontrol.calls[-1]
    assert update[:4] == ["/usr/bin/scontrol", "update", "NodeName=ibt-slurm-n2", "State=DRAIN"]
    assert update[4].startswith("Reason=ibtune: node-health: mlx5_1 port 1 is DOWN/LinkUp, expected ACTIVE/LinkUp 20")


def test_config_drain_for_health_check_program_and_no_drain_override(node):
    _set(_attr(node["root"], "mlx5_1", "ports/1/state"), "1: DOWN")
    with open(node["path"], "w") as handle:
        json.dump(dict(node["config"], drain=True), handle)
    scontrol = Scontrol(_line("show-node-not-responding.txt", "ibt-slurm-n2"))
    rc, out = _main(["--config", node["path"], "--no-drain"], run=scontrol)
    assert rc == 1 and scontrol.calls == [] and "drained" not in out
    rc, out = _main(["--config", node["path"]], run=scontrol)
    assert rc == 1 and out.endswith("; drained ibt-slurm-n2\n") and scontrol.calls[-1][3] == "State=DRAIN"


def test_drain_leaves_a_node_slurm_already_holds(node):
    _set(_attr(node["root"], "mlx5_1", "ports/1/state"), "1: DOWN")
    scontrol = Scontrol(_line("show-node-admin-drain-down.txt", "ibt-slurm-n2"))  # admin drained
    rc, out = _main(["--config", node["path"], "--drain"], run=scontrol)
    assert rc == 1 and "already IDLE+DRAIN (admin: replacing DIMM B2), left as it is" in out
    assert [c[1] for c in scontrol.calls] == ["show"]


def test_healthy_node_never_calls_scontrol(node):
    scontrol = Scontrol("")
    assert _main(["--config", node["path"], "--drain"], run=scontrol) == (0, "OK\n")
    assert scontrol.calls == []


def test_unreachable_slurmctld_is_reported_not_fatal(node):
    _set(_attr(node["root"], "mlx5_1", "ports/1/state"), "1: DOWN")
    rc, out = _main(["--config", node["path"], "--drain"], run=lambda argv: (1, "Unable to contact slurm controller"))
    assert rc == 1 and "cannot read node ibt-slurm-n2 from slurmctld (Unable to contact slurm controller)" in out


def test_the_role_installs_every_module_the_check_imports():
    """The executable runs only the module_utils the role copies: their imports must stay inside that list."""
    import re

    import yaml

    repo = ROOT
    role_vars = yaml.safe_load((repo / "roles" / "node_health" / "vars" / "main.yml").read_text())
    listed = role_vars["__node_health_modules"]
    # "from ...module_utils.<pkg> import <mod>" and "from ...module_utils.<pkg>.<mod> import <names>"
    pattern = re.compile(r"ansible_collections\.ibtune\.fabric\.plugins\.module_utils\.(\w+)(?:\.(\w+))? import (\w+)")
    needed, todo = set(), ["slurm/node_health"]
    while todo:
        name = todo.pop()
        if name in needed:
            continue
        needed.add(name)
        text = (repo / "plugins" / "module_utils" / ("%s.py" % name)).read_text()
        todo.extend("%s/%s" % (pkg, mod or first) for pkg, mod, first in pattern.findall(text))
        assert "import ansible" not in text.replace("import ansible_collections", "")
    assert {n.split("/")[0] for n in needed} <= set(role_vars["__node_health_subpackages"])
    assert needed <= set(listed), "add %s to __node_health_modules" % sorted(needed - set(listed))
