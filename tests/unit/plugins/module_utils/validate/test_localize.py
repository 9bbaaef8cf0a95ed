"""Localisation that knows the fabric: switch faults, intermittent nodes, retests that separate node from path, and
the property the verdict must hold on any fabric: it names the injected component and never a healthy host
bad_node."""

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ansible_collections.ibtune.fabric.plugins.module_utils.report.build import build_report
from ansible_collections.ibtune.fabric.plugins.module_utils.validate import localize as L
from ansible_collections.ibtune.fabric.plugins.module_utils.validate import switches
from ansible_collections.ibtune.fabric.plugins.module_utils.validate.pairs import retest_plan

from tests.conftest import FIXTURES
from tests.unit.plugins.module_utils.validate.fabric_sim import KINDS, Fabric

NOW = 1796083200.0


def report_of(fabric, groups=None):
    first, second, _plan = fabric.run(groups)
    return build_report(first + second, expected_hosts=fabric.hosts, switch_groups=groups, now=NOW), first + second


def failing_pairs(results):
    return set(frozenset((r["server"], r["client"])) for r in results if r["pass"] == 1 and not r["passed"])


def culprits(report):
    return set(h["host"] for h in report["failed_hosts"] if h.get("culprit"))


def bad_nodes(report):
    return set(n["host"] for n in report["suspect_nodes"] if n["verdict"] == "bad_node")


def covering_leaves(fabric, pairs):
    common = None
    for pair in pairs:
        ends = set(fabric.leaf_of[h] for h in pair)
        common = ends if common is None else common & ends
    return common or set()


def check_named(fabric, report, results, grouped):
    """The injected component is named (when the evidence can name it), and no healthy host is bad_node."""
    kind, what = fabric.fault
    injected_nodes = {what} if kind in ("bad_node", "flaky_node") else set()
    assert bad_nodes(report) <= injected_nodes, "a healthy host named bad_node: %s" % report["message"]
    pairs = failing_pairs(results)
    if not pairs:
        assert report["passed"], report["message"]  # the fault is on no route the plan measured
        return
    assert not report["passed"]
    if kind == "bad_node":
        assert bad_nodes(report) == {what}, report["message"]
    elif kind == "flaky_node":
        assert [(n["host"], n["verdict"]) for n in report["suspect_nodes"]] == [(what, "intermittent")]
        assert culprits(report) == {what}, report["message"]  # its partners are not failed
    elif kind == "bad_link":
        assert [frozenset((x["server"], x["client"])) for x in report["suspect_links"]] == [what], report["message"]
    elif grouped:
        check_switch_named(fabric, report, pairs)
    else:
        assert report["switch_faults"] or report["suspect_links"], report["message"]
        if len(pairs) >= L.FABRIC_MIN_PAIRS:  # spread failures are the fabric's, no host is drained for them
            assert culprits(report) == set(), report["message"]


def check_switch_named(fabric, report, pairs):
    kind, what = fabric.fault
    if len(pairs) == 1:  # one failing pair alone says nothing about a switch: the pair is named
        assert [frozenset((x["server"], x["client"])) for x in report["suspect_links"]] == list(pairs)
        return
    assert len(report["switch_faults"]) == 1, report["message"]
    fault = report["switch_faults"][0]
    assert culprits(report) == set(), "a host drained for a switch fault: %s" % report["message"]
    assert report["suspect_nodes"] == [] and report["suspect_links"] == []
    common = covering_leaves(fabric, pairs)
    if kind in ("leaf_uplink", "leaf_uplinks"):
        leaf = what[0] if kind == "leaf_uplink" else what
        assert fault["scope"] in ("leaf", "between") and leaf in fault["switches"], fault
    elif not common:
        assert fault["scope"] in ("spine", "spine_layer"), fault
    else:  # every failing flow of the spine shares a leaf: its cable to that spine is as guilty, and is named
        assert fault["scope"] in ("leaf", "between") and set(fault["switches"]) <= common, fault


FABRICS = st.tuples(st.integers(2, 6), st.integers(2, 4), st.integers(2, 3))


@given(FABRICS, st.sampled_from(KINDS), st.data())
@settings(max_examples=120, deadline=None)
def test_with_the_switches_known_the_verdict_names_the_injected_component(shape, kind, data):
    fabric = Fabric(*shape)
    fabric.inject(kind, lambda seq: data.draw(st.sampled_from(list(seq))))
    groups = fabric.groups()
    report, results = report_of(fabric, groups)
    check_named(fabric, report, results, grouped=True)


@given(FABRICS, st.sampled_from(KINDS), st.data())
@settings(max_examples=120, deadline=None)
def test_without_any_grouping_no_healthy_host_is_ever_bad_node(shape, kind, data):
    fabric = Fabric(*shape)
    fabric.inject(kind, lambda seq: data.draw(st.sampled_from(list(seq))))
    report, results = report_of(fabric)
    check_named(fabric, report, results, grouped=False)


@given(FABRICS, st.data())
@settings(max_examples=60, deadline=None)
def test_a_leaf_whose_uplinks_all_degrade_is_found_from_the_results_alone(shape, data):
    fabric = Fabric(*shape)
    _kind, leaf = fabric.inject("leaf_uplinks", lambda seq: data.draw(st.sampled_from(list(seq))))
    report, _results = report_of(fabric)
    behind = sorted(h for h in fabric.hosts if fabric.leaf_of[h] == leaf)
    assert [f["scope"] for f in report["switch_faults"]] == (["leaf"] if len(fabric.leaves) > 2 else ["between"])
    fault = report["switch_faults"][0]
    assert fault["source"] == "inferred"
    if len(fabric.leaves) > 2:
        assert fault["hosts"] == behind and list(fault["groups"].values()) == [behind]
    assert culprits(report) == set() and report["passed_hosts"] == sorted(fabric.hosts)


# ---------------------------------------------------------------------------------------------------- examples


def test_one_leaf_whose_uplinks_degrade_is_a_leaf_fault_not_four_bad_nodes():
    # the case: 8 leaves x 4 hosts, one leaf's uplinks degraded, topology stage off
    fabric = Fabric(8, 4, 2)
    fabric.fault = ("leaf_uplinks", "leaf3")
    report, _results = report_of(fabric, fabric.groups())
    assert report["suspect_nodes"] == [] and report["suspect_links"] == []
    [fault] = report["switch_faults"]
    assert (fault["scope"], fault["switches"], fault["source"]) == ("leaf", ["leaf3"], "inventory")
    assert fault["hosts"] == ["leaf3-h1", "leaf3-h2", "leaf3-h3", "leaf3-h4"]
    assert fault["failing"] == 4 * 28 and fault["inside_passing"] == 8 * 6
    assert report["message"].startswith(
        "Fabric validation failed: switch fault on rail mlx5_0:1: the uplinks of leaf3 (112 of 448 pairs across "
        "switches failed, 180.0 Gb/s < 360.0 Gb/s; 48 pairs inside a switch passed): not the hosts"
    )
    assert report["failed_hosts"] == [] and len(report["passed_hosts"]) == 32


def test_one_bad_spine_names_the_spine_layer_not_twelve_healthy_hosts():
    fabric = Fabric(4, 4, 2)
    fabric.fault = ("bad_spine", "spine1")
    report, _results = report_of(fabric, fabric.groups())
    [fault] = report["switch_faults"]
    assert fault["scope"] == "spine" and fault["switches"] == []
    assert "a spine or its cables" in fault["text"]
    assert bad_nodes(report) == set() and culprits(report) == set()


def test_every_cross_leaf_pair_slow_is_the_spine_layer_not_a_settings_problem():
    fabric = Fabric(4, 3, 2)
    fabric.fault = ("bad_spine", None)
    fabric.slow = lambda s, c, p: fabric.leaf_of[s] != fabric.leaf_of[c]
    report, results = report_of(fabric, fabric.groups())
    assert sum(1 for r in results if not r["passed"]) > 0.8 * len(results)  # 54 of 66: once a "systemic" cause
    assert report["systemic"] is None
    assert [f["scope"] for f in report["switch_faults"]] == ["spine_layer"]
    assert report["passed_hosts"] == sorted(fabric.hosts)  # every host passed inside its leaf, at line rate
    assert not report["passed"]


def test_the_settings_are_blamed_only_when_no_pair_reached_the_threshold():
    fabric = Fabric(3, 2, 2)
    fabric.fault = ("bad_spine", None)
    fabric.slow = lambda s, c, p: True
    report, _results = report_of(fabric, fabric.groups())
    assert report["systemic"].endswith("check min_gbps and min_link_fraction against the port rate")
    assert report["switch_faults"] == []


def test_a_node_slow_in_pass_one_and_fine_on_its_retest_is_intermittent_and_its_partners_pass():
    fabric = Fabric(3, 2, 2)
    fabric.fault = ("flaky_node", "leaf2-h1")
    report, _results = report_of(fabric)
    assert [(n["host"], n["verdict"]) for n in report["suspect_nodes"]] == [("leaf2-h1", "intermittent")]
    assert [(h["host"], h["failure_kind"]) for h in report["failed_hosts"]] == [("leaf2-h1", "intermittent")]
    assert report["suspect_links"] == [] and len(report["passed_hosts"]) == 5
    assert "intermittent node leaf2-h1" in report["message"]


def test_a_known_good_partner_that_fails_its_own_retest_is_suspect():
    fabric = Fabric(3, 2, 2)
    fabric.fault = ("bad_node", "leaf1-h1")
    first, _second, plan = fabric.run()
    # partners=2: leaf1-h1 meets two known-good partners; pretend the first passes and the second fails
    plan = retest_plan(first, fabric.hosts, partners=2)
    entries = [e for rnd in plan for e in rnd]
    assert len(entries) == 2
    second = []
    for index, entry in enumerate(entries):
        res = fabric.result(entry[0], entry[1], index, 2)
        if index == 0:
            res.update(bw_avg_gbps=391.0, passed=True, failure=None, failure_kind=None)
        second.append(res)
    failed_partner = [h for h in entries[1][:2] if h != "leaf1-h1"][0]
    report = build_report(first + second, expected_hosts=fabric.hosts, now=NOW)
    verdicts = dict((n["host"], n["verdict"]) for n in report["suspect_nodes"])
    assert verdicts == {"leaf1-h1": "intermittent", failed_partner: "suspect"}
    partner = [n for n in report["suspect_nodes"] if n["host"] == failed_partner][0]
    assert partner["reason"] == "known-good partner that failed its retest with leaf1-h1"
    assert failed_partner not in report["passed_hosts"]


def test_the_retest_measures_only_the_failing_rail_on_a_partner_that_has_it():
    # n1's mlx5_1 trained at 2X: it fails on that rail with everyone and passes on mlx5_0. n4 has no mlx5_1.
    hosts = ["n1", "n2", "n3", "n4", "n5"]
    rails = {h: ["mlx5_0:1", "mlx5_1:1"] for h in hosts}
    rails["n4"] = ["mlx5_0:1"]
    first = []
    for i, rnd in enumerate([[("n1", "n2")], [("n1", "n3")], [("n2", "n3")], [("n4", "n5")], [("n2", "n5")]]):
        for server, client in rnd:
            for rail in sorted(set(rails[server]) & set(rails[client])):
                bw = 180.0 if rail == "mlx5_1:1" and "n1" in (server, client) else 392.0
                first.append(rail_result(server, client, rail, bw, i, 1))
    plan = retest_plan(first, hosts, rails=rails)
    entries = [e for rnd in plan for e in rnd]
    assert [sorted(e[:2]) for e in entries] == [["n1", "n5"]]  # not n2, n3 (failed with), not n4 (no mlx5_1)
    assert entries[0][2] == ["mlx5_1:1"]
    second = [rail_result(entries[0][0], entries[0][1], "mlx5_1:1", 180.0, 0, 2)]
    report = build_report(first + second, expected_hosts=hosts, host_rails=rails, now=NOW)
    [node] = report["suspect_nodes"]
    assert (node["host"], node["verdict"], node["devices"]) == ("n1", "bad_node", ["mlx5_1"])
    assert node["rails"] == ["mlx5_1:1"]
    assert report["passed_hosts"] == ["n2", "n3", "n4", "n5"]


def rail_result(server, client, rail, bw, round_no, pass_no):
    device = rail.split(":")[0]
    passed = bw >= 360.0
    return {"server": server, "server_device": device, "client": client, "client_device": device, "rail": rail,
            "test": "write", "kind": "bandwidth", "pass": pass_no, "round": round_no, "bw_avg_gbps": bw,
            "threshold_gbps": 360.0, "line_rate_gbps": 400.0, "passed": passed,
            "failure": None if passed else "%.1f Gb/s < 360.0 Gb/s" % bw,
            "failure_kind": None if passed else "below_threshold"}  # fmt: skip


def test_a_host_whose_rail_was_never_measured_is_not_passed():
    # n3's only partner on mlx5_1 lacked the rail: its mlx5_0 passed, its mlx5_1 was never measured
    rails = {"n1": ["mlx5_0:1", "mlx5_1:1"], "n2": ["mlx5_0:1", "mlx5_1:1"], "n3": ["mlx5_0:1", "mlx5_1:1"],
             "n4": ["mlx5_0:1"]}  # fmt: skip
    results = [
        rail_result("n1", "n2", "mlx5_0:1", 392.0, 0, 1),
        rail_result("n1", "n2", "mlx5_1:1", 392.0, 0, 1),
        rail_result("n3", "n4", "mlx5_0:1", 392.0, 0, 1),
    ]
    report = build_report(results, expected_hosts=sorted(rails), host_rails=rails, now=NOW)
    assert report["passed_hosts"] == ["n1", "n2", "n4"]
    [entry] = report["failed_hosts"]
    assert (entry["host"], entry["failure_kind"], entry["culprit"]) == ("n3", "untested", False)
    assert entry["reason"].startswith("rail mlx5_1:1 was never measured")
    assert not report["passed"]


def test_a_figure_above_the_line_rate_is_invalid_counts_against_its_producer_and_stays_out_of_the_median():
    hosts = ["n%d" % i for i in range(1, 7)]
    results = [rail_result(s, c, "mlx5_0:1", 392.0, i, 1) for i, (s, c) in enumerate(zip(hosts, hosts[1:]))]
    results += [rail_result("n1", "n6", "mlx5_0:1", 3136.0, 9, 1)]  # MB/s read as Gb/s
    results += [rail_result("n2", "n5", "mlx5_0:1", 3136.0, 10, 1), rail_result("n3", "n6", "mlx5_0:1", 3136.0, 11, 1)]
    report = build_report(results, expected_hosts=hosts, now=NOW)
    invalid = [r for r in report["results"] if r["failure_kind"] == "invalid"]
    assert len(invalid) == 3 and invalid[0]["failure"] == (
        "3136.0 Gb/s is above the 400.0 Gb/s line rate of the slower end (+5%): an invalid figure, not a pass"
    )
    # with three figures of 3136 in the median, 392 Gb/s would be "slow vs peers": they are left out
    assert [r["failure_kind"] for r in report["results"] if not r["passed"]] == ["invalid"] * 3
    assert sorted((h["host"], h["failure_kind"]) for h in report["failed_hosts"]) == [
        ("n5", "invalid"),
        ("n6", "invalid"),
    ]  # the clients (their figures)


def test_duplicate_results_and_strangers_are_refused_by_name():
    results = [rail_result("n1", "n2", "mlx5_0:1", 392.0, 0, 1), rail_result("n1", "n2", "mlx5_0:1", 392.0, 0, 1),
               rail_result("n1", "x9", "mlx5_0:1", 392.0, 1, 1)]  # fmt: skip
    report = build_report(results, expected_hosts=["n1", "n2"], now=NOW)
    assert report["refused"] == [
        "n1/mlx5_0 -> n2/mlx5_0 write pass 1 round 0 is a second result of the same pair: refused (not merged)",
        "n1/mlx5_0 -> x9/mlx5_0 write pass 1 round 1 names a host the run does not expect: refused (not merged)",
    ]
    assert len(report["results"]) == 1 and not report["passed"]
    assert report["problems"][0].startswith("2 results refused: ")


def test_results_whose_keys_only_hash_alike_are_both_kept():
    """Duplicates are found by the keys' hashes first (no set of millions of key tuples); equal hashes are only a
    reason to look at the keys. hash(-1) == hash(-2) in CPython, so these two keys hash alike and differ."""
    assert hash((1, -1)) == hash((1, -2))
    results = [rail_result("n1", "n2", "mlx5_0:1", 392.0, -1, 1), rail_result("n1", "n2", "mlx5_0:1", 392.0, -2, 1)]
    report = build_report(results, expected_hosts=["n1", "n2"], now=NOW)
    assert report["refused"] == [] and len(report["results"]) == 2
    report = build_report(results + [dict(results[0])], expected_hosts=["n1", "n2"], now=NOW)
    assert report["refused"] == [
        "n1/mlx5_0 -> n2/mlx5_0 write pass 1 round -1 is a second result of the same pair: refused (not merged)"
    ]


def test_localize_groups_from_the_inventory_per_rail_and_the_path_above_a_host_without_them():
    # lab-like: node1, node2 on leaf1; node3 on leaf2; node4 on leaf3 (rail mlx5_0); leaf1's uplink to spine1
    # is degraded: node1's routes cross it, node2's do not
    def res(s, c, ok):
        return dict(rail_result(s, c, "mlx5_0:1", 392.0 if ok else 180.0, 0, 1))

    results = [res("n1", "n2", True), res("n1", "n3", False), res("n4", "n1", False), res("n2", "n3", True),
               res("n2", "n4", True), res("n3", "n4", True)]  # fmt: skip
    groups = switches.from_group_var(
        {"n1": {"mlx5_0:1": "leaf1"}, "n2": {"mlx5_0:1": "leaf1"}, "n3": {"mlx5_0:1": "leaf2"}, "n4": "leaf3"}
    )
    grouped = L.localize(L_normal(results), groups=(groups, "inventory"))
    [fault] = grouped["switch_faults"]
    assert (fault["scope"], fault["switches"], fault["hosts"]) == ("leaf", ["leaf1"], ["n1"])
    assert grouped["suspect_nodes"] == [] and grouped["suspect_links"] == []
    alone = L.localize(L_normal(results))
    [fault] = alone["switch_faults"]
    assert (fault["scope"], fault["hosts"], fault["passed_with"]) == ("path", ["n1"], ["n2"])
    assert alone["suspect_nodes"] == [] and alone["suspect_links"] == []


def L_normal(results):
    from ansible_collections.ibtune.fabric.plugins.module_utils.validate.results import normalize_results

    return normalize_results(results)


def test_groups_from_the_topology_stage_name_each_rails_leaf():
    from ansible_collections.ibtune.fabric.plugins.module_utils.validate import fabric as VT
    from tests.unit.plugins.module_utils.validate.test_fabric import ib_topology_result

    small = json.loads(json.dumps(VT.compact(ib_topology_result())))
    groups = switches.from_topology(small)
    _topo, _lfts, hosts = VT.expand(small)
    assert set(groups) == set(hosts) and len(groups) > 60
    host = sorted(groups)[0]
    assert set(groups[host]) == set(hosts[host])  # one leaf per rail device
    assert all("LEAF" in leaf for leaf in groups[host].values())
    assert len(set(groups[host].values())) == len(groups[host])  # rail-optimised: a leaf per rail
    assert switches.resolve(topology=small, group_var={host: "ignored"})[1] == "topology"


def test_groups_from_lldp_name_the_switch_of_each_nic_and_its_rdma_device():
    lldp = dict((name, (FIXTURES / "lldp" / name).read_text()) for name in ("lldpcli-json-two-ports.json",))
    groups, source = switches.resolve(
        lldp={"gpu01": lldp["lldpcli-json-two-ports.json"]},
        group_var={"gpu01": "ignored"},
        netdevs={"gpu01": {"mlx5_0": ["ens1f0np0"], "mlx5_1": ["ens1f1np1"]}},
    )
    assert source == "lldp"
    assert groups == {"gpu01": {"ens1f0np0": "leaf-r1-01", "mlx5_0": "leaf-r1-01", "ens1f1np1": "leaf-r2-01",
                                "mlx5_1": "leaf-r2-01"}}  # fmt: skip
    assert switches.switch_of(groups, "gpu01", "mlx5_1:1", "mlx5_1") == "leaf-r2-01"
    with pytest.raises(ValueError, match=r"lldp\[gpu01\]: not lldpd JSON"):
        switches.from_lldp({"gpu01": "Interface: ens1f0np0"})


@pytest.mark.parametrize("bad", [["leaf1"], {"mlx5_0": None}, True])
def test_a_bad_group_value_names_the_host(bad):
    with pytest.raises(ValueError, match=r"switch_groups\[n1\]"):
        switches.from_group_var({"n1": bad})


def test_a_server_that_never_listens_is_the_node_even_where_it_passed_as_a_client():
    # the lab's dead_server: node3's perftest server never starts; as a client it reaches line rate. Could not
    # connect is the host's process, not a fault above it: with the switches known it is still the node.
    fabric = Fabric(2, 3, 2)
    dead = "leaf2-h1"

    def result(server, client, round_no, pass_no):
        res = Fabric.result(fabric, server, client, round_no, pass_no)
        if server == dead:
            res.update(bw_avg_gbps=None, passed=False, failure="client side: could not connect to %s" % dead,
                       failure_kind="connect")  # fmt: skip
        return res

    fabric.fault = ("bad_node", None)
    fabric.slow = lambda s, c, p: False
    fabric.result = result
    for groups in (fabric.groups(), None):
        report, _results = report_of(fabric, groups)
        assert [(n["host"], n["verdict"]) for n in report["suspect_nodes"]] == [(dead, "bad_node")], report["message"]
        assert report["switch_faults"] == [] and report["suspect_links"] == []


def path_faults_by_recount(plane, links, named):
    """localize._path_faults as it was first written (every host's pairs counted again for each fault): the spec
    of the one that keeps the counts in a heap."""
    left = set(links)
    faults = []
    while True:
        counts = {}
        for pair in left:
            for host in pair:
                if host not in named:
                    counts[host] = counts.get(host, 0) + 1
        best = sorted((-n, h) for h, n in counts.items() if n >= 2)
        if not best:
            return faults, left
        host = best[0][1]
        pairs = set(p for p in left if host in p)
        left -= pairs
        faults.append(L._path_fault(plane, host, pairs))  # pylint: disable=protected-access


def components_by_walk(plane, hosts):
    """localize._components as it was first written (a partner at a time): the spec of the one over sets."""
    seen = {}
    for start in sorted(hosts):
        if start in seen:
            continue
        stack = [start]
        seen[start] = start
        while stack:
            host = stack.pop()
            for other in plane.ok.get(host, ()):
                if other in hosts and other not in seen:
                    seen[other] = start
                    stack.append(other)
    return seen


@pytest.mark.parametrize("seed", range(200))
def test_path_faults_components_and_partners_are_what_the_first_written_loops_made(seed):
    """_path_faults (counts kept in a heap), _components (set operations) and Plane.sorted_partners against the
    loops they replace on random planes: ties in count (the first host by name), named hosts, a host failing with
    itself, failed results of equal figures (the first of equals is a fault's worst), partners added by hand."""
    import random

    rnd = random.Random(seed)
    hosts = ["h%02d" % i for i in range(rnd.randint(2, 14))]
    plane = L.Plane(("bandwidth", "mlx5_0:1"))
    for index in range(rnd.randint(0, 60)):
        a, b = rnd.choice(hosts), rnd.choice(hosts)
        res = {"server": a, "client": b, "server_device": "d", "client_device": "d", "pass": 1, "kind": "bandwidth",
               "test": "write", "passed": rnd.random() < 0.5, "bw_avg_gbps": rnd.choice([180.0, 200.0, 180.0]),
               "threshold_gbps": 360.0, "failure": "slow %d" % index, "failure_kind": "below_threshold",
               "link": "%s<->%s" % tuple(sorted((a, b)))}  # fmt: skip
        plane.add(res)
    named = set(rnd.sample(hosts, rnd.randint(0, 2)))
    links = set(plane.failed)
    got, spec = L._path_faults(plane, links, named), path_faults_by_recount(plane, links, named)  # pylint: disable=protected-access
    assert json.dumps(got, default=sorted) == json.dumps(spec, default=sorted)
    among = set(rnd.sample(hosts, rnd.randint(0, len(hosts))))
    assert L._components(plane, among) == components_by_walk(plane, among)  # pylint: disable=protected-access
    if rnd.random() < 0.3 and plane.ok:
        next(iter(plane.ok.values())).add("stranger")  # a partner that is no host of the plane
    assert all(plane.sorted_partners(h) == sorted(plane.ok.get(h, ())) for h in hosts + ["nobody"])
