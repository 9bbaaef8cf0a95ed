"""The nccl_check role's filters: the result document (once built in Jinja in tasks/log.yml), busbw per
collective, and the multi-node plan."""

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.ibtune.fabric.plugins.filter.nccl import FilterModule

FILTERS = FilterModule().filters()
TEST = {
    "changed": False,
    "invocation": {"module_args": {}},
    "_ansible_no_log": False,
    "collectives": {"all_reduce": {"max_size_busbw": 346.44, "max_size_bytes": 4294967296}},
    "transport": "Socket",
}
LOG = {"changed": False, "msg": "NCCL used Socket", "networks": ["Socket"], "nccl_versions": ["2.28.9+cuda13.0"]}


def test_result_document_keeps_the_modules_own_keys():
    doc = FILTERS["nccl_check_result"](
        {"host": "gpu1", "tag": "t", "expect_transport": "Socket", "failure": None, "lint": {"lint_warnings": [1]},
         "test": TEST, "log": LOG, "path": "/var/log/ibtune/t.json"}
    )  # fmt: skip
    assert doc["passed"] is True and doc["failure"] is None
    assert doc["test"] == {"collectives": TEST["collectives"], "transport": "Socket"}
    assert doc["log"] == {"networks": ["Socket"], "nccl_versions": ["2.28.9+cuda13.0"]}
    assert doc["lint"] == {"errors": [], "warnings": [1], "env": {}}
    assert doc["summary"] == (
        "gpu1: NCCL 2.28.9+cuda13.0 used Socket; all_reduce 346.4 GB/s at 4 GiB; results in /var/log/ibtune/t.json"
    )
    failed = FILTERS["nccl_check_result"]({"host": "gpu1", "failure": "NCCL fell back"})
    assert failed["passed"] is False and failed["summary"] == "gpu1: NCCL ? used ?; results in None"
    with pytest.raises(AnsibleFilterError, match="must be a dict"):
        FILTERS["nccl_check_result"]([])


def test_busbw_per_collective():
    assert FILTERS["nccl_busbw"](TEST) == {"all_reduce": 346.44}
    assert FILTERS["nccl_busbw"]("skipped") == {}


def test_plan_filter():
    plan = FILTERS["nccl_plan"](
        {"hosts": ["a", "b"], "host_ports": {"a": ["mlx5_0:1"], "b": ["mlx5_0:1"]}, "host_gpus": {"a": 8, "b": 8},
         "plans": ["per_rail", "full_node"], "collectives": ["all_reduce"], "ranks_per_node": 0, "domains": {},
         "transport": "IB", "gdr": None}
    )  # fmt: skip
    assert [r["id"] for r in plan["runs"]] == ["per_rail/mlx5_0:a+b", "full_node:a+b"]
    with pytest.raises(AnsibleFilterError, match="nccl_check: a multi-node NCCL plan needs at least two hosts"):
        FILTERS["nccl_plan"]({"hosts": ["a"], "host_ports": {}, "host_gpus": {}, "plans": ["per_rail"]})
    with pytest.raises(AnsibleFilterError, match="unknown key"):
        FILTERS["nccl_plan"]({"host": []})
