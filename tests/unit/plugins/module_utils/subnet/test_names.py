"""GUID and name spellings (names.py)."""

from ansible_collections.ibtune.fabric.plugins.module_utils.subnet.names import (
    is_factory_description,
    normalize_guid,
    short_name,
    split_description,
)


def test_normalize_guid_spellings():
    assert normalize_guid("0c42:a103:0065:3e1c") == "0x0c42a10300653e1c"
    assert normalize_guid("H-e09d7303007a5a68") == "0xe09d7303007a5a68"
    assert normalize_guid("0x2c9030042dff1") == "0x0002c9030042dff1"
    assert normalize_guid("not-a-guid") is None


def test_split_description():
    assert split_description("node12 mlx5_3") == ("node12", "mlx5_3")
    assert split_description("node12 HCA-3") == ("node12", "HCA-3")
    assert split_description("MT4129 ConnectX7   Mellanox Technologies") == (None, None)
    assert split_description("Mellanox Technologies Aggregation Node") == (None, None)
    assert is_factory_description("ubuntu mlx5_1")
    assert short_name("MF0;B10-P1-IBSPINE-08:MQM9701/U1") == "B10-P1-IBSPINE-08"
