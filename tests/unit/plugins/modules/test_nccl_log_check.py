"""nccl_log_check run in-process on the real NCCL logs of the GPU proof and the corpus."""

import os
import shutil

from ansible_collections.ibtune.fabric.plugins.modules import nccl_log_check
from tests.conftest import CORPUS, FIXTURES
from tests.unit.modules_harness import run_module

NCCL = FIXTURES / "nccl"
RENDERED = NCCL / "h200x2-torch-rendered-ib-profile-nccl2.28.9.log"
SOCKET = NCCL / "h200x2-torch-socket-profile-nccl2.28.9.log"


def test_socket_expected_passes_on_the_h200_log():
    result = run_module(nccl_log_check, {"paths": [str(RENDERED)], "expect_transport": "Socket"})
    assert not result.failed
    assert result["transports"] == ["Socket"]
    assert result["transport"] == "Socket"
    assert result["fallback"] is True
    assert result["nccl_versions"] == ["2.28.9+cuda13.0"]
    assert "NET/IB found no usable RDMA device" in result["fallback_reason"]
    assert result["files"] == [{"path": str(RENDERED), "nccl_lines": 141, "transports": ["Socket"]}]
    assert result["msg"] == "NCCL used Socket (fell back from IB); 0 WARN line(s)"


def test_ib_expected_fails_saying_it_fell_back_to_socket():
    result = run_module(nccl_log_check, {"paths": [str(RENDERED)], "expect_transport": "IB"})
    assert result.failed
    assert result["msg"].startswith("NCCL fell back to Socket on vm instead of using IB")
    assert "%s:12" % RENDERED in result["msg"]


def test_ib_expected_fails_naming_nccl_ib_disable():
    result = run_module(nccl_log_check, {"paths": [str(SOCKET)], "expect_transport": "IB"})
    assert result.failed
    assert "because NCCL_IB_DISABLE=1 was set" in result["msg"]


def test_globs_and_warn_lines(tmp_path):
    for name in (
        "nccl-debug__roce-single-node-warn-nvml-unhandled-system-error.txt",
        "nccl-debug__socket-ib-disabled-warn-socketFinalizeAccept.txt",
    ):
        shutil.copy(CORPUS / name, tmp_path / (name + ".log"))
    result = run_module(nccl_log_check, {"paths": [str(tmp_path / "*.log")], "expect_transport": "IB"})
    assert not result.failed
    assert len(result["nccl_warnings"]) == 5
    assert result["nccl_warnings"][0]["line"] == 17
    result = run_module(nccl_log_check, {"paths": [str(tmp_path / "*.log")], "fail_on_warn": True})
    assert result.failed
    assert "5 NCCL WARN line(s), first at" in result["msg"]
    assert "Failed to open libnvidia-ml.so.1" in result["msg"]


def test_content_and_no_files(tmp_path):
    result = run_module(nccl_log_check, {"content": RENDERED.read_text(), "expect_transport": "socket"})
    assert not result.failed
    result = run_module(nccl_log_check, {"paths": [str(tmp_path / "nothing-*.log")]})
    assert result.failed and "matched no readable file" in result["msg"]


def test_textfile(tmp_path):
    result = run_module(
        nccl_log_check,
        {"paths": [str(RENDERED)], "textfile_dir": str(tmp_path), "host": "gpu-1", "busbw": {"all_reduce": 346.157}},
    )
    assert result["changed"] is True
    prom = (tmp_path / "ibtune_nccl.prom").read_text()
    assert 'ibtune_nccl_busbw_gbytes{host="gpu-1",collective="all_reduce"} 346.157' in prom
    assert 'ibtune_nccl_fallback{host="gpu-1"} 1' in prom
    assert oct(os.stat(tmp_path / "ibtune_nccl.prom").st_mode & 0o777) == "0o644"
    assert [p.name for p in tmp_path.iterdir()] == ["ibtune_nccl.prom"]
    other = tmp_path / "check"
    other.mkdir()
    result = run_module(nccl_log_check, {"paths": [str(RENDERED)], "textfile_dir": str(other)}, check_mode=True)
    assert result["changed"] is False and list(other.iterdir()) == []
    result = run_module(nccl_log_check, {"paths": [str(RENDERED)], "textfile_dir": str(tmp_path / "missing")})
    assert result.failed and "is not a directory" in result["msg"]


def test_one_gpu_h200_logs_of_the_2026_12_01_proof():
    """One rank on the lent 1x H200: NCCL still inits its network, so the log check reads the real log the same way."""
    rendered = NCCL / "h200x1-torch-rendered-ib-profile-nccl2.28.9.log"
    result = run_module(nccl_log_check, {"paths": [str(rendered)], "expect_transport": "Socket"})
    assert not result.failed, result["msg"]
    assert result["transport"] == "Socket" and result["fallback"] is True
    assert result["nccl_versions"] == ["2.28.9+cuda13.0"]
    result = run_module(
        nccl_log_check, {"paths": [str(NCCL / "h200x1-torch-socket-profile-nccl2.28.9.log")], "expect_transport": "IB"}
    )
    assert result.failed and "because NCCL_IB_DISABLE=1 was set" in result["msg"]
