"""ibnetdiscover / iblinkinfo / LFT parsers on every corpus file and on real outputs captured from OpenSM +
ibsim (tests/fixtures/topology), and the model they build (links, tiers)."""

import gzip
import re

import pytest

from ansible_collections.ibtune.fabric.plugins.module_utils.subnet.model import Index
from ansible_collections.ibtune.fabric.plugins.module_utils.subnet.parsers import (
    parse_iblinkinfo,
    parse_ibnetdiscover,
    parse_lfts,
)
from tests.conftest import FIXTURES, corpus_files, read_corpus

TOPO = FIXTURES / "topology"
NDR = "ibnetdiscover__ndr-40-quantum2-switches-582-cas-parallel-trunks-sharp-aggregation-nodes.txt"


def _blocks(text):
    """Independent reading for the assertions: node sections split on blank lines, header + port lines."""
    blocks = []
    for chunk in re.split(r"\n\s*\n", text):
        lines = [ln for ln in chunk.splitlines() if ln.strip()]
        head = [ln for ln in lines if re.match(r"^(Switch|Ca)\s", ln)]
        if head:
            blocks.append((head[0], [ln for ln in lines if ln.startswith("[")]))
    return blocks


def _expected(text):
    blocks = _blocks(text)
    switches = [h for h, _ports in blocks if h.startswith("Switch")]
    cas = [h for h, _ports in blocks if h.startswith("Ca")]
    port_lines = sum(len(p) for _head, p in blocks)
    leaves = 0
    for head, ports in blocks:
        if head.startswith("Switch") and any('"H-' in p and "Aggregation Node" not in p for p in ports):
            leaves += 1
    return len(switches), len(cas), port_lines // 2, leaves


TOPOLOGY_FILES = [p.name for p in corpus_files("ibnetdiscover__")]


def test_every_corpus_topology_file_is_covered():
    assert len(TOPOLOGY_FILES) >= 4


@pytest.mark.parametrize("name", TOPOLOGY_FILES)
def test_corpus_counts_match_an_independent_reading(name):
    text = read_corpus(name)
    switches, cas, links, leaves = _expected(text)
    topo = parse_ibnetdiscover(text)
    assert len(topo["switches"]) == switches
    assert len(topo["cas"]) == cas
    # every node has its own section in these dumps, so each cable is printed from both ends
    assert len(topo["links"]) == links
    assert len(topo["tiers"]["leaf"]) == leaves
    assert topo["warnings"] == []
    for link in topo["links"]:
        assert link["a"]["guid"].startswith("0x") and link["b"]["guid"].startswith("0x")


def test_ndr_fabric_model():
    text = read_corpus(NDR)
    topo = parse_ibnetdiscover(text)
    index = Index(topo)
    # 40 Quantum-2 switches: the IBLEAF ones are leaves, the IBSPINE ones spines, by graph alone
    names = dict((s["guid"], s["name"]) for s in topo["switches"])
    assert {names[g] for g in topo["tiers"]["spine"]} == {n for n in names.values() if "IBSPINE" in n}
    assert {names[g] for g in topo["tiers"]["leaf"]} == {n for n in names.values() if "IBLEAF" in n}
    assert len(topo["tiers"]["spine"]) == len(set(re.findall(r'^Switch.*"MF0;([^:]*IBSPINE[^:]*)', text, re.M)))
    leaf = next(s for s in topo["switches"] if s["name"] == "A09-P1-IBLEAF-04-04")
    assert leaf["guid"] == "0x2c5eab0300b87b40" and leaf["lid"] == 73 and leaf["num_ports"] == 65
    assert leaf["description"] == "MF0;A09-P1-IBLEAF-04-04:MQM9701/U1"
    port17 = next(p for p in leaf["ports"] if p["port"] == 17)
    assert port17["peer_guid"] == "0xe09d7303007a5a68" and port17["width"] == 4 and port17["speed"] == "NDR"
    # parallel trunk: ports 35 and 36 both to IBSPINE-02 (its ports 32 and 31)
    trunk = [p for p in leaf["ports"] if p["peer_guid"] == "0x2c5eab0300c26280"]
    assert sorted((p["port"], p["peer_port"]) for p in trunk) == [(35, 32), (36, 31)]
    # CA names: "host device", both mlx5_N and HCA-N spellings
    ca = index.nodes["0xe09d7303007a5a68"]
    assert (ca["host"], ca["device"], ca["lid"]) == ("a08-p1-dgx-04-c17", "mlx5_5", 657)
    hca6 = index.nodes["0xe09d730300857d78"]
    assert (hca6["host"], hca6["device"]) == ("a06-p1-dgx-02-c01", "HCA-6")
    # SHARP Aggregation Nodes are CAs, but neither hosts nor what makes a switch a leaf
    an = [c for c in topo["cas"] if c["aggregation_node"]]
    assert len(an) == text.count('"Mellanox Technologies Aggregation Node"\n') == len(topo["switches"])
    assert all(c["host"] is None and not c["factory"] for c in an)
    # factory descriptions: the ConnectX-7 chip string, no hostname
    factory = [c for c in topo["cas"] if c["factory"]]
    assert {c["description"] for c in factory} >= {"MT4129 ConnectX7   Mellanox Technologies"}
    assert len([c for c in factory if c["description"].startswith("MT4129")]) == len(
        re.findall(r'^Ca.*"MT4129 ConnectX7   Mellanox Technologies"', text, re.M)
    )
    assert {(ln["width"], ln["speed"]) for ln in topo["links"]} == {(4, "NDR")}
    assert index.ca_attachment("0xe09d7303007a5a68") == ("0x2c5eab0300b87b40", 17, 1)


def test_man_page_sample_chassis_header_and_mixed_widths():
    topo = parse_ibnetdiscover(read_corpus("ibnetdiscover__man-page-sdr-chassis-and-non-chassis-nodes.txt"))
    index = Index(topo)
    # 0x...3080 port 10 <-> 0x...0015 port 1: 4xSDR from one end, 1xSDR from the other: the worse view wins
    link = index.link_at[("0x005442ba00003080", 10)]
    assert (link["width"], link["speed"], link["kind"]) == (1, "SDR", "isl")
    two_port = index.nodes["0x0008f10403960558"]
    assert [p["port"] for p in two_port["ports"]] == [1, 2] and two_port["factory"]
    assert [p["lid"] for p in two_port["ports"]] == [10, 14]
    assert topo["initiated_from"] == "0x0008f10403960558"


def test_degenerate_fabric_one_ca():
    topo = parse_ibnetdiscover(read_corpus("ibnetdiscover__degenerate-one-ca-no-switches.txt"))
    assert topo["switches"] == [] and topo["links"] == []
    (ca,) = topo["cas"]
    assert (ca["guid"], ca["host"], ca["device"]) == ("0xb8e92403009ca838", "dgx-gb200-n01-c1", "HCA-1")


def test_warning_line_before_header_is_kept_aside():
    text = (TOPO / "ndr582-sim.ibnetdiscover").read_text()
    assert text.startswith("ibwarn: ")
    topo = parse_ibnetdiscover(text)
    assert topo["warnings"] == [text.splitlines()[0]]
    assert len(topo["switches"]) == 40 and len(topo["cas"]) == 582
    # ibsim reports SDR everywhere and OpenSM gave its own LIDs: same graph, different LIDs
    corpus = parse_ibnetdiscover(read_corpus(NDR))

    def ends(t):
        return {(ln["a"]["guid"], ln["a"]["port"], ln["b"]["guid"], ln["b"]["port"]) for ln in t["links"]}

    assert ends(topo) == ends(corpus)
    assert {(ln["width"], ln["speed"]) for ln in topo["links"]} == {(4, "SDR")}


def test_iblinkinfo_corpus_default_format():
    rows = parse_iblinkinfo(read_corpus(corpus_files("iblinkinfo__")[0].name))
    text = read_corpus(corpus_files("iblinkinfo__")[0].name)
    assert len(rows) == text.count("==(")
    down = [r for r in rows if r["state"] == "Down"]
    assert len(down) == text.count("Down/ Polling") == 16
    assert all(r["phys_state"] == "Polling" and r["peer_port"] is None for r in down)
    up = {(r["guid"] or r["description"], r["port"]): r for r in rows if r["state"] == "Active"}
    sw17 = up[("0x506b4b0300820910", 17)]
    assert (sw17["width"], sw17["speed"], sw17["peer_lid"], sw17["peer_description"]) == (4, "EDR", 4, "n02 HCA-1")
    ca = up[("0xec0d9a03003d62be", 1)]
    assert ca["node_type"] == "ca" and ca["description"] == "n02 HCA-1" and ca["peer_port"] == 17


def test_iblinkinfo_from_the_simulated_subnet():
    text = gzip.decompress((TOPO / "ndr582-sim.iblinkinfo.gz").read_bytes()).decode()
    rows = parse_iblinkinfo(text)
    assert len(rows) == text.count("==(")
    assert {r["lane_gbps"] for r in rows if r["state"] == "Active"} == {2.5}
    assert len([r for r in rows if r["node_type"] == "switch"]) == len(re.findall(r"^\s+\d+\s+\d+\[", text, re.M))


def test_lfts_from_dump_lfts_and_ibroute():
    text = gzip.decompress((TOPO / "ndr582-sim.dump_lfts.gz").read_bytes()).decode()
    tables = parse_lfts(text)
    assert len(tables) == text.count("Unicast lids") == 40
    assert sum(len(t) for t in tables.values()) == len(re.findall(r"^0x[0-9a-f]{4} \d{3} :", text, re.M))
    one = parse_lfts((TOPO / "ndr582-sim.ibroute-lid73").read_text())
    assert list(one) == ["0x2c5eab0300b87b40"]
    assert one["0x2c5eab0300b87b40"] == tables["0x2c5eab0300b87b40"]
    assert one["0x2c5eab0300b87b40"][1] == 37  # "0x0001 037 : (Channel Adapter ... 'B11-P1-CUFM-02 mlx5_0')"
