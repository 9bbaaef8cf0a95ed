"""The report names the cable: a degraded ISL behind the real OpenSM routes of the simulated 582-HCA subnet
gives exactly that cable in suspect_cables, the message, summary.md and junit.xml; switch-port counter
violations (real ibqueryerrors captures) fail the verdict; without a topology nothing changes."""

import json
import xml.etree.ElementTree as ET

import pytest

from ansible_collections.ibtune.fabric.plugins.module_utils.subnet import switch_counters as S
from ansible_collections.ibtune.fabric.plugins.module_utils.validate import plan as P
from ansible_collections.ibtune.fabric.plugins.module_utils.subnet import routes as R
from ansible_collections.ibtune.fabric.plugins.module_utils.subnet.names import normalize_guid
from ansible_collections.ibtune.fabric.plugins.module_utils.subnet.parsers import parse_ibnetdiscover
from ansible_collections.ibtune.fabric.plugins.module_utils.validate import fabric as VT
from ansible_collections.ibtune.fabric.plugins.module_utils.report.build import build_report
from ansible_collections.ibtune.fabric.plugins.module_utils.report.render import to_junit, to_markdown
from ansible_collections.ibtune.fabric.plugins.module_utils.report.html import to_html
from tests.conftest import FIXTURES
from tests.unit.plugins.module_utils.validate.test_fabric import ib_topology_result, inventory, rails_by_index

TOPO = FIXTURES / "topology"
# A09-P1-IBLEAF-04-04 port 38 <-> A10-P1-IBSPINE-03 port 32 (the ISL the unlinked capture takes down)
BAD_ISL = {("0x2c5eab0300b87b40", 38), ("0x2c5eab0300c26380", 32)}
CABLE = "cable A09-P1-IBLEAF-04-04 p38 <-> A10-P1-IBSPINE-03 p32"


def measure(pair, rail, slow, round_no):
    bw = 180.1 if slow else 392.4
    return {
        "server": pair["server"], "server_device": rail["s"], "server_port": 1,
        "client": pair["client"], "client_device": rail["c"], "client_port": 1,
        "test": "write", "bw_avg_gbps": bw, "bw_peak_gbps": None, "threshold_gbps": 360.0,
        "passed": not slow, "failure": "%.1f Gb/s is below the threshold 360.0 Gb/s" % bw if slow else None,
        "round": round_no, "pass": 1, "duration_s": 5.0, "rail": pair.get("rail"),
    }  # fmt: skip


def cover_links_run(bad=None):
    """The cover_links plan of the inventory, every rail pair measured: slow where its route (client ->
    server, through the real LFTs) crosses the degraded cable in either direction (default BAD_ISL)."""
    bad = BAD_ISL if bad is None else bad
    hosts = inventory()
    small = json.loads(json.dumps(VT.compact(ib_topology_result())))
    # the corpus fabric's own check findings (a rail swap, unequal trunks: subnet/test_checks.py) would fail
    # every report; these tests are about the pairs and the cables
    assert any(f["severity"] == "error" for f in small["findings"])
    small["findings"] = []
    rails = rails_by_index(hosts)
    names = sorted(hosts)
    plan = P.plan_pass(names, rails, {h: h for h in names}, strategy="cover_links", topology=small)
    topo, lfts, topo_hosts = VT.expand(small)
    router = R.Router(topo, lfts)
    device = {h: {r["rail"]: r["device"] for r in rails[h]} for h in names}
    results = []
    for p in plan["pairs"]:
        for rail in p["rails"]:
            s_dev, c_dev = device[p["server"]][rail], device[p["client"]][rail]
            hops = router.hops(
                normalize_guid(topo_hosts[p["client"]][c_dev]), normalize_guid(topo_hosts[p["server"]][s_dev])
            )
            slow = any((a, ap) in bad for a, ap, _b, _bp in hops)
            results.append(measure(p, {"s": s_dev, "c": c_dev}, slow, p["round"]))
    return results, small


def test_a_degraded_isl_is_named_as_the_cable():
    results, small = cover_links_run()
    failing = [r for r in results if not r["passed"]]
    assert 1 <= len(failing) < len(results) // 10
    report = build_report(results, topology=small, now=0)
    assert not report["passed"]
    cables = report["suspect_cables"]
    assert [(c["a"], c["b"]) for c in cables] == [("A09-P1-IBLEAF-04-04 p38", "A10-P1-IBSPINE-03 p32")]
    assert cables[0]["failing"] == cables[0]["failing_total"] == len(failing)
    assert cables[0]["passing_total"] == len(results) - len(failing)
    n = len(failing)
    expected = "%s (%s, by no passing one)" % (
        CABLE,
        "shared by the %d failing pairs" % n if n > 1 else "on the failing pair",
    )
    assert cables[0]["text"] == expected
    # the cable comes first in the message, before the hosts the localisation suspects
    assert report["message"].startswith("Fabric validation failed: " + expected)
    assert report["totals"]["suspect_cables"] == 1
    assert "1 suspect cable" in report["headline"]
    assert report["host_order"] == small["host_order"]
    md = to_markdown(report)
    assert "## Suspect cables" in md and "- %s: on %d of %d failing paths" % (expected, n, n) in md
    root = ET.fromstring(to_junit(report))
    (suite,) = [s for s in root.iter("testsuite") if s.get("name") == "fabric"]
    (case,) = list(suite)
    assert case.get("name") == "cable A09-P1-IBLEAF-04-04 p38 <-> A10-P1-IBSPINE-03 p32"
    assert case.find("failure").get("message") == expected and case.find("failure").get("type") == "suspect_cable"
    assert int(root.get("failures")) == int(suite.get("failures")) + sum(
        int(s.get("failures")) for s in root.iter("testsuite") if s.get("name") != "fabric"
    )


def test_a_healthy_run_with_topology_passes_and_names_no_cable():
    results, small = cover_links_run(bad=set())
    report = build_report(results, topology=small, now=0)
    assert report["passed"] and report["suspect_cables"] == [] and report["switch_counter_violations"] == []
    root = ET.fromstring(to_junit(report))
    (suite,) = [s for s in root.iter("testsuite") if s.get("name") == "fabric"]
    assert suite.get("failures") == "0" and suite.get("tests") == "1"


def switch_violations():
    topo = parse_ibnetdiscover((TOPO / "ndr582-sim.ibnetdiscover").read_text())
    before = S.snapshot_from_ibqueryerrors(S.parse_ibqueryerrors((TOPO / "ndr582-sim.ibqueryerrors").read_text()), topo)
    after = S.snapshot_from_ibqueryerrors(
        S.parse_ibqueryerrors((TOPO / "ndr582-sim-errors.ibqueryerrors").read_text()), topo
    )
    return S.switch_violations(before, after, topo)


def test_switch_counter_violations_fail_the_verdict():
    results, _small = cover_links_run(bad=set())
    found = switch_violations()
    assert found
    result = ib_topology_result()
    result["switch_counter_violations"] = json.loads(json.dumps(found))
    result["findings"] = []  # the corpus fabric's own findings: see cover_links_run
    small = VT.compact(result)
    report = build_report(results, topology=small, now=0)
    assert not report["passed"]
    assert report["totals"]["switch_counter_violations"] == len(found)
    assert "A09-P1-IBLEAF-04-04 port 17 <-> a08-p1-dgx-04-c17 mlx5_5: SymbolErrorCounter +12" in report["message"]
    md = to_markdown(report)
    assert "## Switch counter violations" in md and "SymbolErrorCounter +12" in md
    root = ET.fromstring(to_junit(report))
    (suite,) = [s for s in root.iter("testsuite") if s.get("name") == "fabric"]
    assert int(suite.get("failures")) == len(found)


def test_without_topology_the_report_is_unchanged():
    results, small = cover_links_run()
    plain = build_report(json.loads(json.dumps(results)), now=0)
    assert "suspect_cables" not in plain and "switch_counter_violations" not in plain and "host_order" not in plain
    assert "suspect cable" not in plain["headline"] and "cable" not in plain["message"]
    assert not any(s.get("name") == "fabric" for s in ET.fromstring(to_junit(plain)).iter("testsuite"))
    with_topo = build_report(json.loads(json.dumps(results)), topology=small, now=0)
    for key in ("suspect_nodes", "suspect_links", "failed_pairs", "failed_hosts", "counter_violations"):
        assert with_topo[key] == plain[key]


def test_a_systemic_failure_names_no_cable():
    results, small = cover_links_run(bad=set())
    for r in results:
        r.update(bw_avg_gbps=90.0, passed=False, failure="90.0 Gb/s is below the threshold 360.0 Gb/s")
    report = build_report(results, topology=small, now=0)
    assert report["systemic"] and report["suspect_cables"] == []


def test_a_bad_topology_is_one_sentence():
    with pytest.raises(ValueError, match="compact topology of version 1"):
        build_report([], topology={"version": 0, "switches": []}, now=0)


def test_a_node_failing_on_every_rail_is_the_node_not_a_cable_per_rail():
    results, small = cover_links_run(bad=set())
    node = results[0]["server"]
    for r in results:
        if node in (r["server"], r["client"]):
            r.update(bw_avg_gbps=180.1, passed=False, failure="180.1 Gb/s is below the threshold 360.0 Gb/s")
    report = build_report(results, topology=small, now=0)
    (suspect,) = report["suspect_nodes"]
    assert suspect["host"] == node and len(suspect["devices"]) == 4
    assert report["suspect_cables"] == [] and "cable" not in report["message"]


def test_isl_traffic_is_reported_in_every_format_without_changing_the_verdict():
    results, small = cover_links_run(bad=set())
    traffic = {
        "total": 4,
        "carried": 3,
        "min_octets": 1048576,
        "measured": True,
        "uncarried": ["leaf-2 p9 -> spine-1 p2"],
        "directions": [],
    }
    report = build_report(json.loads(json.dumps(results)), topology=dict(small, isl_traffic=traffic), now=0)
    assert report["passed"]
    text = report["isl_traffic"]["text"]
    assert text.startswith("ISL traffic: 3 of 4 directions carried test traffic")
    assert "leaf-2 p9 -> spine-1 p2" in text
    assert "## Inter-switch links" in to_markdown(report) and text in to_markdown(report)
    assert 'id="isl-traffic"' in to_html(report)
    plain = build_report(json.loads(json.dumps(results)), topology=small, now=0)
    assert "isl_traffic" not in plain and "Inter-switch" not in to_markdown(plain)


def test_fabric_check_errors_fail_the_verdict_in_every_file_warnings_do_not():
    results, small = cover_links_run(bad=set())
    error = {
        "check": "rail_alignment",
        "severity": "error",
        "switch": "lab-leaf2",
        "port": 1,
        "peer": "ibt-lab-node2 mlx5_0",
        "msg": "lab-leaf2 port 1 <-> ibt-lab-node2 mlx5_0: rail mlx5_0 on a leaf of rail mlx5_1",
    }
    warning = dict(error, check="factory_description", severity="warning", msg="lab-leaf9 has a factory description")
    report = build_report(json.loads(json.dumps(results)), topology=dict(small, findings=[warning]), now=0)
    assert report["passed"] and report["topology_findings"] == [warning]
    assert "fabric check error" not in report["headline"]
    report = build_report(json.loads(json.dumps(results)), topology=dict(small, findings=[error, warning]), now=0)
    assert not report["passed"] and report["totals"]["topology_errors"] == 1
    assert report["message"].startswith("Fabric validation failed: " + error["msg"])
    assert "warning" not in report["message"] and report["headline"].endswith("1 fabric check error")
    md = to_markdown(report)
    assert "## Fabric checks" in md and "- error: " in md and "- warning: " in md
    (suite,) = [s for s in ET.fromstring(to_junit(report)).iter("testsuite") if s.get("name") == "fabric"]
    (case,) = [c for c in suite.iter("testcase") if c.get("classname") == "ibtune.fabric.topology"]
    assert case.find("failure").get("type") == "rail_alignment" and int(suite.get("failures")) == 1
    assert 'id="topology-findings"' in to_html(report)
