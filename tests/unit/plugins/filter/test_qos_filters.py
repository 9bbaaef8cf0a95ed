"""The QoS filters as Jinja sees them."""

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.ibtune.fabric.plugins.filter.qos import FilterModule


FILTERS = FilterModule().filters()


def test_nccl_tc_filter():
    assert FILTERS["nccl_tc"](26) == 106
    assert FILTERS["nccl_tc"](26, "ect1") == 105
    assert FILTERS["nccl_tc"]("26", "none") == 104


def test_nccl_tc_filter_error_names_the_filter():
    with pytest.raises(AnsibleFilterError, match=r"^nccl_tc: dscp=64 is out of range 0..63."):
        FILTERS["nccl_tc"](64)


def test_qos_model_and_env_filters():
    assert FILTERS["qos_model"]({})["roce_dscp"] == 26
    assert FILTERS["qos_nccl_env"]({"mode": "infiniband", "ib_sl": 1}) == {"NCCL_IB_SL": "1"}
    with pytest.raises(AnsibleFilterError, match="ibtune_qos.ecn"):
        FILTERS["qos_model"]({"ecn": "maybe"})


def test_qos_filters_follow_the_fabric():
    fabric = {"link_layer": "InfiniBand", "rate_gbps": 400, "rails": 8}
    assert FILTERS["qos_model"]({}, fabric)["mode"] == "infiniband"
    assert FILTERS["qos_nccl_env"]({"ib_sl": 4}, fabric) == {"NCCL_IB_SL": "4"}
    with pytest.raises(AnsibleFilterError, match=r"ibtune_qos.mode='roce_lossless' contradicts ibtune_fabric"):
        FILTERS["qos_model"]({"mode": "roce_lossless"}, fabric)
