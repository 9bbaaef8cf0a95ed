"""Oversubscription as trained (oversubscription.py): every ibnetdiscover dump of the corpus analysed (its
tiers, per-leaf ratios and findings, one case each), an altered copy of the NDR dump with two uplinks removed
from one leaf flagged with exactly that leaf, and real ibsim + OpenSM captures of the subnet scenario's fabric
(a 1.5:1 design, an uplink trained at 1x)."""

import re

import pytest

from ansible_collections.ibtune.fabric.plugins.module_utils.subnet.analysis import analyse
from ansible_collections.ibtune.fabric.plugins.module_utils.subnet.oversubscription import check_design
from tests.conftest import FIXTURES, corpus_files, read_corpus

TOPO = FIXTURES / "topology"
NDR = "ibnetdiscover__ndr-40-quantum2-switches-582-cas-parallel-trunks-sharp-aggregation-nodes.txt"
MAN = "ibnetdiscover__man-page-sdr-chassis-and-non-chassis-nodes.txt"
ONE = "ibnetdiscover__one-switch-sdr-2-hosts-2009.txt"
EMPTY = "ibnetdiscover__degenerate-one-ca-no-switches.txt"
LANE = {"SDR": 2.5, "DDR": 5, "QDR": 10, "FDR": 14, "EDR": 25, "HDR": 50, "NDR": 100}


def _switch_sections(text):
    """{switch name: (host Gb/s, [(port, peer switch guid, Gb/s)])} read with regexes, independently of the
    parser: every port line of every section, a cable's rate the lower of its two ends' (a dump's two ends can
    disagree), host ports (not SHARP Aggregation Nodes) and ISLs apart."""
    names, cables = {}, {}
    for chunk in re.split(r"\n\s*\n", text):
        head = re.search(r'^(Switch|Ca)\s+\d+\s+"([SH])-([0-9a-f]+)"\s+#\s+"(?:MF0;)?([^":]+)', chunk, re.M)
        if not head:
            continue
        me = head.group(3).lstrip("0")
        names[me] = head.group(4) if head.group(1) == "Switch" else None
        for port, peer, pport, rest, width, speed in re.findall(
            r'^\[(\d+)\](?:\([0-9a-f]+\))?\s+"[SH]-([0-9a-f]+)"\[(\d+)\](.*?)(\d+)x([A-Z]+)\s*$', chunk, re.M
        ):
            key = tuple(sorted([(me, int(port)), (peer.lstrip("0"), int(pport))]))
            rate = int(width) * LANE[speed]
            aggregation = "Aggregation Node" in rest
            old = cables.get(key, (rate, aggregation))
            cables[key] = (min(rate, old[0]), aggregation or old[1])
    out = {}
    for ((a, pa), (b, pb)), (rate, aggregation) in cables.items():
        for (mine, port), (other, _p) in (((a, pa), (b, pb)), ((b, pb), (a, pa))):
            if names.get(mine) is None or aggregation:
                continue
            hosts, isls = out.setdefault(names[mine], [0.0, []])
            if names.get(other) is None:
                out[names[mine]][0] = hosts + rate
            else:
                isls.append((port, other, rate))
    return dict((name, (hosts, isls)) for name, (hosts, isls) in out.items())


def _leaf_ratios(text):
    """{leaf: down/up} of a two-tier dump from the independent reading (every ISL of a leaf goes up)."""
    return dict(
        (name, round(hosts / sum(r for _p, _g, r in isls), 4))
        for name, (hosts, isls) in _switch_sections(text).items()
        if hosts and isls
    )


def _over(result):
    return sorted(f["switch"] for f in result["findings"] if f["check"] == "oversubscription")


def _rows(result):
    return dict((r["switch"], r) for r in result["oversubscription"]["switches"])


# what every corpus dump is: its tiers, its leaves' ratios as trained, and the switches over 1:1
EXPECTED = {
    NDR: {
        "tiers": (31, 9),
        "over": [
            "A09-P1-IBLEAF-01-01",
            "A09-P1-IBLEAF-01-02",
            "A09-P1-IBLEAF-01-03",
            "A09-P1-IBLEAF-02-03",
            "A09-P1-IBLEAF-02-04",
            "A09-P1-IBLEAF-04-04",
            "B09-P1-IBLEAF-01-05",
            "B09-P1-IBLEAF-01-07",
            "B09-P1-IBLEAF-02-06",
            "B09-P1-IBLEAF-03-07",
            "B09-P1-IBLEAF-03-08",
            "B09-P1-IBLEAF-04-08",
        ],
        "worst": ("A09-P1-IBLEAF-02-03", 1.2),
    },
    MAN: {"tiers": (2, 0), "over": ["ISR9024 Voltaire", "SW-6IB4 Voltaire"], "worst": ("ISR9024 Voltaire", 1.8)},
    ONE: {"tiers": (1, 0), "over": [], "worst": (None, None)},
    EMPTY: {"tiers": (0, 0), "over": [], "worst": (None, None)},
}


def test_every_corpus_topology_dump_has_its_expectations():
    assert sorted(EXPECTED) == sorted(p.name for p in corpus_files("ibnetdiscover__"))


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_corpus_dump_tiers_ratios_and_findings(name):
    text = read_corpus(name)
    result = analyse(text)
    want = EXPECTED[name]
    assert (len(result["tiers"]["leaf"]), len(result["tiers"]["spine"])) == want["tiers"]
    rows = _rows(result)
    # every leaf's ratio is the file's own host rates over its ISL rates, as trained
    assert dict((n, r["ratio"]) for n, r in rows.items() if r["tier"] == "leaf" and r["judged"]) == _leaf_ratios(text)
    assert _over(result) == want["over"] == sorted(n for n, r in rows.items() if r["oversubscribed"])
    leaves = result["oversubscription"]["tiers"].get("leaf") or {}
    assert (leaves.get("worst"), leaves.get("max_ratio")) == want["worst"]
    assert result["summary"]["oversubscribed"] == len(want["over"])
    assert result["dragonfly"] is None


def test_ndr_leaf_finding_names_both_sums_and_the_missing_uplinks():
    result = analyse(read_corpus(NDR))
    (found,) = [
        f for f in result["findings"] if f["check"] == "oversubscription" and f["switch"] == "A09-P1-IBLEAF-02-03"
    ]
    assert found["msg"] == (
        "A09-P1-IBLEAF-02-03 (leaf, rail group HCA-2) is oversubscribed 1.20:1 where the design allows 1.00:1: "
        "18 host ports carry 7200 Gb/s, 15 uplink(s) 6000 Gb/s, as trained; missing against the other leaves: "
        "1 of 2 cables to A10-P1-IBSPINE-01, no cable to B10-P1-IBSPINE-06 (the norm 2): re-cable or replace those "
        "uplinks."
    )
    assert (found["severity"], found["ratio"], found["down_gbps"], found["up_gbps"]) == ("error", 1.2, 7200, 6000)
    assert found["peer"] == "A10-P1-IBSPINE-01"
    # a leaf with one host port more than its full set of uplinks: nothing to re-cable, the design says it
    (by_design,) = [
        f for f in result["findings"] if f.get("switch") == "B09-P1-IBLEAF-04-08" and f["check"] == "oversubscription"
    ]
    assert "19 host ports carry 7600 Gb/s, 18 uplink(s) 7200 Gb/s" in by_design["msg"]
    assert "more ports down than up by design" in by_design["msg"]


def test_ndr_rail_groups_and_tiers():
    over = analyse(read_corpus(NDR))["oversubscription"]
    assert over["design"] == 1.0
    assert over["text"] == "oversubscription as trained: 31 leaves 0.89:1..1.20:1, 12 above the design 1.00:1"
    # the spines are the top of this tree: nothing above them to oversubscribe
    assert "spine" not in over["tiers"]
    assert all(not r["judged"] and r["ratio"] is None for r in over["switches"] if r["tier"] == "spine")
    groups = over["rail_groups"]
    assert sum(len(g["switches"]) for g in groups.values()) == 31
    hca2 = groups["HCA-2"]
    assert (hca2["worst"], hca2["max_ratio"], hca2["above_design"]) == ("A09-P1-IBLEAF-02-03", 1.2, 2)
    assert hca2["ratio"] == round(hca2["down_gbps"] / hca2["up_gbps"], 4)
    # the uplinks of the switches above the design, for cover_links: every ISL port of those 12 leaves
    sections = _switch_sections(read_corpus(NDR))
    assert len(over["load_first"]) == sum(len(sections[n][1]) for n in EXPECTED[NDR]["over"])


def without_uplinks(text, leaf_guid, ports):
    """The dump as ibnetdiscover prints it with the given uplinks of one leaf gone: the leaf's port lines and
    the spine ends' lines (matched by '"S-<leaf guid>"[<port>]')."""
    kept = []
    for line in text.splitlines(keepends=True):
        if any(re.match(r'^\[%d\]\s+"S-' % p, line) for p in ports) and kept and _in_section(kept, leaf_guid):
            continue
        if any(('"S-%s"[%d]' % (leaf_guid, p)) in line for p in ports):
            continue
        kept.append(line)
    return "".join(kept)


def _in_section(lines, guid):
    for line in reversed(lines):
        if line.startswith("Switch") or line.startswith("Ca"):
            return ('"S-%s"' % guid) in line
    return False


def test_two_uplinks_removed_from_one_ndr_leaf_flag_exactly_that_leaf():
    text = read_corpus(NDR)
    leaf = "2c5eab0300b87b40"  # A09-P1-IBLEAF-04-04: 17 host ports, 16 uplinks
    altered = without_uplinks(text, leaf, (35, 36))  # both cables to A10-P1-IBSPINE-02
    assert altered.count("\n") == text.count("\n") - 4  # both ends of both cables
    # the dump's worst leaf (1.20:1) declared as the design: the dump as it is passes
    assert _over(analyse(text, max_oversubscription=1.2)) == []
    result = analyse(altered, max_oversubscription=1.2)
    assert _over(result) == ["A09-P1-IBLEAF-04-04"]
    (found,) = [f for f in result["findings"] if f["check"] == "oversubscription"]
    assert found["msg"].startswith(
        "A09-P1-IBLEAF-04-04 (leaf, rail group mlx5_5) is oversubscribed 1.21:1 where the design allows 1.20:1: "
        "17 host ports carry 6800 Gb/s, 14 uplink(s) 5600 Gb/s, as trained; "
    )
    # against the unaltered dump as the golden topology, the two cables are named port by port
    golden = analyse(altered, golden=text, max_oversubscription=1.2)
    (named,) = [f for f in golden["findings"] if f["check"] == "oversubscription"]
    assert (
        "missing against the golden topology: port 35 -> A10-P1-IBSPINE-02 port 32, port 36 -> A10-P1-IBSPINE-02 "
        "port 31: " in named["msg"]
    )
    assert (named["port"], named["peer"]) == (35, "A10-P1-IBSPINE-02")
    # without it, against the other leaves: the spine it lost now, and the one it never reached
    assert (
        "missing against the other leaves: no cable to A10-P1-IBSPINE-01 (the norm 2), no cable to "
        "A10-P1-IBSPINE-02 (the norm 2)" in found["msg"]
    )
    # at 1:1 the other eleven leaves stay flagged as before, and this one is added
    assert _over(analyse(altered)) == sorted(EXPECTED[NDR]["over"])
    assert _rows(analyse(altered))["A09-P1-IBLEAF-04-04"]["ratio"] == round(6800 / 5600, 4)


def test_man_page_dump_names_the_uplink_that_trained_at_1x():
    result = analyse(read_corpus(MAN))
    found = dict((f["switch"], f) for f in result["findings"] if f["check"] == "oversubscription")
    assert found["SW-6IB4 Voltaire"]["msg"] == (
        "SW-6IB4 Voltaire (leaf) is oversubscribed 1.60:1 where the design allows 1.00:1: 2 host ports carry "
        "20 Gb/s, 2 uplink(s) 12.5 Gb/s, as trained; trained below the fabric's inter-switch links (10 Gb/s): "
        "port 1 -> ISR9024 Voltaire port 10 at 1xSDR (2.5 Gb/s): re-cable or replace those uplinks."
    )
    assert (found["SW-6IB4 Voltaire"]["port"], found["SW-6IB4 Voltaire"]["peer"]) == (1, "ISR9024 Voltaire")
    # a host port that trained at 1x counts as 1x: ISR9024's three host ports are 2.5 + 10 + 10
    assert _rows(result)["ISR9024 Voltaire"]["down_gbps"] == 22.5


def test_a_single_switch_and_a_fabric_without_switches_are_not_judged():
    one = analyse(read_corpus(ONE))["oversubscription"]
    (row,) = one["switches"]
    assert (row["switch"], row["judged"], row["ratio"], row["oversubscribed"]) == (
        "MT43132 Mellanox Technologies",
        False,
        None,
        False,
    )
    assert one["text"].startswith("no switch has anything above it")
    assert analyse(read_corpus(EMPTY))["oversubscription"]["switches"] == []


def test_the_subnet_scenarios_fabric_is_1_5_to_1_by_design():
    text = (TOPO / "lab-subnet.ibnetdiscover").read_text()
    assert _over(analyse(text, max_oversubscription=1.5)) == []
    result = analyse(text)
    assert _over(result) == ["lab-leaf1", "lab-leaf2", "lab-leaf3", "lab-leaf4"]
    assert all("more ports down than up by design" in f["msg"] for f in result["findings"])


def test_an_uplink_trained_at_1x_in_the_simulated_subnet():
    # real ibnetdiscover on ibsim: lab-leaf2 port 8 <-> lab-spine2 port 2 trained 1xSDR (nets/net.1x-uplink)
    result = analyse((TOPO / "lab-subnet-1x-uplink.ibnetdiscover").read_text(), max_oversubscription=1.5)
    (found,) = [f for f in result["findings"] if f["check"] == "oversubscription"]
    assert found["msg"] == (
        "lab-leaf2 (leaf, rail group mlx5_0) is oversubscribed 2.40:1 where the design allows 1.50:1: 3 host ports "
        "carry 30 Gb/s, 2 uplink(s) 12.5 Gb/s, as trained; trained below the fabric's inter-switch links (10 Gb/s): "
        "port 8 -> lab-spine2 port 2 at 1xSDR (2.5 Gb/s): re-cable or replace those uplinks."
    )
    assert (found["switch"], found["port"], found["peer"]) == ("lab-leaf2", 8, "lab-spine2")
    assert result["oversubscription"]["load_first"] == [
        [found_guid(result, "lab-leaf2"), 7],
        [found_guid(result, "lab-leaf2"), 8],
    ]


def found_guid(result, name):
    return [s["guid"] for s in result["switches"] if s["name"] == name][0]


@pytest.mark.parametrize("bad", [0, -1, "abc", None])
def test_a_design_that_is_not_a_positive_ratio_is_one_sentence(bad):
    with pytest.raises(ValueError, match="set fabric_topology_max_oversubscription to the fabric's design"):
        check_design(bad)
    assert check_design("2") == 2.0


def test_a_leaf_left_with_no_uplink_is_named():
    text = without_uplinks((TOPO / "lab-subnet.ibnetdiscover").read_text(), "0002c90300a00001", (7, 8))
    result = analyse(text, max_oversubscription=1.5)
    (found,) = [f for f in result["findings"] if f["check"] == "oversubscription"]
    assert found["msg"].startswith(
        "lab-leaf1 (leaf, rail group mlx5_0) has 3 host ports (30 Gb/s) and no uplink: its hosts reach nothing beyond "
        "it; missing against the other leaves: no cable to lab-spine1 (the norm 1), no cable to lab-spine2 (the norm 1)"
    )
    assert found["ratio"] is None and result["oversubscription"]["load_first"] == []
