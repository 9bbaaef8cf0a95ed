"""The fabric as fabric_validate hands it to fabric_plan/fabric_report (validate_topology.compact/expand),
and cover_links rounds through plan.plan_pass, on the real OpenSM routes of the simulated 582-HCA subnet."""

import functools
import gzip
import json

import pytest

from ansible_collections.ibtune.fabric.plugins.module_utils.validate import plan as P
from ansible_collections.ibtune.fabric.plugins.module_utils.subnet import routes as R
from ansible_collections.ibtune.fabric.plugins.module_utils.subnet.analysis import analyse
from ansible_collections.ibtune.fabric.plugins.module_utils.subnet.names import normalize_guid, split_description
from ansible_collections.ibtune.fabric.plugins.module_utils.subnet.parsers import parse_ibnetdiscover, parse_lfts
from ansible_collections.ibtune.fabric.plugins.module_utils.validate import fabric as VT
from ansible_collections.ibtune.fabric.plugins.module_utils.validate.preflight import natural_key
from tests.conftest import FIXTURES

TOPO = FIXTURES / "topology"


@functools.cache
def _texts():
    return (
        (TOPO / "ndr582-sim.ibnetdiscover").read_text(),
        gzip.decompress((TOPO / "ndr582-sim.dump_lfts.gz").read_bytes()).decode(),
    )


def inventory():
    """{host: {device: node guid}} as ib_facts would report it (colon-less hex), from the CA descriptions."""
    topo = parse_ibnetdiscover(_texts()[0])
    hosts = {}
    for ca in topo["cas"]:
        host, device = split_description(ca["description"])
        if host and not ca["aggregation_node"]:
            hosts.setdefault(host, {})[device] = ca["guid"][2:]
    return hosts


# The corpus cabling's worst leaf is 1.20:1: declared as the design, cover_links plans as on a fabric within its
# design (loading oversubscribed uplinks first is tested in subnet/test_routes.py and validate/test_fabric_lab.py)
SIM_DESIGN = 1.2


def ib_topology_result(hosts=None):
    """What ib_topology returns with routes (after Ansible's JSON round trip: string LIDs)."""
    text, lfts = _texts()
    result = analyse(text, None, inventory() if hosts is None else hosts, max_oversubscription=SIM_DESIGN)
    result["routes"] = parse_lfts(lfts)
    return json.loads(json.dumps(result))


def rails_by_index(hosts):
    """The plan's rails: rail i = the host's i-th device (descriptions say HCA-1 on some hosts, mlx5_0 on others)."""
    return {
        h: [{"rail": "rail%d" % i, "device": d, "port": 1} for i, d in enumerate(sorted(devs, key=natural_key))]
        for h, devs in hosts.items()
    }


def test_compact_is_small_and_expands_to_the_same_routes():
    result = ib_topology_result()
    small = VT.compact(result)
    assert small["version"] == 1
    assert len(json.dumps(small)) * 4 < len(json.dumps(result))
    # survives JSON (a module argument) and routes every CA pair the same way as the full result
    topo, lfts, hosts = VT.expand(json.loads(json.dumps(small)))
    full = R.Router(result, result["routes"])
    mine = R.Router(topo, lfts)
    cas = [c["guid"] for c in result["cas"] if not c["aggregation_node"]]
    for src in cas[::37]:
        for dst in cas[::23]:
            if src != dst:
                assert mine.hops(src, dst) == full.hops(src, dst)
                assert [mine.hop_dict(h) for h in mine.hops(src, dst)] == [
                    full.hop_dict(h) for h in full.hops(src, dst)
                ]
    # the inventory rails are the ones ib_topology found, with its normalised GUIDs
    assert hosts["a08-p1-dgx-04-c17"]["mlx5_5"] == "0xe09d7303007a5a68"
    assert small["host_order"] == result["host_order"] and len(small["host_order"]) == len(inventory())
    # an ib_topology result is taken as it is
    assert VT.expand(result)[1] is result["routes"]


def test_compact_without_routes_or_of_something_else_is_one_sentence():
    result = ib_topology_result()
    del result["routes"]
    with pytest.raises(ValueError, match="fabric_topology_routes=true"):
        VT.compact(result)
    with pytest.raises(ValueError, match="fabric_topology_routes=true"):
        VT.expand(result)
    with pytest.raises(ValueError, match="not an ib_topology result"):
        VT.compact({"msg": "x"})
    with pytest.raises(ValueError, match="compact topology of version 1"):
        VT.expand({"version": 7, "switches": []})


def test_cover_links_through_the_plan_on_the_582_hca_fabric():
    hosts = inventory()
    small = json.loads(json.dumps(VT.compact(ib_topology_result())))
    rails = rails_by_index(hosts)
    names = sorted(hosts)
    plan = P.plan_pass(names, rails, {h: h for h in names}, strategy="cover_links", topology=small)
    cov = plan["coverage"]
    assert plan["rounds"] <= 8 and plan["untested"] == []
    assert cov["isls"] == 1064 and cov["covered_isls"] == cov["coverable_isls"]
    # every round disjoint, every host tested
    for rnd in range(1, plan["rounds"] + 1):
        ends = [h for p in plan["pairs"] if p["round"] == rnd for h in (p["server"], p["client"])]
        assert len(ends) == len(set(ends))
    assert {h for p in plan["pairs"] for h in (p["server"], p["client"])} == set(names)
    # check coverage independently: every planned rail pair followed through the LFTs again
    topo, lfts, topo_hosts = VT.expand(small)
    router = R.Router(topo, lfts)
    guid = {h: {r["rail"]: normalize_guid(topo_hosts[h][r["device"]]) for r in rails[h]} for h in names}

    def isls(server, client, rail):
        hops = router.hops(guid[client][rail], guid[server][rail]) or []
        return {(a, ap) for a, ap, b, _bp in hops if router.index.is_switch(a) and router.index.is_switch(b)}

    seen = set()
    for p in plan["pairs"]:
        for rail in p["rails"]:
            seen |= isls(p["server"], p["client"], rail)
    uncovered = {(u["from"], u["reason"]) for u in cov["uncovered_isls"]}
    assert len(seen) == cov["covered_isls"] == 1064 - len(uncovered)
    # what is left uncovered no host pair (rail r with rail r) can cross: the leaves' other CAs (factory
    # descriptions, UFM hosts' second port) are not in the inventory
    assert all(reason == "no candidate pair's route crosses it" for _f, reason in uncovered)
    anywhere = set()
    for server in names:
        for client in names:
            if server != client:
                for rail in set(guid[server]) & set(guid[client]):
                    anywhere |= isls(server, client, rail)
    assert anywhere == seen


def test_cover_links_every_hca_its_own_host_covers_every_isl():
    topo = parse_ibnetdiscover(_texts()[0])
    hosts = {c["guid"]: {"hca": c["guid"]} for c in topo["cas"] if not c["aggregation_node"]}
    small = VT.compact(ib_topology_result(hosts={}), hosts=hosts)
    rails = {h: [{"rail": "r", "device": "hca", "port": 1}] for h in hosts}
    plan = P.plan_pass(sorted(hosts), rails, {h: h for h in hosts}, strategy="cover_links", topology=small)
    assert plan["rounds"] <= 8
    assert plan["coverage"]["covered_isls"] == plan["coverage"]["isls"] == 1064
    assert plan["coverage"]["uncovered_isls"] == []
    assert plan["untested"] == []


def test_cover_links_pairs_hosts_the_fabric_does_not_show():
    hosts = inventory()
    small = VT.compact(ib_topology_result())
    names = sorted(hosts) + ["login1", "login2", "login3"]
    rails = rails_by_index(hosts)
    for extra in names[-3:]:
        rails[extra] = [{"rail": "rail0", "device": "mlx5_0", "port": 1}]
    plan = P.plan_pass(names, rails, {h: h for h in names}, strategy="cover_links", topology=small)
    tested = {h for p in plan["pairs"] for h in (p["server"], p["client"])}
    assert {"login1", "login2", "login3"} <= tested and plan["untested"] == []


def test_fill_untested_keeps_rounds_disjoint():
    rounds = P.fill_untested(["a", "b", "c", "d", "e"], [[["a", "b"]]])
    assert rounds == [[["a", "b"], ["c", "d"]], [["e", "a"]]]
    assert P.fill_untested(["a"], []) == []
    assert P.fill_untested(["a", "b"], []) == [[["a", "b"]]]


def test_cover_links_without_topology_is_one_sentence():
    with pytest.raises(ValueError, match="fabric_validate_topology=true"):
        P.plan_pass(["a", "b"], {"a": [], "b": []}, {"a": "a", "b": "b"}, strategy="cover_links")


def test_forwarding_tables_start_at_their_first_lid():
    result = ib_topology_result()
    guid = result["switches"][0]["guid"]
    result["routes"] = {guid: {"5000": 3, "5002": 7}}
    small = VT.compact(result)
    assert small["lfts"] == {guid: [5000, "030007"]}
    assert VT.expand(small)[1] == {guid: {5000: 3, 5002: 7}}
