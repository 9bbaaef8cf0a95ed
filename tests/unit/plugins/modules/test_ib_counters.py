"""ib_counters: a threshold for a counter that does not exist is an error naming it, with a did-you-mean."""

from ansible_collections.ibtune.fabric.plugins.modules import ib_counters
from tests.conftest import FIXTURES
from tests.lab.sysfs_tree import build_tree, load_spec
from tests.unit.modules_harness import run_module


def _tree(tmp_path):
    return build_tree(str(tmp_path / "sys"), load_spec(str(FIXTURES / "sysfs" / "mixed-node.json")))


def test_misspelled_threshold_fails_naming_the_counter_and_the_name_meant(tmp_path):
    result = run_module(ib_counters, {"sysfs_root": _tree(tmp_path), "thresholds": {"symbol_errors": 0}})
    assert result.failed
    assert result["msg"].startswith("thresholds.symbol_errors names no counter")
    assert "(did you mean symbol_error?)" in result["msg"]


def test_known_and_present_counter_names_pass(tmp_path):
    root = _tree(tmp_path)
    # port_xmit_wait: a kernel counter; out_of_sequence: an mlx5 hw_counter, known without reading hw_counters.
    args = {"sysfs_root": root, "thresholds": {"port_xmit_wait": 10, "out_of_sequence": 0}, "devices": ["mlx5_0"]}
    result = run_module(ib_counters, args)
    assert not result.failed, result["msg"]


def test_a_saturated_gated_counter_fails_the_port_with_the_fix(tmp_path):
    # the fixture's mlx5_3 has symbol_error at 65535 and local_link_integrity_errors at 15: no increase can show
    result = run_module(ib_counters, {"sysfs_root": _tree(tmp_path)})
    assert result.failed
    assert result["msg"].startswith("Gated counters saturated: mlx5_3 port 1 local_link_integrity_errors = 15 (4 bits)")
    assert result["msg"].endswith("reset them (perfquery -R) or read the extended counters (perfquery -x).")
    assert all(s["gated"] for s in result["saturated"])
    # a threshold below 0 turns the gate (and so the failure) off for that counter
    off = {"symbol_error": -1, "local_link_integrity_errors": -1}
    result = run_module(ib_counters, {"sysfs_root": _tree(tmp_path), "thresholds": off})
    assert not result.failed and not any(s["gated"] for s in result["saturated"])
