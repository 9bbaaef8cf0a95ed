"""Real nccl-tests 2.19.6 (MPI build, Open MPI 5.0.11) run by nccl_test's mpirun launcher on the lent 1x H200
(NCCL 2.28.9, no RDMA NIC), 2026-12-02: two ranks as two NCCL "nodes" (distinct NCCL_HOSTID) over NET/Socket.
The stdout of each run (the nccl-tests table with NCCL's INFO lines) is parsed verbatim; tests/fixtures/nccl/README.md
says how it was captured."""

import json

import pytest

from ansible_collections.ibtune.fabric.plugins.module_utils.nccl import log as nccl_log
from ansible_collections.ibtune.fabric.plugins.module_utils.nccl import nccl_tests
from ansible_collections.ibtune.fabric.plugins.module_utils.nccl import run
from tests.conftest import FIXTURES

RUN2 = FIXTURES / "nccl" / "h200x1-multinode-run2"


def _text(name):
    return (RUN2 / ("nccl-tests-%s.log" % name)).read_text()


@pytest.mark.parametrize(
    "name, collective, rows, max_size, busbw, avg",
    [
        ("ar_mpirun_socket", "all_reduce", 8, 2147483648, 1.86, 1.84016),
        ("alltoall_mpirun_socket", "alltoall", 7, 1073741824, 1.40, None),
    ],
)
def test_the_real_tables_among_nccl_info_lines(name, collective, rows, max_size, busbw, avg):
    parsed = nccl_tests.parse_text(_text(name))
    summary = nccl_tests.summarize(parsed)
    assert parsed["nranks"] == 2
    assert len(parsed["rows"]) == rows
    assert summary["max_size_bytes"] == max_size
    assert summary["max_size_busbw"] == pytest.approx(busbw)
    assert summary["wrong_total"] == 0
    assert parsed["out_of_bounds"] == 0
    if avg is not None:
        assert parsed["avg_busbw"] == avg
    factor = nccl_tests.bus_factor(collective, 2)  # all_reduce 2(n-1)/n = 1, alltoall (n-1)/n = 0.5 at n = 2
    for row in parsed["rows"]:
        assert row["busbw"] == pytest.approx(row["algbw"] * factor, abs=0.011)


def test_all_reduce_busbw_is_algbw_for_two_ranks():
    """2(n-1)/n = 1 at n = 2: busbw equals algbw in every row nccl-tests printed."""
    for row in nccl_tests.parse_text(_text("ar_mpirun_socket"))["rows"]:
        assert row["busbw"] == row["algbw"]


def test_the_info_lines_say_socket_because_no_rdma_device():
    result = nccl_log.parse(_text("ar_mpirun_socket"), path="ar_mpirun_socket.log")
    assert result["transports"] == ["Socket"]
    assert result["hosts"] == ["vm"]
    assert result["per_host"]["vm"]["channel_kinds"] == {"NET": 8}
    assert "no usable RDMA device" in nccl_log.fallback_reason(result)
    assert nccl_log.check_transport(result, "Socket") is None
    sentence = nccl_log.check_transport(result, "IB")
    assert sentence.startswith("NCCL fell back to Socket on vm instead of using IB")


def test_forced_sockets_are_named_as_the_cause():
    result = nccl_log.parse(_text("ar_forced_socket_expect_ib"), path="forced.log")
    assert result["transports"] == ["Socket"]
    assert nccl_log.fallback_reason(result).startswith("NCCL_IB_DISABLE=1 was set")
    problems = nccl_log.check_expectations(result, {"hosts": ["vm"], "transport": "IB"})
    assert [p["message"] for p in problems] == ["vm used Socket (NCCL_IB_DISABLE=1 was set), the plan wants IB"]


def test_an_exit_names_ncclS_own_reason_not_only_mpiruns_box():
    """Two ranks of one host on one GPU: NCCL 2.28.9 says 'Duplicate GPU detected' and exits 3; mpirun prints
    only its generic box. The module's sentence carries NCCL's reason."""
    text = _text("ar_same_host_two_ranks")
    log = nccl_log.parse(text, path="same.log")
    warnings = ["%s:%d %s" % (w["path"], w["line"], w["message"]) for w in log["warnings"]]
    assert warnings and "Duplicate GPU detected" in warnings[0]
    parsed = nccl_tests.parse_text(text)
    results = {"all_reduce": dict(parsed, rc=3, error=None, wrong_total=None)}
    result = {"nccl_warnings": warnings, "transport_problems": [], "max_size_busbw": None}
    failures = run.run_failures({"min_busbw": None}, results, text, result)
    assert len(failures) == 1
    assert failures[0].startswith("all_reduce exited 3, NCCL said: same.log:")
    assert "Duplicate GPU detected : rank 0 and rank 1 both on CUDA device 60" in failures[0]


def test_the_recorded_module_results_agree_with_the_parsers():
    """What nccl_test returned on the machine (result JSON) is what the parsers read from its log here."""
    recorded = json.loads((RUN2 / "ar_mpirun_socket.result.json").read_text())
    assert recorded["passed"] is True
    assert recorded["transport"] == "Socket"
    assert recorded["nccl_version"] == "2.28.9+cuda13.0"
    summary = nccl_tests.summarize(nccl_tests.parse_text(_text("ar_mpirun_socket")))
    assert recorded["max_size_busbw"] == summary["max_size_busbw"]
    assert recorded["max_size_bytes"] == summary["max_size_bytes"]
