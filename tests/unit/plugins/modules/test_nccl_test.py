"""nccl_test run in-process.

- backend=torch for real with this venv's Python, which has no torch: the module must say so in one sentence.
  (The real torch run is the GPU proof: tests/fixtures/nccl/h200x2-gpu-proof-*.)
- backend=nccl_tests against tests/fixtures/nccl/fake_nccl_tests.py, a stand-in that prints real nccl-tests
  outputs from the corpus (no nccl-tests binary exists here), to check the argv the module builds, parsing,
  -J handling and the min_busbw gate.
"""

import json
import os
import shutil
import sys

import pytest

from ansible_collections.ibtune.fabric.plugins.modules import nccl_test
from tests.conftest import CORPUS, FIXTURES
from tests.unit.modules_harness import run_module

FAKE = FIXTURES / "nccl" / "fake_nccl_tests.py"
H200 = CORPUS / "nccl-tests__all_reduce_perf-2node-16xH200-roce-baremetal.txt"
OLD = CORPUS / "nccl-tests__all_gather_perf-1node-8xA100-old-format-no-root-col-launch-mode-line.txt"
NVML = CORPUS / "nccl-debug__roce-single-node-warn-nvml-unhandled-system-error.txt"


@pytest.fixture
def fake(tmp_path, monkeypatch):
    bindir = tmp_path / "bin"
    bindir.mkdir()
    for name in ("all_reduce_perf", "all_gather_perf"):
        shutil.copy(FAKE, bindir / name)
        os.chmod(bindir / name, 0o755)
    argv_log = tmp_path / "argv.jsonl"
    monkeypatch.setenv("FAKE_NCCL_TESTS_ARGV", str(argv_log))
    monkeypatch.setenv("FAKE_NCCL_TESTS_OUTPUT", str(H200))

    def calls():
        return [json.loads(line) for line in argv_log.read_text().splitlines()]

    return bindir, calls


def test_nccl_tests_table(fake, tmp_path):
    bindir, calls = fake
    log = tmp_path / "logs" / "ar.log"
    result = run_module(
        nccl_test,
        {
            "tests_dir": str(bindir),
            "min_bytes": "1G",
            "max_bytes": "16G",
            "step_factor": 3,
            "gpus": 1,
            "launcher": [sys.executable],
            "log_file": str(log),
            "min_busbw": 400,
        },
    )
    assert not result.failed, result["msg"]
    assert calls() == [["-b", "1G", "-e", "16G", "-f", "3", "-g", "1", "-n", "20", "-w", "5"]]
    assert result["cmd"][0] == sys.executable and result["cmd"][1].endswith("all_reduce_perf")
    assert result["max_size_bytes"] == 9663676416
    assert result["max_size_busbw"] == 488.81
    assert result["avg_busbw"] == 475.782
    assert result["nranks"] == 16
    assert result["passed"] is True
    assert len(result["rows"]) == 3
    assert log.read_text() == H200.read_text()
    assert result["msg"].startswith("nccl_tests on fs-207")


def test_min_busbw_gate_fails_naming_size_and_host(fake):
    bindir, _unused = fake
    result = run_module(nccl_test, {"tests_dir": str(bindir), "min_busbw": 500})
    assert result.failed
    assert result["msg"].startswith("all_reduce busbw 488.8 GB/s at 9 GiB on fs-207 is below min_busbw 500.0 GB/s")
    assert result["passed"] is False
    assert result["max_size_busbw"] == 488.81


def test_two_collectives_and_stray_lines(fake, monkeypatch):
    bindir, calls = fake
    monkeypatch.setenv("FAKE_NCCL_TESTS_OUTPUT", str(OLD))
    result = run_module(nccl_test, {"tests_dir": str(bindir), "collectives": ["all_reduce", "all_gather"]})
    assert not result.failed
    assert [c[0] for c in calls()] == ["-b", "-b"]
    assert set(result["collectives"]) == {"all_reduce", "all_gather"}
    assert result["collectives"]["all_gather"]["max_size_busbw"] == 223.39


def test_json_output_is_preferred(fake, monkeypatch):
    bindir, calls = fake
    monkeypatch.setenv("FAKE_NCCL_TESTS_JSON", str(FIXTURES / "nccl" / "nccl-tests-all_reduce-J-format.json"))
    result = run_module(nccl_test, {"tests_dir": str(bindir), "json_output": True})
    assert not result.failed
    assert "-J" in calls()[0]
    assert result["max_size_busbw"] == 346.61
    assert result["nccl_version"] == "2.28.9"


def test_failed_run_reports_output_tail_and_warn_lines(fake, monkeypatch):
    bindir, _unused = fake
    monkeypatch.setenv("FAKE_NCCL_TESTS_OUTPUT", str(NVML))
    monkeypatch.setenv("FAKE_NCCL_TESTS_RC", "3")
    result = run_module(nccl_test, {"tests_dir": str(bindir)})
    assert result.failed
    assert result["msg"].startswith("all_reduce exited 3")
    assert "Test failure common.cu:937" in result["msg"]
    assert result["transport"] == "IB"
    assert result["nccl_version"] == "2.26.2+cuda12.6"
    assert any("Failed to open libnvidia-ml.so.1" in w for w in result["nccl_warnings"])


def test_missing_binary(tmp_path):
    result = run_module(nccl_test, {"tests_dir": str(tmp_path)})
    assert result.failed
    assert "all_reduce_perf not found" in result["msg"]
    assert "backend=torch" in result["msg"]


def test_torch_backend_without_torch_says_so():
    result = run_module(
        nccl_test, {"backend": "torch", "python_executable": sys.executable, "max_bytes": "16M", "timeout": 120}
    )
    assert result.failed
    assert "cannot import torch" in result["msg"]
    assert "set python_executable to the Python that has torch" in result["msg"]
    assert result["rows"] == []


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (
            {"backend": "torch", "collectives": ["broadcast"]},
            "backend=torch runs all_reduce, all_gather, reduce_scatter, alltoall, not broadcast",
        ),
        ({"executable": "x", "collectives": ["all_reduce", "all_gather"]}, "executable runs one collective"),
        ({"min_bytes": "lots"}, "min_bytes"),
        ({"min_bytes": "4G", "max_bytes": "1G"}, "min <= max"),
        ({"collectives": ["all_scatter"]}, "unknown collective 'all_scatter'"),
        ({"collectives": []}, "collectives is empty"),
    ],
)
def test_argument_errors(args, needle):
    result = run_module(nccl_test, args)
    assert result.failed
    assert needle in result["msg"]


def test_check_mode_runs_nothing(fake):
    bindir, _unused = fake
    result = run_module(nccl_test, {"tests_dir": str(bindir)}, check_mode=True)
    assert not result.failed
    assert result["msg"].startswith("check mode: would run nccl_tests")
    assert not os.path.exists(os.environ["FAKE_NCCL_TESTS_ARGV"])


def test_no_network_in_the_log_never_prints_over_none(fake, monkeypatch):
    """The old-format corpus output has no NCCL INFO lines: the message must not say "over None"."""
    bindir, _calls = fake
    monkeypatch.setenv("FAKE_NCCL_TESTS_OUTPUT", str(OLD))
    result = run_module(nccl_test, {"tests_dir": str(bindir), "collectives": ["all_gather"]})
    assert not result.failed, result["msg"]
    assert result["transport"] is None
    assert "None" not in result["msg"]
    assert "NCCL's log names no network" in result["msg"]


def test_average_other_than_nccl_tests_default_is_passed_as_dash_a(fake):
    bindir, calls = fake
    run_module(nccl_test, {"tests_dir": str(bindir)})
    run_module(nccl_test, {"tests_dir": str(bindir), "average": "max"})
    default, slowest = calls()
    assert "-a" not in default
    assert slowest[-2:] == ["-a", "3"]


FAKE_SRUN = """#!%s
import json, os, sys
with open(os.environ["FAKE_SRUN_ARGV"], "w") as handle:
    json.dump(sys.argv[1:], handle)
program = next(i for i, word in enumerate(sys.argv) if i and not word.startswith("--"))
os.execv(sys.argv[program], sys.argv[program:])
"""


@pytest.fixture
def fake_srun(fake, tmp_path, monkeypatch):
    srun = tmp_path / "srun"
    srun.write_text(FAKE_SRUN % sys.executable)
    srun.chmod(0o755)
    argv_file = tmp_path / "srun.json"
    monkeypatch.setenv("FAKE_SRUN_ARGV", str(argv_file))
    args = {
        "tests_dir": str(fake[0]),
        "launch": "srun",
        "launch_executable": str(srun),
        "srun_mpi": "pmi2",
        "hosts": ["gpu002", "gpu001"],
        "ranks_per_node": 1,
        "sysfs_root": str(tmp_path / "no-sysfs"),
    }
    return args, lambda: json.loads(argv_file.read_text())


def test_srun_gets_the_allocation_options_partition_qos_account_reservation_time_nice(fake_srun):
    args, srun_argv = fake_srun
    options = {"partition": "gpu", "qos": "validation", "account": "ops", "reservation": "fabric_maint"}
    result = run_module(nccl_test, dict(args, time_limit_min=30, nice=50, **options))
    assert not result.failed, result["msg"]
    assert srun_argv()[:12] == [
        "--mpi=pmi2", "--nodes=2", "--ntasks-per-node=1", "--nodelist=gpu[001-002]", "--job-name=ibtune-nccl",
        "--kill-on-bad-exit=1", "--partition=gpu", "--qos=validation", "--account=ops", "--reservation=fabric_maint",
        "--time=00:30:00", "--nice=50",
    ]  # fmt: skip
    assert srun_argv()[12].endswith("all_reduce_perf") and result["cmd"][1:] == srun_argv()


def test_a_qos_slurm_cannot_parse_fails_before_srun_runs(fake_srun):
    args, srun_argv = fake_srun
    result = run_module(nccl_test, dict(args, qos="high,low"))
    assert result.failed and result["passed"] is False
    assert result["msg"] == (
        "qos='high,low' is not a Slurm name (letters, digits, _ . + -): give the name sinfo/sacctmgr show"
    )
    with pytest.raises(FileNotFoundError):
        srun_argv()
