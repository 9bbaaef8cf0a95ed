"""Switch-port counters from real perfquery / ibqueryerrors output (corpus, and the simulated subnet
after ibsim's PerformanceSet raised counters): host counter rules, findings naming switch, port, peer."""

import pytest

from ansible_collections.ibtune.fabric.plugins.module_utils.host import counters
from ansible_collections.ibtune.fabric.plugins.module_utils.subnet import switch_counters as S
from ansible_collections.ibtune.fabric.plugins.module_utils.subnet.parsers import parse_ibnetdiscover
from tests.conftest import FIXTURES, corpus_files, read_corpus

TOPO = FIXTURES / "topology"


def _sim_topo():
    return parse_ibnetdiscover((TOPO / "ndr582-sim.ibnetdiscover").read_text())


def test_perfquery_corpus_extended_and_error_details():
    text = read_corpus("perfquery__x-extended-2ports-clean.txt")
    blocks = S.parse_perfquery(text)
    assert [(b["lid"], b["port"], b["kind"]) for b in blocks] == [
        (1719, 1, "PortCountersExtended"),
        (1719, 2, "PortCountersExtended"),
    ]
    assert blocks[0]["counters"]["port_xmit_data"] == 36298026860928
    assert blocks[1]["counters"]["port_xmit_wait"] == 36510964
    assert blocks[0]["counters"]["symbol_error"] == 0
    # every "Name:....value" line except the selectors became a counter
    values = [ln for ln in text.splitlines() if ":..." in ln and not ln.startswith(("PortSelect", "CounterSelect"))]
    assert sum(len(b["counters"]) for b in blocks) == len(values)
    (details,) = S.parse_perfquery(read_corpus("perfquery__E-rcv-error-details.txt"))
    assert details["kind"] == "PortRcvErrorDetails" and details["counters"]["PortLocalPhysicalErrors"] == 0


def test_ibqueryerrors_corpus_sx6036():
    text = read_corpus(corpus_files("ibqueryerrors__")[0].name)
    parsed = S.parse_ibqueryerrors(text)
    assert parsed["summary"] == {"nodes_checked": 4, "bad_nodes": 4, "ports_checked": 43, "ports_with_errors": 14}
    sw = next(n for n in parsed["nodes"] if n["description"] == "MF0;ys23ib4:SX6036/U1")
    assert sw["guid"] == "0x0002c903006e29b0"
    assert sorted(sw["ports"]) == [0, 1, 2, 3, 4, 5, 6, 7, 8]  # "port ALL" is the aggregate, left out
    assert sw["ports"][5]["symbol_error"] == 65535 and sw["ports"][5]["port_xmit_discards"] == 649
    # bracketed counters on non-ALL lines, one each
    lines = [ln for ln in text.splitlines() if "GUID" in ln and "port ALL" not in ln]
    assert sum(len(p) for n in parsed["nodes"] for p in n["ports"].values()) == sum(ln.count("==") for ln in lines)
    # pinned counters: 16-bit SymbolErrorCounter at 65535 and 32-bit PortXmitWait at 2**32-1
    snap = S.snapshot_from_ibqueryerrors(parsed)
    pinned = S.switch_saturated(snap, {"switches": [], "cas": [], "links": []})
    assert ("0x0002c903006e29b0", 5, "symbol_error") in {(p["switch"], p["port"], p["counter"]) for p in pinned}
    assert len([p for p in pinned if p["counter"] == "port_xmit_wait"]) == sum(
        ln.count("PortXmitWait == 4294967295") for ln in lines
    )


def test_ibqueryerrors_deltas_on_the_simulated_subnet():
    topo = _sim_topo()
    before = S.snapshot_from_ibqueryerrors(S.parse_ibqueryerrors((TOPO / "ndr582-sim.ibqueryerrors").read_text()), topo)
    after_parsed = S.parse_ibqueryerrors((TOPO / "ndr582-sim-errors.ibqueryerrors").read_text())
    assert after_parsed["summary"]["bad_nodes"] == 1
    after = S.snapshot_from_ibqueryerrors(after_parsed, topo)
    assert before == {}
    found = S.switch_violations(before, after, topo)
    assert [v["msg"] for v in found] == [
        "A09-P1-IBLEAF-04-04 port 36 <-> A10-P1-IBSPINE-02 port 31: SymbolErrorCounter +65535",
        "A09-P1-IBLEAF-04-04 port 17 <-> a08-p1-dgx-04-c17 mlx5_5: SymbolErrorCounter +12",
        "A09-P1-IBLEAF-04-04 port 35 <-> A10-P1-IBSPINE-02 port 32: LinkDownedCounter +3",
    ]
    assert {v["category"] for v in found} == {"physical"}
    # the host rules: a threshold above the increase lets it pass; a negative one turns the gate off
    assert len(S.switch_violations(before, after, topo, {"symbol_error": 12})) == 2
    assert len(S.switch_violations(before, after, topo, {"link_downed": -1})) == 2
    pinned = S.switch_saturated(after, topo)
    assert [(p["switch"], p["port"], p["counter_name"]) for p in pinned] == [
        ("A09-P1-IBLEAF-04-04", 36, "SymbolErrorCounter")
    ]
    assert pinned[0]["width"] == counters.COUNTER_WIDTHS["symbol_error"]
    assert "SymbolErrorCounter +12" in S.describe(found)


def test_perfquery_deltas_on_the_simulated_subnet():
    topo = _sim_topo()
    before = S.snapshot_from_perfquery(
        S.parse_perfquery((TOPO / "ndr582-sim.perfquery-lid73-port17-before").read_text()), topo
    )
    after = S.snapshot_from_perfquery(
        S.parse_perfquery((TOPO / "ndr582-sim-errors.perfquery-lid73-port17").read_text()), topo
    )
    assert list(after) == ["0x2c5eab0300b87b40:17"]
    (v,) = S.switch_violations(before, after, topo)
    assert (v["switch"], v["port"], v["peer"], v["delta"], v["before"], v["after"]) == (
        "A09-P1-IBLEAF-04-04",
        17,
        "a08-p1-dgx-04-c17 mlx5_5",
        12,
        0,
        12,
    )
    # the traffic counters are read too (the coverage proof uses their deltas)
    assert after["0x2c5eab0300b87b40:17"]["port_xmit_data"] >= before["0x2c5eab0300b87b40:17"]["port_xmit_data"]


def _lab_topo():
    return parse_ibnetdiscover((TOPO / "lab-subnet.ibnetdiscover").read_text())


def _data_snapshot(name, topo):
    return S.snapshot_from_ibqueryerrors(S.parse_ibqueryerrors((TOPO / name).read_text()), topo)


def test_ibqueryerrors_data_counters_every_switch_port():
    """`ibqueryerrors --counters --switch` (captured: capture-data-counters.sh): a "Data Counters for" block per
    switch, every port with its human-readable value in brackets; nothing of it is an error counter."""
    topo = _lab_topo()
    text = (TOPO / "lab-subnet.ibqueryerrors-counters-after").read_text()
    parsed = S.parse_ibqueryerrors(text)
    assert sorted(n["description"] for n in parsed["nodes"]) == sorted(
        ["lab-leaf1", "lab-leaf2", "lab-leaf3", "lab-leaf4", "lab-spine1", "lab-spine2"]
    )
    snap = S.snapshot_from_ibqueryerrors(parsed, topo)
    port_lines = [ln for ln in text.splitlines() if ln.strip().startswith("GUID")]
    assert len(snap) == len(port_lines) == 4 * 9 + 2 * 5
    assert snap["0x0002c90300a00001:8"]["port_xmit_data"] == 268438840
    assert all(len(values) == 8 for values in snap.values())
    # data counters never count as errors
    assert S.switch_violations({}, snap, topo) == []


def test_isl_traffic_names_the_directions_without_test_traffic():
    topo = _lab_topo()
    before = _data_snapshot("lab-subnet.ibqueryerrors-counters-before", topo)
    after = _data_snapshot("lab-subnet.ibqueryerrors-counters-after", topo)
    traffic = S.isl_traffic(before, after, topo)
    # 8 leaf-spine cables, both directions; the console moved 1 GiB on leaf1 -> spine2 and spine2 -> leaf2 only
    assert traffic["total"] == 16 and traffic["carried"] == 2 and traffic["measured"]
    assert [(d["from"], d["to"]) for d in traffic["directions"][:2]] == [
        ("lab-spine2 p2", "lab-leaf2 p8"),
        ("lab-leaf1 p8", "lab-spine2 p1"),
    ]
    assert all(d["octets"] > 1 << 29 for d in traffic["directions"][:2])
    # MAD traffic (kilobytes) is not test traffic
    assert all(d["octets"] < 1 << 20 for d in traffic["directions"][2:])
    assert "lab-leaf1 p7 -> lab-spine1 p1" in traffic["uncarried"]
    assert "lab-leaf1 p8 -> lab-spine2 p1" not in traffic["uncarried"]
    assert S.describe_isl_traffic(traffic).startswith("ISL traffic: 2 of 16 directions carried test traffic")
    # a lower bar counts the management traffic too: the threshold matters
    assert S.isl_traffic(before, after, topo, min_octets=1)["carried"] > 2


def test_isl_traffic_without_a_snapshot_is_not_measured():
    topo = _lab_topo()
    after = _data_snapshot("lab-subnet.ibqueryerrors-counters-after", topo)
    traffic = S.isl_traffic({}, after, topo)
    assert traffic["measured"] is False and traffic["carried"] == 0
    assert S.describe_isl_traffic(traffic).startswith("ISL traffic was not measured")


def test_switch_error_counter_after_the_console_raised_it():
    topo = _lab_topo()
    snap = S.snapshot_from_ibqueryerrors(
        S.parse_ibqueryerrors((TOPO / "lab-subnet.ibqueryerrors-after").read_text()), topo
    )
    (found,) = S.switch_violations({}, snap, topo)
    assert found["msg"] == "lab-leaf2 port 1 <-> ibt-lab-node4 mlx5_0: SymbolErrorCounter +12"


def test_a_64_bit_port_xmit_wait_from_perfquery_x_is_not_saturated_at_32_bits():
    # the corpus' perfquery -x block, its PortXmitWait raised to the 32-bit maximum: a PortCountersExtended
    # reading is 64-bit, so it is not stuck; the same value read from PortCounters is
    text = read_corpus("perfquery__x-extended-2ports-clean.txt").replace("22730501", "4294967295")
    blocks = S.parse_perfquery(text)
    topo = {"switches": [{"guid": "0x7cfe9003009ce5b0", "lid": 1719, "name": "sw", "num_ports": 36}], "cas": [],
            "links": []}  # fmt: skip
    snap = S.snapshot_from_perfquery(blocks, topo)
    assert snap["0x7cfe9003009ce5b0:1"]["port_xmit_wait"] == 4294967295
    sources = S.perfquery_sources(blocks, topo)
    assert sources["0x7cfe9003009ce5b0:1"]["port_xmit_wait"] == "pma_ext"
    assert S.switch_saturated(snap, topo, sources) == []
    [pinned] = S.switch_saturated(snap, topo)  # without the source: read as PortCounters
    assert (pinned["counter"], pinned["width"], pinned["source"], pinned["gated"]) == (
        "port_xmit_wait",
        32,
        "pma",
        False,
    )


def test_ibqueryerrors_extended_values_are_64_bit_and_saturation_is_gated_by_class():
    text = read_corpus(corpus_files("ibqueryerrors__")[0].name)
    parsed = S.parse_ibqueryerrors(text)
    # the corpus switch has no AdditionalPortCounters: its values carry no suffix, PortCounters widths
    assert set(v for n in parsed["nodes"] for p in n["sources"].values() for v in p.values()) == {"pma"}
    pinned = S.switch_saturated(S.snapshot_from_ibqueryerrors(parsed), {"switches": [], "cas": [], "links": []},
                                S.ibqueryerrors_sources(parsed))  # fmt: skip
    gated = set((p["counter"], p["gated"]) for p in pinned)
    assert ("symbol_error", True) in gated and ("port_xmit_wait", False) in gated
    # an extended reading ("== 65535 (65.535K)") of a 64-bit counter is not stuck at 65535
    ext = 'Errors for 0x2c903006e29b0 "sw"\n   GUID 0x2c903006e29b0 port 5: [SymbolErrorCounter == 65535 (65.535K)]\n'
    parsed = S.parse_ibqueryerrors(ext)
    assert parsed["nodes"][0]["sources"][5] == {"symbol_error": "pma_ext"}
    snap = S.snapshot_from_ibqueryerrors(parsed)
    assert S.switch_saturated(snap, {"switches": [], "cas": [], "links": []}, S.ibqueryerrors_sources(parsed)) == []


def test_every_ibqueryerrors_layout_is_parsed_or_refused():
    text = read_corpus(corpus_files("ibqueryerrors__")[0].name)
    expected = S.parse_ibqueryerrors(text)
    # the same output with its line breaks lost (a wrapper joined stdout_lines with spaces): the same reading
    assert S.parse_ibqueryerrors(" ".join(text.splitlines())) == expected
    # with -r, each port line is followed by its link info: ignored
    with_links = text.replace(
        "port 5: [SymbolErrorCounter == 65535]",
        "port 5: [SymbolErrorCounter == 65535]\n       Link info:     12    5[  ] ==( 4X 14.0625 Gbps Active/"
        "  LinkUp)==>",
    )
    assert S.parse_ibqueryerrors(with_links)["nodes"][2]["ports"][5]["symbol_error"] == 65535
    # a clean fabric prints only the summary: no node, and that is a reading, not an error
    clean = (
        "\n## Summary: 4 nodes checked, 0 bad nodes found\n"
        "##          43 ports checked, 0 ports have errors beyond threshold\n"
    )
    assert S.parse_ibqueryerrors(clean) == {
        "nodes": [],
        "summary": {"nodes_checked": 4, "bad_nodes": 0, "ports_checked": 43, "ports_with_errors": 0},
    }
    assert S.parse_ibqueryerrors("") == {"nodes": [], "summary": {}}
    for junk in (
        "ibwarn: [1234] mad_rpc_open_port: can't open UMAD port ((null):0)",
        "src/ibqueryerrors.c:... discover failed",
    ):
        with pytest.raises(ValueError, match="holds no node, port or summary record"):
            S.parse_ibqueryerrors(junk)
