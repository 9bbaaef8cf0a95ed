"""Counter snapshots, deltas, saturation and violations (the 'fail on error counters' gate)."""

import os
import shutil

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ansible_collections.ibtune.fabric.plugins.module_utils.host import counters
from tests.conftest import CORPUS, FIXTURES
from tests.lab.sysfs_tree import build_tree, load_spec


@pytest.fixture
def tree(tmp_path):
    return build_tree(str(tmp_path / "sys"), load_spec(str(FIXTURES / "sysfs" / "mixed-node.json")))


def _set(root, dev, port, name, value, hw=False):
    path = os.path.join(root, "class", "infiniband", dev, "ports", str(port), "hw_counters" if hw else "counters", name)
    with open(path, "w") as handle:
        handle.write(str(value))


def test_snapshot_reads_values_and_skips_na(tree):
    snap = counters.snapshot(tree)
    assert snap["mlx5_0:1"]["symbol_error"] == 10
    assert snap["mlx5_0:1"]["port_xmit_wait"] == 2489603687
    # "N/A (no PMA)" is not a number: left out, not a crash.
    assert "port_rcv_remote_physical_errors" not in snap["mlx5_3:1"]
    assert "out_of_sequence" not in snap["mlx5_bond_0:1"]
    with_hw = counters.snapshot(tree, include_hw_counters=True)
    assert with_hw["mlx5_bond_0:1"]["out_of_sequence"] == 12


def test_corpus_counter_file_reads(tmp_path):
    root = build_tree(str(tmp_path), {"devices": {"mlx5_6": {}}})
    shutil.copy(
        CORPUS / "sysfs-counters__port_xmit_wait-single-value-h100.txt",
        os.path.join(root, "class", "infiniband", "mlx5_6", "ports", "1", "counters", "port_xmit_wait"),
    )
    assert counters.snapshot(root)["mlx5_6:1"]["port_xmit_wait"] == 2489603687


def test_symbol_error_10_to_12_is_a_violation_naming_it(tree):
    before = counters.snapshot(tree)
    _set(tree, "mlx5_0", 1, "symbol_error", 12)
    _set(tree, "mlx5_0", 1, "port_xmit_wait", 2999999999)
    after = counters.snapshot(tree)
    found = counters.violations(before, after)
    assert found == [
        {
            "device": "mlx5_0",
            "port": 1,
            "counter": "symbol_error",
            "before": 10,
            "after": 12,
            "delta": 2,
            "allowed": 0,
            "category": "physical",
        }
    ]
    message = counters.describe_violations(found, host="node4")
    assert "node4 mlx5_0 port 1 symbol_error rose by 2 (10 -> 12, allowed 0)" in message
    # Congestion grows but is not gated by default...
    assert counters.deltas(before, after)["mlx5_0:1"]["port_xmit_wait"] == 510396312
    # ...unless the user asks for it.
    gated = counters.violations(before, after, {"port_xmit_wait": 1000})
    assert [v["counter"] for v in gated] == ["port_xmit_wait", "symbol_error"]
    assert gated[0]["category"] == "congestion"


def test_threshold_allows_increase_and_negative_disables(tree):
    before = counters.snapshot(tree)
    _set(tree, "mlx5_0", 1, "symbol_error", 15)
    after = counters.snapshot(tree)
    assert counters.violations(before, after, {"symbol_error": 5}) == []
    assert counters.violations(before, after, {"symbol_error": -1}) == []
    assert len(counters.violations(before, after, {"symbol_error": 4})) == 1


def test_saturated_counters_listed(tree):
    sat = counters.saturated(counters.snapshot(tree))
    assert {"device": "mlx5_3", "port": 1, "counter": "local_link_integrity_errors", "value": 15, "width": 4,
            "source": "sysfs", "gated": True} in sat  # fmt: skip
    assert {"device": "mlx5_3", "port": 1, "counter": "symbol_error", "value": 65535, "width": 16,
            "source": "sysfs", "gated": True} in sat  # fmt: skip
    assert all(s["device"] == "mlx5_3" for s in sat)


def test_saturation_is_gated_only_where_an_increase_fails_the_port():
    snap = {"mlx5_0:1": {"symbol_error": 65535, "port_xmit_wait": 4294967295, "link_downed": 255}}
    gated = dict((s["counter"], s["gated"]) for s in counters.saturated(snap))
    assert gated == {"symbol_error": True, "link_downed": True, "port_xmit_wait": False}
    gated = dict(
        (s["counter"], s["gated"]) for s in counters.saturated(snap, {"port_xmit_wait": 1000, "link_downed": -1})
    )
    assert gated == {"symbol_error": True, "link_downed": False, "port_xmit_wait": True}
    text = counters.describe_saturated([s for s in counters.saturated(snap) if s["gated"]], host="gpu07")
    assert text.startswith("Gated counters saturated: gpu07 mlx5_0 port 1 link_downed = 255 (8 bits); ")
    assert text.endswith("reset them (perfquery -R) or read the extended counters (perfquery -x).")


def test_widths_come_from_one_table_per_source():
    assert counters.width("port_xmit_wait", "sysfs") == counters.width("port_xmit_wait", "pma") == 32
    assert counters.width("port_xmit_wait", "pma_ext") == 64 and counters.width("symbol_error", "pma_ext") == 64
    assert counters.width("symbol_error", "sysfs") == 16 and counters.width("port_xmit_data", "sysfs") is None
    # a 64-bit PortXmitWait read with perfquery -x is not "saturated at 32 bits"
    snap = {"0x1:1": {"port_xmit_wait": 4294967295}}
    assert counters.saturated(snap, source="pma_ext") == []
    assert [s["width"] for s in counters.saturated(snap, source="pma")] == [32]
    with pytest.raises(ValueError, match="counter source must be one of sysfs, pma, pma_ext"):
        counters.width("symbol_error", "snmp")


def test_driver_without_counters_dir(tmp_path):
    root = build_tree(str(tmp_path), {"devices": {"rxe0": {"ports": {"1": {"counters": False}}}}})
    snap = counters.snapshot(root)
    assert snap == {"rxe0:1": {}}
    assert counters.violations(snap, snap) == []


def test_counter_reset_counts_new_value():
    before = {"mlx5_0:1": {"link_downed": 200}}
    after = {"mlx5_0:1": {"link_downed": 1}}
    assert counters.deltas(before, after) == {"mlx5_0:1": {"link_downed": 1}}
    assert counters.violations(before, after)[0]["delta"] == 1


@pytest.mark.parametrize(
    ("name", "category"),
    [
        ("symbol_error", "physical"),
        ("port_rcv_errors", "physical"),
        ("port_xmit_wait", "congestion"),
        ("np_cnp_sent", "congestion"),
        ("out_of_sequence", "loss"),
        ("port_xmit_data", "other"),
    ],
)
def test_categories(name, category):
    assert counters.category(name) == category


@given(
    st.dictionaries(st.sampled_from(sorted(counters.COUNTER_WIDTHS)), st.integers(0, 2**16)),
    st.dictionaries(st.sampled_from(sorted(counters.COUNTER_WIDTHS)), st.integers(0, 2**16)),
)
def test_violation_iff_physical_increase(before_values, increments):
    before = {"mlx5_0:1": before_values}
    after = {"mlx5_0:1": {k: v + increments.get(k, 0) for k, v in before_values.items()}}
    found = {v["counter"] for v in counters.violations(before, after)}
    expected = {k for k in before_values if increments.get(k, 0) > 0 and k in counters.PHYSICAL}
    assert found == expected


@given(st.text())
def test_parse_counter_never_raises(text):
    counters.parse_counter(text)


def test_unknown_threshold_names_are_reported_with_did_you_mean():
    found = counters.unknown_thresholds({"link_down": 0, "symbol_error": 0, "zzzz": 1})
    assert found == [
        "thresholds.link_down names no counter of ports/<n>/counters or hw_counters (did you mean link_downed?):"
        " correct the name, or it gates nothing.",
        "thresholds.zzzz names no counter of ports/<n>/counters or hw_counters: correct the name, or it gates nothing.",
    ]


def test_a_counter_a_port_has_is_known_even_if_not_listed():
    assert counters.unknown_thresholds({"vendor_err": 0}, {"mlx5_0:1": {"vendor_err": 3}}) == []


def test_port_xmit_wait_is_32_bit_and_saturates(tmp_path):
    # The 32-bit maximum of PortXmitWait, as ibqueryerrors shows it on a congested switch port in the corpus.
    text = (CORPUS / "ibqueryerrors__sx6036-switch-and-hcas-many-errors-maxed-xmitwait.txt").read_text()
    assert "PortXmitWait == 4294967295" in text
    root = build_tree(
        str(tmp_path), {"devices": {"mlx5_0": {"ports": {1: {"counters": {"port_xmit_wait": 4294967295}}}}}}
    )
    sat = counters.saturated(counters.snapshot(root))
    assert {"device": "mlx5_0", "port": 1, "counter": "port_xmit_wait", "value": 4294967295, "width": 32,
            "source": "sysfs", "gated": False} in sat  # fmt: skip
