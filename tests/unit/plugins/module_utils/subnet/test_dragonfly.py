"""Dragonfly recognised (dragonfly.py, structure.py) on real ibnetdiscover output of a Dragonfly+ subnet under
ibsim + OpenSM (nets/dragonfly.net: 3 groups of 2 leaves and 2 spines, 2 global links per group pair), before
and after one global cable was pulled through ibsim's console; fat trees are not dragonflies."""

import pytest

from ansible_collections.ibtune.fabric.plugins.module_utils.subnet.analysis import analyse
from ansible_collections.ibtune.fabric.plugins.module_utils.subnet.dragonfly import check_min_global
from tests.conftest import FIXTURES, read_corpus

TOPO = FIXTURES / "topology"
NDR = "ibnetdiscover__ndr-40-quantum2-switches-582-cas-parallel-trunks-sharp-aggregation-nodes.txt"


def _read(name, **kwargs):
    return analyse((TOPO / name).read_text(), **kwargs)


def test_groups_global_links_and_their_rate():
    result = _read("dragonfly.ibnetdiscover")
    fly = result["dragonfly"]
    assert [
        (g["name"], g["leaves"], g["spines"], g["host_ports"], g["global_links"], g["global_gbps"])
        for g in fly["groups"]
    ] == [("group %d (dfly-g%d-spine1, dfly-g%d-spine2)" % (n, n, n), 2, 2, 4, 4, 40.0) for n in (1, 2, 3)]
    assert [(p["groups"], p["links"], p["gbps"]) for p in fly["pairs"]] == [
        ([1, 2], 2, 20.0),
        ([1, 3], 2, 20.0),
        ([2, 3], 2, 20.0),
    ]
    assert fly["pairs"][1]["cables"] == [
        "dfly-g1-spine1 p4 <-> dfly-g3-spine1 p3",
        "dfly-g1-spine2 p4 <-> dfly-g3-spine2 p3",
    ]
    assert (fly["design_gbps"], fly["design_declared"], fly["global_links"]) == (20.0, False, 6)
    assert result["summary"]["dragonfly_groups"] == 3 and result["findings"] == []
    # global links are the spines' way out of their group: every switch 1:1
    assert result["oversubscription"]["tiers"]["spine"]["max_ratio"] == 1.0
    assert result["oversubscription"]["tiers"]["leaf"]["max_ratio"] == 1.0


def test_a_pulled_global_cable_names_the_group_pair_and_the_spines():
    result = _read("dragonfly-unlinked.ibnetdiscover")
    by_check = {}
    for f in result["findings"]:
        by_check.setdefault(f["check"], []).append(f)
    assert sorted(by_check) == ["dragonfly_global", "oversubscription"]
    (pair,) = by_check["dragonfly_global"]
    assert pair["msg"] == (
        "group 1 (dfly-g1-spine1, dfly-g1-spine2) <-> group 3 (dfly-g3-spine1, dfly-g3-spine2) has 1 global link(s) "
        "(10 Gb/s: dfly-g1-spine1 p4 <-> dfly-g3-spine1 p3) where the norm of this fabric's group pairs is 20 Gb/s: "
        "a global cable is missing or trained low, and traffic between these groups crowds onto the rest: reseat or "
        "replace it."
    )
    assert (pair["switch"], pair["peer"], pair["groups"], pair["links"]) == (
        "dfly-g1-spine2",
        "group 3 (dfly-g3-spine1, dfly-g3-spine2)",
        [1, 3],
        1,
    )
    # both spines that lost the cable now send 2 leaves' traffic out over 1 global link
    assert [(f["switch"], f["ratio"]) for f in by_check["oversubscription"]] == [
        ("dfly-g1-spine2", 2.0),
        ("dfly-g3-spine2", 2.0),
    ]
    assert (
        "1 lateral (global) link(s) where the other spines of its group have 2"
        in by_check["oversubscription"][0]["msg"]
    )


def test_a_declared_global_design_replaces_the_norm():
    fly = _read("dragonfly-unlinked.ibnetdiscover", min_global_gbps=10)["dragonfly"]
    assert (fly["design_gbps"], fly["design_declared"]) == (10.0, True)
    found = _read("dragonfly-unlinked.ibnetdiscover", min_global_gbps=10, max_oversubscription=2.0)["findings"]
    assert found == []
    strict = _read("dragonfly.ibnetdiscover", min_global_gbps=30)["findings"]
    assert [f["groups"] for f in strict] == [[1, 2], [1, 3], [2, 3]]
    assert "where the design is 30 Gb/s" in strict[0]["msg"]


def test_fat_trees_and_flat_fabrics_are_not_dragonflies():
    assert analyse(read_corpus(NDR))["dragonfly"] is None
    assert _read("lab-subnet.ibnetdiscover")["dragonfly"] is None
    # two leaves cabled to each other (the man page): lateral links, but no group has spines
    assert analyse(read_corpus("ibnetdiscover__man-page-sdr-chassis-and-non-chassis-nodes.txt"))["dragonfly"] is None


@pytest.mark.parametrize("bad", [-1, "x"])
def test_a_global_design_that_is_not_gbps_is_one_sentence(bad):
    with pytest.raises(ValueError, match="set fabric_topology_min_global_gbps"):
        check_min_global(bad)


def test_a_group_pair_with_no_global_link_left():
    from tests.unit.plugins.module_utils.subnet.test_oversubscription import without_uplinks

    # both global cables between group 1 and group 3 gone (ports 4 of dfly-g1-spine1 and -spine2)
    text = (TOPO / "dragonfly.ibnetdiscover").read_text()
    text = without_uplinks(without_uplinks(text, "0002c903d0010201", (4,)), "0002c903d0010202", (4,))
    found = [f for f in analyse(text)["findings"] if f["check"] == "dragonfly_global"]
    assert [(f["groups"], f["links"], f["gbps"]) for f in found] == [([1, 3], 0, 0.0)]
    assert "group 3 (dfly-g3-spine1, dfly-g3-spine2) has no global link where the norm" in found[0]["msg"]
