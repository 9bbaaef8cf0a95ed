"""node_health: the check slurmd runs, on fixture sysfs trees built like a kernel's (tests/lab/sysfs_tree.py), the
corpus-shaped mixed node, and real scontrol output for the self-drain."""

import io
import json
import os
import threading
import time

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
        "fleet_max_drain_fraction": 1.0,  # the fake slurmctld below knows this node only
        "fleet_settle_s": 0,  # one node per test; the racing nodes' test sets its own
    }
    path = tmp_path / "node-health.json"
    path.write_text(json.dumps(config))
    return {"root": root, "config": config, "path": str(path), "tmp": tmp_path}


def _attr(root, device, rel):
    return os.path.join(root, "class", "infiniband", device, rel)


def _set(path, value):
    with open(path, "w") as handle:
        handle.write(value)


def _main(args, run=None, now=None):
    out = io.StringIO()
    rc = node_health.main(args, run=run, stdout=out, now=now)
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
    update = [c for c in scontrol.calls if c[1] == "update"][-1]
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
    assert rc == 1 and out.endswith("; drained ibt-slurm-n2\n")
    assert [c[3] for c in scontrol.calls if c[1] == "update"] == ["State=DRAIN"]


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


# --- a fleet-wide quirk must not drain the fleet ------------------------------------------------------------


def _fleet_text(count, held=(), me="ibt-slurm-n2"):
    """`scontrol show node --oneliner` of ``count`` nodes (the fixture's idle line as the template, ``me`` among
    them), those in ``held`` {name: (reason, time)} drained."""
    line = _line("show-node-not-responding.txt", "ibt-slurm-n2").strip()
    head = line.split(" Reason=", maxsplit=1)[0]
    out = []
    for i in range(count):
        name = me if i == 0 else "gpu%03d" % i
        text = head.replace("ibt-slurm-n2", name)
        if name in dict(held):
            reason, when = dict(held)[name]
            text = text.replace("State=IDLE+NOT_RESPONDING ", "State=IDLE+DRAIN ") + " Reason=%s [root@%s]" % (
                reason,
                when,
            )
        out.append(text)
    return "\n".join(out) + "\n"


def _config(node, **extra):
    with open(node["path"], "w") as handle:
        json.dump(dict(node["config"], **extra), handle)


def test_past_the_fleet_limit_the_check_refuses_to_drain_and_says_so(node):
    _set(_attr(node["root"], "mlx5_1", "ports/1/state"), "1: DOWN")
    _config(node, fleet_max_drain_fraction=0.1)
    held = dict(("gpu%03d" % i, ("ibtune: node-health: mlx5_0 port 1 is DOWN 2026-12-01", "2026-12-01T07:00:0%d" % i))
                for i in range(1, 11))  # fmt: skip
    scontrol = Scontrol(_fleet_text(100, held))
    rc, out = _main(["--config", node["path"], "--drain"], run=scontrol)
    assert rc == 1 and out.endswith(
        "; not drained: 10 of 100 nodes already carry ibtune reasons, the fleet limit is 10 "
        "(fleet_max_drain_fraction 0.1)\n"
    )
    assert [c[1] for c in scontrol.calls] == ["show"]
    # below the limit it drains (9 held + itself = 10)
    del held["gpu010"]
    scontrol = Scontrol(_fleet_text(100, held))
    rc, out = _main(["--config", node["path"], "--drain"], run=scontrol)
    assert out.endswith("; drained ibt-slurm-n2\n") and scontrol.calls[1][3] == "State=DRAIN"


def test_a_node_that_raced_past_the_limit_resumes_itself(node):
    _set(_attr(node["root"], "mlx5_1", "ports/1/state"), "1: DOWN")
    _config(node, fleet_max_drain_fraction=0.1)
    before = _fleet_text(10)  # nobody held: the limit 1 allows this drain
    racing = {"gpu004": ("ibtune: node-health: mlx5_0 port 1 is DOWN", "2026-12-01T07:00:00"),
              "ibt-slurm-n2": ("ibtune: node-health: mlx5_1 port 1 is DOWN", "2026-12-01T07:00:01")}  # fmt: skip
    after = _fleet_text(10, racing)  # another node drained at the same moment, a second earlier

    class Racing(Scontrol):
        def __call__(self, argv):
            self.calls.append(argv)
            return (0, before if len(self.calls) == 1 else after) if argv[1] == "show" else (0, "")

    scontrol = Racing("")
    rc, out = _main(["--config", node["path"], "--drain"], run=scontrol)
    assert out.endswith("; drained and resumed ibt-slurm-n2: other nodes reached the fleet limit at the same moment\n")
    assert [c[3] if c[1] == "update" else "show" for c in scontrol.calls] == [
        "show", "State=DRAIN", "show", "State=RESUME"
    ]  # fmt: skip


def test_a_transient_state_drains_only_when_it_lasts(node, tmp_path):
    # a driver reload: the RDMA class is gone for a moment
    import shutil

    shutil.rmtree(os.path.join(node["root"], "class", "infiniband"))
    scontrol = Scontrol(_line("show-node-not-responding.txt", "ibt-slurm-n2"))
    outs = [_main(["--config", node["path"], "--drain"], run=scontrol, now=1000.0 + i)[1] for i in range(3)]
    assert outs[0].startswith("no RDMA device at all (")
    assert outs[0].endswith("; not drained yet: a transient state, 1 of 3 checks in a row (or 300s)\n")
    assert "2 of 3 checks" in outs[1] and outs[2].endswith("; drained ibt-slurm-n2\n")
    assert [c[3] for c in scontrol.calls if c[1] == "update"] == ["State=DRAIN"]


def test_a_transient_state_older_than_the_grace_period_drains(node):
    _set(_attr(node["root"], "mlx5_0", "ports/1/rate"), "")  # an empty rate file
    _config(node, consecutive=100, grace_s=60)
    scontrol = Scontrol(_line("show-node-not-responding.txt", "ibt-slurm-n2"))
    first = _main(["--config", node["path"], "--drain"], run=scontrol, now=1000.0)[1]
    assert first.startswith("mlx5_0 port 1 rate is unreadable (an empty or missing rate file)")
    assert "not drained yet" in first
    later = _main(["--config", node["path"], "--drain"], run=scontrol, now=1061.0)[1]
    assert later.endswith("; drained ibt-slurm-n2\n")


def test_the_maintenance_flag_pauses_the_check_and_a_stale_one_does_not(node):
    flag = node["tmp"] / "ibtune-maintenance"
    flag.write_text("rdma_stack: restarting openibd\n")
    _config(node, maintenance_flag=str(flag))
    _set(_attr(node["root"], "mlx5_1", "ports/1/state"), "1: DOWN")
    scontrol = Scontrol("")
    rc, out = _main(["--config", node["path"], "--drain"], run=scontrol, now=os.path.getmtime(str(flag)) + 5)
    assert (rc, scontrol.calls) == (0, [])
    assert (
        out
        == "OK: maintenance in progress (%s for 5s: rdma_stack: restarting openibd): not checked, not drained\n" % flag
    )
    rc, out = _main(["--config", node["path"], "--no-drain"], now=os.path.getmtime(str(flag)) + 7201)
    assert rc == 1 and out.startswith("mlx5_1 port 1 is DOWN")


def test_a_saturated_gated_counter_is_a_problem(node):
    _set(_attr(node["root"], "mlx5_0", "ports/1/counters/symbol_error"), "65535")
    rc, out = _main(["--config", node["path"]])
    assert rc == 1 and out.startswith(
        "mlx5_0 port 1 symbol_error saturated at 65535 (16 bits): reset it (perfquery -R) or read the extended counters"
    )


@pytest.mark.parametrize("content", ["[1, 2]", "{not json", '{"mlx5_0:1": {"symbol_error": "many"}}'])
def test_a_corrupt_state_file_is_rebuilt_with_a_warning(node, content):
    state = node["tmp"] / "state"
    state.mkdir()
    (state / "counters.json").write_text(content)
    rc, out = _main(["--config", node["path"]])
    assert rc == 0 and out.startswith("OK [warning: state file %s was corrupt (" % (state / "counters.json"))
    assert out.endswith("): rebuilt]\n")
    assert _main(["--config", node["path"]]) == (0, "OK\n")  # the next check reads the rebuilt file


def test_a_healthy_check_resumes_only_its_own_drain(node):
    _set(_attr(node["root"], "mlx5_1", "ports/1/state"), "1: DOWN")
    scontrol = Scontrol(_line("show-node-not-responding.txt", "ibt-slurm-n2"))
    assert _main(["--config", node["path"], "--drain"], run=scontrol)[1].endswith("; drained ibt-slurm-n2\n")
    _set(_attr(node["root"], "mlx5_1", "ports/1/state"), "4: ACTIVE")
    held = _fleet_text(
        1, {"ibt-slurm-n2": ("ibtune: node-health: mlx5_1 port 1 is DOWN 2026-12-01", "2026-12-01T07:00:00")}
    )
    scontrol = Scontrol(held)
    assert _main(["--config", node["path"], "--drain"], run=scontrol) == (
        0, "OK; resumed ibt-slurm-n2 (its health-check drain: healthy again)\n"
    )  # fmt: skip
    assert [c[-1] if c[1] == "update" else "show" for c in scontrol.calls] == ["show", "State=RESUME"]
    # once resumed, a healthy node asks slurmctld nothing again
    scontrol = Scontrol(held)
    assert _main(["--config", node["path"], "--drain"], run=scontrol) == (0, "OK\n") and scontrol.calls == []


def test_a_healthy_check_never_resumes_another_sources_drain(node):
    _set(_attr(node["root"], "mlx5_1", "ports/1/state"), "1: DOWN")
    _main(["--config", node["path"], "--drain"], run=Scontrol(_line("show-node-not-responding.txt", "ibt-slurm-n2")))
    _set(_attr(node["root"], "mlx5_1", "ports/1/state"), "4: ACTIVE")
    # since then a validation drained it again with its own reason: the health check leaves it
    held = _fleet_text(
        1, {"ibt-slurm-n2": ("ibtune: bad link mlx5_1 (183.0 Gb/s < 360.0 Gb/s)", "2026-12-01T08:00:00")}
    )
    scontrol = Scontrol(held)
    assert _main(["--config", node["path"], "--drain"], run=scontrol) == (0, "OK\n")
    assert [c[1] for c in scontrol.calls] == ["show"]


class SharedSlurmctld:
    """One slurmctld's node table that several racing health checks read and drain at once (threads): a drain
    stamps the reason with the second it happened, as slurmctld does."""

    def __init__(self, names):
        self.lock = threading.Lock()
        self.held = {}
        self.names = names
        self.first_reads = threading.Barrier(len(names))  # every node has read the fleet before any drains
        self.seen = threading.local()

    def __call__(self, argv):
        if argv[1] == "show":
            with self.lock:
                text = self.show()
            if not getattr(self.seen, "read", False):
                self.seen.read = True
                self.first_reads.wait()
            return 0, text
        with self.lock:
            name, state = argv[2].split("=", 1)[1], argv[3]
            if state == "State=DRAIN":
                reason = argv[4].split("=", 1)[1]
                self.held[name] = (reason, time.strftime("%Y-%m-%dT%H:%M:%S"))
            elif state == "State=RESUME":
                self.held.pop(name, None)
            return 0, ""

    def show(self):
        head = _line("show-node-not-responding.txt", "ibt-slurm-n2").strip().split(" Reason=", maxsplit=1)[0]
        lines = []
        for name in self.names:
            text = head.replace("ibt-slurm-n2", name)
            if name in self.held:
                reason, when = self.held[name]
                text = text.replace("State=IDLE+NOT_RESPONDING ", "State=IDLE+DRAIN ")
                text += " Reason=%s [root@%s]" % (reason, when)
            lines.append(text)
        return "\n".join(lines) + "\n"


def test_nodes_failing_at_the_same_moment_drain_no_more_than_the_fleet_limit(tmp_path):
    names = ["ibt-slurm-n0", "ibt-slurm-n1", "ibt-slurm-n2"]
    slurmctld = SharedSlurmctld(names)
    notes = {}

    def check(name):
        config = node_health.normalise_config(
            {
                "ports": ["mlx5_0:1"],
                "node_name": name,
                "fleet_max_drain_fraction": 0.5,
                "fleet_settle_s": 0.5,
                "state_dir": str(tmp_path / name),
            }
        )
        notes[name] = node_health.drain_own_node(config, "mlx5_0 port 1 is DOWN", "2026-12-02", run=slurmctld)

    threads = [threading.Thread(target=check, args=(name,)) for name in names]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    # the limit for 3 nodes at 0.5 is 1: the first drained (by its reason's second, then by name) stays
    assert len(slurmctld.held) == 1, slurmctld.held
    stays = next(iter(slurmctld.held))
    assert notes.pop(stays) == "drained %s" % stays
    assert sorted(notes.values()) == sorted(
        "drained and resumed %s: other nodes reached the fleet limit at the same moment" % n for n in notes
    )
