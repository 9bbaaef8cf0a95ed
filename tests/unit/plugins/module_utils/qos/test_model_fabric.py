"""ibtune_qos.mode follows the collection-wide fabric declaration (ibtune_fabric.link_layer) when not given."""

import pytest

from ansible_collections.ibtune.fabric.plugins.module_utils.qos.model import (
    QosModelError,
    check_layers,
    mode_for_fabric,
    nccl_qos_env,
    normalize_model,
)

IB = {"link_layer": "InfiniBand", "rate_gbps": 400, "rails": 8}
ROCE = {"link_layer": "Ethernet", "rate_gbps": 400, "rails": 8}


@pytest.mark.parametrize(
    ("model", "fabric", "mode"),
    [
        ({}, IB, "infiniband"),
        ({"ib_sl": 3}, IB, "infiniband"),
        ({}, ROCE, "roce_lossless"),
        ({"mode": None}, IB, "infiniband"),
        # nothing declared: the model's default, as before the fabric declaration existed
        ({}, None, "roce_lossless"),
        ({}, {}, "roce_lossless"),
        ({"mode": "infiniband"}, {}, "infiniband"),
        # an explicit mode that agrees, or no QoS at all, is kept
        ({"mode": "infiniband"}, IB, "infiniband"),
        ({"mode": "roce_lossless"}, ROCE, "roce_lossless"),
        ({"mode": "none"}, IB, "none"),
        ({"mode": "none"}, ROCE, "none"),
    ],
)
def test_mode_follows_the_fabric(model, fabric, mode):
    assert normalize_model(model, fabric)["mode"] == mode


def test_infiniband_fabric_gives_nccl_its_sl_not_a_roce_tc():
    # Without the fabric the empty model is RoCE lossless (NCCL_IB_TC=106): wrong on an InfiniBand fabric.
    assert nccl_qos_env({"ib_sl": 2}) == {"NCCL_IB_TC": "106"}
    assert nccl_qos_env({"ib_sl": 2}, IB) == {"NCCL_IB_SL": "2"}
    assert nccl_qos_env({}, ROCE) == {"NCCL_IB_TC": "106"}


def test_resolved_model_is_stable():
    """A model normalised with the fabric normalises to itself again (roles pass it on to qos_check)."""
    once = normalize_model({"ib_sl": 1}, IB)
    assert normalize_model(once) == once
    assert normalize_model(once, IB) == once
    assert check_layers(once, nccl_env={"NCCL_IB_SL": "1"})["errors"] == []


@pytest.mark.parametrize(
    ("mode", "fabric", "implied"),
    [("roce_lossless", IB, "infiniband"), ("infiniband", ROCE, "roce_lossless")],
)
def test_contradicting_mode_fails_naming_both(mode, fabric, implied):
    with pytest.raises(QosModelError) as err:
        normalize_model({"mode": mode}, fabric)
    message = str(err.value)
    assert "ibtune_qos.mode=%r" % mode in message
    assert "ibtune_fabric.link_layer=%r" % fabric["link_layer"] in message
    assert "implies mode %r" % implied in message
    assert message.count(".") >= 1 and "\n" not in message


def test_unknown_link_layer_and_bad_mode_fail():
    with pytest.raises(QosModelError, match=r"ibtune_fabric.link_layer='RoCE' is not InfiniBand or Ethernet"):
        mode_for_fabric(None, {"link_layer": "RoCE"})
    # an invalid mode is reported as such, not as a contradiction
    with pytest.raises(QosModelError, match=r"ibtune_qos.mode='lossy' is not one of"):
        normalize_model({"mode": "lossy"}, IB)
