"""Verdicts that never lie (issue 11): expected hosts, host failures, min_hosts, systemic, peer-relative gate,
the baseline rule, invalid figures and failure-kind-aware localisation, on lab-shaped inputs (4-16 hosts,
2 rails, ~392 Gb/s NDR links, failure sentences from perftest's real outputs in the corpus)."""

import json
import math
import xml.etree.ElementTree as ET

import pytest

from ansible_collections.ibtune.fabric.plugins.module_utils.perftest import bandwidth as perftest
from ansible_collections.ibtune.fabric.plugins.module_utils.report import build as R
from ansible_collections.ibtune.fabric.plugins.module_utils.report import baseline as RB
from ansible_collections.ibtune.fabric.plugins.module_utils.report import render as RR
from ansible_collections.ibtune.fabric.plugins.module_utils.validate import results as VR
from ansible_collections.ibtune.fabric.plugins.module_utils.perftest.gate import bandwidth_threshold, judge_bandwidth
from ansible_collections.ibtune.fabric.plugins.module_utils.validate.pairs import pair_rounds
from tests.conftest import read_corpus

NOW = 1796083200.0
RAILS = ("mlx5_0", "mlx5_1")
GATE = bandwidth_threshold(min_link_fraction=0.9, server_rate_gbps=400.0, client_rate_gbps=400.0)  # 360 Gb/s


def jitter(server, client, rail):
    """A healthy NDR link's figure: 390.1 to 393.0 Gb/s, stable per pair and rail."""
    return 390.0 + (sum(map(ord, server + client)) * 7 + rail * 13) % 30 / 10.0


def pair(server, client, rail, bw, round_=0, pass_=1, gate=None, failure=None, kind=None):
    """One pair result as the join hands it over: gated once by gate.py (default gate: GATE)."""
    gate = gate or GATE
    res = {
        "server": server, "server_device": RAILS[rail], "server_port": 1,
        "client": client, "client_device": RAILS[rail], "client_port": 1,
        "test": "write", "kind": "bandwidth", "rail": rail,
        "bw_avg_gbps": bw, "bw_peak_gbps": None if bw is None else bw + 0.4,
        "threshold_gbps": gate["threshold_gbps"], "link_rate_gbps": 400.0,
        "round": round_, "pass": pass_, "duration_s": 10.0,
    }  # fmt: skip
    if failure is not None:
        res.update(passed=False, failure=failure, failure_kind=kind)
    else:
        passed, fkind, sentence = judge_bandwidth(bw, gate)
        res.update(passed=passed, failure=sentence, failure_kind=fkind)
    return res


def fabric(hosts, measure=None, rails=(0, 1)):
    """all_pairs first pass over `hosts` and `rails`; measure(server, client, rail) -> bw or a pair dict."""
    out = []
    for index, rnd in enumerate(pair_rounds(hosts)):
        for server, client in rnd:
            for rail in rails:
                got = measure(server, client, rail) if measure else None
                if isinstance(got, dict):
                    got.setdefault("round", index)
                    out.append(got)
                else:
                    out.append(pair(server, client, rail, jitter(server, client, rail) if got is None else got, index))
    return out


def hosts_of(n):
    return ["gpu%02d" % i for i in range(1, n + 1)]


def by_host(report):
    return dict((h["host"], h) for h in report["failed_hosts"])


def prom_samples(text):
    out = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            series, value = line.rsplit(" ", 1)
            out[series] = float(value)
    return out


# ---------------------------------------------------------------- expected hosts and host failures


def test_a_host_failing_preflight_is_failed_in_every_report_file():
    hosts = hosts_of(8)
    measured = hosts[:7]  # gpu08 failed preflight: it is in no pair result
    down = {"host": "gpu08", "reason": "mlx5_1 port 1 is DOWN (phys_state Polling): check the cable"}
    rep = R.build_report(fabric(measured), expected_hosts=hosts, host_failures=[down], now=NOW)
    assert rep["passed"] is False
    assert rep["failed_hosts"] == [
        {"host": "gpu08", "failure_kind": "preflight", "reason": down["reason"], "culprit": True},
    ]
    assert rep["passed_hosts"] == measured and rep["expected_hosts"] == hosts
    assert rep["message"] == "Fabric validation failed: gpu08 (preflight): " + down["reason"]
    files = RR.render_all(rep)
    data = json.loads(files["report.json"])
    assert data["failed_hosts"][0]["host"] == "gpu08" and data["passed"] is False
    suites = dict((s.get("name"), s) for s in ET.fromstring(files["junit.xml"]).findall("testsuite"))
    cases = dict((c.get("name"), c) for c in suites["hosts"].findall("testcase"))
    assert len(cases) == 8 and suites["hosts"].get("failures") == "1"
    failure = cases["gpu08 host"].find("failure")
    assert failure.get("type") == "preflight" and failure.get("message") == down["reason"]
    assert all(cases["%s host" % h].find("failure") is None for h in measured)
    md = files["summary.md"].splitlines()
    assert md[0] == "# Fabric validation: FAILED"
    assert "| gpu08 | FAILED | preflight | %s |" % down["reason"] in md
    assert "8 hosts meant to be validated: 7 passed, 1 failed." in md
    prom = prom_samples(files["ibtune.prom"])
    assert prom['ibtune_host_passed{host="gpu08"}'] == 0
    assert [prom['ibtune_host_passed{host="%s"}' % h] for h in measured] == [1] * 7
    assert prom["ibtune_validation_passed"] == 0


def test_an_expected_host_without_any_result_is_unmeasured():
    hosts = hosts_of(6)
    rep = R.build_report(fabric(hosts[:5]), expected_hosts=hosts, now=NOW)
    assert rep["passed"] is False
    assert by_host(rep)["gpu06"]["failure_kind"] == "unmeasured"
    assert "gpu06 (unmeasured): no pair result: the host was never measured" in rep["message"]


def test_unreachable_hosts_pairs_make_no_partner_a_suspect():
    # gpu03 became unreachable after planning: its pairs failed to connect (perftest's real sentence)
    text = read_corpus("ib_write_bw__error-couldnt-connect-socket.txt")
    cls = perftest.classify_failure(text, "", 1)
    assert cls["kind"] == "connect"

    def measure(server, client, rail):
        if "gpu03" in (server, client):
            return pair(server, client, rail, None, failure=cls["message"], kind=cls["kind"])
        return None

    hosts = hosts_of(6)
    gone = {"host": "gpu03", "reason": "unreachable over ssh after the plan", "failure_kind": "unreachable"}
    rep = R.build_report(fabric(hosts, measure), expected_hosts=hosts, host_failures=[gone], now=NOW)
    assert rep["suspect_nodes"] == [] and rep["suspect_links"] == []
    assert rep["failed_hosts"] == [
        {"host": "gpu03", "failure_kind": "unreachable", "reason": gone["reason"], "culprit": True}
    ]
    assert rep["passed_hosts"] == [h for h in hosts if h != "gpu03"]


# ---------------------------------------------------------------- too few hosts, no result


def test_one_gpu_node_fails_fewer_than_min_hosts():
    rep = R.build_report([], expected_hosts=["gpu01"], now=NOW)
    assert rep["passed"] is False
    assert rep["problems"] == [
        "no pair result: no link was measured (1 expected host, 1 left to validate, fewer than min_hosts 2): "
        "validation needs at least two reachable hosts with an RDMA port, fix the failed hosts"
    ]
    assert rep["failed_hosts"] == [
        {
            "host": "gpu01",
            "failure_kind": "unmeasured",
            "reason": "no pair result: the host was never measured",
            "culprit": False,
        }
    ]
    assert not rep["headline"].startswith("PASSED")
    suites = dict((s.get("name"), s) for s in ET.fromstring(RR.to_junit(rep)).findall("testsuite"))
    assert suites["verdict"].find("testcase/failure").get("type") == "too_few_hosts"


def test_two_hosts_measured_out_of_four_with_min_hosts_three():
    hosts = hosts_of(4)
    fails = [{"host": h, "reason": "no ACTIVE RDMA port"} for h in hosts[2:]]
    rep = R.build_report(fabric(hosts[:2]), expected_hosts=hosts, host_failures=fails, min_hosts=3, now=NOW)
    assert rep["problems"] == [
        "only 2 hosts validated (gpu01, gpu02), fewer than min_hosts 3: fix the failed hosts or lower min_hosts"
    ]
    assert rep["passed"] is False


def test_no_pair_result_fails():
    rep = R.build_report([], expected_hosts=hosts_of(4), now=NOW)
    assert rep["passed"] is False
    assert rep["message"].startswith(
        "Fabric validation failed: no pair result: no link was measured (4 expected hosts)"
    )
    assert sorted(h["failure_kind"] for h in rep["failed_hosts"]) == ["unmeasured"] * 4
    assert rep["passed_hosts"] == []


def test_bad_settings_are_one_sentence():
    with pytest.raises(ValueError, match=r"min_gbps=-5 must be a finite number >= 0"):
        R.build_report([], min_gbps=-5)
    with pytest.raises(ValueError, match=r"min_gbps=nan must be a finite number >= 0"):
        R.build_report([], min_gbps=float("nan"))
    with pytest.raises(ValueError, match="min_peer_fraction must be a finite number from 0.0 to 1.0, got 1.5"):
        R.build_report([], min_peer_fraction=1.5)
    with pytest.raises(ValueError, match="min_hosts must be an integer >= 1, got 0"):
        R.build_report([], min_hosts=0)
    with pytest.raises(ValueError, match="line_rate_gbps must be a finite number above 0.0"):
        R.build_report([], line_rate_gbps=0)
    with pytest.raises(ValueError, match=r"host_failures\[0\] must be a dict with a host name"):
        R.build_report([], host_failures=[{"reason": "x"}])


# ---------------------------------------------------------------- systemic


def test_no_rdma_device_anywhere_is_one_sentence_and_no_suspect():
    text = read_corpus("ib_write_bw__error-no-device-found-container.txt")
    cls = perftest.classify_failure(text, "", 1)
    assert cls["kind"] == "no_device"
    hosts = hosts_of(8)
    results = fabric(hosts, lambda s, c, r: pair(s, c, r, None, failure=cls["message"], kind=cls["kind"]))
    rep = R.build_report(results, expected_hosts=hosts, now=NOW)
    assert rep["systemic"] == "no RDMA device on any host (every pair failed with no_device)"
    assert rep["message"] == "Fabric validation failed: " + rep["systemic"]
    assert rep["suspect_nodes"] == [] and rep["suspect_links"] == []
    assert [h["failure_kind"] for h in rep["failed_hosts"]] == ["no_device"] * 8
    assert "## Systemic failure" in RR.to_markdown(rep)
    assert prom_samples(RR.to_prometheus(rep))["ibtune_validation_systemic"] == 1


def test_a_failure_kind_read_from_the_sentence_when_missing():
    text = read_corpus("ib_write_bw__error-no-device-found-container.txt")
    sentence = perftest.classify_failure(text, "", 1)["message"]
    hosts = hosts_of(4)
    results = fabric(hosts, lambda s, c, r: pair(s, c, r, None, failure=sentence, kind=None))
    rep = R.build_report(results, now=NOW)
    assert {r["failure_kind"] for r in rep["results"]} == {"no_device"}
    assert rep["systemic"].startswith("no RDMA device on any host")


def test_min_gbps_above_the_line_rate_is_systemic():
    hosts = hosts_of(8)
    gate = bandwidth_threshold(min_gbps=500, min_link_fraction=0.9, server_rate_gbps=400, client_rate_gbps=400)
    results = fabric(hosts, lambda s, c, r: pair(s, c, r, jitter(s, c, r), gate=gate))
    assert all(r["failure_kind"] == "below_threshold" for r in results)
    rep = R.build_report(results, min_gbps=500, now=NOW)  # the line rate comes from the results' link_rate_gbps
    assert rep["systemic"] == "min_gbps 500 is above the 400 Gb/s line rate: no link can pass"
    assert rep["suspect_nodes"] == [] and rep["suspect_links"] == []
    assert rep["message"] == "Fabric validation failed: min_gbps 500 is above the 400 Gb/s line rate: no link can pass"


def test_every_link_below_a_threshold_under_the_line_rate_is_systemic():
    hosts = hosts_of(6)  # 2X-trained ports everywhere: 196 Gb/s against 360
    rep = R.build_report(fabric(hosts, lambda s, c, r: 196.0 + r), now=NOW)
    assert rep["systemic"] == (
        "every link is below its bandwidth threshold: the median measured 196.5 Gb/s against a threshold of "
        "360.0 Gb/s (every pair failed with below_threshold): check min_gbps and min_link_fraction against the "
        "port rate"
    )
    assert rep["suspect_nodes"] == [] and rep["suspect_links"] == []


def test_one_bad_node_among_eight_is_not_systemic():
    hosts = hosts_of(8)
    rep = R.build_report(fabric(hosts, lambda s, c, r: 180.0 if "gpu05" in (s, c) else None), now=NOW)
    assert rep["systemic"] is None
    assert [n["host"] for n in rep["suspect_nodes"]] == ["gpu05"]
    assert by_host(rep)["gpu05"]["failure_kind"] == "suspect_node"


# ---------------------------------------------------------------- peer-relative gate


def test_a_link_at_64_percent_of_its_peers_fails_as_slow_vs_peers():
    hosts = hosts_of(16)
    slow = ("gpu03", "gpu11")
    gate = bandwidth_threshold(min_gbps=200)  # an operator's low floor: 250 Gb/s passes it

    def measure(s, c, r):
        bw = 250.0 if {s, c} == set(slow) and r == 1 else jitter(s, c, r)
        return pair(s, c, r, bw, gate=gate)

    rep = R.build_report(fabric(hosts, measure), now=NOW)
    failed = rep["failed_pairs"]
    assert len(failed) == 1 and failed[0]["failure_kind"] == "slow_vs_peers"
    median = failed[0]["peer_median"]
    assert 390.0 < median < 393.0 and round(250.0 / median, 2) == 0.64
    assert failed[0]["failure"] == (
        "250.0 Gb/s is 0.64 of the %.1f Gb/s median of its 119 peers on rail 1 (write, min_peer_fraction 0.9)" % median
    )
    assert [x["link"] for x in rep["suspect_links"]] == ["gpu03/mlx5_1<->gpu11/mlx5_1"]
    assert sorted(by_host(rep)) == ["gpu03", "gpu11"] and by_host(rep)["gpu03"]["failure_kind"] == "bad_link"
    assert ET.fromstring(RR.to_junit(rep)).find(".//failure[@type='slow_vs_peers']") is not None


def test_a_link_at_95_percent_of_its_peers_passes():
    hosts = hosts_of(16)
    rep = R.build_report(
        fabric(hosts, lambda s, c, r: 0.95 * 391.5 if {s, c} == {"gpu03", "gpu11"} and r == 1 else None), now=NOW
    )
    assert rep["passed"] is True and rep["failed_hosts"] == []
    assert rep["passed_hosts"] == hosts


def test_the_peer_gate_needs_three_peers_and_can_be_turned_off():
    # 3 hosts: 3 pairs per rail, each has 2 peers only
    hosts = hosts_of(3)
    rep = R.build_report(fabric(hosts, lambda s, c, r: 250.0 if (s, c, r) == ("gpu01", "gpu02", 0) else None,
                                rails=(0,)), min_peer_fraction=0.9, now=NOW)  # fmt: skip
    # 250 fails the absolute 360 gate anyway; the peer gate left it alone (no peer_median)
    assert [r.get("peer_median") for r in rep["results"]] == [None, None, None]
    hosts = hosts_of(8)
    gate = bandwidth_threshold(min_gbps=200)
    results = fabric(
        hosts, lambda s, c, r: pair(s, c, r, 250.0 if (s, r) == ("gpu01", 0) else jitter(s, c, r), gate=gate)
    )
    assert R.build_report(results, min_peer_fraction=0, now=NOW)["passed"] is True
    assert R.build_report(results, now=NOW)["passed"] is False


def test_latency_peer_gate_is_the_mirror():
    hosts = hosts_of(6)

    def measure(s, c, r):
        typical = 3.4 if {s, c} == {"gpu02", "gpu05"} else 2.05 + (len(s + c) + r) % 3 * 0.02
        return {
            "server": s, "server_device": RAILS[r], "client": c, "client_device": RAILS[r], "rail": r,
            "test": "write_lat", "kind": "latency", "t_typical_us": typical, "p99_us": typical + 0.4,
            "threshold_us": 5.0, "passed": True, "failure": None, "failure_kind": None, "pass": 1,
        }  # fmt: skip

    rep = R.build_report(fabric(hosts, measure), now=NOW)
    failed = rep["failed_pairs"]
    assert [(f["kind"], f["failure_kind"], f["rail"]) for f in failed] == [
        ("latency", "slow_vs_peers", 0),
        ("latency", "slow_vs_peers", 1),
    ]
    assert failed[0]["failure"].startswith("3.40 us is 1.6")
    assert "median of its 14 peers on rail 0 (write_lat, limit 1.11 x, min_peer_fraction 0.9)" in failed[0]["failure"]
    assert [x["link"] for x in rep["suspect_links"]] == ["gpu02/mlx5_0<->gpu05/mlx5_0", "gpu02/mlx5_1<->gpu05/mlx5_1"]
    assert "ibtune_link_latency_us{" in RR.to_prometheus(rep) and "## Latency" in RR.to_markdown(rep)


# ---------------------------------------------------------------- baseline


def test_a_regression_that_met_its_threshold_is_not_written_into_the_baseline():
    hosts = hosts_of(4)
    first = R.build_report(fabric(hosts), now=NOW)
    base = RB.update_baseline(None, first["results"], first["timestamp"])
    key = "gpu01/mlx5_0<->gpu02/mlx5_0"
    assert len(base["links"]) == 12 and len(base["links"][key]["history"]) == 1
    # next run: gpu01<->gpu02 rail 0 at 362 Gb/s (still above 360, 7.5% below its history; peer gate off)
    results = fabric(hosts, lambda s, c, r: 362.0 if {s, c} == {"gpu01", "gpu02"} and r == 0 else None)
    rep = R.build_report(results, baseline=base, regression_tolerance=0.05, min_peer_fraction=0, now=NOW + 86400)
    regressed = [r for r in rep["results"] if r["regressed"]]
    assert [(r["link"], r["passed"], r["failure_kind"]) for r in regressed] == [(key, False, "regression")]
    assert rep["passed"] is False and by_host(rep)["gpu01"]["failure_kind"] == "regression"
    assert rep["suspect_links"] == []  # a regression is named as such, not as a suspect link
    new = RB.update_baseline(base, rep["results"], rep["timestamp"])
    assert [p["gbps"] for p in new["links"][key]["history"]] == [base["links"][key]["history"][0]["gbps"]]
    # every passing link got its second point
    others = [k for k in new["links"] if k != key]
    assert len(others) == 11 and all(len(new["links"][k]["history"]) == 2 for k in others)
    # the third run sees the same drop: it is still a regression, it did not heal itself
    again = R.build_report(results, baseline=new, regression_tolerance=0.05, min_peer_fraction=0, now=NOW + 2 * 86400)
    assert [r["link"] for r in again["regressions"]] == [key]


# ---------------------------------------------------------------- invalid figures


@pytest.mark.parametrize("bad", [float("nan"), -12.5, float("inf")])
def test_nan_negative_or_infinite_bandwidth_fails_as_invalid(bad):
    hosts = hosts_of(4)
    results = fabric(hosts)
    results[0].update(bw_avg_gbps=bad, passed=True, failure=None, failure_kind=None)
    rep = R.build_report(results, now=NOW)
    res = rep["results"][0]
    assert res["passed"] is False and res["failure_kind"] == "invalid" and res["bw_avg_gbps"] is None
    assert res["failure"] == "bw_avg_gbps=%r is not a finite number >= 0: the measurement is invalid (check the " \
        "perftest output)" % bad  # fmt: skip
    assert rep["passed"] is False and rep["suspect_nodes"] == [] and rep["suspect_links"] == []
    assert rep["message"] == "Fabric validation failed: %s write: %s" % (VR.pair_label(res), res["failure"])
    json.loads(RR.to_json(rep), parse_constant=lambda c: pytest.fail("%s in report.json" % c))
    assert not any(isinstance(v, float) and not math.isfinite(v) for r in rep["results"] for v in r.values())


# ---------------------------------------------------------------- localisation and failure kinds


def test_a_missing_rail_blames_the_host_without_it_not_its_partners():
    hosts = hosts_of(6)

    def measure(s, c, r):
        if r == 1 and "gpu04" in (s, c):  # gpu04 has no mlx5_1: the join names it
            res = pair(s, c, r, None, failure="gpu04 has no rail 1 (mlx5_1): its peers have 2 rails",
                       kind="missing_rail")  # fmt: skip
            res["server_device" if s == "gpu04" else "client_device"] = None
            return res
        return None

    rep = R.build_report(fabric(hosts, measure), now=NOW)
    assert rep["suspect_nodes"] == [] and rep["suspect_links"] == []
    assert rep["systemic"] is None
    assert [(h["host"], h["failure_kind"]) for h in rep["failed_hosts"]] == [("gpu04", "missing_rail")]
    assert "gpu04/mlx5_0" not in rep["message"] and "gpu04 has no rail 1 (mlx5_1)" in rep["message"]
    types = {f.get("type") for f in ET.fromstring(RR.to_junit(rep)).iter("failure")}
    assert types == {"missing_rail"}


def test_counter_violation_fails_its_host_and_the_second_pass_still_decides():
    hosts = hosts_of(8)
    bad = {frozenset(("gpu02", "gpu06"))}
    first = fabric(hosts, lambda s, c, r: 180.0 if frozenset((s, c)) in bad and r == 0 else None)
    # retest both ends with known-good partners: both pass, so it is the link (cable), not a node
    second = [pair("gpu02", "gpu07", 0, 391.0, 0, 2), pair("gpu06", "gpu08", 0, 391.2, 0, 2)]
    violation = {"host": "gpu06", "device": "mlx5_0", "port": 1, "counter": "symbol_error", "before": 0,
                 "after": 12, "delta": 12, "allowed": 0, "category": "physical"}  # fmt: skip
    rep = R.build_report(first + second, [violation], expected_hosts=hosts, now=NOW)
    assert [(x["link"], x["verdict"]) for x in rep["suspect_links"]] == [("gpu02/mlx5_0<->gpu06/mlx5_0", "bad_link")]
    assert rep["cleared"] == ["gpu02", "gpu06"]
    assert by_host(rep)["gpu06"]["failure_kind"] == "counters"
    assert by_host(rep)["gpu06"]["reason"].startswith(
        "counter violation: gpu06 mlx5_0 port 1 symbol_error +12; bad link"
    )
    assert by_host(rep)["gpu02"] == {
        "host": "gpu02",
        "failure_kind": "bad_link",
        "reason": "bad link gpu02/mlx5_0<->gpu06/mlx5_0 (180.0 Gb/s < 360.0 Gb/s)",
        "culprit": True,
    }
    assert len(rep["passed_hosts"]) == 6


def test_a_host_failure_for_a_missing_rail_still_localises_its_other_rail():
    # the planner reports gpu04's absent mlx5_1 as a host failure (plan.missing_rails); its mlx5_0 was
    # measured, and a bad mlx5_0 on it is still named
    hosts = hosts_of(6)
    lacking = {"host": "gpu04", "failure_kind": "missing_rail", "reason": "rail mlx5_1 not ACTIVE on this host"}
    results = fabric(hosts, lambda s, c, r: 150.0 if "gpu04" in (s, c) else None, rails=(0,))
    results += fabric([h for h in hosts if h != "gpu04"], rails=(1,))
    rep = R.build_report(results, expected_hosts=hosts, host_failures=[lacking], now=NOW)
    assert [n["host"] for n in rep["suspect_nodes"]] == ["gpu04"]
    entry = by_host(rep)["gpu04"]
    assert entry["failure_kind"] == "missing_rail"
    assert entry["reason"].startswith("rail mlx5_1 not ACTIVE on this host; suspect node gpu04 (failed with ")
    assert rep["passed_hosts"] == [h for h in hosts if h != "gpu04"]


def test_the_line_rate_is_read_from_the_gates_threshold_basis():
    # results as the join writes them: threshold_basis from gate.bandwidth_threshold, no rate key
    assert GATE["basis"] == "0.9 x 400 Gb/s port rate"
    results = fabric(hosts_of(4))
    for res in results:
        del res["link_rate_gbps"]
        res["threshold_basis"] = GATE["basis"]
    rep = R.build_report(results, min_gbps=500, now=NOW)
    assert rep["systemic"] == "min_gbps 500 is above the 400 Gb/s line rate: no link can pass"
    assert rep["settings"]["line_rate_gbps"] == 400.0 and rep["passed"] is False
    assert R.build_report(results, min_gbps=350, now=NOW)["passed"] is True


def test_a_missing_rail_alone_is_named_in_the_message():
    """The planner reports a rail a host lacks as a host failure (no pair result exists for it)."""
    from ansible_collections.ibtune.fabric.plugins.module_utils.report import build as report_utils

    hosts = ["n1", "n2", "n3", "n4"]
    results = []
    for i, (a, b) in enumerate((("n1", "n2"), ("n3", "n4"), ("n1", "n3"), ("n2", "n4"), ("n1", "n4"), ("n2", "n3"))):
        results.append(
            {
                "server": a,
                "server_device": "mlx5_0",
                "client": b,
                "client_device": "mlx5_0",
                "test": "write",
                "kind": "bandwidth",
                "rail": "mlx5_0:1",
                "bw_avg_gbps": 392.0,
                "threshold_gbps": 360.0,
                "passed": True,
                "failure": None,
                "failure_kind": None,
                "round": i // 2 + 1,
                "pass": 1,
            }
        )
    reason = "rail mlx5_1:1 not ACTIVE on this host (3 of 4 hosts have mlx5_1:1): it was not tested"
    doc = report_utils.build_report(
        results, expected_hosts=hosts, host_failures=[{"host": "n3", "failure_kind": "missing_rail", "reason": reason}]
    )
    assert not doc["passed"]
    assert [h["host"] for h in doc["failed_hosts"]] == ["n3"]
    assert "n3" in doc["message"] and "mlx5_1:1" in doc["message"]
