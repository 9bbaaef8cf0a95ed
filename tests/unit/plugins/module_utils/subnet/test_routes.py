"""Routes from real LFTs (OpenSM on the simulated 582-HCA subnet), checked against the real ibtracert;
cover_links rounds (disjoint, every coverable ISL covered) and name_cables; property tests on generated
two-level fat trees."""

import functools
import gzip
import re

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ansible_collections.ibtune.fabric.plugins.module_utils.subnet import routes as R
from ansible_collections.ibtune.fabric.plugins.module_utils.subnet.names import normalize_guid, split_description
from ansible_collections.ibtune.fabric.plugins.module_utils.subnet.parsers import parse_ibnetdiscover, parse_lfts
from tests.conftest import FIXTURES

TOPO = FIXTURES / "topology"


@functools.cache
def _sim():
    topo = parse_ibnetdiscover((TOPO / "ndr582-sim.ibnetdiscover").read_text())
    lfts = parse_lfts(gzip.decompress((TOPO / "ndr582-sim.dump_lfts.gz").read_bytes()).decode())
    return topo, lfts


def _tracert(name):
    """ibtracert's hops as (from guid, from port, to guid, to port), read with a regex."""
    text = (TOPO / name).read_text()
    src = re.search(r"^From ca \{(0x[0-9a-f]+)\} portnum (\d+)", text, re.M)
    hops = []
    prev = (normalize_guid(src.group(1)), None)
    for out, guid, port, kind in re.findall(
        r"^\[(\d+)\] -> (?:switch|ca) port \{(0x[0-9a-f]+)\}\[(\d+)\].*?$()", text, re.M
    ):
        del kind
        hops.append((prev[0], int(out), normalize_guid(guid), int(port)))
        prev = (normalize_guid(guid), int(port))
    dst = re.search(r"^To ca \{(0x[0-9a-f]+)\}", text, re.M)
    # ibsim gives CA ports GUID = node GUID + 1; the topology names the CA by its node GUID
    last = hops[-1]
    hops[-1] = (last[0], last[1], normalize_guid(dst.group(1)), last[3])
    return normalize_guid(src.group(1)), normalize_guid(dst.group(1)), hops


def test_routes_from_lfts_match_ibtracert():
    topo, lfts = _sim()
    router = R.Router(topo, lfts)
    names = sorted(p.name for p in TOPO.glob("ndr582-sim.ibtracert-*"))
    assert len(names) == 3
    for name in names:
        src, dst, expected = _tracert(name)
        assert router.hops(src, dst) == expected, name


def test_lfts_survive_a_json_round_trip():
    topo, lfts = _sim()
    as_json = {g: {str(lid): port for lid, port in t.items()} for g, t in lfts.items()}
    router = R.Router(topo, as_json)
    src, dst, expected = _tracert("ndr582-sim.ibtracert-657-522")
    assert router.hops(src, dst) == expected


def _disjoint(rounds):
    for pairs in rounds:
        members = [m for pair in pairs for m in pair]
        if len(members) != len(set(members)):
            return False
    return True


@functools.cache
def _sim_plan():
    topo, lfts = _sim()
    return R.plan_cover(None, lfts, topo, max_rounds=8)


def test_cover_links_on_the_582_hca_fabric():
    topo, lfts = _sim()
    plan = _sim_plan()
    isl_cables = len([lk for lk in topo["links"] if lk["kind"] == "isl"])
    assert plan["total"] == 2 * isl_cables
    assert plan["covered"] == plan["coverable"] == plan["total"]
    assert plan["uncovered"] == []
    assert 1 <= len(plan["rounds"]) <= 8 and _disjoint(plan["rounds"])
    # check coverage independently: follow every chosen pair through the LFTs again
    router = R.Router(topo, lfts)
    by_name = {name: rails[0] for name, rails in plan["endpoints"].items()}
    seen = set()
    for pairs in plan["rounds"]:
        for server, client in pairs:
            for a, ap, b, _bp in router.hops(by_name[client], by_name[server]):
                if router.index.is_switch(a) and router.index.is_switch(b):
                    seen.add((a, ap))
    assert seen == R.all_isls(topo)
    rounds, uncovered = R.cover_links_rounds(None, lfts, topo, max_rounds=1)
    assert len(rounds) == 1 and uncovered and all(u["reason"] == "not covered within 1 rounds" for u in uncovered)


def test_name_cables_finds_the_isl_the_failing_pairs_share():
    topo, lfts = _sim()
    rounds, _uncovered = R.cover_links_rounds(None, lfts, topo)
    pairs = [p for r in rounds for p in r]
    paths = R.pair_paths(pairs, lfts, topo)
    bad = ("0x2c5eab0300b87b40", 38)  # A09-P1-IBLEAF-04-04 port 38 -> A10-P1-IBSPINE-03 port 32
    peer = ("0x2c5eab0300c26380", 32)
    # a cable carries both directions: pairs over it either way fail
    failing = [p for p in paths if any((h["from_guid"], h["from_port"]) in (bad, peer) for h in p["path"])]
    passing = [p for p in paths if p not in failing]
    assert failing
    suspects = R.name_cables(failing, passing)
    assert [(s["a"], s["b"]) for s in suspects] == [("A09-P1-IBLEAF-04-04 p38", "A10-P1-IBSPINE-03 p32")]
    assert suspects[0]["reason"].startswith("on %d of %d failing paths" % (len(failing), len(failing)))
    assert "cable A09-P1-IBLEAF-04-04 p38 <-> A10-P1-IBSPINE-03 p32" in R.describe_cables(suspects)


def test_name_cables_host_cable_and_ambiguity():
    topo, lfts = _sim()
    host = "a08-p1-dgx-04-c17 mlx5_5"
    others = ["a06-p1-dgx-02-c01 HCA-6", "b08-p1-dgx-08-c01 HCA-5", "B11-P1-CUFM-02 mlx5_0"]
    failing = R.pair_paths([[host, o] for o in others], lfts, topo)
    # the failing host's only cable is common to all three; nothing passed: its cable, then ambiguity
    suspects = R.name_cables(failing, [])
    assert suspects[0]["a"] == "A09-P1-IBLEAF-04-04 p17" and suspects[0]["b"] == host
    # with one passing pair from that host, its cable is cleared and the remaining cables are named
    passing = R.pair_paths([[host, "a08-p1-dgx-04-c16 mlx5_5"]], lfts, topo)
    names = {(s["a"], s["b"]) for s in R.name_cables(failing, passing)}
    assert ("A09-P1-IBLEAF-04-04 p17", host) not in names
    assert R.name_cables([], passing) == []


def test_endpoints_from_an_inventory_pair_rails():
    topo, lfts = _sim()
    by_desc = {c["description"]: c["guid"] for c in topo["cas"]}
    hosts = {
        "h1": {"mlx5_0": by_desc["a08-p1-dgx-04-c17 mlx5_5"], "mlx5_1": by_desc["b08-p1-dgx-08-c01 HCA-5"]},
        "h2": {"mlx5_0": by_desc["a06-p1-dgx-02-c01 HCA-6"], "mlx5_1": by_desc["B11-P1-CUFM-02 mlx5_0"]},
    }
    (entry,) = R.pair_paths([["h2", "h1"]], lfts, topo, hosts)
    hops = entry["path"]
    assert hops[0]["from"] == "a08-p1-dgx-04-c17 mlx5_5" and hops[0]["to"] == "A09-P1-IBLEAF-04-04 p17"
    assert sum(1 for h in hops if not h["isl"]) == 4  # two rails: two host cables each
    plan = R.plan_cover(hosts, lfts, topo)
    assert _disjoint(plan["rounds"]) and plan["covered"] == plan["coverable"]


# ------------------------------------------------------------------ property tests on generated fabrics


class _FatTree:
    """A generated two-level fat tree: GUIDs, LIDs (leaves, spines, then CAs) and port numbers."""

    def __init__(self, leaves, spines, trunk, hosts):
        self.leaves, self.spines, self.trunk, self.hosts = leaves, spines, trunk, hosts
        guids = [self.leaf(i) for i in range(leaves)] + [self.spine(j) for j in range(spines)]
        guids += [self.ca(i, h) for i in range(leaves) for h in range(hosts)]
        self.lid = dict((g, n) for n, g in enumerate(guids, 1))

    @staticmethod
    def leaf(i):
        return 0x1000 + i

    @staticmethod
    def spine(j):
        return 0x2000 + j

    @staticmethod
    def ca(i, h):
        return 0x100000 + i * 256 + h

    def up(self, j, t):  # leaf port towards spine j, trunk member t
        return self.hosts + 1 + j * self.trunk + t

    def down(self, i, t):  # spine port towards leaf i
        return 1 + i * self.trunk + t

    def leaf_section(self, i):
        g = self.leaf(i)
        lines = [
            'Switch\t%d "S-%016x"\t\t# "leaf-%02d" base port 0 lid %d lmc 0'
            % (self.hosts + self.spines * self.trunk, g, i, self.lid[g])
        ]
        for h in range(self.hosts):
            c = self.ca(i, h)
            lines.append(
                '[%d]\t"H-%016x"[1](%x)\t\t# "n%02d-%02d mlx5_0" lid %d 4xNDR' % (h + 1, c, c, i, h, self.lid[c])
            )
        for j in range(self.spines):
            lines += [
                '[%d]\t"S-%016x"[%d]\t\t# "spine-%02d" lid %d 4xNDR'
                % (self.up(j, t), self.spine(j), self.down(i, t), j, self.lid[self.spine(j)])
                for t in range(self.trunk)
            ]
        return lines + [""]

    def spine_section(self, j):
        g = self.spine(j)
        lines = [
            'Switch\t%d "S-%016x"\t\t# "spine-%02d" base port 0 lid %d lmc 0'
            % (self.leaves * self.trunk, g, j, self.lid[g])
        ]
        for i in range(self.leaves):
            lines += [
                '[%d]\t"S-%016x"[%d]\t\t# "leaf-%02d" lid %d 4xNDR'
                % (self.down(i, t), self.leaf(i), self.up(j, t), i, self.lid[self.leaf(i)])
                for t in range(self.trunk)
            ]
        return lines + [""]

    def ca_section(self, i, h):
        c = self.ca(i, h)
        return [
            'Ca\t1 "H-%016x"\t\t# "n%02d-%02d mlx5_0"' % (c, i, h),
            '[1](%x)\t"S-%016x"[%d]\t\t# lid %d lmc 0 "leaf-%02d" lid %d 4xNDR'
            % (c, self.leaf(i), h + 1, self.lid[c], i, self.lid[self.leaf(i)]),
            "",
        ]

    def text(self):
        lines = []
        for i in range(self.leaves):
            lines += self.leaf_section(i)
        for j in range(self.spines):
            lines += self.spine_section(j)
        for i in range(self.leaves):
            for h in range(self.hosts):
                lines += self.ca_section(i, h)
        return "\n".join(lines) + "\n"

    def leaf_table(self, i, seed):
        """Down to its own hosts, else up through a port chosen by the LID (spread as OpenSM spreads them)."""
        table = {}
        for i2 in range(self.leaves):
            for h in range(self.hosts):
                d = self.lid[self.ca(i2, h)]
                k = (d + seed) % (self.spines * self.trunk)
                table[d] = h + 1 if i2 == i else self.up(k // self.trunk, k % self.trunk)
        return table

    def spine_table(self, j, seed):
        return dict(
            (self.lid[self.ca(i, h)], self.down(i, (self.lid[self.ca(i, h)] + seed + j) % self.trunk))
            for i in range(self.leaves)
            for h in range(self.hosts)
        )


def _fat_tree(leaves, spines, trunk, hosts, seed):
    """ibnetdiscover text of a two-level fat tree and LFTs routed like minhop: down where the LID is
    below, else up through a port chosen by the LID (spread as OpenSM spreads them)."""
    tree = _FatTree(leaves, spines, trunk, hosts)
    lfts = dict(("0x%016x" % tree.leaf(i), tree.leaf_table(i, seed)) for i in range(leaves))
    lfts.update(("0x%016x" % tree.spine(j), tree.spine_table(j, seed)) for j in range(spines))
    return tree.text(), lfts


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    leaves=st.integers(2, 5),
    spines=st.integers(1, 4),
    trunk=st.integers(1, 2),
    hosts=st.integers(1, 6),
    seed=st.integers(0, 7),
)
def test_property_rounds_disjoint_and_every_coverable_isl_covered(leaves, spines, trunk, hosts, seed):
    text, lfts = _fat_tree(leaves, spines, trunk, hosts, seed)
    topo = parse_ibnetdiscover(text)
    assert len(topo["tiers"]["leaf"]) == leaves and len(topo["tiers"]["spine"]) == spines
    plan = R.plan_cover(None, lfts, topo, max_rounds=10**6)
    assert _disjoint(plan["rounds"])
    assert plan["covered"] == plan["coverable"]
    reasons = {u["reason"] for u in plan["uncovered"]}
    assert reasons <= {"no candidate pair's route crosses it"}
    assert plan["total"] - plan["coverable"] == len(plan["uncovered"])
    # an ISL no route uses (destinations spread over fewer up-ports than exist) is reported, never hidden
    router = R.Router(topo, lfts)
    used = set()
    cas = [c["guid"] for c in topo["cas"]]
    for a in cas:
        for b in cas:
            if a != b:
                used |= {
                    (h[0], h[1])
                    for h in router.hops(a, b)
                    if router.index.is_switch(h[0]) and router.index.is_switch(h[2])
                }
    assert plan["coverable"] == len(used)
    # a round budget leaves exactly the rest uncovered
    few = R.plan_cover(None, lfts, topo, max_rounds=1)
    assert len(few["rounds"]) <= 1 and _disjoint(few["rounds"])
    assert (
        len([u for u in few["uncovered"] if u["reason"].startswith("not covered")]) == few["coverable"] - few["covered"]
    )


def test_paths_for_report_results_name_the_cable():
    topo, lfts = _sim()
    by_desc = {c["description"]: c["guid"] for c in topo["cas"]}
    hosts = {}
    for desc, guid in by_desc.items():
        host, device = split_description(desc)
        if host:
            hosts.setdefault(host, {})[device] = guid.replace("0x", "")
    rounds, _uncovered = R.cover_links_rounds(None, lfts, topo)
    results = []
    bad = {("0x2c5eab0300b87b40", 38), ("0x2c5eab0300c26380", 32)}
    router = R.Router(topo, lfts)
    for pairs in rounds:
        for server, client in pairs:
            s_host, s_dev = split_description(server)
            c_host, c_dev = split_description(client)
            if not s_host or not c_host:
                continue
            hops = router.hops(by_desc[client], by_desc[server])
            passed = not any((h[0], h[1]) in bad for h in hops)
            results.append(
                {
                    "server": s_host,
                    "server_device": s_dev,
                    "client": c_host,
                    "client_device": c_dev,
                    "passed": passed,
                    "kind": "bandwidth",
                }
            )
    failing, passing = R.paths_for_results(results, lfts, topo, hosts)
    assert len(failing) == len([r for r in results if not r["passed"]]) > 0
    assert len(failing) + len(passing) == len(results)
    suspects = R.name_cables(failing, passing)
    assert [(s["a"], s["b"]) for s in suspects] == [("A09-P1-IBLEAF-04-04 p38", "A10-P1-IBSPINE-03 p32")]
    # a latency result's path holds both directions
    lat = dict(results[0], kind="latency")
    (one,) = [p for group in R.paths_for_results([lat], lfts, topo, hosts) for p in group]
    bw = [p for group in R.paths_for_results([results[0]], lfts, topo, hosts) for p in group][0]
    assert len(one["path"]) == 2 * len(bw["path"])


def _covered_per_round(plan, topo, lfts, wanted):
    """How many of ``wanted`` directed ISLs each round covers first, followed through the LFTs again."""
    router = R.Router(topo, lfts)
    seen, out = set(), []
    for pairs in plan["rounds"]:
        now = set()
        for server, client in pairs:
            now |= {(h[0], h[1]) for h in R.pair_hops(router, plan["endpoints"], server, client) or []}
        out.append(len((now - seen) & wanted))
        seen |= now
    return out


def test_cover_links_loads_an_oversubscribed_fabrics_uplinks_first():
    from ansible_collections.ibtune.fabric.plugins.module_utils.subnet.analysis import analyse

    topo, lfts = _sim()
    # the simulated subnet has the corpus dump's cabling: 12 leaves above 1:1, 193 uplink ports
    load_first = analyse((TOPO / "ndr582-sim.ibnetdiscover").read_text())["oversubscription"]["load_first"]
    wanted = R.load_first_isls(topo, load_first)
    assert (len(load_first), len(wanted)) == (193, 386)
    first = R.plan_cover(None, lfts, topo, max_rounds=8, load_first=load_first)
    plain = _sim_plan()
    assert first["covered"] == plain["covered"] == plain["total"] and _disjoint(first["rounds"])
    # the plan's own count agrees with the routes followed again
    assert first["load_first"]["per_round"] == _covered_per_round(first, topo, lfts, wanted)
    assert sum(first["load_first"]["per_round"]) == first["load_first"]["directions"] == 386
    # the uplinks come first: at every round at least as many of them covered as without, more by round 2
    with_first, without = first["load_first"]["per_round"], _covered_per_round(plain, topo, lfts, wanted)
    cumulative = [(sum(with_first[: n + 1]), sum(without[: n + 1])) for n in range(len(with_first))]
    assert all(a >= b for a, b in cumulative) and cumulative[1][0] > cumulative[1][1]
    assert plain["load_first"] == {"directions": 0, "per_round": [0] * len(plain["rounds"])}
