"""Planning, slicing and rails by identity, on fixture sysfs trees read by the real ib_facts reader."""

import copy
import json
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ansible_collections.ibtune.fabric.plugins.module_utils.validate import plan
from ansible_collections.ibtune.fabric.plugins.module_utils.validate import preflight
from ansible_collections.ibtune.fabric.plugins.module_utils.host import sysfs
from ansible_collections.ibtune.fabric.plugins.module_utils.validate.sidefiles import slice_sides

LAB = Path(__file__).resolve().parents[5] / "tests" / "lab"
sys.path.insert(0, str(LAB))
import sysfs_tree  # noqa: E402

NODE = json.loads((LAB / "fabric" / "nodes" / "default.json").read_text())


def sides_of(planned_pass):
    """{host: [side]}: the sides each host's slice makes (sidefiles.slice_sides, as the runner and the task do)."""
    return dict((h, slice_sides(doc)) for h, doc in planned_pass["slices"].items())


def facts_of(tmp_path, name, spec):
    root = tmp_path / name
    sysfs_tree.build_tree(str(root), spec)
    return sysfs.discover(str(root))


def node_spec(**port_overrides):
    spec = copy.deepcopy(NODE)
    for dev, fields in port_overrides.items():
        spec["devices"][dev]["ports"]["1"].update(fields)
    return spec


def eight_rail_spec(n=8):
    spec = {"devices": {}}
    for i in range(n):
        dev = copy.deepcopy(NODE["devices"]["mlx5_0"])
        dev["pci"] = "0000:%02x:00.0" % (0x18 + i)
        dev["netdev"] = "ibp%ds0" % (24 + i)
        spec["devices"]["mlx5_%d" % i] = dev
    return spec


def test_rails_of_a_healthy_node_are_named_by_device_and_port(tmp_path):
    facts = facts_of(tmp_path, "n1", NODE)
    rails = preflight.host_rails(facts)
    assert [r["rail"] for r in rails] == ["mlx5_0:1", "mlx5_1:1"]
    assert all(r["rate_gbps"] == 400.0 and r["lanes"] == 4 for r in rails)


def test_a_down_port_is_not_a_rail_and_preflight_names_it(tmp_path):
    facts = facts_of(tmp_path, "n1", node_spec(mlx5_0={"state": "1: DOWN", "phys_state": "2: Polling"}))
    assert [r["rail"] for r in preflight.host_rails(facts)] == ["mlx5_1:1"]
    found = preflight.problems(facts, expect={"ports": 2})
    assert len(found) == 1
    # the message names the port that is DOWN, not only the good one
    assert "mlx5_0:1 is DOWN/Polling" in found[0]["reason"]
    assert found[0]["failure_kind"] == "missing_rail"


def test_natural_rail_order_puts_mlx5_2_before_mlx5_10(tmp_path):
    facts = facts_of(tmp_path, "n", eight_rail_spec(12))
    names = [r["rail"] for r in preflight.host_rails(facts)]
    assert names[:3] == ["mlx5_0:1", "mlx5_1:1", "mlx5_2:1"] and names[-1] == "mlx5_11:1"


def test_rail_map_gives_rails_a_name_across_host_types(tmp_path):
    facts = facts_of(tmp_path, "n", NODE)
    rails = preflight.host_rails(facts, {"rail0": "mlx5_1", "rail1": "mlx5_0:1"})
    assert [(r["rail"], r["device"]) for r in rails] == [("rail0", "mlx5_1"), ("rail1", "mlx5_0")]


def test_rate_and_pcie_problems_name_the_rail_expected_and_found(tmp_path):
    spec = node_spec(mlx5_1={"rate": "200 Gb/sec (2X NDR)"})
    spec["devices"]["mlx5_0"]["pcie"]["width"] = 8
    facts = facts_of(tmp_path, "n", spec)
    found = dict((p["failure_kind"], p["reason"]) for p in preflight.problems(facts, expect={"rate_gbps": 400}))
    assert "rail mlx5_1:1: expected rate 400 Gb/s, found 200 Gb/s (2X NDR)" in found["rate"]
    assert "x16" in found["pcie"] and "x8" in found["pcie"]


def test_no_device_at_all(tmp_path):
    assert preflight.problems({"devices": {}})[0]["failure_kind"] == "no_device"


@pytest.mark.parametrize(
    "values, fragment",
    [
        ({"fabric_validate_duration": 0}, "fabric_validate_duration=0 is out of range"),
        ({"fabric_validate_min_link_fraction": 1.5}, "fabric_validate_min_link_fraction=1.5"),
        ({"fabric_validate_min_gbps": -1}, "fabric_validate_min_gbps=-1"),
        ({"fabric_validate_min_gbps": float("nan")}, "fabric_validate_min_gbps=nan"),
        ({"fabric_validate_expect_link_layer": "infiniband"}, "use InfiniBand, Ethernet or null"),
    ],
)
def test_each_bad_setting_is_named_alone(values, fragment):
    values = dict(
        values, fabric_validate_qps=1, fabric_validate_expect_link_layer=values.get("fabric_validate_expect_link_layer")
    )
    problems = preflight.check_settings(values)
    assert len(problems) == 1 and fragment in problems[0]


def test_null_expectations_are_fine():
    assert (
        preflight.check_settings({"fabric_validate_expect_link_layer": None, "fabric_validate_expect_rate_gbps": None})
        == []
    )


# -- planning ----------------------------------------------------------------------------------


def rails_for(hosts, names=("mlx5_0:1", "mlx5_1:1"), rate=400.0):
    rails = [{"rail": n, "device": n.split(":", maxsplit=1)[0], "port": 1, "rate_gbps": rate} for n in names]
    return dict((h, [dict(r) for r in rails]) for h in hosts)


def test_a_host_lacking_a_majority_rail_is_named_and_its_peers_test_by_name():
    hosts = ["n1", "n2", "n3", "n4"]
    rails = rails_for(hosts)
    # n3's mlx5_0 is down: its first rail is now mlx5_1, which must meet the peers' mlx5_1, not mlx5_0
    rails["n3"] = [r for r in rails["n3"] if r["rail"] == "mlx5_1:1"]
    out = plan.plan_pass(hosts, rails, dict((h, h) for h in hosts))
    assert out["host_failures"] == [
        {"host": "n3", "failure_kind": "missing_rail", "reason": out["host_failures"][0]["reason"]}
    ]
    assert "mlx5_0:1" in out["host_failures"][0]["reason"] and "3 of 4 hosts" in out["host_failures"][0]["reason"]
    for side in sides_of(out)["n3"]:
        assert side["rail"] == "mlx5_1:1" and side["device"] == "mlx5_1"
    peers_of_n3 = [s for h in hosts if h != "n3" for s in sides_of(out)[h] if s["peer"] == "n3"]
    assert peers_of_n3 and all(s["device"] == "mlx5_1" for s in peers_of_n3)


def test_four_rail_host_among_eight_rail_peers_is_failed_not_silently_short():
    hosts = ["a", "b", "c"]
    eight = ["mlx5_%d:1" % i for i in range(8)]
    rails = rails_for(hosts, eight)
    rails["c"] = rails["c"][:4]
    out = plan.plan_pass(hosts, rails, dict((h, h) for h in hosts))
    (failure,) = out["host_failures"]
    assert failure["host"] == "c" and all("mlx5_%d:1" % i in failure["reason"] for i in range(4, 8))


def test_ports_are_unique_per_round_and_rail_and_within_range():
    hosts = ["h%02d" % i for i in range(16)]
    out = plan.plan_pass(hosts, rails_for(hosts, ["mlx5_%d:1" % i for i in range(8)]), dict((h, h) for h in hosts))
    by_round = {}
    for sides in sides_of(out).values():
        for side in sides:
            if side["role"] == "server":
                by_round.setdefault(side["round"], []).append((side["host"], side["tcp_port"]))
    ports = set()
    for entries in by_round.values():
        round_ports = set(p for _h, p in entries)
        assert round_ports.isdisjoint(ports)  # no port reused by another round
        ports |= round_ports
    assert min(ports) == 18515 and max(ports) < 65536
    assert out["rounds"] == 15


def test_port_window_wraps_below_65536():
    assert plan.tcp_port_for(60000, 10000, 7, 8) <= 65535
    with pytest.raises(ValueError, match="fabric_validate_base_tcp_port"):
        plan.check_base_port(65534, 8)


def test_client_sides_carry_the_servers_address_and_each_host_plays_one_role_per_round():
    hosts = ["n1", "n2", "n3", "n4"]
    out = plan.plan_pass(
        hosts, rails_for(hosts), {"n1": "10.0.0.1", "n2": "10.0.0.2", "n3": "10.0.0.3", "n4": "10.0.0.4"}
    )
    for sides in sides_of(out).values():
        per_round = {}
        for side in sides:
            per_round.setdefault(side["round"], set()).add(side["role"])
            if side["role"] == "client":
                assert side["address"] == "10.0.0.%s" % side["peer"][1]
        assert all(len(roles) == 1 for roles in per_round.values())


def test_one_host_is_never_passed():
    out = plan.plan_pass(["solo"], rails_for(["solo"]), {"solo": "solo"})
    assert out["untested"] == ["solo"] and out["host_failures"][0]["failure_kind"] == "unpaired"


def test_gid_index_auto_uses_each_rails_roce_v2_gid():
    hosts = ["a", "b"]
    rails = rails_for(hosts)
    rails["a"][0]["gid_index"] = 3
    out = plan.slice_pass([[["a", "b"]]], rails, {"a": "a", "b": "b"}, gid_index="auto")
    assert [s.get("gid_index") for s in sides_of(out)["a"]] == [3, None]


@settings(max_examples=60, deadline=None)
@given(
    n=st.integers(min_value=2, max_value=24),
    strategy=st.sampled_from(["all_pairs", "ring", "halves", "random"]),
)
def test_every_strategy_tests_every_host(n, strategy):
    hosts = ["h%d" % i for i in range(n)]
    out = plan.plan_pass(
        hosts, rails_for(hosts), dict((h, h) for h in hosts), strategy=strategy, random_rounds=n, seed="s"
    )
    assert out["untested"] == []


@settings(max_examples=40, deadline=None)
@given(sizes=st.lists(st.integers(min_value=1, max_value=6), min_size=2, max_size=5))
def test_cross_group_with_unequal_groups_tests_every_host(sizes):
    groups = {}
    hosts = []
    for g, size in enumerate(sizes):
        for i in range(size):
            host = "g%dh%d" % (g, i)
            hosts.append(host)
            groups[host] = "leaf%d" % g
    out = plan.plan_pass(hosts, rails_for(hosts), dict((h, h) for h in hosts), strategy="cross_group", groups=groups)
    assert out["untested"] == []
    for sides in sides_of(out).values():
        for side in sides:
            assert groups[side["host"]] != groups[side["peer"]]
