"""cover_links planned from the routes (validate/cover.py): on the 582-HCA fabric's real OpenSM tables it reaches
every directed ISL any host pair can cross, as the exhaustive planner does; on rail-optimised planes
(planes.rail_planes, trunks included) it covers every ISL in the rounds a shift would need."""

import json

from ansible_collections.ibtune.fabric.plugins.module_utils.subnet import routes as R
from ansible_collections.ibtune.fabric.plugins.module_utils.subnet.names import normalize_guid
from ansible_collections.ibtune.fabric.plugins.module_utils.validate import cover
from ansible_collections.ibtune.fabric.plugins.module_utils.validate import fabric as VT
from ansible_collections.ibtune.fabric.plugins.module_utils.validate import plan as P
from tests.unit.plugins.module_utils.validate.planes import rail_planes
from tests.unit.plugins.module_utils.validate.test_fabric import ib_topology_result, inventory, rails_by_index


def rails_of(small):
    return {h: [{"rail": d, "device": d, "port": 1} for d in sorted(devs)] for h, devs in small["hosts"].items()}


def disjoint(rounds):
    return all(len({h for p in rnd for h in p}) == 2 * len(rnd) for rnd in rounds)


def test_the_582_hca_fabric_every_isl_a_host_pair_can_cross_and_the_same_as_scoring_every_pair():
    hosts = inventory()
    small = json.loads(json.dumps(VT.compact(ib_topology_result())))
    rails = rails_by_index(hosts)
    names = sorted(hosts)
    eps = VT.rail_endpoints(names, rails, small["hosts"])
    planned = cover.plan_cover(eps, small)
    topo, lfts, _hosts = VT.expand(small)
    exhaustive = R.plan_cover(eps, lfts, topo)
    assert disjoint(planned["rounds"]) and len(planned["rounds"]) <= 8
    assert (
        (planned["total"], planned["coverable"])
        == (exhaustive["total"], exhaustive["coverable"])
        == (1064, planned["covered"])
    )
    # independently: the planned pairs' routes, followed through the LFTs by routes.Router
    router = R.Router(topo, lfts)
    seen = set()
    for rnd in planned["rounds"]:
        for server, client in rnd:
            for rail in set(eps[server]) & set(eps[client]):
                hops = router.hops(normalize_guid(eps[client][rail]), normalize_guid(eps[server][rail])) or []
                seen |= {(a, ap) for a, ap, b, _bp in hops if router.index.is_switch(a) and router.index.is_switch(b)}
    assert len(seen) == planned["covered"]
    assert {u["text"] for u in planned["uncovered"]} == {u["text"] for u in exhaustive["uncovered"]}


def test_rail_planes_with_trunks_every_isl_in_three_rounds():
    small = rail_planes(64, 2, per_leaf=32, trunk=2)
    eps = VT.rail_endpoints(sorted(small["hosts"]), rails_of(small), small["hosts"])
    planned = cover.plan_cover(eps, small)
    # 2 rails x 2 leaves x 32 uplinks (16 spines, two cables each), both directions
    assert planned["total"] == planned["coverable"] == planned["covered"] == 256 and planned["uncovered"] == []
    # 32 pairs a round cross 128 ISLs at most: two rounds is the bound, the greedy needs one pair more
    assert len(planned["rounds"]) <= 3 and disjoint(planned["rounds"])


def test_above_the_exhaustive_limit_the_plan_comes_from_the_routes():
    small = rail_planes(512, 8)
    hosts = sorted(small["hosts"])
    assert len(hosts) ** 2 * 8 > P.EXHAUSTIVE_COVER_ROUTES
    plan = P.plan_pass(hosts, rails_of(small), {h: h for h in hosts}, strategy="cover_links", topology=small)
    assert plan["coverage"] == {"uncovered_isls": [], "isls": 8192, "covered_isls": 8192, "coverable_isls": 8192}
    assert plan["rounds"] <= 3 and plan["untested"] == []


def test_a_route_the_tables_do_not_finish_leaves_its_isl_uncovered_and_says_why():
    small = rail_planes(64, 1)
    leaf = small["switches"][0][0]
    low, text = small["lfts"][leaf]
    table = bytearray.fromhex(text)
    # leaf-r0-000 sends node0032's LID up to spine 0 over port 33; blank that entry (a dead end)
    lid = [ca for ca in small["cas"] if ca[1] == "node0032 mlx5_0"][0][3][0][1]
    table[lid - low] = 0
    small["lfts"][leaf] = [low, table.hex()]
    eps = VT.rail_endpoints(sorted(small["hosts"]), rails_of(small), small["hosts"])
    tables = cover.Tables(small)
    assert tables.route(leaf, lid, small["hosts"]["node0032"]["mlx5_0"]) is None
    planned = cover.plan_cover(eps, small)
    never = [u for u in planned["uncovered"] if u["reason"] == "no candidate pair's route crosses it"]
    # node0032 was the one destination leaf-r0-000 sent over spine 0, so both ISLs of that route are lost
    assert [u["text"] for u in never] == ["leaf-r0-000 p33 -> spine-r0-00 p1", "spine-r0-00 p2 -> leaf-r0-001 p33"]


def test_the_uplinks_to_load_first_are_covered_in_the_first_rounds():
    small = rail_planes(512, 2)
    eps = VT.rail_endpoints(sorted(small["hosts"]), rails_of(small), small["hosts"])
    # the uplinks of leaf-r1-007, as the oversubscription check names a switch above its design ratio
    leaf = [sw[0] for sw in small["switches"] if sw[2] == "leaf-r1-007"][0]
    ports = [[leaf, port] for port in range(33, 65)]
    planned = cover.plan_cover(eps, small, load_first=ports)
    assert planned["load_first"]["directions"] == 64  # each cable in both directions
    # the leaf's 32 hosts carry its cables: a host is client (up) or server (down) in a round, so 32 directions a
    # round is all there is: the first round takes 32, and they are all in within three (the greedy misses one of
    # the two-round optimum)
    first = planned["load_first"]["per_round"]
    assert first[0] == 32 and sum(first[:3]) == 64 and planned["covered"] == planned["total"]
