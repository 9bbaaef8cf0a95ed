"""ib_facts' readers against fixture trees shaped like real kernels and the corpus' raw sysfs files."""

import os
import shutil

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ansible_collections.ibtune.fabric.plugins.module_utils.host import sysfs
from tests.conftest import CORPUS, FIXTURES
from tests.lab.sysfs_tree import build_tree, load_spec


@pytest.fixture
def mixed_tree(tmp_path):
    return build_tree(str(tmp_path / "sys"), load_spec(str(FIXTURES / "sysfs" / "mixed-node.json")))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("400 Gb/sec (4X NDR)", (400.0, 4, "NDR")),
        ("2.5 Gb/sec (1X SDR)", (2.5, 1, "SDR")),
        ("200 Gb/sec (2X NDR)", (200.0, 2, "NDR")),
        ("56 Gb/sec (4X FDR)", (56.0, 4, "FDR")),
        ("40 Gb/sec (4X FDR10)", (40.0, 4, "FDR10")),
        ("800 Gb/sec (4X XDR)", (800.0, 4, "XDR")),
        ("100 Gb/sec", (100.0, None, None)),
        ("25 Gb/sec (1X EDR)\n", (25.0, 1, "EDR")),
        ("", (None, None, None)),
        (None, (None, None, None)),
        ("garbage", (None, None, None)),
    ],
)
def test_parse_rate(text, expected):
    assert sysfs.parse_rate(text) == expected


def test_parse_rate_corpus_file_with_newline():
    # Raw /sys/class/infiniband/mlx4_0/ports/1/rate of an Azure H16r VM (ends in "\n").
    raw = (CORPUS / "sysfs-rate__mlx4-1x-ddr-5gbps-azure-h16r.txt").read_text()
    assert raw.endswith("\n")
    assert sysfs.parse_rate(sysfs.read_text(str(CORPUS / "sysfs-rate__mlx4-1x-ddr-5gbps-azure-h16r.txt"))) == (
        5.0,
        1,
        "DDR",
    )


def test_enum_states_without_trailing_newline():
    path = CORPUS / "sysfs-phys_state__mlx5-linkup-h100-no-trailing-newline.txt"
    assert not path.read_bytes().endswith(b"\n")
    assert sysfs.parse_enum(sysfs.read_text(str(path)), sysfs.PHYS_STATES) == "LinkUp"
    assert sysfs.parse_enum("4: ACTIVE", sysfs.PORT_STATES) == "ACTIVE"
    assert sysfs.parse_enum("1: DOWN\n", sysfs.PORT_STATES) == "DOWN"


@given(st.text())
def test_parsers_never_raise(text):
    sysfs.parse_rate(text)
    sysfs.parse_enum(text, sysfs.PORT_STATES)
    sysfs.parse_pcie_speed(text)
    sysfs.parse_int(text)


@given(
    st.sampled_from(sorted(sysfs.LANE_SPEEDS_GBPS)),
    st.sampled_from([1, 2, 4, 8, 12]),
)
def test_rate_roundtrip_for_every_lane_speed(speed, lanes):
    gbps = sysfs.LANE_SPEEDS_GBPS[speed] * lanes
    text = "%s Gb/sec (%dX %s)" % (("%g" % gbps), lanes, speed)
    assert sysfs.parse_rate(text) == (gbps, lanes, speed)


def test_class_entries_are_symlinks_like_the_kernel(mixed_tree):
    link = os.path.join(mixed_tree, "class", "infiniband", "mlx5_0")
    assert os.path.islink(link)
    assert "/devices/" in os.path.realpath(link)


def test_discover_mixed_node(mixed_tree):
    facts = sysfs.discover(mixed_tree)
    devs = facts["devices"]
    assert sorted(devs) == ["mlx5_0", "mlx5_1", "mlx5_2", "mlx5_3", "mlx5_bond_0"]
    ndr = devs["mlx5_0"]
    assert ndr["ports"]["1"]["rate_gbps"] == 400.0
    assert ndr["ports"]["1"]["lanes"] == 4
    assert ndr["ports"]["1"]["lane_speed"] == "NDR"
    assert ndr["ports"]["1"]["state"] == "ACTIVE"
    assert ndr["ports"]["1"]["phys_state"] == "LinkUp"
    assert ndr["ports"]["1"]["lid"] == 0xC
    assert ndr["ports"]["1"]["roce_v2_ipv4_gid_index"] is None
    assert ndr["pci_address"] == "0000:18:00.0"
    assert ndr["numa_node"] == 0
    assert ndr["netdevs"] == ["ibp24s0"]
    assert ndr["fw_ver"] == "28.39.1002"
    assert ndr["pcie"] == {"speed_gts": 32.0, "width": 16, "max_speed_gts": 32.0, "max_width": 16, "degraded": False}
    # HDR trained at 2X on a PCIe Gen4 x8 link of an x16 slot.
    assert devs["mlx5_1"]["ports"]["1"]["lanes"] == 2
    assert devs["mlx5_1"]["pcie"]["degraded"] is True
    assert devs["mlx5_2"]["ports"]["1"]["state"] == "DOWN"
    assert devs["mlx5_2"]["ports"]["1"]["phys_state"] == "Polling"
    assert devs["mlx5_3"]["ports"]["1"]["rate_gbps"] == 2.5
    assert devs["mlx5_3"]["ports"]["1"]["lanes"] == 1
    assert devs["mlx5_3"]["ports"]["1"]["lane_speed"] == "SDR"
    assert devs["mlx5_3"]["numa_node"] is None  # the kernel's -1
    roce = devs["mlx5_bond_0"]["ports"]["1"]
    assert roce["link_layer"] == "Ethernet"
    assert roce["roce_v2_ipv4_gid_index"] == 3
    assert facts["active_ports"] == ["mlx5_0:1", "mlx5_1:1", "mlx5_3:1", "mlx5_bond_0:1"]
    assert sysfs.active_ports(devs, link_layer="Ethernet") == ["mlx5_bond_0:1"]


def test_pcie_degraded_on_speed_alone(tmp_path):
    root = build_tree(
        str(tmp_path),
        {"devices": {"mlx5_0": {"pcie": {"speed": "16.0 GT/s PCIe", "max_speed": "32.0 GT/s PCIe"}}}},
    )
    pcie = sysfs.discover(root)["devices"]["mlx5_0"]["pcie"]
    assert pcie["degraded"] is True
    assert pcie["speed_gts"] == 16.0


def test_roce_gid_needs_v2_and_ipv4_mapped(tmp_path):
    port = {
        "link_layer": "Ethernet",
        "gids": {
            "0": "fe80:0000:0000:0000:0e42:a1ff:fe1d:d12a",
            "1": "fe80:0000:0000:0000:0e42:a1ff:fe1d:d12a",
            "2": "0000:0000:0000:0000:0000:ffff:c0a8:0101",
        },
        "gid_types": {"0": "IB/RoCE v1", "1": "RoCE v2", "2": "IB/RoCE v1"},
    }
    root = build_tree(str(tmp_path), {"devices": {"mlx5_0": {"ports": {"1": port}}}})
    # No RoCE v2 GID carries an IPv4 address: nothing to pick.
    assert sysfs.discover(root)["devices"]["mlx5_0"]["ports"]["1"]["roce_v2_ipv4_gid_index"] is None


def test_raw_corpus_attribute_files_in_a_tree(tmp_path):
    """The corpus' raw files, dropped verbatim into a tree, read as the kernel meant them."""
    root = build_tree(str(tmp_path), {"devices": {"mlx5_bond_0": {"ports": {"1": {}}}}})
    port = os.path.join(root, "class", "infiniband", "mlx5_bond_0", "ports", "1")
    shutil.copy(CORPUS / "sysfs-link_layer__mlx5-bond-ethernet-h100.txt", os.path.join(port, "link_layer"))
    shutil.copy(CORPUS / "sysfs-phys_state__mlx5-linkup-h100-no-trailing-newline.txt", os.path.join(port, "phys_state"))
    shutil.copy(CORPUS / "sysfs-rate__mlx4-1x-ddr-5gbps-azure-h16r.txt", os.path.join(port, "rate"))
    info = sysfs.discover(root)["devices"]["mlx5_bond_0"]["ports"]["1"]
    assert info["link_layer"] == "Ethernet"
    assert info["phys_state"] == "LinkUp"
    assert (info["rate_gbps"], info["lanes"], info["lane_speed"]) == (5.0, 1, "DDR")


def test_no_infiniband_class(tmp_path):
    assert sysfs.discover(str(tmp_path)) == {"devices": {}, "active_ports": []}


def test_read_port_rate_gbps(mixed_tree):
    assert sysfs.read_port_rate_gbps(mixed_tree, "mlx5_0", 1) == 400.0
    assert sysfs.read_port_rate_gbps(mixed_tree, "mlx5_9", 1) is None
