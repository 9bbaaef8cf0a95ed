"""The PHY gates over two real snapshots and mechanical variants of them."""

import copy
from pathlib import Path

import pytest

from ansible_collections.ibtune.fabric.plugins.module_utils.phy import gates, mlxlink

FIX = Path(__file__).resolve().parents[5] / "tests" / "fixtures" / "phy"
CFG = gates.settings()


def reading(name="mlxlink-4.34.1-json-ndr-osfp-dr4-fec-histogram-serdes.json"):
    return mlxlink.parse((FIX / name).read_text())


def two():
    """The same link (fw, module part, FEC) 833.8 minutes apart: the serdes capture, then the eye capture."""
    return reading(), reading("mlxlink-4.34.1-json-ndr-osfp-dr4-fec-histogram-eye.json")


def test_the_window_of_two_real_snapshots_is_their_time_since_clear_difference():
    before, after = two()
    win = gates.window(before, after)
    assert win["differenced"] and win["source"] == "time_since_clear"
    assert win["seconds"] == pytest.approx((5710.4 - 4876.6) * 60)


def test_the_lane_ber_over_the_window_agrees_with_mlxlinks_own():
    # mlxlink printed 1E-9 for lane 1 since the clear; the window's errors over 100 Gb/s lanes give 9.3e-10
    before, after = two()
    fig = gates.figures(before, after, gates.window(before, after))
    assert fig["raw_ber_lanes"][1] == pytest.approx(9.25e-10, rel=0.01)
    assert fig["effective_ber"] == 0.0 and fig["link_down"] == 0
    assert [d for _l, _h, d in fig["fec_rise"]][:9] == [3908199623655, 10684452, 1262, 27, 9, 0, 1, 0, 0]


def test_a_healthy_real_link_raises_nothing():
    before, after = two()
    found, _fig = gates.check_port(before, after, CFG)
    assert found == []


def test_a_cleared_counter_between_the_snapshots_makes_the_after_figures_stand_alone():
    before, after = two()
    after = copy.deepcopy(after)
    after["counters"]["time_since_clear_min"] = 3.0
    win = gates.window(before, after)
    assert win == {"seconds": 180.0, "source": "since_clear", "differenced": False, "cleared": True}


def test_a_single_snapshot_is_judged_since_its_last_clear():
    win = gates.window(None, reading())
    assert win["source"] == "since_clear" and win["seconds"] == pytest.approx(4876.6 * 60)


def bumped(**changes):
    before, after = two()
    after = copy.deepcopy(after)
    for key, value in changes.items():
        after["counters"][key] = value
    return before, after


def test_effective_errors_in_the_window_above_1e_12_fail():
    before, after = bumped(effective_errors=before_errors() + 500000)
    found, fig = gates.check_port(before, after, CFG)
    assert [f["check"] for f in found] == ["effective_ber"]
    assert found[0]["severity"] == "error" and fig["effective_ber"] > 1e-12


def before_errors():
    return two()[0]["counters"]["effective_errors"]


def test_any_effective_error_in_the_window_is_a_warning():
    before, after = bumped(effective_errors=before_errors() + 1)
    found, _fig = gates.check_port(before, after, CFG)
    assert [(f["check"], f["severity"]) for f in found] == [("effective_ber", "warning")]


def test_a_link_that_went_down_during_the_validation_fails():
    before, after = bumped(link_down=2)
    found, _fig = gates.check_port(before, after, CFG)
    assert [(f["check"], f["severity"], f["value"]) for f in found] == [("link_down", "error", 2)]
    assert "went down 2 times" in found[0]["msg"]


def test_a_rising_fec_tail_fails_a_quiet_one_does_not():
    before, after = two()
    after = copy.deepcopy(after)
    after["fec_histogram"][11][2] += 4
    found, _fig = gates.check_port(before, after, CFG)
    assert [(f["check"], f["value"]) for f in found] == [("fec_tail", 4)]
    found, _fig = gates.check_port(before, after, gates.settings({"fec_tail_bin": 12}))
    assert found == []


def test_a_hot_module_warns_at_65_and_fails_at_75_or_its_own_alarm():
    _before, after = two()
    for temperature, expected in ((64, []), (66, ["warning"]), (75, ["error"])):
        hot = copy.deepcopy(after)
        hot["module"]["temperature_c"] = float(temperature)
        assert [f["severity"] for f in gates.check_module(hot, CFG)] == expected
    hot = copy.deepcopy(after)
    hot["module"]["temperature_c"], hot["module"]["temperature_range"] = 70.0, [-5.0, 70.0]
    assert [f["severity"] for f in gates.check_module(hot, CFG)] == ["error"]


def test_optical_power_near_and_outside_the_alarm_range():
    _before, after = two()
    weak = copy.deepcopy(after)
    weak["module"]["rx_power_dbm"] = [3.5, -9.5, -10.5, 6.5]  # range -9.914..6.999
    found = gates.check_module(weak, CFG)
    assert [(f["check"], f["severity"], f["lane"]) for f in found] == [
        ("rx_power", "warning", 1),
        ("rx_power", "error", 2),
        ("rx_power", "warning", 3),
    ]


def test_na_module_fields_are_not_judged():
    m = reading("mlxlink-4.30.1-text-bluefield3-100g-dac-port0.txt")
    assert gates.check_module(m, CFG) == []
    found, fig = gates.check_port(None, m, CFG)
    assert found == [] and fig["effective_ber"] == 0.0


def test_faults_on_an_active_link():
    _before, after = two()
    bad = copy.deepcopy(after)
    bad["module"]["faults"]["rx_los"] = [0, 1, 0, 0]
    bad["module"]["faults"]["datapath_fw_fault"] = 1
    assert [f["check"] for f in gates.check_module(bad, CFG)] == ["rx_los", "datapath_fw_fault"]
    bad["link"]["state"] = "Down"  # LOS on a link that is down is what down means, not a module fault
    assert [f["check"] for f in gates.check_module(bad, CFG)] == ["datapath_fw_fault"]


def fig(lanes, gbps=100.0, source="time_since_clear"):
    return {"raw_ber_lanes": lanes, "lane_gbps": gbps, "window_s": 60.0, "source": source}


def test_a_lane_far_above_the_fabrics_median_is_an_outlier():
    healthy = [fig([2e-10, 6e-10, 3e-10, 4e-10]) for _host in range(7)]
    sick = fig([2e-10, 6e-10, 2e-7, 4e-10])
    found = gates.raw_ber_outliers(healthy + [sick], CFG)
    assert list(found) == [7]
    assert [(f["check"], f["severity"], f["lane"]) for f in found[7]] == [("raw_ber_outlier", "warning", 2)]


def test_healthy_ndr_lanes_between_1e_10_and_1e_9_are_no_outliers():
    figs = [fig([1e-10, 1e-9, 4e-10, 5e-10]), fig([1e-10, 1e-9, 5e-10, 5e-10]), fig([2e-9, 1e-10, 3e-10, 8e-10])]
    assert gates.raw_ber_outliers(figs, CFG) == {}


def test_lanes_of_other_speeds_are_not_compared():
    figs = [fig([1e-12] * 4, gbps=25.0), fig([1e-12] * 4, gbps=25.0), fig([5e-9] * 4, gbps=100.0)]
    assert gates.raw_ber_outliers(figs, CFG) == {}


def test_bad_thresholds_are_refused():
    with pytest.raises(ValueError, match="unknown PHY threshold 'effective_ber'"):
        gates.settings({"effective_ber": 1e-12})
    with pytest.raises(ValueError, match="must be a number"):
        gates.settings({"fec_tail_bin": "10"})
    with pytest.raises(ValueError, match="must not be above"):
        gates.settings({"temperature_warn_c": 80})
