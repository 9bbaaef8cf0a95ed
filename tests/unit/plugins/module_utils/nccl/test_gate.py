"""The curve gate and the per-NIC floor on real nccl-tests outputs (the corpus' multi-node H100/H200 runs).

Healthy: each corpus run's in-place curve is a second measurement of the same fabric in the same run, so judged
against its out-of-place curve it must pass. Degraded: NVIDIA/nccl#2409's 2x8 H100 over 8x400G RoCE (216.5 GB/s at
1 GiB, 231 at 8 GiB) against the corpus' healthy 2x8 H200 over 8x400G RoCE (458.65 .. 488.81 GB/s): it must fail.
"""

import json

import pytest

from ansible_collections.ibtune.fabric.plugins.module_utils.nccl import gate, nccl_tests
from tests.conftest import FIXTURES, read_corpus

H200 = "nccl-tests__all_reduce_perf-2node-16xH200-roce-baremetal.txt"
H100 = "nccl-tests__all_reduce_perf-2node-16xH100-gcp-a3mega.txt"
DEGRADED = FIXTURES / "nccl" / "degraded-2x8xH100-400G-RoCE-nccl-issue-2409.json"


def rows(name):
    return nccl_tests.parse_text(read_corpus(name))["rows"]


def in_place(rows_):
    return [{"size": r["size"], "busbw": r["in_place_busbw"]} for r in rows_]


def test_curve_keeps_only_sizes_from_one_gib():
    points = gate.curve(rows(H100))
    assert [s for s, _b in points] == [1 << 30, 2 << 30, 4 << 30, 8 << 30]
    assert points[-1] == (8589934592, 338.82)
    small = gate.small_sizes(rows(H100))
    assert len(small) == 27 and small[0] == (8, 0.0)


@pytest.mark.parametrize("name", [H200, H100])
def test_healthy_runs_pass_against_their_own_second_measurement(name):
    measured = rows(name)
    reference = gate.curve(in_place(measured))
    judged = gate.judge_curve(measured, reference)
    assert judged["status"] == "passed", judged
    assert 0.98 <= judged["ratio"] <= 1.02


def test_degraded_h100_fails_against_the_healthy_reference():
    degraded = json.loads(DEGRADED.read_text())
    reference = gate.curve(rows(H200))
    judged = gate.judge_curve([{"size": s, "busbw": b} for s, b in degraded["points"]], reference)
    assert judged["status"] == "failed"
    # (216.5 + 231) / 2 over 3 doublings against (458.65 + 488.27) / 2, 488.27 the reference at 8 GiB
    # interpolated (in log2 size) between its 3 GiB (483.77) and 9 GiB (488.81) points
    assert judged["ratio"] == pytest.approx(0.4726, abs=0.0005)
    assert judged["message"].startswith("busbw curve area 0.473 of the reference over 1 GiB..8 GiB")
    assert "< 0.95" in judged["message"]


def test_area_is_over_log2_size_and_interpolates_inside_the_reference_only():
    reference = [(1 << 30, 100.0), (4 << 30, 200.0)]
    assert gate.area(reference) == pytest.approx(2 * 150.0)
    compared = gate.curve_ratio([(2 << 30, 150.0), (8 << 30, 10.0)], reference)
    assert compared["sizes"] == [2 << 30]  # 8 GiB lies outside the reference
    assert compared["ratio"] == 1.0
    assert gate.curve_ratio([(16 << 30, 1.0)], reference) is None


def test_first_run_records_and_small_runs_are_not_gated():
    measured = rows(H200)
    assert gate.judge_curve(measured, None)["status"] == "recorded"
    judged = gate.judge_curve(rows(H100)[:20], [(1 << 30, 1.0)])
    assert judged["status"] == "no_data"
    assert "set max_bytes to 1 GiB or more" in judged["message"]


@pytest.mark.parametrize(("rate", "expected"), [(400, 43.2), (200, 21.6), (800, 86.4)])
def test_per_nic_floor_is_48_gbs_per_400g_times_the_fraction(rate, expected):
    assert gate.per_nic_expected(rate) == expected


def test_floor_of_a_group_of_eight_nics_on_the_corpus_runs():
    floor = gate.group_expected(400, 8)
    assert floor == 345.6
    assert gate.judge_floor(rows(H200), floor)["passed"]  # 488.81 GB/s at 9 GiB
    failed = gate.judge_floor(rows(H100), floor)  # GCP A3 Mega: 8 x 200G TCPXO, 338.82 GB/s
    assert not failed["passed"]
    assert failed["message"] == "busbw 338.8 GB/s at 8 GiB is below the expected 345.6 GB/s"


def test_reference_key_and_baseline_round_trip():
    key = gate.reference_key(
        {"gpu": "NVIDIA H200", "nic": "ConnectX-7", "fabric": "RoCE", "nccl_version": "2.28.9",
         "collective": "all_reduce", "plan": "full_node", "nodes": 2, "ranks_per_node": 8}
    )  # fmt: skip
    assert key == "NVIDIA H200|ConnectX-7|RoCE|2.28.9|all_reduce|full_node|2x8"
    baseline = gate.record(None, key, gate.curve(rows(H200)), "2026-12-02T00:00:00Z", "first run")
    assert gate.load_baseline(json.loads(json.dumps(baseline)))["curves"][key]["points"][0] == [1073741824, 458.65]
    with pytest.raises(ValueError, match="not an NCCL reference-curve file"):
        gate.load_baseline({"links": {}})
