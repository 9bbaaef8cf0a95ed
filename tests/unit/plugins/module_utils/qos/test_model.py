"""The QoS model, NCCL_IB_TC arithmetic and the cross-layer checks."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ansible_collections.ibtune.fabric.plugins.module_utils.qos.mlnx import parse_mlnx_qos
from ansible_collections.ibtune.fabric.plugins.module_utils.qos.model import (
    DEFAULT_MODEL,
    QosModelError,
    check_layers,
    nccl_qos_env,
    nccl_tc,
    normalize_model,
    parse_sl2vl,
    parse_vlarb,
    tc_to_dscp,
    vl_weights,
)
from tests.conftest import read_corpus

LOSSLESS_HOST = {"trust": "dscp", "pfc": [0, 0, 0, 1, 0, 0, 0, 0], "dscp2prio": {26: 3, 48: 6}}


@pytest.mark.parametrize(
    ("dscp", "ecn", "tc"),
    [(26, "ect0", 106), (26, "ect1", 105), (26, "none", 104), (10, "ect1", 41), (0, "none", 0), (63, "ect0", 254)],
)
def test_nccl_tc(dscp, ecn, tc):
    assert nccl_tc(dscp, ecn) == tc
    assert tc_to_dscp(tc) == (dscp, ecn)


@pytest.mark.parametrize(("dscp", "ecn"), [(64, "ect0"), (-1, "ect0"), (True, "ect0"), ("x", "ect0"), (26, "ce")])
def test_nccl_tc_rejects(dscp, ecn):
    with pytest.raises(QosModelError):
        nccl_tc(dscp, ecn)


@given(st.integers(0, 63), st.sampled_from(["ect0", "ect1", "none"]))
def test_tc_roundtrip(dscp, ecn):
    tc = nccl_tc(dscp, ecn)
    assert 0 <= tc <= 255
    assert tc_to_dscp(tc) == (dscp, ecn)


def test_defaults_are_nvidias_recipe():
    model = normalize_model({})
    assert model == DEFAULT_MODEL
    assert (model["roce_dscp"], model["roce_priority"], model["cnp_dscp"], model["cnp_priority"]) == (26, 3, 48, 6)
    assert nccl_qos_env({}) == {"NCCL_IB_TC": "106"}
    assert nccl_qos_env({"mode": "infiniband", "ib_sl": 2}) == {"NCCL_IB_SL": "2"}
    assert nccl_qos_env({"mode": "none"}) == {}


@pytest.mark.parametrize(
    ("model", "match"),
    [
        ({"roce_dscp": 64}, "roce_dscp=64 is out of range"),
        ({"mode": "lossy"}, "mode='lossy' is not one of"),
        ({"ecn": "yes"}, "ecn='yes'"),
        ({"cnp_priority": 3}, "cnp_priority=3 equals roce_priority"),
        ({"bogus": 1}, "unknown key"),
        ({"ib_vlarb_low": "0:64,1"}, "bad entry '1'"),
        ({"ib_vlarb_high": "0:300"}, "weight 0..255"),
        ({"ib_sl2vl": "0,1,2"}, "16 comma-separated VLs"),
        ({"mode": "infiniband", "ib_max_vls": 2}, "sends SLs to VL 2,3,4,5,6,7, but ib_max_vls=2"),
    ],
)
def test_model_errors_name_key_and_value(model, match):
    with pytest.raises(QosModelError, match=match):
        normalize_model(model)


def test_vlarb_and_sl2vl_parsing():
    assert parse_vlarb("0:4,1:0") == [(0, 4), (1, 0)]
    assert parse_sl2vl(DEFAULT_MODEL["ib_sl2vl"])[8] == 0
    weights = vl_weights(normalize_model({}))
    assert weights[0] == (4, 64) and weights[7] == (0, 64)


# --- check_layers: RoCE ---------------------------------------------------------------------------------


def test_seed_value_41_is_named_with_both_sides():
    report = check_layers({}, {"NCCL_IB_TC": "41"})
    assert report["errors"] == [
        "NCCL_IB_TC=41 marks DSCP 10, but lossless traffic is DSCP 26 on priority 3: set NCCL_IB_TC=106."
    ]


def test_agreeing_layers_have_no_errors():
    report = check_layers({}, {"NCCL_IB_TC": 106}, LOSSLESS_HOST, {"trust": "both", "pfc": "0,0,0,1,0,0,0,0"})
    assert report["errors"] == [] and report["warnings"] == []
    assert report["expected"] == {"NCCL_IB_TC": "106"}


def test_corpus_host_state_agrees_with_the_default_model():
    # Both real samples are configured as NVIDIA recommends: no errors against the default model.
    state = parse_mlnx_qos(read_corpus("mlnx_qos__os-controlled-dscp-trust-pfc3-tsa-vendor.txt"))
    assert check_layers({}, {"NCCL_IB_TC": "106"}, state)["errors"] == []
    # ... and priority 4 as lossless class is caught on that same host.
    errors = check_layers({"roce_priority": 4}, {"NCCL_IB_TC": "106"}, state)["errors"]
    assert any("has no PFC on priority 4" in e for e in errors)
    assert any("PFC on priorities 3, but only priority 4" in e for e in errors)
    assert any("maps DSCP 26 to priority 3, but lossless traffic is DSCP 26 on priority 4" in e for e in errors)


def test_ecn_bits_disagree():
    errors = check_layers({}, {"NCCL_IB_TC": "104"})["errors"]
    assert errors == ["NCCL_IB_TC=104 carries ECN bits none, but the model's ECN marking is ect0: set NCCL_IB_TC=106."]


def test_unset_tc_is_dscp_0_unless_the_host_overrides():
    errors = check_layers({}, {})["errors"]
    assert errors == [
        "NCCL_IB_TC is not set, so NCCL marks DSCP 0, but lossless traffic is DSCP 26 on priority 3: "
        "set NCCL_IB_TC=106."
    ]
    report = check_layers({}, {}, dict(LOSSLESS_HOST, traffic_class=106))
    assert report["errors"] == [] and "global traffic class 106" in report["warnings"][0]


@pytest.mark.parametrize("value", ["abc", "300", "-2", "0400", "9223372036854775808"])
def test_bad_tc_values(value):
    errors = check_layers({}, {"NCCL_IB_TC": value})["errors"]
    assert len(errors) == 1 and errors[0].startswith("NCCL_IB_TC=")


@pytest.mark.parametrize("value", ["0152", "0x6a", "0X6A", "106"])
def test_tc_is_read_as_nccls_strtoll_reads_it(value):
    """NCCL reads NCCL_IB_TC with strtoll(value, NULL, 0): "0152" is octal 106, "0x6a" hex 106."""
    assert check_layers({}, {"NCCL_IB_TC": value})["errors"] == []


def test_tc_with_trailing_text_is_read_as_nccl_reads_it():
    """ncclLoadParam does not check strtoll's end: "106 # lossless" is 106 to NCCL (with a warning here)."""
    report = check_layers({}, {"NCCL_IB_TC": "106 # lossless"})
    assert report["errors"] == []
    assert report["warnings"] == [
        "NCCL_IB_TC='106 # lossless': NCCL reads only the leading '106' (106) and ignores the rest; write 106."
    ]


def test_tc_with_a_leading_zero_is_octal_not_decimal():
    errors = check_layers({}, {"NCCL_IB_TC": "0106"})["errors"]
    assert errors == ["NCCL_IB_TC=70 marks DSCP 17, but lossless traffic is DSCP 26 on priority 3: set NCCL_IB_TC=106."]


@pytest.mark.parametrize("value", ["-1", -1])
def test_tc_minus_one_is_nccls_unset(value):
    errors = check_layers({}, {"NCCL_IB_TC": value})["errors"]
    assert len(errors) == 1 and errors[0].startswith("NCCL_IB_TC is not set, so NCCL marks DSCP 0")


def test_sl_minus_one_is_nccls_default_sl_0():
    assert check_layers(IB, {"NCCL_IB_SL": "-1"})["errors"] == []
    assert check_layers(IB, {"NCCL_IB_TC": "-1"})["warnings"] == []
    errors = check_layers(dict(IB, ib_sl=2), {"NCCL_IB_SL": "-1"})["errors"]
    assert errors == ["NCCL_IB_SL unset (SL 0), but the QoS model puts NCCL on SL 2: set NCCL_IB_SL=2."]


def test_cnp_dscp_equal_to_roce_dscp_is_refused():
    """Lossless data on the CNP DSCP would land in the strict CNP class, which has no PFC."""
    with pytest.raises(QosModelError, match="cnp_dscp=26 equals roce_dscp"):
        normalize_model({"cnp_dscp": 26})


def test_vlarb_weight_above_ib_max_vls_is_refused():
    model = {"mode": "infiniband", "ib_max_vls": 4, "ib_sl2vl": ",".join(["0"] * 16)}
    with pytest.raises(QosModelError, match=r"ib_vlarb_high gives weight to VL 5, but ib_max_vls=4"):
        normalize_model(dict(model, ib_vlarb_high="0:4,5:8", ib_vlarb_low="0:64"))
    with pytest.raises(QosModelError, match=r"ib_vlarb_low gives weight to VL 4,7"):
        normalize_model(dict(model, ib_vlarb_high="0:4", ib_vlarb_low="0:64,4:64,7:1"))
    # Zero weights above the limit schedule nothing and are accepted (OpenSM's own defaults list them).
    assert normalize_model(dict(model, ib_vlarb_high="0:4,5:0", ib_vlarb_low="0:64,1:64"))["ib_max_vls"] == 4


def test_host_without_pfc_and_with_extra_pfc_and_pcp_trust():
    host = {"trust": "pcp", "pfc": [0, 0, 0, 0, 1, 1, 0, 0], "dscp2prio": {}}
    errors = check_layers({}, {"NCCL_IB_TC": "106"}, host)["errors"]
    assert "the host trusts pcp, but the lossless class is chosen by DSCP 26" in errors[0]
    assert errors[1].startswith("the host has no PFC on priority 3 (PFC vector 0,0,0,0,1,1,0,0)")
    assert errors[2].startswith("the host has PFC on priorities 4,5, but only priority 3 is meant to be lossless")


def test_switch_state_string_keys_from_json():
    switch = {"trust": "l3", "pfc": "0,0,0,1,0,0,0,0", "dscp2prio": {"26": 2, "48": 5}}
    report = check_layers({}, {"NCCL_IB_TC": "106"}, None, switch)
    assert report["errors"] == ["the switch maps DSCP 26 to priority 2, but lossless traffic is DSCP 26 on priority 3."]
    assert report["warnings"] == ["the switch maps CNP DSCP 48 to priority 5, but the model sends CNPs on priority 6."]


def test_host_global_traffic_class_mismatch():
    errors = check_layers({}, {"NCCL_IB_TC": "106"}, dict(LOSSLESS_HOST, traffic_class=41))["errors"]
    assert errors == [
        "the host's global traffic class is 41 (DSCP 10), but lossless traffic is DSCP 26 on priority 3: "
        "write 106 to tc/1/traffic_class or unset it."
    ]


def test_mode_none_checks_nothing():
    assert check_layers({"mode": "none"}, {"NCCL_IB_TC": "41"})["errors"] == []


# --- check_layers: InfiniBand ---------------------------------------------------------------------------

IB = {"mode": "infiniband", "ib_sl": 0}


def test_ib_default_sl_served():
    assert check_layers(IB, {})["errors"] == []
    assert check_layers(IB, {"NCCL_IB_SL": "0"})["errors"] == []


def test_ib_sl_not_the_models():
    errors = check_layers(IB, {"NCCL_IB_SL": "3"})["errors"]
    assert errors == ["NCCL_IB_SL=3, but the QoS model puts NCCL on SL 0: set NCCL_IB_SL=0."]


def test_ib_sl_on_vl_with_no_weight():
    model = dict(IB, ib_sl=1, ib_vlarb_high="0:4", ib_vlarb_low="0:64,1:0")
    errors = check_layers(model, {"NCCL_IB_SL": "1"})["errors"]
    assert errors == [
        "NCCL_IB_SL=1 maps to VL 1, which has weight 0 in qos_vlarb_high and qos_vlarb_low: "
        "the VL is never scheduled; give VL 1 a weight."
    ]


def test_ib_sl_on_an_upper_sl_is_served_through_the_table():
    # SL 9 -> VL 1 in the default table, which has weight 64 in the low table.
    assert check_layers(dict(IB, ib_sl=9), {"NCCL_IB_SL": "9"})["errors"] == []


def test_ib_sl_out_of_range():
    errors = check_layers(IB, {"NCCL_IB_SL": "16"})["errors"]
    assert errors == ["NCCL_IB_SL=16 is out of range: use 0..15."]


def test_ib_tc_is_a_warning():
    report = check_layers(IB, {"NCCL_IB_TC": "106"})
    assert report["errors"] == [] and "InfiniBand fabric" in report["warnings"][0]


def test_unknown_dscp_entries_from_roce_qos_are_ignored():
    # roce_qos reports null for DSCPs mlnx_qos does not list (trust pcp prints no map).
    host = {"trust": "pcp", "pfc": [0] * 8, "dscp2prio": {"26": None, "48": None}}
    errors = check_layers({}, {"NCCL_IB_TC": "106"}, host)["errors"]
    assert len(errors) == 2 and errors[0].startswith("the host trusts pcp")
