"""Tier balance (balance.py) on real dumps: a cable on the wrong spine in the simulated subnet (ibsim + OpenSM,
nets/net.wrong-spine), and the corpus NDR fabric's spines, named switch by switch."""

from ansible_collections.ibtune.fabric.plugins.module_utils.subnet.balance import check_tier_balance
from ansible_collections.ibtune.fabric.plugins.module_utils.subnet.parsers import parse_ibnetdiscover
from ansible_collections.ibtune.fabric.plugins.module_utils.subnet.structure import Shape
from tests.conftest import FIXTURES, read_corpus

TOPO = FIXTURES / "topology"
NDR = "ibnetdiscover__ndr-40-quantum2-switches-582-cas-parallel-trunks-sharp-aggregation-nodes.txt"


def _balance(text):
    return check_tier_balance(Shape(parse_ibnetdiscover(text)))


def test_a_leaf_that_reaches_one_spine_twice_and_the_other_not_at_all():
    found = _balance((TOPO / "lab-subnet-wrong-spine.ibnetdiscover").read_text())
    assert [(f["switch"], f["port"], f["peer"], f["links"], f["expected"], f["deviations"]) for f in found] == [
        ("lab-spine1", 5, "lab-leaf1", 5, 4, {"lab-leaf1": 2}),
        ("lab-spine2", None, "lab-leaf1", 3, 4, {"lab-leaf1": 0}),
    ]
    assert found[0]["msg"] == (
        "lab-spine1 has 5 links to the 4 leaves below where an even spread is 4 (1 to each, the norm of its tier): "
        "2 to lab-leaf1; routing then spreads their traffic unevenly over the spines: move or add cables to even it."
    )
    assert "none to lab-leaf1" in found[1]["msg"]


def test_the_healthy_subnet_is_balanced():
    assert _balance((TOPO / "lab-subnet.ibnetdiscover").read_text()) == []


def test_ndr_spines_with_fewer_links_than_an_even_spread():
    found = dict((f["switch"], f) for f in _balance(read_corpus(NDR)))
    # 31 leaves x 2 cables = 62; the spines with missing trunk members, each with the leaves it lacks
    assert dict((name, f["links"]) for name, f in found.items()) == {
        "A10-P1-IBSPINE-01": 55,
        "A10-P1-IBSPINE-04": 52,
        "B10-P1-IBSPINE-05": 60,
        "B10-P1-IBSPINE-06": 58,
        "B10-P1-IBSPINE-07": 60,
        "B10-P1-IBSPINE-08": 61,
    }
    assert all(f["expected"] == 62 for f in found.values())
    assert found["B10-P1-IBSPINE-08"]["deviations"] == {"B09-P1-IBLEAF-01-05": 1}
    assert len(found["A10-P1-IBSPINE-04"]["deviations"]) == 6
    assert found["A10-P1-IBSPINE-04"]["msg"].endswith(
        "none to B09-P1-IBLEAF-01-07; routing then spreads their traffic unevenly over the spines: move or add cables "
        "to even it."
    )
    # every deviation is the number of the spine's port lines to that leaf in the file
    sections = dict(
        (chunk.split('"MF0;', 1)[1].split(":", 1)[0], chunk)
        for chunk in read_corpus(NDR).split("\n\n")
        if chunk.lstrip().startswith("vendid") and "\nSwitch" in chunk
    )
    for name, f in found.items():
        ports = [ln for ln in sections[name].splitlines() if ln.startswith("[")]
        for leaf, cables in f["deviations"].items():
            assert sum(('"MF0;%s:' % leaf) in ln for ln in ports) == cables
