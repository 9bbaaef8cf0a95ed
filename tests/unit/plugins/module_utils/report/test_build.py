"""report.py: thresholds, fault localization (first and second pass), baseline, renderers, atomic writes."""

import json
import os
import shutil
import subprocess
import xml.etree.ElementTree as ET

import pytest

from ansible_collections.ibtune.fabric.plugins.module_utils.report import build as R
from ansible_collections.ibtune.fabric.plugins.module_utils.report import baseline as RB
from ansible_collections.ibtune.fabric.plugins.module_utils.report import render as RR
from ansible_collections.ibtune.fabric.plugins.module_utils.validate import results as VR
from ansible_collections.ibtune.fabric.plugins.module_utils.validate.pairs import pair_rounds, retest_rounds

NOW = 1796083200.0  # 2026-12-01T00:00:00Z
THRESHOLD = 360.0
PROMTOOL = shutil.which("promtool")


def result(server, client, bw=392.0, passed=None, threshold=THRESHOLD, dev="mlx5_0", sdev=None, cdev=None, **extra):
    res = {
        "server": server,
        "server_device": sdev or dev,
        "server_port": 1,
        "client": client,
        "client_device": cdev or dev,
        "client_port": 1,
        "test": "write",
        "bw_avg_gbps": bw,
        "bw_peak_gbps": None,
        "threshold_gbps": threshold,
        "passed": passed,
        "failure": None,
        "round": 0,
        "pass": 1,
        "duration_s": 10.0,
    }
    res.update(extra)
    if passed is None:
        numeric = isinstance(bw, float)
        res["passed"] = numeric and (threshold is None or bw >= threshold)
    return res


def simulate(hosts, bad_nodes=(), bad_links=(), retest=True, node_bw=180.1, link_bw=180.1):
    """A lab-like run: all_pairs first pass, then the retest plan run against the same fabric."""

    def measure(server, client, round_, pass_):
        if server in bad_nodes or client in bad_nodes:
            bw = node_bw
        elif frozenset((server, client)) in bad_links:
            bw = link_bw
        else:
            bw = 392.0
        return result(server, client, bw, round=round_, **{"pass": pass_})

    results = [measure(s, c, i, 1) for i, rnd in enumerate(pair_rounds(hosts)) for s, c in rnd]
    if retest:
        plan = retest_rounds(results, hosts)
        results += [measure(s, c, i, 2) for i, rnd in enumerate(plan) for s, c in rnd]
    return results


# ---------------------------------------------------------------- normalization


def test_the_report_does_not_regate_with_min_gbps():
    # the absolute gate is gate.py's, applied by the join: min_gbps no longer raises a result's threshold
    rep = R.build_report([result("a", "b", 370.0), result("c", "d", 391.0)], min_gbps=380, now=NOW)
    assert [r["threshold_gbps"] for r in rep["results"]] == [THRESHOLD, THRESHOLD]
    assert all(r["passed"] for r in rep["results"]) and rep["settings"]["min_gbps"] == 380.0


def test_threshold_contradiction_is_invalid_and_failure_sentences_kept():
    out = VR.normalize_results(
        [
            result("a", "b", 200.0, passed=True),  # claims passed but is below its threshold
            result("a", "c", None, passed=False, failure="perftest could not connect to the server at c:18515"),
            {"server": "x", "client": "y", "bw_avg_gbps": "391.5"},  # passed derived, string number accepted
            {"server": "x", "client": "z", "bw_avg_gbps": 200.0, "threshold_gbps": 360.0},  # gate.py decides
        ]
    )
    assert out[0]["passed"] is False and out[0]["failure_kind"] == "invalid"
    assert out[0]["failure"] == "the result says passed but 200.0 Gb/s < 360.0 Gb/s: an inconsistent result"
    assert out[1]["failure"].startswith("perftest could not connect") and out[1]["failure_kind"] == "connect"
    assert out[2]["passed"] is True and out[2]["bw_avg_gbps"] == 391.5 and out[2]["pass"] == 1
    assert out[2]["link"] == "x<->y" and out[2]["failure_kind"] is None and out[2]["kind"] == "bandwidth"
    assert out[3]["passed"] is False and out[3]["failure_kind"] == "below_threshold"
    assert out[3]["failure"] == "200.0 Gb/s < 360.0 Gb/s (its threshold)"


def test_bad_results_name_the_index():
    with pytest.raises(ValueError, match=r"results\[1\] has no client host name"):
        VR.normalize_results([result("a", "b"), {"server": "a"}])
    with pytest.raises(ValueError, match=r"results\[0\].bw_avg_gbps must be a number"):
        VR.normalize_results([result("a", "b", bw="fast")])
    with pytest.raises(ValueError, match="must be a list"):
        VR.normalize_results({"server": "a"})


def test_link_key_sorted_ends():
    assert VR.link_key("node3", "mlx5_0", "node2", "mlx5_1") == "node2/mlx5_1<->node3/mlx5_0"
    assert VR.link_key("node2", "mlx5_1", "node3", "mlx5_0") == "node2/mlx5_1<->node3/mlx5_0"


# ---------------------------------------------------------------- localization


def test_clean_fabric_passes():
    rep = R.build_report(simulate(["node%d" % i for i in range(1, 9)]), now=NOW)
    assert rep["passed"] is True
    assert rep["suspect_nodes"] == [] and rep["suspect_links"] == [] and rep["failed_pairs"] == []
    assert len(rep["known_good"]) == 8
    assert rep["message"].startswith("Fabric validation passed: 0 of 28 pair results failed on 8 hosts")


def test_bad_node_and_bad_link_told_apart_by_the_second_pass():
    hosts = ["node%d" % i for i in range(1, 9)]
    results = simulate(hosts, bad_nodes={"node4"}, bad_links={frozenset(("node2", "node3"))})
    assert any(r["pass"] == 2 for r in results)
    rep = R.build_report(results, now=NOW)
    assert rep["passed"] is False
    assert [(n["host"], n["verdict"]) for n in rep["suspect_nodes"]] == [("node4", "bad_node")]
    node = rep["suspect_nodes"][0]
    assert node["failed_with"] == ["node1", "node2", "node3", "node5", "node6", "node7", "node8"]
    assert any(not r["passed"] and r["partner"] in rep["known_good"] for r in node["retest"])
    assert [(x["link"], x["verdict"]) for x in rep["suspect_links"]] == [("node2/mlx5_0<->node3/mlx5_0", "bad_link")]
    assert "node2" in rep["cleared"] and "node3" in rep["cleared"]
    assert rep["message"].startswith(
        "Fabric validation failed: bad link node2/mlx5_0<->node3/mlx5_0 (180.1 Gb/s < 360.0 Gb/s); "
        "bad node node4 (failed with node1, node2, node3, node5, node6 and 2 more; failed again with known-good"
    )


def test_first_pass_only_gives_suspects():
    hosts = ["node%d" % i for i in range(1, 7)]
    rep = R.build_report(
        simulate(hosts, bad_nodes={"node4"}, bad_links={frozenset(("node2", "node3"))}, retest=False), now=NOW
    )
    assert [(n["host"], n["verdict"]) for n in rep["suspect_nodes"]] == [("node4", "suspect")]
    assert [(x["link"], x["verdict"]) for x in rep["suspect_links"]] == [("node2/mlx5_0<->node3/mlx5_0", "suspect")]


def test_ambiguous_first_pass_is_settled_by_the_retest():
    # node4 failed with node1 and node3; node2<->node3 failed alone. node3 and node4 both failed with
    # two partners: the first pass cannot tell which of them is the node; the retest can.
    hosts = ["node%d" % i for i in range(1, 7)]
    bad = {frozenset(p) for p in (("node4", "node1"), ("node4", "node3"), ("node2", "node3"))}
    first = [
        result(s, c, 180.1 if frozenset((s, c)) in bad else 392.0, round=i)
        for i, rnd in enumerate(pair_rounds(hosts))
        for s, c in rnd
    ]
    plan = retest_rounds(first, hosts)
    retested = {h for rnd in plan for p in rnd for h in p}
    assert {"node3", "node4"} <= retested
    # node4 fails with any partner in the retest, node3 passes with fresh ones. node4 reached line rate with node2,
    # node5 and node6 in pass 1, so it is never bad_node: the common element of its failures is the path above it
    # (no grouping says which switch); node2<->node3, failing next to it on the same rail, is the fabric's too.
    # Its rising symbol errors are its own: it fails for them.
    second = [
        result(s, c, 150.0 if "node4" in (s, c) else 391.0, round=i, **{"pass": 2})
        for i, rnd in enumerate(plan)
        for s, c in rnd
    ]
    violation = {"host": "node4", "device": "mlx5_0", "port": 1, "counter": "symbol_error", "before": 0,
                 "after": 5, "delta": 5, "allowed": 0, "category": "physical"}  # fmt: skip
    rep = R.build_report(first + second, [violation], now=NOW)
    assert rep["suspect_nodes"] == [] and rep["suspect_links"] == []
    faults = [(f["scope"], f["hosts"]) for f in rep["switch_faults"]]
    assert faults == [("path", ["node4"]), ("fabric", ["node2", "node3"])]
    assert [(h["host"], h["failure_kind"], h["culprit"]) for h in rep["failed_hosts"]] == [("node4", "counters", True)]
    msg = rep["message"]
    assert msg.startswith(
        "Fabric validation failed: switch fault on rail mlx5_0: the path above node4 (it reaches line rate with "
        "node2, node5, node6, fails with 3 partners: 180.1 Gb/s < 360.0 Gb/s): not the hosts; "
    )
    assert msg.endswith("node4 mlx5_0 port 1 symbol_error +5")


def test_link_end_failing_with_known_good_is_the_path_above_it_not_bad_node():
    # node5 reached line rate with four partners in pass 1 and fails with a known-good one in the retest: it is
    # not cleared, but a host that reached line rate with part of the fabric is never bad_node on that rail: the
    # common element of its two failures is the path above it
    hosts = ["node%d" % i for i in range(1, 7)]
    first = simulate(hosts, bad_links={frozenset(("node2", "node5"))}, retest=False)
    plan = retest_rounds(first, hosts)
    second = [
        result(s, c, 100.0 if "node5" in (s, c) else 391.0, round=i, **{"pass": 2})
        for i, rnd in enumerate(plan)
        for s, c in rnd
    ]
    rep = R.build_report(first + second, now=NOW)
    assert rep["suspect_nodes"] == [] and rep["suspect_links"] == []  # explained by the path above node5
    [fault] = rep["switch_faults"]
    assert (fault["scope"], fault["hosts"], fault["failing"]) == ("path", ["node5"], 2)
    assert rep["cleared"] == ["node2"]
    assert rep["failed_hosts"] == [] and not rep["passed"]


def test_rail_of_a_node():
    hosts = ["n1", "n2", "n3", "n4"]
    results = []
    for i, rnd in enumerate(pair_rounds(hosts)):
        for s, c in rnd:
            for dev in ("mlx5_0", "mlx5_1"):
                slow = dev == "mlx5_1" and "n3" in (s, c)
                results.append(result(s, c, 90.0 if slow else 392.0, dev=dev, round=i))
    rep = R.build_report(results, now=NOW)
    assert [(n["host"], n["devices"]) for n in rep["suspect_nodes"]] == [("n3", ["mlx5_1"])]
    assert rep["totals"]["failed"] == 3


def test_unreachable_server_with_no_bandwidth():
    results = [
        result("n1", "n2", None, passed=False, failure="couldn't connect to n1:18515 within 30 s"),
        result("n3", "n1", None, passed=False, failure="couldn't connect to n1:18516 within 30 s"),
        result("n2", "n3", 391.0),
    ]
    rep = R.build_report(results, now=NOW)
    assert [n["host"] for n in rep["suspect_nodes"]] == ["n1"]
    assert "suspect node n1 (failed with n2, n3)" in rep["message"]


# ---------------------------------------------------------------- baseline


def baseline_with(key, values, test="write"):
    return {
        "version": 1,
        "links": {key: {"history": [{"ts": "t%d" % i, "gbps": v, "test": test} for i, v in enumerate(values)]}},
    }


def test_regression_against_median_and_boundary():
    key = "n1/mlx5_0<->n2/mlx5_0"
    base = baseline_with(key, [390.0, 395.0, 392.0, 100.0])  # one outlier: median 391.0
    ok = R.build_report([result("n1", "n2", 352.0, threshold=300.0)], baseline=base, now=NOW)  # floor 351.9
    assert ok["regressions"] == [] and ok["passed"] is True
    assert ok["results"][0]["baseline_gbps"] == 391.0
    bad = R.build_report([result("n2", "n1", 361.0, sdev="mlx5_0")], baseline=base, regression_tolerance=0.05, now=NOW)
    reg = bad["regressions"][0]
    assert (reg["link"], reg["baseline_gbps"], reg["floor_gbps"], reg["drop_pct"]) == (key, 391.0, 371.45, 7.7)
    assert bad["passed"] is False
    assert "regression n1/mlx5_0<->n2/mlx5_0 write (361.0 Gb/s < 95% of baseline 391.0 Gb/s)" in bad["message"]
    # another test on the same link has no history: no regression
    other = R.build_report([result("n1", "n2", 100.0, threshold=None, test="read")], baseline=base, now=NOW)
    assert other["regressions"] == []


def test_update_baseline_keeps_last_n_and_skips_failures():
    key = "n1/mlx5_0<->n2/mlx5_0"
    base = baseline_with(key, [380.0 + i for i in range(10)])
    rep = R.build_report(
        [result("n1", "n2", 393.0), result("n3", "n4", 100.0), result("n1", "n2", 90.0, test="read", threshold=None)],
        now=NOW,
    )
    new = RB.update_baseline(base, rep["results"], rep["timestamp"], keep=10)
    hist = new["links"][key]["history"]
    writes = [p["gbps"] for p in hist if p["test"] == "write"]
    assert writes == [381.0 + i for i in range(9)] + [393.0]
    assert [p["gbps"] for p in hist if p["test"] == "read"] == [90.0]
    assert "n3/mlx5_0<->n4/mlx5_0" not in new["links"]  # failed pair never becomes a reference
    assert new["updated"] == "2026-12-01T00:00:00Z"
    # round trip through the file format
    assert RB.load_baseline(RR.to_json(new)) == new


def test_first_pass_measurement_wins_over_retest_of_same_link():
    results = [result("n1", "n2", 391.0), result("n2", "n1", 300.0, **{"pass": 2})]
    new = RB.update_baseline(None, VR.normalize_results(results), "ts")
    assert [p["gbps"] for p in new["links"]["n1/mlx5_0<->n2/mlx5_0"]["history"]] == [391.0]


def test_load_baseline_errors():
    assert RB.load_baseline("") == RB.empty_baseline()
    with pytest.raises(ValueError, match="not valid JSON"):
        RB.load_baseline("{nope")
    with pytest.raises(ValueError, match="has no 'history' list"):
        RB.load_baseline('{"links": {"a<->b": {}}}')


# ---------------------------------------------------------------- renderers


@pytest.fixture
def failed_report():
    hosts = ["node%d" % i for i in range(1, 9)]
    results = simulate(hosts, bad_nodes={"node4"}, bad_links={frozenset(("node2", "node3"))})
    violations = [
        {"host": "node4", "device": "mlx5_0", "port": 1, "counter": "symbol_error", "before": 10, "after": 15,
         "delta": 5, "allowed": 0, "category": "physical"},
    ]  # fmt: skip
    saturated = [
        {"host": "node7", "device": "mlx5_0", "port": 1, "counter": "port_xmit_wait", "value": 4294967295, "width": 32}
    ]
    base = baseline_with("node1/mlx5_0<->node5/mlx5_0", [395.0, 396.0, 394.0])
    return R.build_report(results, violations, saturated, base, 0.001, run_id="run-42", now=NOW)


def test_junit(failed_report):
    root = ET.fromstring(RR.to_junit(failed_report))
    suites = dict((s.get("name"), s) for s in root.findall("testsuite"))
    pairs = suites["pairs"].findall("testcase")
    assert len(pairs) == len(failed_report["results"]) == int(suites["pairs"].get("tests"))
    failures = [c for c in pairs if c.find("failure") is not None]
    # 9 bandwidth failures (8 first pass + the bad node's retest) and one regression; type = failure_kind
    assert int(suites["pairs"].get("failures")) == len(failures) == 10
    kinds = sorted(c.find("failure").get("type") for c in failures)
    assert kinds.count("below_threshold") == 9 and kinds.count("regression") == 1
    link = [
        c
        for c in pairs
        if c.get("name") in ("node2/mlx5_0 -> node3/mlx5_0 write", "node3/mlx5_0 -> node2/mlx5_0 write")
    ]
    assert link[0].find("failure").get("message") == "180.1 Gb/s < 360.0 Gb/s"
    assert "bw_avg_gbps=180.1 threshold_gbps=360" in link[0].find("failure").text
    reg = [c for c in failures if c.find("failure").get("type") == "regression"][0]
    assert reg.find("failure").get("message") == (
        "392.0 Gb/s < 100% of its baseline 395.0 Gb/s (median of its last runs): a regression"
    )
    counters = dict((c.get("name"), c) for c in suites["counters"].findall("testcase"))
    assert len(counters) == 8
    assert counters["node4 counters"].find("failure").get("message") == "node4 mlx5_0 port 1 symbol_error +5"
    assert "saturated at 4294967295" in counters["node7 counters"].find("skipped").get("message")
    assert counters["node1 counters"].find("failure") is None
    # suite hosts: one testcase per host; node4 (bad node), node2/node3 (bad link), node1/node5 (regression)
    hosts = dict((c.get("name"), c) for c in suites["hosts"].findall("testcase"))
    assert len(hosts) == 8
    failed_hosts = sorted(n for n, c in hosts.items() if c.find("failure") is not None)
    assert failed_hosts == ["node1 host", "node2 host", "node3 host", "node4 host", "node5 host"]
    assert hosts["node4 host"].find("failure").get("type") == "bad_node"
    assert hosts["node2 host"].find("failure").get("type") == "bad_link"
    assert int(root.get("failures")) == 11 + 5 and int(root.get("tests")) == len(pairs) + 8 + 8


def parse_prom(text):
    samples = {}
    for line in text.splitlines():
        if line.startswith("#") or not line:
            continue
        series, value = line.rsplit(" ", 1)
        assert series not in samples, "duplicate series %s" % series
        samples[series] = float(value)
    return samples


CONTRACT = {
    "ibtune_validation_timestamp_seconds",
    "ibtune_validation_passed",
    "ibtune_link_bandwidth_gbps",
    "ibtune_link_threshold_gbps",
    "ibtune_link_passed",
    "ibtune_link_baseline_gbps",
    "ibtune_link_regressed",
    "ibtune_counter_violations",
    "ibtune_suspect_node",
    "ibtune_suspect_link",
    "ibtune_host_passed",
    "ibtune_validation_systemic",
}


def test_prometheus_names_values_and_uniqueness(failed_report):
    text = RR.to_prometheus(failed_report)
    samples = parse_prom(text)
    names = {s.split("{")[0] for s in samples}
    assert names == CONTRACT
    for name in CONTRACT:
        assert "# TYPE %s gauge" % name in text
    assert samples["ibtune_validation_passed"] == 0
    assert samples["ibtune_validation_timestamp_seconds"] == NOW
    assert samples['ibtune_suspect_node{host="node4"}'] == 1
    assert (
        samples['ibtune_suspect_link{server="node2",server_device="mlx5_0",client="node3",client_device="mlx5_0"}'] == 1
        or samples['ibtune_suspect_link{server="node3",server_device="mlx5_0",client="node2",client_device="mlx5_0"}']
        == 1
    )
    violation = (
        'ibtune_counter_violations{host="node4",device="mlx5_0",port="1",counter="symbol_error",category="physical"}'
    )
    assert samples[violation] == 5
    bw = [k for k in samples if k.startswith("ibtune_link_bandwidth_gbps")]
    # one series per (server, device, client, device, test): retests of a first-pass pair replace it
    assert len(bw) == len({(r["server"], r["client"]) for r in failed_report["results"]})
    regressed = [k for k, v in samples.items() if k.startswith("ibtune_link_regressed") and v == 1]
    assert len(regressed) == 1
    assert 'server="node1"' in regressed[0] or 'client="node1"' in regressed[0]
    assert 'server="node5"' in regressed[0] or 'client="node5"' in regressed[0]


def test_prometheus_label_escaping():
    rep = R.build_report([result("n1", "n2", 391.0, dev='we"ird\\dev\nx')], now=NOW)
    text = RR.to_prometheus(rep)
    assert 'server_device="we\\"ird\\\\dev\\nx"' in text
    if PROMTOOL:
        check_promtool(text)


def check_promtool(text):
    proc = subprocess.run([PROMTOOL, "check", "metrics"], input=text, capture_output=True, text=True, check=False)
    problems = [line for line in (proc.stdout + proc.stderr).splitlines() if line.strip()]
    # The contract's name ibtune_counter_violations trips promtool's naming lint (it contains
    # "counter"); that is the only finding allowed. A format error would be reported differently.
    unexpected = [
        p for p in problems if "ibtune_counter_violations metric name should not include type 'counter'" not in p
    ]
    assert unexpected == [], problems
    return problems


@pytest.mark.skipif(PROMTOOL is None, reason="promtool (Debian package prometheus) not installed")
def test_prometheus_promtool(failed_report):
    problems = check_promtool(RR.to_prometheus(failed_report))
    assert len(problems) == 1  # the lint above, proving promtool read the whole file
    clean = R.build_report(simulate(["a", "b", "c", "d"]), now=NOW)
    assert check_promtool(RR.to_prometheus(clean)) == []


@pytest.mark.skipif(PROMTOOL is None, reason="promtool (Debian package prometheus) not installed")
def test_promtool_catches_a_broken_file():
    # the check above can fail: promtool rejects a malformed exposition
    proc = subprocess.run(
        [PROMTOOL, "check", "metrics"],
        input='ibtune_link_passed{server="a} 1\n',
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode != 0


def test_markdown(failed_report):
    md = RR.to_markdown(failed_report)
    lines = md.splitlines()
    assert lines[0] == "# Fabric validation: FAILED"
    # the regression that met its threshold is a failed pair now (failure_kind regression)
    assert lines[2].startswith("**FAILED: 10 of 31 pair results failed (3 retests included) on 8 hosts, 1 suspect node")
    assert "- bad link node2/mlx5_0<->node3/mlx5_0 (180.1 Gb/s < 360.0 Gb/s)" in lines
    assert any(line.startswith("- bad node node4 (failed with node1") and line.endswith("on mlx5_0") for line in lines)
    table = [line for line in lines if line.startswith("| 1 |") or line.startswith("| 2 |")]
    assert len(table) == len(failed_report["failed_pairs"]) == 10
    assert "| node4 | mlx5_0 | 1 | symbol_error | physical | 10 | 15 | 5 | 0 |" in lines
    assert "## Regressions against the baseline" in lines
    assert "- node7 mlx5_0 port 1 port_xmit_wait saturated at 4294967295 (32 bits): cannot show increases, clear it " \
        "(perfquery -R) to watch it again" in lines  # fmt: skip


def test_a_saturated_gated_counter_fails_the_port_with_the_fix():
    hosts = ["node%d" % i for i in range(1, 5)]
    stuck = [{"host": "node3", "device": "mlx5_0", "port": 1, "counter": "symbol_error", "value": 65535, "width": 16},
             {"host": "node2", "device": "mlx5_0", "port": 1, "counter": "link_downed", "value": 255, "width": 8,
              "gated": True}]  # fmt: skip
    rep = R.build_report(simulate(hosts), saturated=stuck, now=NOW)
    assert not rep["passed"] and rep["failed_pairs"] == []
    assert [(h["host"], h["failure_kind"], h["culprit"]) for h in rep["failed_hosts"]] == [
        ("node2", "saturated", True), ("node3", "saturated", True)
    ]  # fmt: skip
    assert rep["message"] == (
        "Fabric validation failed: node2 mlx5_0 port 1 link_downed saturated at 255 (8 bits): it cannot show new "
        "errors, so the port cannot pass; reset it (perfquery -R) or read the extended counters (perfquery -x); "
        "node3 mlx5_0 port 1 symbol_error saturated at 65535 (16 bits): it cannot show new errors, so the port "
        "cannot pass; reset it (perfquery -R) or read the extended counters (perfquery -x)"
    )
    counters = dict((c.get("name"), c) for c in ET.fromstring(RR.to_junit(rep)).iter("testcase"))
    assert counters["node3 counters"].find("failure").get("type") == "saturated"


def test_json_round_trip(failed_report):
    data = json.loads(RR.to_json(failed_report))
    assert data["run_id"] == "run-42" and data["timestamp"] == "2026-12-01T00:00:00Z"
    assert data["passed"] is False and data["message"] == failed_report["message"]
    assert data["totals"]["results"] == 31


def test_message_is_capped(failed_report):
    violations = [
        {"host": "n%02d" % i, "device": "mlx5_0", "port": 1, "counter": "link_downed", "delta": 1, "allowed": 0}
        for i in range(25)
    ]
    rep = R.build_report([result("n00", "n01")], violations, now=NOW)
    assert rep["message"].endswith("; and 15 more (see summary.md)")
    assert rep["message"].count("link_downed") == 10


def test_violation_delta_from_before_and_after():
    violation = {"host": "n1", "device": "mlx5_0", "port": "1", "counter": "link_downed", "before": "3", "after": "5"}
    rep = R.build_report([result("n1", "n2")], [violation], now=NOW)
    assert rep["counter_violations"][0]["delta"] == 2 and rep["counter_violations"][0]["port"] == 1
    assert rep["message"] == "Fabric validation failed: n1 mlx5_0 port 1 link_downed +2"


def test_bad_settings():
    with pytest.raises(ValueError, match="regression_tolerance must be >= 0 and < 1"):
        R.build_report([], regression_tolerance=1.5)
    with pytest.raises(ValueError, match=r"counter_violations\[0\] must be a dict"):
        R.build_report([], ["symbol_error"])


# ---------------------------------------------------------------- atomic writes


def test_write_atomic(tmp_path):
    dest = tmp_path / "reports" / "fabric"
    paths = RR.write_atomic(str(dest), {"a.txt": "one\n", "b.txt": "two\n"})
    assert paths == [str(dest / "a.txt"), str(dest / "b.txt")]
    assert (dest / "a.txt").read_text() == "one\n"
    assert oct(os.stat(dest / "a.txt").st_mode & 0o777) == "0o644"
    inode = os.stat(dest / "a.txt").st_ino
    RR.write_atomic(str(dest), {"a.txt": "three\n"})
    assert (dest / "a.txt").read_text() == "three\n"
    assert os.stat(dest / "a.txt").st_ino != inode  # replaced, not rewritten in place
    assert sorted(os.listdir(dest)) == ["a.txt", "b.txt"]  # no temp file left behind
    with pytest.raises(ValueError, match="plain file name"):
        RR.write_atomic(str(dest), {"../x": ""})


def test_write_atomic_leaves_no_temp_on_error(tmp_path):
    (tmp_path / "a.txt").mkdir()  # os.replace of a file onto a directory fails
    with pytest.raises(OSError):
        RR.write_atomic(str(tmp_path), {"a.txt": "x"})
    assert os.listdir(tmp_path) == ["a.txt"]


def test_the_summary_says_which_latency_figure_it_gated():
    # issue 20 part 4: a latency result gated on the average (the tool printed no typical) is said so, per basis
    def lat(server, client, typical_us, basis, round_):
        return {"server": server, "server_device": "mlx5_0", "client": client, "client_device": "mlx5_0",
                "test": "write_lat", "kind": "latency", "t_typical_us": typical_us, "p99_us": None,
                "threshold_us": 3.0, "latency_basis": basis, "passed": True, "failure": None,
                "failure_kind": None, "round": round_, "pass": 1}  # fmt: skip

    results = [lat("a", "b", 1.9, "t_typical", 0), lat("c", "d", 2.1, "t_avg", 1)]
    report = R.build_report(results, expected_hosts=["a", "b", "c", "d"], now=NOW)
    assert [r["latency_basis"] for r in report["results"]] == ["t_typical", "t_avg"]
    lines = RR.to_markdown(report).splitlines()
    assert "2 measurements (gated on: average (no typical printed) 1, typical 1): min 1.90 us, median 2.00 us, " \
        "max 2.10 us." in lines  # fmt: skip


def refuse_by_loop(results, expected_hosts):
    """build._refuse's loop alone (every key tuple in a set, whatever the columns hold): the spec of the check in C
    that skips it."""
    known = set(expected_hosts) if expected_hosts is not None else None
    keys = results.columns("pass", "round", "rail", "server", "client", "kind", "test")
    seen, kept, refused = set(), [], []
    for index, key in enumerate(zip(*keys)):
        stranger = known is not None and (key[3] not in known or key[4] not in known)
        if stranger or key in seen:
            refused.append((index, stranger))
            continue
        seen.add(key)
        kept.append(index)
    return kept, refused


@pytest.mark.parametrize("spans", [0, 64])
@pytest.mark.parametrize("seed", range(100))
def test_results_refused_with_constant_columns_left_out_are_the_loops(seed, spans, monkeypatch):
    """_refuse (a column holding one value throughout left out of the hashed keys; with spans 0, the keys of each
    span of one pass, round, kind and test hashed into the set of those) refuses what the loop over every key
    refuses: a second result that differs from another only in a column that is constant elsewhere, one that
    differs in nothing (in another span of the same round), 1 and 1.0 and True in one column, strangers, one
    result, none."""
    import random

    monkeypatch.setattr(R, "REFUSE_SPANS", spans)

    from ansible_collections.ibtune.fabric.plugins.module_utils.validate.table import ResultTable

    rnd = random.Random(seed)
    hosts = ["h%d" % i for i in range(6)]
    out = []
    for _i in range(rnd.randrange(0, 40)):
        server, client = rnd.sample(hosts, 2)
        out.append({"pass": rnd.choice([1, 1, 1, 2, True, 1.0]), "round": rnd.randrange(3), "rail": rnd.choice("ab"),
                    "server": server, "client": client, "kind": rnd.choice(["bandwidth"] * 5 + ["latency"]),
                    "test": "write", "passed": True, "failure": None, "server_device": "d0",
                    "client_device": None})  # fmt: skip
    if out and rnd.random() < 0.5:
        out.append(dict(rnd.choice(out)))  # the same result twice
    table = ResultTable.from_dicts(out)
    expected = rnd.choice([None, hosts, hosts[:5]])
    kept, refused = R._refuse(table, expected)  # pylint: disable=protected-access
    spec_kept, spec_refused = refuse_by_loop(table, expected)
    assert len(refused) == len(spec_refused)
    assert list(kept) == [table[i] for i in spec_kept]
