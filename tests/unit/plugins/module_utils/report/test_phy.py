"""The PHY findings in report.json, the failure message, junit.xml, summary.md and report.html (report/phy.py)."""

import json
import xml.etree.ElementTree as ET

from ansible_collections.ibtune.fabric.plugins.module_utils.phy import findings
from ansible_collections.ibtune.fabric.plugins.module_utils.report import build as R
from ansible_collections.ibtune.fabric.plugins.module_utils.report import render as RR
from tests.unit.plugins.module_utils.report.test_build import NOW, result


def port(host, device, lanes, serial, temperature=48.0):
    after = {
        "link": {"state": "Active", "speed_gbps": 400.0, "lanes": 4, "speed": "IB-NDR"},
        "counters": {"raw_ber_lanes": lanes, "effective_ber": 0.0, "time_since_clear_min": 60.0},
        "module": {"serial": serial, "temperature_c": temperature, "temperature_range": [-5.0, 75.0], "faults": {}},
    }
    return {"end": {"kind": "host", "host": host, "device": device, "port": 1}, "after": after}


HEALTHY = [2e-10, 6e-10, 3e-10, 4e-10]


def verdict(*extra):
    return findings.evaluate([port("n%d" % i, "mlx5_0", HEALTHY, "S%d" % i) for i in range(1, 5)] + list(extra))


def results():
    return [result("n1", "n2"), result("n3", "n4")]


def test_no_phy_stage_no_phy_keys():
    report = R.build_report(results(), now=NOW)
    assert "phy_findings" not in report and "phy_errors" not in report["totals"]
    assert '<testsuite name="phy"' not in RR.to_junit(report) and "Physical layer" not in RR.to_markdown(report)


def test_a_healthy_phy_passes_and_says_so_in_every_file():
    report = R.build_report(results(), now=NOW, phy=verdict())
    assert report["passed"] and report["phy_findings"] == [] and report["phy"]["ports"] == 4
    assert report["headline"].endswith(", 0 PHY errors, 0 PHY warnings")
    suite = ET.fromstring(RR.to_junit(report)).find("testsuite[@name='phy']")
    assert suite.get("tests") == "1" and suite.get("failures") == "0"
    assert "No pre-failure signal" in RR.to_markdown(report)
    assert 'id="phy-findings">No pre-failure signal on 4 ports' in RR.to_html(report)


def test_a_pre_failure_warning_is_named_everywhere_and_does_not_fail():
    sick = port("n5", "mlx5_1", [2e-10, 6e-10, 2e-7, 4e-10], "MT24SICK")
    report = R.build_report(results(), now=NOW, phy=verdict(sick))
    assert report["passed"] and report["totals"]["phy_warnings"] == 1
    msg = report["phy_findings"][0]["msg"]
    assert msg.startswith("cable n5 mlx5_1 <-> its peer (unknown: no topology) (serial MT24SICK): lane 2 raw")
    junit = ET.fromstring(RR.to_junit(report)).find("testsuite[@name='phy']")
    case = junit.find("testcase")
    assert case.get("name").startswith("cable n5 mlx5_1") and case.find("failure") is None
    assert case.find("system-out").text == "warning: " + msg
    assert ("- warning: %s" % msg) in RR.to_markdown(report)
    assert 'data-severity="warning" data-cable="n5 mlx5_1 &lt;-&gt; its peer' in RR.to_html(report)
    assert json.loads(RR.to_json(report))["phy_findings"] == report["phy_findings"]  # report.json holds them


def test_a_phy_error_fails_the_run_and_is_in_the_message():
    hot = port("n5", "mlx5_1", HEALTHY, "MT24HOT", temperature=79.0)
    report = R.build_report(results(), now=NOW, phy=verdict(hot))
    assert not report["passed"] and report["totals"]["phy_errors"] == 1
    assert "cable n5 mlx5_1 <-> its peer (unknown: no topology) (serial MT24HOT): module at 79 C" in report["message"]
    junit = ET.fromstring(RR.to_junit(report))
    failure = junit.find("testsuite[@name='phy']/testcase/failure")
    assert failure.get("type") == "temperature"
    assert int(junit.get("failures")) >= 1


def test_a_phy_finding_on_a_suspect_cable_corroborates_it():
    from ansible_collections.ibtune.fabric.plugins.module_utils.report import phy as RP

    ends = {"host:n5/mlx5_1/1": {"label": "n5 mlx5_1", "peer": "leaf2 p3", "peer_key": "switch:0xa/3"}}
    sick = port("n5", "mlx5_1", [2e-10, 6e-10, 2e-7, 4e-10], "MT24SICK")
    phy = findings.evaluate([port("n%d" % i, "mlx5_0", HEALTHY, "S%d" % i) for i in range(1, 5)] + [sick], ends)
    report = {"passed": False, "totals": {}, "suspect_cables": [{"a": "leaf2 p3", "b": "n5 mlx5_1", "text": "cable"}]}
    RP.apply(report, phy)
    assert report["suspect_cables"][0]["phy"] == [report["phy_findings"][0]["msg"]]
    assert report["phy_findings"][0]["suspect_cable"] is True
