"""Cabling checks on real dumps (checks.py): the corpus NDR fabric (its real rail swap, unequal trunks,
factory names) and the man-page sample (1x links)."""

import re

from ansible_collections.ibtune.fabric.plugins.module_utils.subnet.checks import (
    check_descriptions,
    check_link_norms,
    check_rail_alignment,
    check_trunks,
)
from ansible_collections.ibtune.fabric.plugins.module_utils.subnet.names import short_name
from ansible_collections.ibtune.fabric.plugins.module_utils.subnet.parsers import parse_ibnetdiscover
from ansible_collections.ibtune.fabric.plugins.module_utils.subnet.rails import map_rails
from tests.conftest import read_corpus

NDR = "ibnetdiscover__ndr-40-quantum2-switches-582-cas-parallel-trunks-sharp-aggregation-nodes.txt"


def _sections(text):
    """{switch description: [port lines]} read with a regex, independently of the parser."""
    out = {}
    for chunk in re.split(r"\n\s*\n", text):
        head = re.search(r'^Switch\s+\d+\s+"S-[0-9a-f]+"\s+# "([^"]+)"', chunk, re.M)
        if head:
            out[head.group(1)] = [ln for ln in chunk.splitlines() if ln.startswith("[")]
    return out


def test_real_rail_swap_in_the_ndr_dump():
    text = read_corpus(NDR)
    topo = parse_ibnetdiscover(text)
    found = check_rail_alignment(topo)
    # b08-p1-dgx-08-c01's HCA-5 sits on the HCA-6 leaf and its HCA-6 on the HCA-5 leaf
    sections = _sections(text)
    assert any('"b08-p1-dgx-08-c01 HCA-5"' in ln for ln in sections["MF0;B09-P1-IBLEAF-04-08:MQM9701/U1"])
    assert any('"b08-p1-dgx-08-c01 HCA-6"' in ln for ln in sections["MF0;B09-P1-IBLEAF-03-08:MQM9701/U1"])
    dgx = [f for f in found if f["host"] == "b08-p1-dgx-08-c01"]
    assert sorted((f["device"], f["switch"], f["port"]) for f in dgx) == [
        ("HCA-5", "B09-P1-IBLEAF-04-08", 1),
        ("HCA-6", "B09-P1-IBLEAF-03-08", 1),
    ]
    assert dgx[0]["msg"].startswith("b08-p1-dgx-08-c01 HCA-") and "swap the cable back" in dgx[0]["msg"]
    # judged from the inventory only, the UFM servers (not in it) are not findings
    hosts = {"b08-p1-dgx-08-c01": {}}
    for ca in topo["cas"]:
        if ca["host"] == "b08-p1-dgx-08-c01":
            hosts[ca["host"]][ca["device"]] = ca["guid"]
    rail_map = map_rails(topo, hosts)
    assert {f["host"] for f in check_rail_alignment(topo, rail_map)} == {"b08-p1-dgx-08-c01"}


def test_rail_groups_given_explicitly():
    topo = parse_ibnetdiscover(read_corpus(NDR))
    groups = {"HCA-6": ["B09-P1-IBLEAF-04-08"], "HCA-5": ["B09-P1-IBLEAF-03-08"]}
    found = check_rail_alignment(topo, rail_groups=groups)
    on_these = {(f["peer"], f["switch"]) for f in found if f["host"] == "b08-p1-dgx-08-c01"}
    assert on_these == {
        ("b08-p1-dgx-08-c01 HCA-5", "B09-P1-IBLEAF-04-08"),
        ("b08-p1-dgx-08-c01 HCA-6", "B09-P1-IBLEAF-03-08"),
    }
    # every HCA-6 not on the one leaf named is outside its group
    hca6 = [c for c in topo["cas"] if c["device"] == "HCA-6"]
    on_leaf = [ln for ln in _sections(read_corpus(NDR))["MF0;B09-P1-IBLEAF-04-08:MQM9701/U1"] if 'HCA-6"' in ln]
    assert len([f for f in found if f["device"] == "HCA-6"]) == len(hca6) - len(on_leaf)


def test_unequal_trunks_match_the_file():
    text = read_corpus(NDR)
    topo = parse_ibnetdiscover(text)
    found = check_trunks(topo)
    sections = _sections(text)
    expected = set()
    for desc, lines in sections.items():
        if "IBLEAF" not in desc:
            continue
        peers = [re.search(r'# "([^"]+)"', ln).group(1) for ln in lines if '"S-' in ln]
        counts = {p: peers.count(p) for p in peers}
        for peer, count in counts.items():
            if count == 1:
                expected.add((short_name(desc), short_name(peer)))
    assert expected and {(f["switch"], f["peer"]) for f in found if f["cables"] == 1} == expected
    one = next(f for f in found if f["switch"] == "A09-P1-IBLEAF-01-01" and f["peer"] == "A10-P1-IBSPINE-04")
    assert one["msg"] == (
        "A09-P1-IBLEAF-01-01 <-> A10-P1-IBSPINE-04 has 1 cable(s) (port 39 <-> port 1) where the other "
        "leaf-spine trunks have 2: a trunk member is missing or down."
    )


def test_links_below_norm_on_the_man_page_sample():
    topo = parse_ibnetdiscover(read_corpus("ibnetdiscover__man-page-sdr-chassis-and-non-chassis-nodes.txt"))
    found = check_link_norms(topo)
    assert sorted((f["kind"], f["switch"], f["port"]) for f in found) == [
        ("host", "ISR9024 Voltaire", 12),
        ("isl", "SW-6IB4 Voltaire", 1),
    ]
    isl = next(f for f in found if f["kind"] == "isl")
    assert isl["peer"] == "ISR9024 Voltaire port 10" and "1xSDR" in isl["msg"] and "< 4x" in isl["msg"]
    # the NDR fabric is uniform 4xNDR: nothing below the norm
    assert check_link_norms(parse_ibnetdiscover(read_corpus(NDR))) == []


def test_factory_and_duplicate_descriptions():
    text = read_corpus(NDR)
    topo = parse_ibnetdiscover(text)
    found = check_descriptions(topo)
    factory = [f for f in found if f["check"] == "factory_description"]
    headers = re.findall(r'^Ca\s+\d+\s+"H-[0-9a-f]+"\s+# "([^"]+)"', text, re.M)
    chip = [h for h in headers if h.startswith("MT4129")]
    default_host = [h for h in headers if h.split()[0] in ("ubuntu", "localhost")]
    assert len(factory) == len(chip) + len(default_host)
    one = next(f for f in factory if f["guid"] == "0xe09d730300858d88")
    assert (one["switch"], one["port"]) == ("A09-P1-IBLEAF-04-02", 6)
    assert [f for f in found if f["check"] == "duplicate_description"] == []
    # a description two hosts share (a cloned image): one finding naming both places
    dup = read_corpus("ibnetdiscover__one-switch-sdr-2-hosts-2009.txt").replace(
        "compute-00-01 HCA-1", "compute-00-00 HCA-1"
    )
    (dupe,) = [f for f in check_descriptions(parse_ibnetdiscover(dup)) if f["check"] == "duplicate_description"]
    assert "port 1" in dupe["msg"] and "port 2" in dupe["msg"] and dupe["peer"] == "compute-00-00 HCA-1"
