"""qos_check module: fails naming both sides; reads the host through (the lab's stand-in) mlnx_qos."""

import json
import subprocess
from pathlib import Path

from ansible_collections.ibtune.fabric.plugins.modules import qos_check
from tests.conftest import FIXTURES
from tests.unit.modules_harness import run_module

STAND_IN = str(Path(__file__).resolve().parents[4] / "molecule" / "fabric_qos" / "files" / "mlnx_qos")


def test_seed_tc_fails_with_both_sides():
    result = run_module(qos_check, {"qos": {}, "nccl_env": {"NCCL_IB_TC": "41"}})
    assert result.failed
    assert result["msg"] == (
        "NCCL_IB_TC=41 marks DSCP 10, but lossless traffic is DSCP 26 on priority 3: set NCCL_IB_TC=106."
    )
    assert result["expected"] == {"NCCL_IB_TC": "106"}


def test_agreement_passes_and_reports_mode():
    result = run_module(qos_check, {"qos": {}, "nccl_env": {"NCCL_IB_TC": 106}}, check_mode=True)
    assert not result.failed and result["msg"] == "QoS layers agree (roce_lossless)"
    assert result["changed"] is False


def test_fail_on_error_false_returns_errors():
    result = run_module(
        qos_check, {"qos": {"mode": "infiniband"}, "nccl_env": {"NCCL_IB_SL": 3}, "fail_on_error": False}
    )
    assert not result.failed
    assert result["errors"] == ["NCCL_IB_SL=3, but the QoS model puts NCCL on SL 0: set NCCL_IB_SL=0."]


def test_bad_model_is_one_sentence():
    result = run_module(qos_check, {"qos": {"roce_priority": 9}})
    assert result.failed and result["msg"] == "ibtune_qos.roce_priority=9 is out of range: use 0..7."


def test_reads_the_host_with_mlnx_qos(tmp_path, monkeypatch):
    (tmp_path / "sys" / "class" / "net" / "eth0").mkdir(parents=True)
    conf = tmp_path / "c.json"
    conf.write_text(json.dumps({"sysfs_root": str(tmp_path / "sys"), "state_dir": str(tmp_path / "state")}))
    monkeypatch.setenv("IBTUNE_MLNX_QOS_CONFIG", str(conf))
    args = {"qos": {}, "nccl_env": {"NCCL_IB_TC": "106"}, "netdev": "eth0", "executable": STAND_IN}
    # A fresh port: trust pcp, no PFC.
    result = run_module(qos_check, args)
    assert result.failed
    assert result["host_state"]["trust"] == "pcp"
    assert any(e.startswith("the host trusts pcp") for e in result["errors"])
    assert any(e.startswith("the host has no PFC on priority 3") for e in result["errors"])
    subprocess.run(
        [STAND_IN, "-i", "eth0", "--trust", "dscp", "--pfc", "0,0,0,1,0,0,0,0"], check=True, capture_output=True
    )
    result = run_module(qos_check, args)
    assert not result.failed, result["msg"]
    assert result["host_state"]["dscp2prio"]["26"] == 3


def test_mlnx_qos_failure_is_one_sentence(tmp_path, monkeypatch):
    conf = tmp_path / "c.json"
    conf.write_text(json.dumps({"sysfs_root": str(tmp_path), "state_dir": str(tmp_path / "state")}))
    monkeypatch.setenv("IBTUNE_MLNX_QOS_CONFIG", str(conf))
    result = run_module(qos_check, {"netdev": "nosuch0", "executable": STAND_IN})
    assert result.failed
    assert result["msg"].startswith(STAND_IN + " -i nosuch0 failed (rc 1): Netlink error: No such device")


def test_warnings_come_back_as_qos_warnings_and_task_warnings():
    result = run_module(qos_check, {"qos": {"mode": "infiniband"}, "nccl_env": {"NCCL_IB_TC": "106"}})
    assert not result.failed
    assert result["qos_warnings"] == ["NCCL_IB_TC=106 is set on an InfiniBand fabric: QoS there follows NCCL_IB_SL."]
    assert [w["event"]["msg"] for w in result["warnings"]] == result["qos_warnings"]
    assert result["msg"] == "QoS layers agree (infiniband), 1 warning(s)"


def test_nccl_conf_is_read_as_nccl_reads_it(tmp_path):
    """The file as NCCL parses it (module_utils/nccl_env.parse_conf): the first line for a name wins, quotes stay."""
    conf = tmp_path / "nccl.conf"
    conf.write_text("# comment\nNCCL_IB_TC=106\nNCCL_IB_TC=41\n")
    result = run_module(qos_check, {"qos": {}, "nccl_conf": str(conf)})
    assert not result.failed, result["msg"]
    assert result["nccl_env"] == {"NCCL_IB_TC": "106"}
    assert any("sets NCCL_IB_TC again: NCCL keeps the first value (line 2)" in w for w in result["qos_warnings"])
    conf.write_text('NCCL_IB_TC="106"\n')
    result = run_module(qos_check, {"qos": {}, "nccl_conf": str(conf)})
    assert result.failed
    assert result["msg"].startswith("NCCL_IB_TC='\"106\"' is not a number NCCL can read")


def test_nccl_conf_role_output_on_infiniband(tmp_path):
    """The nccl_env role's real output on the GPU machine (profile ib, no NCCL_IB_SL): SL 0 against the model."""
    conf = FIXTURES / "nccl" / "h200x2-rendered-nccl.conf"
    ok = run_module(qos_check, {"qos": {"mode": "infiniband"}, "nccl_conf": str(conf)})
    assert not ok.failed and ok["msg"] == "QoS layers agree (infiniband)"
    bad = run_module(qos_check, {"qos": {"mode": "infiniband", "ib_sl": 3}, "nccl_conf": str(conf)})
    assert bad.failed
    assert bad["msg"] == "NCCL_IB_SL unset (SL 0), but the QoS model puts NCCL on SL 3: set NCCL_IB_SL=3."


def test_nccl_conf_missing_or_with_nccl_env(tmp_path):
    result = run_module(qos_check, {"qos": {}, "nccl_conf": str(tmp_path / "none.conf")})
    assert result.failed and "does not exist" in result["msg"]
    conf = tmp_path / "nccl.conf"
    conf.write_text("NCCL_IB_TC=106\n")
    result = run_module(qos_check, {"qos": {}, "nccl_conf": str(conf), "nccl_env": {"NCCL_IB_TC": 106}})
    assert result.failed and "pass one of them" in result["msg"]
