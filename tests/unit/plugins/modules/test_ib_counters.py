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
    result = run_module(ib_counters, {"sysfs_root": root, "thresholds": {"port_xmit_wait": 10, "out_of_sequence": 0}})
    assert not result.failed, result["msg"]
