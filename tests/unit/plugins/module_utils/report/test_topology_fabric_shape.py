"""The fabric-shape findings (oversubscription, tier balance, dragonfly) travel the topology stage's path into
the report: report.json topology_findings, summary.md, junit.xml (suite fabric) and report.html, and fail the
verdict while every pair still passes. On real ibsim captures of the subnet scenario's fabric."""

import html
import json
import xml.etree.ElementTree as ET

from ansible_collections.ibtune.fabric.plugins.module_utils.report.build import build_report
from ansible_collections.ibtune.fabric.plugins.module_utils.report.html import to_html
from ansible_collections.ibtune.fabric.plugins.module_utils.report.render import to_junit, to_markdown
from ansible_collections.ibtune.fabric.plugins.module_utils.subnet.analysis import analyse
from ansible_collections.ibtune.fabric.plugins.module_utils.subnet.parsers import parse_lfts
from ansible_collections.ibtune.fabric.plugins.module_utils.validate import fabric as VT
from ansible_collections.ibtune.fabric.plugins.module_utils.validate import plan as P
from tests.unit.plugins.module_utils.validate.test_fabric_lab import HOSTS, INVENTORY, LAB_DESIGN, RAILS, TOPO, run


def _small(capture):
    result = analyse((TOPO / capture).read_text(), None, INVENTORY, max_oversubscription=LAB_DESIGN)
    result["routes"] = parse_lfts((TOPO / capture.replace(".ibnetdiscover", ".dump_lfts")).read_text())
    return json.loads(json.dumps(VT.compact(json.loads(json.dumps(result)))))


def _report(small):
    plan = P.plan_pass(HOSTS, RAILS, {h: h for h in HOSTS}, strategy="cover_links", topology=small)
    results = run(plan, small, set())
    assert all(r["passed"] for r in results)
    return build_report(results, topology=small, now=0)


def test_an_oversubscribed_leaf_fails_the_report_in_every_file():
    report = _report(_small("lab-subnet-1x-uplink.ibnetdiscover"))
    over = [f for f in report["topology_findings"] if f["check"] == "oversubscription"]
    assert [(f["switch"], f["port"], f["peer"]) for f in over] == [("lab-leaf2", 8, "lab-spine2")]
    assert not report["passed"] and report["totals"]["topology_errors"] == 2  # and link_below_norm
    assert over[0]["msg"] in report["message"]
    assert over[0]["msg"] in to_markdown(report)
    (suite,) = [s for s in ET.fromstring(to_junit(report)).iter("testsuite") if s.get("name") == "fabric"]
    types = [c.find("failure").get("type") for c in suite.iter("testcase") if c.find("failure") is not None]
    assert "oversubscription" in types
    assert html.escape(over[0]["msg"], quote=True) in to_html(report)


def test_a_cable_on_the_wrong_spine_names_both_spines_in_the_report():
    report = _report(_small("lab-subnet-wrong-spine.ibnetdiscover"))
    balance = [(f["switch"], f["peer"]) for f in report["topology_findings"] if f["check"] == "tier_balance"]
    assert balance == [("lab-spine1", "lab-leaf1"), ("lab-spine2", "lab-leaf1")]
    assert not report["passed"]
    md = to_markdown(report)
    assert "lab-spine1 has 5 links to the 4 leaves below" in md and "lab-spine2 has 3 links" in md
