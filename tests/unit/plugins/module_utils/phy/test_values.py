"""The values mlxlink and ibdiagnet print: the no-errors sentinel is 0, N/A is unknown, malformed is refused."""

import pytest

from ansible_collections.ibtune.fabric.plugins.module_utils.phy import values as v


@pytest.mark.parametrize("text", ["15E-255", "\x1b[32m15E-255\x1b[0m", "1.500000e-254", "1.5e-254"])
def test_the_no_errors_sentinel_is_zero_not_a_tiny_rate(text):
    assert v.ber(text) == 0.0
    assert v.is_no_errors(text)


@pytest.mark.parametrize(
    "text, rate", [("5E-10", 5e-10), ("1E-9", 1e-9), ("2E-7", 2e-7), ("5.000000e-08", 5e-08), ("1e-12", 1e-12)]
)
def test_a_real_rate_is_kept(text, rate):
    assert v.ber(text) == pytest.approx(rate)
    assert not v.is_no_errors(text)


@pytest.mark.parametrize("text", ["N/A", "", "  ", "-", None])
def test_not_available_is_unknown_never_zero(text):
    assert v.ber(text) is None
    assert v.number(text) is None
    assert v.count(text) is None
    assert v.with_range(text) == (None, None, None)


@pytest.mark.parametrize("text", ["E-10", "5E-", "abc", "1.5", "2", "5E-10x", "inf"])
def test_a_malformed_ber_is_refused(text):
    if text in ("1.5", "2"):  # a number above 1 is no rate
        with pytest.raises(v.BadValue):
            v.ber(text)
        return
    with pytest.raises(v.BadValue):
        v.ber(text)


@pytest.mark.parametrize("text", ["3.2V", "12 34", "nan", "inf", "0x10"])
def test_a_malformed_number_is_refused_not_mined_for_digits(text):
    with pytest.raises(v.BadValue):
        v.number(text)


@pytest.mark.parametrize("text", ["-1", "12.5", "1e3"])
def test_a_counter_is_a_whole_non_negative_number(text):
    with pytest.raises(v.BadValue):
        v.count(text)


def test_values_with_the_modules_alarm_range():
    assert v.with_range("61 [-10..80]") == ([61.0], -10.0, 80.0)
    assert v.with_range("3.583,3.253,3.233,2.658 [-9.914..6.999]") == ([3.583, 3.253, 3.233, 2.658], -9.914, 6.999)
    assert v.with_range("1.886,1.989,2.281,1.976 [-10.41..6]") == ([1.886, 1.989, 2.281, 1.976], -10.41, 6.0)
    assert v.with_range("54 [-5..75]") == ([54.0], -5.0, 75.0)


def test_an_na_lane_inside_a_range_stays_unknown():
    assert v.with_range("265.504,N/A,248.416,248.416 [40..480]") == ([265.504, None, 248.416, 248.416], 40.0, 480.0)


def test_lanes_from_json_and_text():
    assert v.lanes({"values": ["1E-10", "1E-9"]}, v.ber) == [1e-10, 1e-9]
    assert v.lanes("0,0,0,0", v.count) == [0, 0, 0, 0]
    assert v.lanes({"values": ["N/A"]}) is None
    assert v.lanes({"values": ["N/A", "N/A"]}) is None


@pytest.mark.parametrize(
    "speed, lanes, gbps",
    [
        ("400G", 4, 400.0),
        ("100G", 4, 100.0),
        ("IB-NDR", 4, 400.0),
        ("IB-NDR", 2, 200.0),
        ("HDR", 4, 200.0),
        ("N/A", 4, None),
    ],
)
def test_speed(speed, lanes, gbps):
    assert v.speed_gbps(speed, lanes) == gbps


def test_width():
    assert v.width_lanes("4x") == 4
    assert v.width_lanes("8x") == 8
    assert v.width_lanes("N/A") is None
