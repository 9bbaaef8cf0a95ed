"""ib_facts and ib_counters run in-process against fixture trees."""

import os

from ansible_collections.ibtune.fabric.plugins.modules import ib_counters, ib_facts
from tests.conftest import FIXTURES
from tests.lab.sysfs_tree import build_tree, load_spec
from tests.unit.modules_harness import run_module


def _tree(tmp_path):
    return build_tree(str(tmp_path / "sys"), load_spec(str(FIXTURES / "sysfs" / "mixed-node.json")))


def test_ib_facts_returns_facts(tmp_path):
    root = _tree(tmp_path)
    result = run_module(ib_facts, {"sysfs_root": root})
    assert not result.failed
    assert result["changed"] is False
    facts = result["ansible_facts"]["ibtune_rdma"]
    assert facts["devices"]["mlx5_0"]["ports"]["1"]["rate_gbps"] == 400.0
    assert facts["active_ports"][0] == "mlx5_0:1"
    assert result["msg"] == "found 5 RDMA devices, 4 active ports"


def test_ib_facts_no_devices_is_not_a_failure(tmp_path):
    result = run_module(ib_facts, {"sysfs_root": str(tmp_path)})
    assert not result.failed
    assert result["ansible_facts"]["ibtune_rdma"]["devices"] == {}
    assert "no RDMA devices" in result["msg"]


def test_ib_facts_bad_root_names_it(tmp_path):
    result = run_module(ib_facts, {"sysfs_root": str(tmp_path / "nope")})
    assert result.failed
    assert str(tmp_path / "nope") in result["msg"]


def test_ib_counters_fails_naming_device_port_counter(tmp_path):
    root = _tree(tmp_path)
    before = run_module(ib_counters, {"sysfs_root": root})["counters"]
    with open(os.path.join(root, "class/infiniband/mlx5_0/ports/1/counters/symbol_error"), "w") as handle:
        handle.write("12")
    result = run_module(ib_counters, {"sysfs_root": root, "previous": before})
    assert result.failed
    assert "mlx5_0 port 1 symbol_error rose by 2 (10 -> 12, allowed 0)" in result["msg"]
    soft = run_module(ib_counters, {"sysfs_root": root, "previous": before, "fail_on_violation": False})
    assert not soft.failed
    assert soft["violations"][0]["delta"] == 2


def test_ib_counters_bad_threshold(tmp_path):
    result = run_module(ib_counters, {"sysfs_root": _tree(tmp_path), "thresholds": {"symbol_error": "many"}})
    assert result.failed
    assert "thresholds.symbol_error" in result["msg"]


def test_ib_counters_check_mode_reads_anyway(tmp_path):
    # the fixture's mlx5_3 has gated counters at their maximum, which fail the port (issue 20): read only here
    result = run_module(ib_counters, {"sysfs_root": _tree(tmp_path), "fail_on_violation": False}, check_mode=True)
    assert not result.failed
    assert result["counters"]["mlx5_0:1"]["symbol_error"] == 10
    assert any(s["counter"] == "local_link_integrity_errors" and s["gated"] for s in result["saturated"])
