"""Every check with its inputs, and the summary sentence (analysis.py, findings.py)."""

from ansible_collections.ibtune.fabric.plugins.module_utils.subnet.analysis import run_checks
from ansible_collections.ibtune.fabric.plugins.module_utils.subnet.findings import summarize
from ansible_collections.ibtune.fabric.plugins.module_utils.subnet.parsers import parse_ibnetdiscover
from tests.conftest import read_corpus

NDR = "ibnetdiscover__ndr-40-quantum2-switches-582-cas-parallel-trunks-sharp-aggregation-nodes.txt"


def test_run_checks_and_summary():
    topo = parse_ibnetdiscover(read_corpus(NDR))
    found = run_checks(topo, checks=["unequal_trunk", "rail_alignment"])
    assert {f["check"] for f in found} == {"unequal_trunk", "rail_alignment"}
    assert summarize([]) == "fabric checks passed: no finding"
    assert summarize(found).startswith("%d fabric finding(s), %d error(s): " % (len(found), len(found)))
