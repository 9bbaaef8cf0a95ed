"""subnet/module.py: the ib_topology run over saved outputs of the lab subnet, the tools host, the messages.

(tests/unit/plugins/modules/test_ib_topology.py runs the module itself, the real tools included.)"""

import os

import pytest

from ansible_collections.ibtune.fabric.plugins.module_utils.common.module import ModuleError
from ansible_collections.ibtune.fabric.plugins.module_utils.subnet import module
from tests.conftest import FIXTURES

TOPO = FIXTURES / "topology"


def params(**over):
    base = dict(
        path=str(TOPO / "lab-subnet.ibnetdiscover"),
        linkinfo=True,
        linkinfo_path=None,
        routes=False,
        routes_path=None,
        switch_counters=False,
        errors_path=None,
        switch_data_counters=False,
        data_counters_path=None,
        data_counters_previous=None,
        traffic_min_bytes=1 << 20,
        max_oversubscription=1.0,
        min_global_gbps=0.0,
        counters_previous=None,
        counter_thresholds={},
        hosts={},
        facts={},
        golden=None,
        golden_path=None,
        rail_alignment=True,
        rail_groups=None,
        checks=None,
        ca=None,
        ca_port=None,
        bin_dir=None,
        timeout=30,
        fail_on_findings=False,
        return_outputs=False,
    )
    base.update(over)
    return base


def test_the_tools_host_is_given_or_the_controller_for_files_or_the_first_subnet_manager():
    assert module.tools_host("sm2", "subnet", ["sm1"]) == "sm2"
    assert module.tools_host("", "file", ["sm1"]) == "localhost"
    assert module.tools_host("", "subnet", ["sm1", "sm2"]) == "sm1"
    assert module.tools_host("", "subnet", []) == ""  # the role then fails naming the fix


def test_saved_outputs_give_routes_and_switch_counter_violations_with_their_sentences():
    before = module.run(params(routes_path=str(TOPO / "lab-subnet.dump_lfts"),
                               errors_path=str(TOPO / "lab-subnet.ibqueryerrors-before")))  # fmt: skip
    after = module.run(
        params(errors_path=str(TOPO / "lab-subnet.ibqueryerrors-after"), counters_previous=before["switch_counters"])
    )
    assert before["routes"] and before["switch_counter_violations"] == [] and not after["failed"]
    (violation,) = after["switch_counter_violations"]
    assert after["messages"] == [f["msg"] for f in after["findings"]] + [violation["msg"]]
    assert violation["msg"] == "lab-leaf2 port 1 <-> ibt-lab-node4 mlx5_0: SymbolErrorCounter +12"
    assert module.run(params(errors_path=str(TOPO / "lab-subnet.ibqueryerrors-after"), fail_on_findings=True,
                             counters_previous=before["switch_counters"]))["failed"]  # fmt: skip


def test_one_sentence_for_an_unreadable_file_or_a_missing_tool(tmp_path):
    with pytest.raises(ModuleError, match="cannot read ibnetdiscover output .*: give a readable saved output"):
        module.run(params(path=str(tmp_path / "nope")))
    with pytest.raises(ModuleError, match="ibnetdiscover not found on %s: install infiniband-diags" % tmp_path):
        module.run(params(path=None, bin_dir=str(tmp_path)))


def test_find_tool_looks_in_sbin_like_ansible(monkeypatch):
    monkeypatch.setenv("PATH", "/nonexistent")
    found = module.find_tool("ibnetdiscover")  # Debian's infiniband-diags: /usr/sbin (/sbin on merged /usr)
    assert found in ("/sbin/ibnetdiscover", "/usr/sbin/ibnetdiscover") and os.access(found, os.X_OK)
    assert module.find_tool("no-such-ibtool") is None
