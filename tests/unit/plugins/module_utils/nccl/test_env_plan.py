"""nccl_env.plan_env: what the nccl_env role writes, from ib_facts' real facts of fixture sysfs trees."""

import pytest

from ansible_collections.ibtune.fabric.plugins.module_utils.nccl import env as nccl_env
from ansible_collections.ibtune.fabric.plugins.module_utils.host import sysfs
from ansible_collections.ibtune.fabric.plugins.module_utils.nccl.env import NcclEnvPlanError, plan_env, profile_for
from tests.lab.sysfs_tree import build_tree

PROFILE_VARS = {"ib": {"NCCL_DEBUG": "WARN"}, "roce": {"NCCL_DEBUG": "WARN"}, "socket": {"NCCL_IB_DISABLE": 1}}
V1_GID = "fe80:0000:0000:0000:0a88:c2ff:fe35:6f3a"


def _v2(last):
    return "0000:0000:0000:0000:0000:ffff:0a00:00%02x" % last


def roce_port(v2_index=3, up=True):
    port = {
        "state": "4: ACTIVE" if up else "1: DOWN",
        "phys_state": "5: LinkUp" if up else "3: Disabled",
        "rate": "400 Gb/sec (4X NDR)",
        "link_layer": "Ethernet",
        "gids": {0: V1_GID, 1: V1_GID},
        "gid_types": {0: "IB/RoCE v1", 1: "RoCE v2"},
    }
    if v2_index is not None:
        port["gids"][v2_index - 1] = _v2(v2_index)
        port["gid_types"][v2_index - 1] = "IB/RoCE v1"
        port["gids"][v2_index] = _v2(v2_index)
        port["gid_types"][v2_index] = "RoCE v2"
    return port


def facts(tmp_path, ports):
    spec = {"devices": {dev: {"ports": {1: port}} for dev, port in ports.items()}}
    build_tree(str(tmp_path), spec)
    return sysfs.discover(str(tmp_path))


def test_roce_before_2_21_gets_the_discovered_roce_v2_gid_index(tmp_path):
    """NCCL < 2.21 uses GID index 0 (the RoCE v1 link-local GID) unless told: the plan sets the v2 IPv4 one."""
    rdma = facts(tmp_path, {"mlx5_0": roce_port(3), "mlx5_1": roce_port(3), "mlx5_2": roce_port(3, up=False)})
    assert rdma["devices"]["mlx5_0"]["ports"]["1"]["roce_v2_ipv4_gid_index"] == 3
    plan = plan_env("roce", PROFILE_VARS, rdma=rdma, nccl_version="2.18.6", qos_env={"NCCL_IB_TC": "106"})
    assert plan["env"] == {
        "NCCL_DEBUG": "WARN",
        "NCCL_IB_HCA": "=mlx5_0:1,mlx5_1:1",
        "NCCL_IB_GID_INDEX": "3",
        "NCCL_IB_TC": "106",
    }
    assert plan["gid_index"] == 3 and plan["sources"]["NCCL_IB_GID_INDEX"] == "derived"
    errors, warnings = nccl_env.lint(plan["env"], nccl_version="2.18.6", link_layer="Ethernet")
    assert errors == [] and warnings == []


@pytest.mark.parametrize("version", ["2.21.5", "2.28.9", ""])
def test_roce_from_2_21_or_unknown_leaves_the_gid_to_nccl(tmp_path, version):
    rdma = facts(tmp_path, {"mlx5_0": roce_port(3)})
    plan = plan_env("roce", PROFILE_VARS, rdma=rdma, nccl_version=version)
    assert "NCCL_IB_GID_INDEX" not in plan["env"]


def test_roce_gid_index_that_differs_between_ports_is_one_sentence(tmp_path):
    rdma = facts(tmp_path, {"mlx5_0": roce_port(3), "mlx5_1": roce_port(5)})
    with pytest.raises(NcclEnvPlanError, match=r"different indexes \(mlx5_0:1: 3, mlx5_1:1: 5\)"):
        plan_env("roce", PROFILE_VARS, rdma=rdma, nccl_version="2.20.5")
    # An explicit override wins and needs no agreement.
    plan = plan_env("roce", PROFILE_VARS, {"NCCL_IB_GID_INDEX": 5}, rdma=rdma, nccl_version="2.20.5")
    assert plan["env"]["NCCL_IB_GID_INDEX"] == "5" and plan["sources"]["NCCL_IB_GID_INDEX"] == "override"


def test_roce_port_without_an_ipv4_gid_says_what_to_do(tmp_path):
    rdma = facts(tmp_path, {"mlx5_0": roce_port(None)})
    with pytest.raises(NcclEnvPlanError, match="mlx5_0:1 has no RoCE v2 IPv4 GID.*give the port's netdev an IPv4"):
        plan_env("roce", PROFILE_VARS, rdma=rdma, nccl_version="2.19.3")


def test_ib_profile_takes_only_ib_ports_and_the_sl(tmp_path):
    ib = {"state": "4: ACTIVE", "phys_state": "5: LinkUp", "rate": "400 Gb/sec (4X NDR)", "link_layer": "InfiniBand"}
    rdma = facts(tmp_path, {"mlx5_0": ib, "mlx5_1": roce_port(3)})
    plan = plan_env(
        "ib",
        PROFILE_VARS,
        {"NCCL_DEBUG": None},
        rdma=rdma,
        default_interface="eth0",
        qos_env={"NCCL_IB_SL": "0", "NCCL_IB_TC": "106"},
        nccl_version="2.18.6",
    )
    assert plan["env"] == {"NCCL_IB_HCA": "=mlx5_0:1", "NCCL_SOCKET_IFNAME": "=eth0", "NCCL_IB_SL": "0"}


@pytest.mark.parametrize(
    ("profile", "fabric", "expected"),
    [
        ("", {"link_layer": "Ethernet", "rate_gbps": 400, "rails": 8}, "roce"),
        ("", {"link_layer": "InfiniBand"}, "ib"),
        ("", {}, "ib"),
        ("", None, "ib"),
        ("socket", {"link_layer": "Ethernet"}, "socket"),
        ("ib", {"link_layer": "Ethernet"}, "ib"),
    ],
)
def test_profile_follows_ibtune_fabric_when_not_set(profile, fabric, expected):
    assert profile_for(profile, fabric) == expected


def test_bad_fabric_link_layer_is_one_sentence():
    with pytest.raises(NcclEnvPlanError, match="ibtune_fabric.link_layer='RoCE' is not InfiniBand or Ethernet"):
        profile_for("", {"link_layer": "RoCE"})
