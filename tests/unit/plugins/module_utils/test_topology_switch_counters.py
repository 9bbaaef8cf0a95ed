"""Switch-port counters from real perfquery / ibqueryerrors output (corpus, and the simulated subnet
after ibsim's PerformanceSet raised counters): host counter rules, findings naming switch, port, peer."""

from ansible_collections.ibtune.fabric.plugins.module_utils import counters
from ansible_collections.ibtune.fabric.plugins.module_utils import ib_switch_counters as S
from ansible_collections.ibtune.fabric.plugins.module_utils import topology as T
from tests.conftest import FIXTURES, corpus_files, read_corpus

TOPO = FIXTURES / "topology"


def _sim_topo():
    return T.parse_ibnetdiscover((TOPO / "ndr582-sim.ibnetdiscover").read_text())


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
