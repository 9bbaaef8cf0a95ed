"""The subnet scenario's small fabric (molecule/subnet/files/net.healthy: 2 spines, 4 leaves, 6 hosts x 2
rails; real ibnetdiscover + dump_lfts from OpenSM on ibsim, tests/fixtures/topology/lab-subnet.*):
cover_links through the plan, and the report naming the cable behind a degraded ISL."""

import json

from ansible_collections.ibtune.fabric.plugins.module_utils.validate import plan as P
from ansible_collections.ibtune.fabric.plugins.module_utils.subnet import routes as R
from ansible_collections.ibtune.fabric.plugins.module_utils.subnet.analysis import analyse
from ansible_collections.ibtune.fabric.plugins.module_utils.subnet.names import normalize_guid
from ansible_collections.ibtune.fabric.plugins.module_utils.subnet.parsers import parse_lfts
from ansible_collections.ibtune.fabric.plugins.module_utils.validate import fabric as VT
from ansible_collections.ibtune.fabric.plugins.module_utils.report.build import build_report
from tests.conftest import FIXTURES

TOPO = FIXTURES / "topology"
HOSTS = ["ibt-lab-node%d" % i for i in range(1, 7)]
# ib_facts' node GUIDs of the lab hosts (the net file's H-0002c903001000<i><rail>)
INVENTORY = {
    h: {"mlx5_0": "0002:c903:0010:00%d0" % i, "mlx5_1": "0002:c903:0010:00%d1" % i} for i, h in enumerate(HOSTS, 1)
}
RAILS = {h: [{"rail": d, "device": d, "port": 1} for d in ("mlx5_0", "mlx5_1")] for h in HOSTS}


# the subnet scenario's leaves carry 3 hosts on 2 uplinks: 1.5:1 by design (molecule/subnet declares it)
LAB_DESIGN = 1.5


def lab():
    result = analyse((TOPO / "lab-subnet.ibnetdiscover").read_text(), None, INVENTORY, max_oversubscription=LAB_DESIGN)
    result["routes"] = parse_lfts((TOPO / "lab-subnet.dump_lfts").read_text())
    return json.loads(json.dumps(VT.compact(json.loads(json.dumps(result)))))


def run(plan, small, bad):
    topo, lfts, hosts = VT.expand(small)
    router = R.Router(topo, lfts)
    results = []
    for p in plan["pairs"]:
        for rail in p["rails"]:
            hops = router.hops(normalize_guid(hosts[p["client"]][rail]), normalize_guid(hosts[p["server"]][rail]))
            slow = any((a, ap) in bad for a, ap, _b, _bp in hops)
            results.append(
                {"server": p["server"], "server_device": rail, "client": p["client"], "client_device": rail,
                 "test": "write", "bw_avg_gbps": 180.0 if slow else 392.0, "threshold_gbps": 360.0,
                 "passed": not slow, "failure": "180.0 Gb/s is below the threshold 360.0 Gb/s" if slow else None,
                 "round": p["round"], "pass": 1}
            )  # fmt: skip
    return results


def guid_of(small, name):
    return [s[0] for s in small["switches"] if s[2] == name][0]


def test_lab_fabric_cover_links_two_rounds_every_isl():
    small = lab()
    assert small["host_order"] == HOSTS and len(json.dumps(small)) < 5000
    plan = P.plan_pass(HOSTS, RAILS, {h: h for h in HOSTS}, strategy="cover_links", topology=small)
    assert plan["rounds"] == 2 and plan["untested"] == []
    assert plan["coverage"] == {"uncovered_isls": [], "isls": 16, "covered_isls": 16, "coverable_isls": 16}


def test_lab_fabric_all_pairs_names_a_degraded_host_cable():
    small = lab()
    bad = {(guid_of(small, "lab-leaf3"), 2)}  # lab-leaf3 port 2 <-> ibt-lab-node2 mlx5_1, both directions
    bad.add(("0x0002c90300100021", 1))
    plan = P.plan_pass(HOSTS, RAILS, {h: h for h in HOSTS}, strategy="all_pairs")
    results = run(plan, small, bad)
    n = len([r for r in results if not r["passed"]])
    assert n == 5  # all_pairs meets node2 once with each of the 5 other hosts
    report = build_report(results, topology=small, now=0)
    assert [(c["a"], c["b"], c["ambiguous"]) for c in report["suspect_cables"]] == [
        ("lab-leaf3 p2", "ibt-lab-node2 mlx5_1", 0)
    ]
    assert report["message"].startswith(
        "Fabric validation failed: cable lab-leaf3 p2 <-> ibt-lab-node2 mlx5_1 (shared by the %d failing pairs, by no "
        "passing one)" % n
    )


def test_lab_fabric_isl_on_a_rail_optimised_fabric_is_one_of_two():
    # rail r meets rail r: every flow over lab-leaf1 <-> lab-spine1 also crosses lab-spine1 <-> lab-leaf2 (the
    # only other leaf of rail mlx5_0), so no plan of rail-matched pairs tells the two apart: both are named,
    # marked ambiguous, with all_pairs as with the two cover_links rounds
    small = lab()
    bad = {(guid_of(small, "lab-leaf1"), 7), (guid_of(small, "lab-spine1"), 1)}
    for strategy in ("all_pairs", "cover_links"):
        plan = P.plan_pass(HOSTS, RAILS, {h: h for h in HOSTS}, strategy=strategy, topology=small)
        report = build_report(run(plan, small, bad), topology=small, now=0)
        assert [(c["a"], c["b"], c["ambiguous"]) for c in report["suspect_cables"]] == [
            ("lab-leaf1 p7", "lab-spine1 p1", 2),
            ("lab-leaf2 p7", "lab-spine1 p2", 2),
        ]
        assert "cable lab-leaf1 p7 <-> lab-spine1 p1 (shared by the" in report["message"]
        assert "[one of 2 cables on exactly these paths]" in report["message"]


def test_lab_fabric_cover_links_loads_an_oversubscribed_leafs_uplinks_first(tmp_path):
    # the real capture with lab-leaf2's uplink to lab-spine2 trained at 1x: 2.4:1 over the lab's 1.5:1
    result = analyse(
        (TOPO / "lab-subnet-1x-uplink.ibnetdiscover").read_text(), None, INVENTORY, max_oversubscription=LAB_DESIGN
    )
    result["routes"] = parse_lfts((TOPO / "lab-subnet-1x-uplink.dump_lfts").read_text())
    leaf2 = normalize_guid("0x0002c90300a00002")
    small = json.loads(json.dumps(VT.compact(json.loads(json.dumps(result)))))
    assert small["load_first"] == [[leaf2, 7], [leaf2, 8]] == VT.load_first(result)
    # on the healthy lab's routes: both directions of both uplinks, 3 in the first round (one per host of
    # lab-leaf2: each host is in one pair a round), the last in the second
    healthy = dict(lab(), load_first=small["load_first"])
    plan = P.plan_pass(HOSTS, RAILS, {h: h for h in HOSTS}, strategy="cover_links", topology=healthy)
    assert plan["coverage"]["load_first"] == {"directions": 4, "per_round": [3, 1]}
    assert plan["coverage"]["covered_isls"] == 16
    path, _slices = P.write_plan(str(tmp_path), plan, HOSTS, RAILS, 1)
    with open(path) as handle:
        assert json.load(handle)["isl_coverage"]["load_first"] == {"directions": 4, "per_round": [3, 1]}
    # a fabric within its design loads nothing first, and the plan says nothing about it
    assert lab()["load_first"] == []
